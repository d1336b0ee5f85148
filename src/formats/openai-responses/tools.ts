/**
 * contextkit's own tools as Responses API function tools, and the `function_call_output` item
 * that answers a call of one.
 */

import { MEMORY_TOOL_SHAPES } from '../../memory/memory-spec.js';
import type { ResponsesItem } from '../../messages/responses-types.js';
import type { ToolDefinition } from '../../messages/types.js';
import { RECALL_TOOL_SHAPES } from '../../recall/recall-spec.js';

/** The tool as an OpenAI Responses function tool (`tools: [responsesMemoryTool]`). */
export const responsesMemoryTool: ToolDefinition = MEMORY_TOOL_SHAPES.responses;

/** The tool as an OpenAI Responses function tool (`tools: [responsesRecallTool]`): flat, not nested. */
export const responsesRecallTool: ToolDefinition = RECALL_TOOL_SHAPES.responses;

/** The `function_call_output` item answering the call `id`. */
export function responsesToolResult(id: string, text: string): ResponsesItem {
  return { type: 'function_call_output', call_id: id, output: text } as ResponsesItem;
}
