/** Chat Completions tool calls for test conversations, written as the API sends them. */
import type { OpenAIAssistantMessage, OpenAIToolCall } from '../../src/messages/types.js';

/** The call `id` of the function `name` with `args`, a JSON string as the API sends it. */
export function functionCall(id: string, name: string, args: string): OpenAIToolCall {
  return { id, type: 'function', function: { name, arguments: args } };
}

/** An assistant message that only makes `calls` (`content: null`, as the API returns it). */
export function callingMessage(...calls: OpenAIToolCall[]): OpenAIAssistantMessage {
  return { role: 'assistant', content: null, tool_calls: calls };
}
