/**
 * The fields of a message a provider's request takes. A stored message may carry more (an
 * Amplifier-style message with inline `metadata`, a logger's `timestamp`): they stay in storage,
 * and a view sends only the fields its format documents, since strict endpoints refuse unknown
 * properties ("Extra inputs are not permitted").
 */
import { wireFormat } from '../formats/registry.js';
import type { Message, MessageFormat } from '../messages/types.js';

/** Copies made of stored messages, so that every view sends the same object for one message. */
const copies = new WeakMap<object, Message>();

/**
 * `message` with only the fields `format` documents for it: the message itself when it has no
 * other, else a copy (the same copy every time, so views stay byte-stable and counts memoized).
 */
export function wireMessage(message: Message, format: MessageFormat): Message {
  // Each format documents its fields (`WireFormat.wireFields`); Responses items are sent as stored.
  const fields = wireFormat(format).wireFields(message);
  if (fields === undefined) return message;
  let extra = false;
  for (const key in message) {
    if (!fields.has(key)) {
      extra = true;
      break;
    }
  }
  if (!extra) return message;
  let copy = copies.get(message);
  if (copy === undefined) {
    const kept: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(message)) if (fields.has(key)) kept[key] = value;
    copy = kept as unknown as Message;
    copies.set(message, copy);
  }
  return copy;
}
