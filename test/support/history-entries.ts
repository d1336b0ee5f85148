/** Stored history entries for tests that hand messages to what reads a history. */
import type { HistoryEntry, Message } from '../../src/messages/types.js';

/** The timestamp entries carry unless a test gives one. */
export const ENTRY_TIMESTAMP = '2024-01-01T00:00:00.000Z';

/** One stored entry: `message` at `seq`, stamped `timestamp`. */
export function historyEntry(seq: number, message: Message, timestamp = ENTRY_TIMESTAMP): HistoryEntry {
  return { seq, message, metadata: { timestamp } };
}

/** `messages` as stored entries in order, their seqs from `first` on. */
export function historyEntries(messages: readonly Message[], first = 0): HistoryEntry[] {
  return messages.map((message, i) => historyEntry(first + i, message));
}
