/**
 * A conversation's format is fixed by the first message that shows one; the plain messages stored
 * before it (`{ role, content }` with string content or text parts) fitted every format then, but
 * not every format takes them as they are: Gemini wants `parts` and the `model` role, the
 * Responses API wants `input_text` / `output_text` parts. Views show such a message in the
 * conversation's format (`WireFormat.shownMessage`), and a Gemini content without the empty text
 * parts the API refuses; the stored message stays as it came. Stored entries are never changed; a
 * changed one is a new entry object with the same seq and metadata.
 */

import type { WireFormat } from '../formats/wire-format.js';
import type { HistoryEntry, Message } from '../messages/types.js';
import { formatEvidence } from './detect.js';

const shownMemo = new WeakMap<Message, { format: string; shown: Message | undefined }>();

/**
 * The message a view in `format` shows for a stored one: the message itself, a new frozen one in
 * the format's shape, or undefined when it has nothing to send. Memoized per message.
 */
export function shownMessage(message: Message, format: WireFormat<Message>): Message | undefined {
  if (format.shownMessage === undefined) return message;
  const memo = shownMemo.get(message);
  if (memo && memo.format === format.name) return memo.shown;
  const shown = format.shownMessage(message, formatEvidence(message) !== undefined);
  // The message itself needs no memo: shown as it is, it costs one evidence scan.
  if (shown !== message) shownMemo.set(message, { format: format.name, shown });
  return shown;
}

/** Entries as the atom builders read them, with where each stands in the stored history. */
export interface ShownEntries {
  entries: HistoryEntry[];
  /** `at[k]`: the index in the stored entries of `entries[k]`. */
  at: number[];
}

/** The entries from `from` on as the atom builders read them (see the module note). */
export function shownEntries(
  entries: readonly HistoryEntry[],
  from: number,
  format: WireFormat<Message>,
  end = entries.length,
): ShownEntries {
  const out: ShownEntries = { entries: [], at: [] };
  for (let k = from; k < end; k++) {
    const entry = entries[k]!;
    const shown = shownMessage(entry.message, format);
    if (shown === undefined) continue;
    out.entries.push(shown === entry.message ? entry : { ...entry, message: shown });
    out.at.push(k);
  }
  return out;
}
