/**
 * contextkit's own tools (`recall`, `memory`) as Chat Completions function tools, and the `tool`
 * message that answers a call of one.
 */

import {
  MEMORY_TOOL_DESCRIPTION,
  MEMORY_TOOL_NAME,
  MEMORY_TOOL_PARAMETERS,
} from '../../memory/memory-spec.js';
import type { OpenAIToolMessage, ToolDefinition } from '../../messages/types.js';
import {
  RECALL_TOOL_DESCRIPTION,
  RECALL_TOOL_NAME,
  RECALL_TOOL_PARAMETERS,
} from '../../recall/recall-spec.js';

/** The tool as an OpenAI Chat Completions function tool (`tools: [openAIRecallTool]`). */
export const openAIRecallTool: ToolDefinition = {
  type: 'function',
  function: {
    name: RECALL_TOOL_NAME,
    description: RECALL_TOOL_DESCRIPTION,
    parameters: RECALL_TOOL_PARAMETERS,
  },
};

/** The tool as an OpenAI Chat Completions function tool. */
export const openAIMemoryTool: ToolDefinition = {
  type: 'function',
  function: {
    name: MEMORY_TOOL_NAME,
    description: MEMORY_TOOL_DESCRIPTION,
    parameters: MEMORY_TOOL_PARAMETERS,
  },
};

/** The `tool` message answering the call `id`. */
export function openAIToolResult(id: string, text: string): OpenAIToolMessage {
  return { role: 'tool', tool_call_id: id, content: text };
}
