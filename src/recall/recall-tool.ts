/**
 * `recall` as a tool the model can call: its definition in each provider's format, the sentence
 * that tells the model it exists, reading a call in either format, and the result message.
 */
import { InvalidArgumentError } from '../errors.js';
import { wireFormat } from '../formats/registry.js';
import type { GeminiContent } from '../messages/gemini-types.js';
import type { ResponsesItem } from '../messages/responses-types.js';
import { readToolCall } from '../messages/tool-call.js';
import type {
  AnthropicUserMessage,
  MessageFormat,
  OpenAIToolMessage,
  ToolDefinition,
} from '../messages/types.js';
import { toolResultMessage } from '../wire/tool-result.js';
import type { RecallFilters, RecallHit, RecallOptions } from './recall-hit.js';
import { RECALL_TOOL_NAME } from './recall-spec.js';

export { anthropicRecallTool } from '../formats/anthropic/tools.js';
export { bedrockRecallTool } from '../formats/bedrock/tools.js';
export { geminiRecallTool } from '../formats/gemini/tools.js';
export { openAIRecallTool } from '../formats/openai-chat/tools.js';
export { responsesRecallTool } from '../formats/openai-responses/tools.js';
export {
  RECALL_NOTE,
  RECALL_TOOL_DESCRIPTION,
  RECALL_TOOL_NAME,
  RECALL_TOOL_PARAMETERS,
} from './recall-spec.js';

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

/** The tool definition in `format`. */
export function recallToolDefinition(format: MessageFormat): ToolDefinition {
  return wireFormat(format).recallTool;
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
