/**
 * contextkit's own tools as Gemini function declarations, and the `functionResponse` content that
 * answers a call of one.
 */

import { MEMORY_TOOL_SHAPES } from '../../memory/memory-spec.js';
import type { GeminiContent } from '../../messages/gemini-types.js';
import type { ToolDefinition } from '../../messages/types.js';
import { RECALL_TOOL_SHAPES } from '../../recall/recall-spec.js';

/** The tool as a Gemini function declaration (`tools: [{ functionDeclarations: [geminiRecallTool] }]`). */
export const geminiRecallTool: ToolDefinition = RECALL_TOOL_SHAPES.gemini;

/** The tool as a Gemini function declaration (`tools: [{ functionDeclarations: [geminiMemoryTool] }]`). */
export const geminiMemoryTool: ToolDefinition = MEMORY_TOOL_SHAPES.gemini;

/** The user content of one `functionResponse` answering the call `id` of `name`. */
export function geminiToolResult(name: string, id: string, text: string, isError: boolean): GeminiContent {
  const functionResponse: Record<string, unknown> = {
    name,
    response: isError ? { error: text } : { content: text },
  };
  // A call the API gave no id is answered by its name alone.
  if (id !== name) functionResponse.id = id;
  return { role: 'user', parts: [{ functionResponse } as GeminiContent['parts'][number]] };
}
