/**
 * Conversion between the wire formats, so a conversation stored in one format can be sent to
 * another provider (and the CLI can print a view in any). A format converts to and from its pivot
 * (`WireFormat.pivot`: Gemini through Anthropic, Responses through Chat Completions, Chat
 * Completions and Anthropic through each other), and `convertMessages` walks the pivots from the
 * detected format to the asked one. What each step keeps and what it refuses or notes is said in
 * the format's converter (src/formats/anthropic/convert-openai.ts for Chat Completions ⇄
 * Anthropic, src/formats/gemini/convert.ts, src/formats/openai-responses/convert.ts).
 */

import { FORMATS } from '../formats/registry.js';
import type { WireFormat } from '../formats/wire-format.js';
import type { ConvertOptions } from '../messages/convert-options.js';
import type { AnthropicMessage, Message, MessageFormat, OpenAIMessage } from '../messages/types.js';
import { detectConversationFormat } from './detect.js';

export { toAnthropic, toOpenAI } from '../formats/anthropic/convert-openai.js';
export type { ConvertOptions } from '../messages/convert-options.js';

/** `messages` in `from`'s format as `to`'s, step by step along the pivots. */
function route(
  messages: readonly Message[],
  from: WireFormat<Message>,
  to: WireFormat<Message>,
  options: ConvertOptions,
): Message[] {
  for (let steps = 0; from !== to; steps++) {
    if (to.pivot === from.name) return to.fromPivot(messages, options);
    const pivot: WireFormat<Message> | undefined = (FORMATS as Record<string, WireFormat<Message>>)[
      from.pivot
    ];
    if (pivot === undefined || steps > 8) throw new Error(`no conversion from ${from.name} to ${to.name}`);
    messages = from.toPivot(messages, options, to);
    from = pivot;
    // A step that leaves plain text (it fits every format) goes on as plain text does, so a
    // conversation reads the same in the target whichever format it came from.
    if (from !== to && to.fromPlain && detectConversationFormat(messages) === undefined)
      return to.fromPlain(messages, options);
  }
  return messages.slice();
}

/**
 * Returns `messages` in format `to`, converting from the format they are detected to be in. When
 * they already are (or fit every format) the result is a new array of the same message objects,
 * except where the format takes plain messages in its own shape (Gemini's parts; for Anthropic, a
 * system message after the first turn goes through the OpenAI reading and becomes a user turn).
 * Throws `FormatMismatchError` when the input mixes formats, and `InvalidMessageError` (code
 * `not_convertible`, every path listed) for what cannot go across: see the converters' notes and
 * `ConvertOptions.dropThinking`.
 */
export function convertMessages(
  messages: readonly Message[],
  to: 'openai',
  options?: ConvertOptions,
): OpenAIMessage[];
export function convertMessages(
  messages: readonly Message[],
  to: 'anthropic',
  options?: ConvertOptions,
): AnthropicMessage[];
export function convertMessages(
  messages: readonly Message[],
  to: MessageFormat,
  options?: ConvertOptions,
): Message[];
export function convertMessages(
  messages: readonly Message[],
  to: MessageFormat,
  options: ConvertOptions = {},
): Message[] {
  const from = detectConversationFormat(messages);
  const target: WireFormat<Message> = FORMATS[to];
  if (from === undefined) return target.fromPlain?.(messages, options) ?? messages.slice();
  return route(messages, FORMATS[from], target, options);
}
