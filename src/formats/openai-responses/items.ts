/**
 * The OpenAI Responses API's input items (platform.openai.com/docs/api-reference/responses/create,
 * "input"; and the output items a response returns, which go back as input unchanged). A
 * conversation in the `'openai-responses'` format is a list of these items, stored as they came.
 *
 * Calls and their outputs pair by `call_id` (function, custom tool, computer, local shell); MCP
 * approvals pair by `approval_request_id`. Built-in tools (web search, file search, code
 * interpreter, image generation) and `mcp_call` / `mcp_list_tools` carry their own results. A
 * `reasoning` item belongs to the item it precedes and is never edited (its `encrypted_content`
 * is opaque).
 *
 * A `compaction` item (developers.openai.com/api/docs/guides/compaction) is what server-side
 * compaction (`context_management: [{ type: 'compaction', compact_threshold }]`) or the
 * `/responses/compact` endpoint returns: opaque `encrypted_content` carrying the state of what
 * came before it. It is kept verbatim, never edited, and later requests send it back; the guide
 * lets a client drop the items before the latest compaction item, and views do.
 */

import type { ResponsesOtherItem } from '../../messages/responses-types.js';

/** Call items answered by an output item with the same `call_id`, and the output's type. */
export const RESPONSES_CALLS: Readonly<Record<string, string>> = {
  function_call: 'function_call_output',
  custom_tool_call: 'custom_tool_call_output',
  computer_call: 'computer_call_output',
  local_shell_call: 'local_shell_call_output',
};

/** Output items, and the call type each answers. */
export const RESPONSES_OUTPUTS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(RESPONSES_CALLS).map(([call, output]) => [output, call]),
);

/** Items that carry their own result (hosted tools, MCP listing and calls). */
export const RESPONSES_SELF_CONTAINED: ReadonlySet<string> = new Set([
  'web_search_call',
  'file_search_call',
  'code_interpreter_call',
  'image_generation_call',
  'mcp_call',
  'mcp_list_tools',
]);

/** Every item type of the Responses API input that contextkit knows. */
export const RESPONSES_ITEM_TYPES: ReadonlySet<string> = new Set([
  'message',
  'reasoning',
  'item_reference',
  'mcp_approval_request',
  'mcp_approval_response',
  'compaction',
  ...Object.keys(RESPONSES_CALLS),
  ...Object.keys(RESPONSES_OUTPUTS),
  ...RESPONSES_SELF_CONTAINED,
]);

/** Content part types of Responses messages (input and output). */
export const RESPONSES_PART_TYPES: ReadonlySet<string> = new Set([
  'input_text',
  'input_image',
  'input_file',
  'input_audio',
  'output_text',
  'refusal',
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The item's type: `message` for a message item whose `type` was left out. */
export function itemType(item: unknown): string | undefined {
  if (!isRecord(item)) return undefined;
  if (typeof item.type === 'string') return item.type;
  return typeof item.role === 'string' ? 'message' : undefined;
}

/**
 * The id an output answers: its `call_id`; a `local_shell_call_output` may give the call's id
 * as `id` instead, as its reference documents.
 */
export function outputCallId(item: Record<string, unknown>): string | undefined {
  if (typeof item.call_id === 'string') return item.call_id;
  if (item.type === 'local_shell_call_output' && typeof item.id === 'string') return item.id;
  return undefined;
}

/** The output text of an output item, when it is text (what clearing replaces). */
export function outputText(item: Record<string, unknown>): string {
  const output = item.output;
  if (typeof output === 'string') return output;
  if (!Array.isArray(output)) return '';
  return output
    .map((p) => (isRecord(p) && typeof p.text === 'string' ? p.text : ''))
    .filter((t) => t.length > 0)
    .join('\n');
}

/** Whether clearing may replace an output's `output` with a placeholder string. */
export function isClearableOutput(item: Record<string, unknown>): boolean {
  // computer_call_output's output is a screenshot object: the API wants that shape; kept.
  return item.type !== 'computer_call_output' && outputText(item).length > 0;
}

/**
 * The most characters an `encrypted_content` may have: the API refuses any input string longer
 * than 10 MiB (10,485,760 characters: "string too long. Expected a string with maximum length
 * 10485760"), which is where users of server compaction hit it.
 */
export const MAX_ENCRYPTED_CONTENT = 10 * 1024 * 1024;

/** Whether an item is a server `compaction` item (see the module note). */
export function isCompactionItem(item: unknown): item is ResponsesOtherItem & { encrypted_content: string } {
  return isRecord(item) && item.type === 'compaction' && typeof item.encrypted_content === 'string';
}
