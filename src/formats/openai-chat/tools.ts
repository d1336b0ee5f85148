/**
 * contextkit's own tools (`recall`, `memory`) as Chat Completions function tools, and the `tool`
 * message that answers a call of one.
 */

import { MEMORY_TOOL_SHAPES } from '../../memory/memory-spec.js';
import type { OpenAIToolMessage, ToolDefinition } from '../../messages/types.js';
import { RECALL_TOOL_SHAPES } from '../../recall/recall-spec.js';

/** The tool as an OpenAI Chat Completions function tool (`tools: [openAIRecallTool]`). */
export const openAIRecallTool: ToolDefinition = RECALL_TOOL_SHAPES.openai;

/** The tool as an OpenAI Chat Completions function tool. */
export const openAIMemoryTool: ToolDefinition = MEMORY_TOOL_SHAPES.openai;

/** The `tool` message answering the call `id`. */
export function openAIToolResult(id: string, text: string): OpenAIToolMessage {
  return { role: 'tool', tool_call_id: id, content: text };
}
