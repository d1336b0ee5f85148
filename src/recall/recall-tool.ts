/**
 * `recall` as a tool the model can call: its definition in each provider's format, the sentence
 * that tells the model it exists, reading a call in either format, and the result message.
 */
import type { GeminiContent } from '../formats/gemini/parts.js';
import type { ResponsesItem } from '../formats/openai-responses/items.js';
import { wireFormat } from '../formats/registry.js';
import { readToolCall, toolResultMessage } from '../messages/tool-call.js';
import type {
  AnthropicUserMessage,
  MessageFormat,
  OpenAIToolMessage,
  ToolDefinition,
} from '../messages/types.js';
import type { RecallHit, RecallOptions } from './recall-hit.js';
import { RECALL_TOOL_NAME } from './recall-spec.js';

export { anthropicRecallTool } from '../formats/anthropic/tools.js';
export { geminiRecallTool } from '../formats/gemini/tools.js';
export { openAIRecallTool } from '../formats/openai-chat/tools.js';
export {
  RECALL_NOTE,
  RECALL_TOOL_DESCRIPTION,
  RECALL_TOOL_NAME,
  RECALL_TOOL_PARAMETERS,
} from './recall-spec.js';

/** The tool definition in `format`. */
export function recallToolDefinition(format: MessageFormat): ToolDefinition {
  return wireFormat(format).recallTool;
}

/** A `recall` call read from either provider's shape. */
export interface RecallCall {
  /** The shape it came in, which the result is given in. */
  format: MessageFormat;
  id: string;
  /** The query, or what is wrong with the arguments (told to the model as the result). */
  query: string | { error: string };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function queryOf(input: unknown): string | { error: string } {
  if (isRecord(input) && typeof input.query === 'string') return input.query;
  return {
    error: 'the arguments must be an object with a string "query", such as {"query": "Caroline adoption"}',
  };
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
  const query = read.unreadable ? (read.input as { error: string }) : queryOf(read.input);
  return { format: read.format, id: read.id, query };
}

const NO_HITS = 'Nothing in this conversation matches ';
const HITS = /^\d+ results? from earlier in this conversation, best first:\n/;

/** The text the model reads: the hits, best first, or a sentence saying nothing matched. */
export function recallResultText(query: string, hits: readonly RecallHit[]): string {
  if (hits.length === 0) {
    return `${NO_HITS}${JSON.stringify(query.slice(0, 200))}. Try other words: a name, a date, a number.`;
  }
  const parts = hits.map((hit, i) => `Result ${i + 1} (around message #${hit.seq}):\n${hit.text}`);
  return `${hits.length} result${hits.length === 1 ? '' : 's'} from earlier in this conversation, best first:\n\n${parts.join('\n\n')}`;
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
 * What a framework's recall tool returns for the arguments the model gave: the hits as text, or
 * a sentence saying what is wrong with the arguments (the model reads it and can try again).
 */
export async function answerRecall(
  source: RecallSource,
  input: unknown,
  options?: RecallOptions,
): Promise<string> {
  const query = queryOf(input);
  if (typeof query !== 'string') return `recall: ${query.error}`;
  return recallResultText(query, await source.recall(query, options));
}
