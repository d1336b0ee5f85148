/**
 * contextkit's own tools as Responses API function tools, and the `function_call_output` item
 * that answers a call of one.
 */

import {
  MEMORY_TOOL_DESCRIPTION,
  MEMORY_TOOL_NAME,
  MEMORY_TOOL_PARAMETERS,
} from '../../memory/memory-spec.js';
import type { ToolDefinition } from '../../messages/types.js';
import type { ResponsesItem } from './items.js';

/** The tool as an OpenAI Responses function tool (`tools: [responsesMemoryTool]`). */
export const responsesMemoryTool: ToolDefinition = {
  type: 'function',
  name: MEMORY_TOOL_NAME,
  description: MEMORY_TOOL_DESCRIPTION,
  parameters: MEMORY_TOOL_PARAMETERS,
  strict: false,
} as unknown as ToolDefinition;

/** The `function_call_output` item answering the call `id`. */
export function responsesToolResult(id: string, text: string): ResponsesItem {
  return { type: 'function_call_output', call_id: id, output: text } as ResponsesItem;
}
