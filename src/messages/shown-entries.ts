/**
 * A conversation's format is fixed by the first message that shows one; the plain messages stored
 * before it (`{ role, content }` with string content or text parts) fitted every format then, but
 * not every format takes them as they are: Gemini wants `parts` and the `model` role, the
 * Responses API wants `input_text` / `output_text` parts. Views show such a message in the
 * conversation's format, and a Gemini content without the empty text parts the API refuses; the
 * stored message stays as it came.
 */

import { formatEvidence } from './detect.js';
import { freezeDeep } from './freeze.js';
import type { HistoryEntry, Message, MessageFormat } from './types.js';

type Loose = Record<string, unknown>;

/** The texts of a plain message: its string content or text parts, and a refusal. */
function plainTexts(message: Loose): string[] {
  const content = message.content;
  const texts =
    typeof content === 'string'
      ? [content]
      : Array.isArray(content)
        ? content.map((p) => String((p as Loose).text ?? ''))
        : [];
  if (typeof message.refusal === 'string') texts.push(message.refusal);
  return texts;
}

/** A plain message as a Gemini content; undefined when it has no text Gemini would take. */
function asGemini(message: Loose): Message | undefined {
  // generateContent refuses empty text parts and contents without parts (Content.parts is
  // required: https://cloud.google.com/vertex-ai/generative-ai/docs/reference/java/1.2.0/com.google.cloud.vertexai.api.ContentOrBuilder).
  const parts = plainTexts(message)
    .filter((text) => text.length > 0)
    .map((text) => ({ text }));
  if (parts.length === 0) return undefined;
  const role = message.role === 'assistant' ? 'model' : String(message.role);
  return freezeDeep({ role, parts }) as unknown as Message;
}

/** A plain message with text parts as a Responses message: `input_text`, or `output_text` for the assistant. */
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

const shownMemo = new WeakMap<Message, { format: MessageFormat; shown: Message | undefined }>();

/**
 * `message` as a view in `format` shows it: the message itself, or for a plain message in a Gemini
 * or Responses conversation, the same text in that format's shape (one frozen object per stored
 * message, so every view shows the same object). Undefined when nothing of it can be sent.
 */
export function shownMessage(message: Message, format: MessageFormat): Message | undefined {
  if (format === 'openai' || format === 'anthropic') return message;
  const loose = message as unknown as Loose;
  const native = formatEvidence(message) !== undefined;
  if (native && (format !== 'gemini' || !hasEmptyText(loose))) return message;
  // A plain string message is already a Responses "easy input message".
  if (format === 'openai-responses' && typeof loose.content === 'string') return message;
  const memo = shownMemo.get(message);
  if (memo && memo.format === format) return memo.shown;
  const shown = native ? withoutEmptyText(loose) : format === 'gemini' ? asGemini(loose) : asResponses(loose);
  shownMemo.set(message, { format, shown });
  return shown;
}

/** An empty text part with no thought signature: generateContent refuses it. */
function isEmptyTextPart(part: unknown): boolean {
  const p = part as Loose;
  return typeof p === 'object' && p !== null && p.text === '' && p.thoughtSignature === undefined;
}

function hasEmptyText(content: Loose): boolean {
  return Array.isArray(content.parts) && content.parts.some(isEmptyTextPart);
}

/** A Gemini content without its empty text parts (signed parts stay as they are). */
function withoutEmptyText(content: Loose): Message | undefined {
  const parts = (content.parts as unknown[]).filter((p) => !isEmptyTextPart(p));
  return parts.length === 0 ? undefined : (freezeDeep({ ...content, parts }) as unknown as Message);
}

/** Entries as the atom builders read them, with where each stands in the stored history. */
export interface ShownEntries {
  entries: HistoryEntry[];
  /** `at[k]`: the index in the stored entries of `entries[k]`. */
  at: number[];
}

/**
 * The entries from `from` on as the atom builders read them: plain messages in the conversation's
 * format (see `shownMessage`), and those with nothing to send left out. Stored entries are never
 * changed; a changed one is a new entry object with the same seq and metadata.
 */
export function shownEntries(
  entries: readonly HistoryEntry[],
  from: number,
  format: MessageFormat,
): ShownEntries {
  const out: ShownEntries = { entries: [], at: [] };
  for (let k = from; k < entries.length; k++) {
    const entry = entries[k]!;
    const shown = shownMessage(entry.message, format);
    if (shown === undefined) continue;
    out.entries.push(shown === entry.message ? entry : { ...entry, message: shown });
    out.at.push(k);
  }
  return out;
}
