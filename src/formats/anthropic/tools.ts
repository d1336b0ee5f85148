/**
 * contextkit's own tools as Anthropic Messages tools (the memory tool is Anthropic's native one),
 * and the `tool_result` that answers a call of one.
 */

import { MEMORY_TOOL_NAME } from '../../memory/memory-spec.js';
import type { AnthropicUserMessage, ToolDefinition } from '../../messages/types.js';
import { RECALL_TOOL_SHAPES } from '../../recall/recall-spec.js';

/** The tool as an Anthropic Messages tool (`tools: [anthropicRecallTool]`). */
export const anthropicRecallTool: ToolDefinition = RECALL_TOOL_SHAPES.anthropic;

/** The tool as Anthropic defines it: the native memory tool (`tools: [anthropicMemoryTool]`). */
export const anthropicMemoryTool = { type: 'memory_20250818', name: MEMORY_TOOL_NAME } as const;

/** The user message of one `tool_result` answering the call `id`. */
export function anthropicToolResult(id: string, text: string, isError: boolean): AnthropicUserMessage {
  return {
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: id, content: text, ...(isError ? { is_error: true } : {}) },
    ],
  };
}
