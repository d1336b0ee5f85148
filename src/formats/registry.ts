/**
 * The wire formats contextkit speaks, by stored name. Adding a format is one folder under
 * `src/formats/`, one line here, and its name and message type in `MessageFormat` and `Message`
 * (src/messages/types.ts, below the formats): this table is checked against both when it compiles.
 *
 * The layers: src/messages/ holds what every format shares (message types, pure helpers) and
 * imports nothing from the formats; each folder here builds on it; src/wire/ sits above them and
 * is what looks a format up in this table (detection, conversion, validation, atoms, readers).
 * A format never imports from src/wire/.
 */

import type { Message, MessageFormat } from '../messages/types.js';
import { anthropic } from './anthropic/format.js';
import { bedrock } from './bedrock/format.js';
import { gemini } from './gemini/format.js';
import { openaiChat } from './openai-chat/format.js';
import { openaiResponses } from './openai-responses/format.js';
import type { WireFormat } from './wire-format.js';

/** Every format by its stored name, in the order `MessageFormat` lists them. */
export const FORMATS = {
  openai: openaiChat,
  anthropic,
  'openai-responses': openaiResponses,
  gemini,
  bedrock,
} as const satisfies Record<MessageFormat, WireFormat<Message>>;

/** The message type a format stores. */
type MessageOf<F> = F extends WireFormat<infer M> ? M : never;

/** A message of any registered format. */
type RegisteredMessage = { [K in MessageFormat]: MessageOf<(typeof FORMATS)[K]> }[MessageFormat];

/** `true` when each of `A` and `B` is assignable to the other. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** Compiles only when `T` is `true`. */
type Assert<T extends true> = T;

/**
 * The registry stores exactly the messages `Message` lists. `satisfies` above checks the names
 * against `MessageFormat` and that each format's message is a `Message`; this checks the other
 * way: a type error here means `Message` lists a type no format stores.
 */
export type RegistryStoresMessage = Assert<Same<RegisteredMessage, Message>>;

/** Every format's name, in registry order (`--format` choices, `provider` values). */
export const FORMAT_NAMES = Object.keys(FORMATS) as readonly MessageFormat[];

/**
 * The format plain messages (string content or text parts: they fit every format) are read as
 * where one must be picked: Chat Completions, whose messages they are shaped like.
 */
export const PLAIN_FORMAT: MessageFormat = 'openai';

/** Every format, in registry order. */
export const WIRE_FORMATS: readonly WireFormat<Message>[] = Object.values(FORMATS) as WireFormat<Message>[];

/** Every format, in the order detection asks them for evidence. */
export const DETECTION_ORDER: readonly WireFormat<Message>[] = [...WIRE_FORMATS].sort(
  (a, b) => a.detectRank - b.detectRank,
);

/** Whether `name` is a registered format's name. */
export function isFormatName(name: unknown): name is MessageFormat {
  return typeof name === 'string' && Object.hasOwn(FORMATS, name);
}

/** The format named `name` (a `MessageFormat`; the names are checked where they come in). */
export function wireFormat(name: MessageFormat): WireFormat<Message> {
  return FORMATS[name] as WireFormat<Message>;
}
