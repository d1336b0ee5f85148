/**
 * The fields of a message a provider's request takes. A stored message may carry more (an
 * Amplifier-style message with inline `metadata`, a logger's `timestamp`): they stay in storage,
 * and a view sends only the fields its format documents, since strict endpoints refuse unknown
 * properties ("Extra inputs are not permitted").
 */
import type { Message, MessageFormat } from './types.js';

/**
 * Chat Completions message fields by role (https://platform.openai.com/docs/api-reference/chat/create:
 * `messages`), and the Anthropic and Gemini message shapes (https://docs.anthropic.com/en/api/messages:
 * `role`, `content`; https://ai.google.dev/api/caching#Content: `role`, `parts`). A `role: "system"`
 * message is how a view carries the system prompt in every format (split out when sent).
 */
const OPENAI_FIELDS: Record<string, ReadonlySet<string>> = {
  system: new Set(['role', 'content', 'name']),
  developer: new Set(['role', 'content', 'name']),
  user: new Set(['role', 'content', 'name']),
  assistant: new Set(['role', 'content', 'name', 'refusal', 'audio', 'tool_calls', 'function_call']),
  tool: new Set(['role', 'content', 'tool_call_id']),
  function: new Set(['role', 'content', 'name']),
};
const ANTHROPIC_FIELDS: ReadonlySet<string> = new Set(['role', 'content']);
const GEMINI_FIELDS: ReadonlySet<string> = new Set(['role', 'parts']);

/** Copies made of stored messages, so that every view sends the same object for one message. */
const copies = new WeakMap<object, Message>();

function fieldsOf(message: Message, format: MessageFormat): ReadonlySet<string> | undefined {
  if (format === 'openai') return message.role === undefined ? undefined : OPENAI_FIELDS[message.role];
  if (format === 'anthropic') return ANTHROPIC_FIELDS;
  if (format === 'gemini') return GEMINI_FIELDS;
  // Responses items are many types, each with its own fields: sent as stored.
  return undefined;
}

/**
 * `message` with only the fields `format` documents for it: the message itself when it has no
 * other, else a copy (the same copy every time, so views stay byte-stable and counts memoized).
 */
export function wireMessage(message: Message, format: MessageFormat): Message {
  const fields = fieldsOf(message, format);
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
