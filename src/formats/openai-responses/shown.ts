/**
 * How a Responses view shows a stored message: a plain message with text parts (one that fits
 * every format) as an easy input message with Responses parts.
 */

import { freezeDeep } from '../../messages/freeze.js';
import type { Message } from '../../messages/types.js';

type Loose = Record<string, unknown>;

function asResponses(message: Loose): Message | undefined {
  const content = message.content;
  const role = String(message.role);
  const partType = role === 'assistant' ? 'output_text' : 'input_text';
  const parts: Loose[] = Array.isArray(content)
    ? content.map((p) => ({ type: partType, text: String((p as Loose).text ?? '') }))
    : [];
  if (typeof message.refusal === 'string' && role === 'assistant')
    parts.push({ type: 'refusal', refusal: message.refusal });
  if (parts.length === 0) return undefined;
  return freezeDeep({ role, content: parts }) as unknown as Message;
}

/** The message a Responses view shows for a stored one (see `WireFormat.shownMessage`). */
export function shownResponses(message: Message, native: boolean): Message | undefined {
  // A plain string message is already a Responses "easy input message".
  if (native || typeof (message as unknown as Loose).content === 'string') return message;
  return asResponses(message as unknown as Loose);
}
