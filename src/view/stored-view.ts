/**
 * The stored view record (issue 32 item 1): what a worker that has never loaded a conversation
 * needs to serve its turn from the rows the view holds instead of the whole history. Written beside
 * the conversation's plan (in its metadata, field `storedView`) by a worker that built the view
 * from the whole history; read by one that has not. It holds the closed part of the view as it was
 * built: for each message, the stored seq it shows (a run of seqs is one pair), or which of the
 * plan's own messages it is (the plan makes those again), or the message itself where the plan
 * edited it (a cleared result, a repair); each message's tokens; how many stored entries that part
 * covers; the digest of the plan it was built under and the store generation; and, where the format
 * wants tool ids unique, a filter of the ids it showed. The rows after it are read and grouped as
 * appends would bring them.
 *
 * The record is checked against its own digest, the plan stored beside it (digest), the store's
 * generation, the counter and the format: any mismatch, a corrupt or tampered record, or one
 * another version wrote, is not used (the whole history is loaded, with a warning where the record
 * was unreadable), so a record can only ever make a turn cheaper, never its view different.
 */

import { createHash } from 'node:crypto';
import type { Message, MessageFormat } from '../messages/types.js';
import type { PrefixSource } from './view.js';

/** The record's version: a record of another is not used. */
export const STORED_VIEW_VERSION = 1;

/** One item of the stored prefix: a run of stored seqs, one of the plan's messages, or a message. */
export type StoredViewItem =
  | [from: number, to: number]
  | { facts: true }
  | { pinned: true }
  | { summary: number }
  | { message: Message };

/** The record as a worker reads it back (see the module note). */
export interface StoredView {
  v: typeof STORED_VIEW_VERSION;
  /** The store generation the record was built in (`ConversationStore.epoch`). */
  epoch: string | null;
  /** Digest of the stored plan it was built under (`storedPlanSum`), null when there was none. */
  plan: string | null;
  counterId: string;
  /** The format the view was built in: the conversation's, or the request's while it showed none. */
  format: MessageFormat;
  /** The conversation showed no format yet (plain messages): the view was built in the request's. */
  formatless?: true;
  /** How many stored entries the prefix covers: the rows from this seq on follow it. */
  entries: number;
  items: StoredViewItem[];
  /** Tokens of each message of the prefix, in order. */
  counts: number[];
  /** Filter of the tool ids the prefix's atoms showed (formats whose ids must be unique). */
  ids?: string;
}

/** The record as kept in the metadata: its JSON as text (a `jsonb` column would reorder keys) and that text's digest. */
export function encodeStoredView(record: StoredView): { body: string; sum: string } {
  const body = JSON.stringify(record);
  return { body, sum: createHash('sha256').update(body).digest('base64url') };
}

/**
 * The record kept in metadata, or why it cannot be used: `absent` (none), `unreadable` (corrupt,
 * tampered with, or from another version: a warning is due).
 */
export function decodeStoredView(value: unknown): StoredView | 'absent' | 'unreadable' {
  if (value === undefined || value === null) return 'absent';
  const kept = value as { body?: unknown; sum?: unknown };
  if (typeof kept.body !== 'string' || typeof kept.sum !== 'string') return 'unreadable';
  if (createHash('sha256').update(kept.body).digest('base64url') !== kept.sum) return 'unreadable';
  let record: Partial<StoredView>;
  try {
    record = JSON.parse(kept.body) as Partial<StoredView>;
  } catch {
    return 'unreadable';
  }
  if (!isRecord(record)) return 'unreadable';
  return record;
}

function isRecord(r: Partial<StoredView>): r is StoredView {
  if (typeof r !== 'object' || r === null || r.v !== STORED_VIEW_VERSION) return false;
  if (!(r.epoch === null || typeof r.epoch === 'string')) return false;
  if (!(r.plan === null || typeof r.plan === 'string')) return false;
  if (typeof r.counterId !== 'string' || typeof r.format !== 'string') return false;
  if (!Number.isSafeInteger(r.entries) || r.entries! < 0) return false;
  if (!Array.isArray(r.items) || !Array.isArray(r.counts)) return false;
  if (r.ids !== undefined && typeof r.ids !== 'string') return false;
  if (r.formatless !== undefined && r.formatless !== true) return false;
  if (!r.counts.every((n) => Number.isSafeInteger(n) && n >= 0)) return false;
  let messages = 0;
  let next = 0;
  for (const item of r.items) {
    if (Array.isArray(item)) {
      const [from, to] = item;
      // Runs ascend and stay within the entries covered.
      if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < next || to < from) return false;
      if (to >= r.entries!) return false;
      next = to + 1;
      messages += to - from + 1;
      continue;
    }
    if (typeof item !== 'object' || item === null) return false;
    const keys = Object.keys(item);
    if (keys.length !== 1) return false;
    const ok =
      ('facts' in item && item.facts === true) ||
      ('pinned' in item && item.pinned === true) ||
      ('summary' in item && Number.isSafeInteger(item.summary) && item.summary >= 0) ||
      ('message' in item && typeof item.message === 'object' && item.message !== null);
    if (!ok) return false;
    messages++;
  }
  return messages === r.counts.length;
}

/**
 * The prefix's items from the view's closed part: consecutive seqs joined into runs, the plan's
 * messages named, every other message kept whole. `shows(seq)` is the message a view shows for a
 * stored seq when the plan leaves it as it is (what a reader makes of the row): a message said to
 * show a seq but different from it is kept whole.
 */
export function prefixItems(
  messages: readonly Message[],
  sources: ReadonlyArray<number | PrefixSource | null>,
  shows: (seq: number) => Message | undefined,
): StoredViewItem[] {
  const items: StoredViewItem[] = [];
  let last = -1;
  messages.forEach((message, i) => {
    const source = sources[i];
    if (typeof source === 'number') {
      const shown = shows(source);
      if (shown !== undefined && source > last && JSON.stringify(shown) === JSON.stringify(message)) {
        const run = items.at(-1);
        if (Array.isArray(run) && run[1] === source - 1) run[1] = source;
        else items.push([source, source]);
        last = source;
        return;
      }
    } else if (source) {
      items.push(
        source.facts ? { facts: true } : source.pinned ? { pinned: true } : { summary: source.summary! },
      );
      return;
    }
    items.push({ message });
  });
  return items;
}

// --------------------------------------------------------------------------------- tool id filter

/** Bits per id and probes of the filter: about one false "maybe" in a hundred. */
const BITS_PER_ID = 10;
const PROBES = 7;

/** A Bloom filter of `ids`, as base64 text (its first four bytes: the probe count and size). */
export function idFilter(ids: Iterable<string>): string | undefined {
  const list = [...ids];
  if (list.length === 0) return undefined;
  const bits = Math.max(64, list.length * BITS_PER_ID);
  const bytes = new Uint8Array(Math.ceil(bits / 8));
  for (const id of list) for (const bit of probes(id, bytes.length * 8)) bytes[bit >> 3]! |= 1 << (bit & 7);
  return Buffer.from(bytes).toString('base64');
}

/** Whether the filter may hold `id` (false: it certainly does not). */
export function filterMayHold(filter: string | undefined): (id: string) => boolean {
  if (filter === undefined) return () => false;
  const bytes = Buffer.from(filter, 'base64');
  const size = bytes.length * 8;
  if (size === 0) return () => false;
  return (id) => probes(id, size).every((bit) => (bytes[bit >> 3]! & (1 << (bit & 7))) !== 0);
}

/** The filter's bit positions for an id: two 32-bit FNV-1a hashes, combined (double hashing). */
function probes(id: string, size: number): number[] {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x5bd1e995) >>> 0;
  }
  // `| 1` gives a signed 32-bit value: made unsigned again, so every position is within the filter.
  const step = (b | 1) >>> 0;
  const out: number[] = [];
  for (let k = 0; k < PROBES; k++) out.push((a + k * step) % size);
  return out;
}
