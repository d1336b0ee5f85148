/**
 * Answering a call of one of contextkit's own tools (`recall`, `memory`, `compact`) in the shape
 * it came in: the format's `toolResultMessage`. Reading the call is src/messages/tool-call.ts.
 */
import { wireFormat } from '../formats/registry.js';
import type { GeminiContent } from '../messages/gemini-types.js';
import type { ResponsesItem } from '../messages/responses-types.js';
import type { AnthropicUserMessage, MessageFormat, OpenAIToolMessage } from '../messages/types.js';

/** The result message (or Responses item) answering the call `id` of the tool `name`, in `format`. */
export function toolResultMessage(
  format: MessageFormat,
  name: string,
  id: string,
  text: string,
  isError: boolean,
): OpenAIToolMessage | AnthropicUserMessage | GeminiContent | ResponsesItem {
  return wireFormat(format).toolResultMessage(name, id, text, isError) as OpenAIToolMessage;
}
