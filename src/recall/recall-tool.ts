/**
 * `recall` as a tool the model can call: its definition in each provider's format, the sentence
 * that tells the model it exists, reading a call in either format, and the result message.
 */

import { InvalidArgumentError } from '../errors.js';
import type { GeminiContent } from '../messages/gemini-parts.js';
import type { ResponsesItem } from '../messages/responses-items.js';
import { readToolCall, toolResultMessage } from '../messages/tool-call.js';
import { shapeFor, toolShapes } from '../messages/tool-shapes.js';
import type {
  AnthropicUserMessage,
  MessageFormat,
  OpenAIToolMessage,
  ToolDefinition,
} from '../messages/types.js';
import type { RecallFilters, RecallHit, RecallOptions } from './recall-hit.js';

/** The tool's name. */
export const RECALL_TOOL_NAME = 'recall';

/** What the tool does, for the model. */
export const RECALL_TOOL_DESCRIPTION =
  'Search the whole conversation so far, including earlier messages that are no longer shown to you, ' +
  'tool calls and tool results, for what was said about something: names, places, dates, numbers, ' +
  'ids, decisions. Returns the most relevant past turns, each with the turns around it. Use it ' +
  'before saying you do not know something the conversation may have covered.';

/**
 * The sentence the facts or summary block carries when the tool is offered, so the model knows
 * that what left its view can still be looked up.
 */
export const RECALL_NOTE =
  'Earlier turns are not all shown here, but none is lost: call the recall tool with a few words ' +
  '(a name, a date, a subject) to search the whole conversation, tool results included.';

/** The JSON Schema of the tool's arguments: a query, and optional filters and paging. */
export const RECALL_TOOL_PARAMETERS = {
  type: 'object',
  properties: {
    query: {
      type: 'string',
      description:
        'What to look for: a few words, names or dates, e.g. "Caroline adoption agency" or "order W123 refund".',
    },
    role: {
      type: 'string',
      enum: ['user', 'assistant', 'tool', 'system'],
      description: 'Only turns from this role (tool: tool results).',
    },
    tool_name: {
      type: 'string',
      description: 'Only calls of this tool and their results.',
    },
    start_date: {
      type: 'string',
      description: 'Only turns from this date on, ISO 8601: "2024-05-01" or "2024-05-01T14:00:00Z".',
    },
    end_date: {
      type: 'string',
      description: 'Only turns up to this date, ISO 8601 ("2024-05-31" includes that whole day).',
    },
    from_seq: {
      type: 'integer',
      minimum: 0,
      description: 'Only turns from this message number on (the #numbers results show).',
    },
    to_seq: {
      type: 'integer',
      minimum: 0,
      description: 'Only turns up to this message number.',
    },
    offset: {
      type: 'integer',
      minimum: 0,
      description: 'Results to skip, for the next page of the same search (e.g. 5 after the first five).',
    },
  },
  required: ['query'],
  additionalProperties: false,
} as const;

/** The arguments as the model gives them (see `RECALL_TOOL_PARAMETERS`). */
export interface RecallToolInput {
  query: string;
  role?: 'user' | 'assistant' | 'tool' | 'system' | null;
  tool_name?: string | null;
  start_date?: string | null;
  end_date?: string | null;
  from_seq?: number | null;
  to_seq?: number | null;
  offset?: number | null;
}

/** The tool in every provider's shape. */
const SHAPES = toolShapes(RECALL_TOOL_NAME, RECALL_TOOL_DESCRIPTION, RECALL_TOOL_PARAMETERS);

/** The tool as an OpenAI Chat Completions function tool (`tools: [openAIRecallTool]`). */
export const openAIRecallTool: ToolDefinition = SHAPES.openai;

/** The tool as an OpenAI Responses function tool (`tools: [responsesRecallTool]`). */
export const responsesRecallTool: ToolDefinition = SHAPES.responses;

/** The tool as an Anthropic Messages tool (`tools: [anthropicRecallTool]`). */
export const anthropicRecallTool: ToolDefinition = SHAPES.anthropic;

/** The tool as a Gemini function declaration (`tools: [{ functionDeclarations: [geminiRecallTool] }]`). */
export const geminiRecallTool: ToolDefinition = SHAPES.gemini;

/** The tool as an AWS Bedrock Converse tool (`toolConfig: { tools: [bedrockRecallTool] }`). */
export const bedrockRecallTool = SHAPES.bedrock;

/** The tool definition in `format`. */
export function recallToolDefinition(format: MessageFormat): ToolDefinition {
  return shapeFor(SHAPES, format);
}

/** The arguments of a `recall` call, read: the query and the options it asks for. */
export interface RecallArguments {
  query: string;
  options: RecallFilters & { offset?: number };
}

/** A `recall` call read from either provider's shape. */
export interface RecallCall {
  /** The shape it came in, which the result is given in. */
  format: MessageFormat;
  id: string;
  /** The arguments, or what is wrong with them (told to the model as the result). */
  args: RecallArguments | { error: string };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Argument names of the tool → `RecallOptions` names. */
const OPTION_OF = {
  role: 'role',
  tool_name: 'toolName',
  start_date: 'startDate',
  end_date: 'endDate',
  from_seq: 'fromSeq',
  to_seq: 'toSeq',
  offset: 'offset',
} as const;

/**
 * The model's arguments as a query and options, or what is wrong with them. `null` stands for
 * absent (a strict schema's way of leaving an argument out); the values themselves are checked by
 * `recall`, whose errors name the option.
 */
export function readRecallArguments(input: unknown): RecallArguments | { error: string } {
  if (!isRecord(input) || typeof input.query !== 'string') {
    return {
      error: 'the arguments must be an object with a string "query", such as {"query": "Caroline adoption"}',
    };
  }
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (key === 'query' || value === null || value === undefined) continue;
    const name = OPTION_OF[key as keyof typeof OPTION_OF];
    if (name === undefined) {
      return {
        error: `unknown argument "${key.slice(0, 40)}": the arguments are query, ${Object.keys(OPTION_OF).join(', ')}`,
      };
    }
    options[name] = value;
  }
  return { query: input.query, options: options as RecallArguments['options'] };
}

/**
 * Reads a tool call: an OpenAI `tool_calls[i]` (`{ id, type: 'function', function: { name,
 * arguments } }`), a Responses `function_call` item, an Anthropic `tool_use` block (`{ type:
 * 'tool_use', id, name, input }`) or a Gemini `functionCall` part (`{ functionCall: { name, args,
 * id? } }`). `null` when it is not a call of `recall` (or not a tool call at all).
 */
export function readRecallCall(call: unknown): RecallCall | null {
  const read = readToolCall(call, RECALL_TOOL_NAME);
  if (read === null) return null;
  const args = read.unreadable ? (read.input as { error: string }) : readRecallArguments(read.input);
  return { format: read.format, id: read.id, args };
}

const NO_HITS = 'Nothing in this conversation matches ';
const HITS = /^\d+ results? from earlier in this conversation, best first:\n/;

/**
 * The text the model reads: the hits, best first, or a sentence saying nothing matched. With
 * `page` (the offset the hits start at and the page size asked for), results are numbered from
 * the offset, and a full page says how to ask for the next one.
 */
export function recallResultText(
  query: string,
  hits: readonly RecallHit[],
  page: { offset: number; limit: number } = { offset: 0, limit: Number.POSITIVE_INFINITY },
): string {
  if (hits.length === 0) {
    const more = page.offset > 0 ? ` past the first ${page.offset} results` : '';
    return `${NO_HITS}${JSON.stringify(query.slice(0, 200))}${more}. Try other words: a name, a date, a number.`;
  }
  const parts = hits.map(
    (hit, i) => `Result ${page.offset + i + 1} (around message #${hit.seq}):\n${hit.text}`,
  );
  const next =
    hits.length >= page.limit
      ? `\n\nMore may match: call recall again with the same arguments and "offset": ${page.offset + hits.length} for the next results.`
      : '';
  return `${hits.length} result${hits.length === 1 ? '' : 's'} from earlier in this conversation, best first:\n\n${parts.join('\n\n')}${next}`;
}

/**
 * Whether a tool result's text is one `recallResultText` wrote: how a result is known for
 * recall's where the message alone does not name its tool (an OpenAI or Anthropic result).
 */
export function isRecallResultText(text: string): boolean {
  return text.startsWith(NO_HITS) || HITS.test(text);
}

/** The tool result message (or Responses item) for a call, in `format`. */
export function recallResultMessage(
  format: MessageFormat,
  id: string,
  text: string,
  isError: boolean,
): OpenAIToolMessage | AnthropicUserMessage | GeminiContent | ResponsesItem {
  return toolResultMessage(format, RECALL_TOOL_NAME, id, text, isError);
}

/**
 * Anything recall can search: a `ContextManager`, and the integrations' `ContextkitSession` and
 * `ContextkitChatMessageHistory`. The framework tools take one.
 */
export interface RecallSource {
  recall(query: string, options?: RecallOptions): Promise<RecallHit[]>;
}

/**
 * The answer to a recall call: the hits as text, or a sentence saying what is wrong with the
 * arguments (the model reads it and can try again; `error` is then true). `options` are the
 * application's (limit, token bound, default filters); the model's arguments are laid over them.
 */
export async function recallAnswer(
  search: (query: string, options: RecallOptions) => Promise<RecallHit[]>,
  args: RecallArguments | { error: string },
  options: RecallOptions = {},
): Promise<{ text: string; error: boolean }> {
  if ('error' in args) return { text: `recall: ${args.error}`, error: true };
  const asked: RecallOptions = { ...options, ...args.options };
  try {
    const hits = await search(args.query, asked);
    const page = { offset: asked.offset ?? 0, limit: asked.limit ?? 5 };
    return { text: recallResultText(args.query, hits, page), error: false };
  } catch (error) {
    if (!(error instanceof InvalidArgumentError)) throw error;
    const name = Object.entries(OPTION_OF).find(([, v]) => v === error.argument)?.[0] ?? error.argument;
    return { text: `recall: ${name}${error.message.slice(error.argument.length)}`, error: true };
  }
}

/**
 * What a framework's recall tool returns for the arguments the model gave: the hits as text, or
 * a sentence saying what is wrong with the arguments (the model reads it and can try again).
 */
export async function answerRecall(
  source: RecallSource,
  input: unknown,
  options?: RecallOptions,
): Promise<string> {
  const answer = await recallAnswer((q, o) => source.recall(q, o), readRecallArguments(input), options);
  return answer.text;
}
