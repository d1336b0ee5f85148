/**
 * Token counts kept with stored entries (issue 24 item 3), as every driver stores them: each
 * entry's counts by tokenizer key, tied to the bytes of the message they were made from by a
 * digest, so a count whose message changed since (a hand edit, a damaged row) is left out on
 * read and recounted, never trusted. Counts are a cache: a damaged or missing record is simply
 * no count, never an error.
 */

import { hash } from 'node:crypto';
import { StoreError } from '../errors.js';
import { validateConversationId } from './keys.js';
import type { EntryCounts, EntryCountsUpdate, NewEntry, StoredEntry } from './types.js';

/** At most this many tokenizers' counts are kept per entry; past it the oldest keys give way. */
export const MAX_COUNT_KEYS = 8;
const MAX_KEY_CHARS = 200;

/** What a driver stores for an entry's counts: the digest of the message bytes and the counts. */
export interface CountsRecord {
  /** `countsDigest` of the message as stored when the counts were kept. */
  d: string;
  c: EntryCounts;
}

/** Characters of a `countsDigest`: the first 132 bits of the sha256 in base64url. */
const DIGEST_CHARS = 22;

/** A short digest (sha256, 132 bits in base64url) of a stored message's bytes. */
export function countsDigest(bytes: string | Uint8Array): string {
  return hash('sha256', bytes, 'base64url').slice(0, DIGEST_CHARS);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether `value` is usable as counts: keys of 1–200 characters, each a non-negative integer. */
function countsIssue(value: unknown): string | undefined {
  if (!isPlainObject(value)) return 'must be an object of tokenizer key → tokens';
  const keys = Object.keys(value);
  if (keys.length > MAX_COUNT_KEYS) return `holds ${keys.length} keys, more than ${MAX_COUNT_KEYS}`;
  for (const key of keys) {
    if (key.length === 0 || key.length > MAX_KEY_CHARS)
      return `key ${JSON.stringify(key.slice(0, 40))} must have 1 to ${MAX_KEY_CHARS} characters`;
    const n = value[key];
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
      return `${JSON.stringify(key)} must be a non-negative integer, got ${JSON.stringify(n) ?? typeof n}`;
  }
  return undefined;
}

/**
 * Refuses (`StoreError`, code `invalid_argument`, with the path) counts that are not an object
 * of tokenizer key → non-negative integer; `undefined` passes (no counts).
 */
export function validateEntryCounts(conversationId: string, where: string, value: unknown): void {
  if (value === undefined) return;
  const issue = countsIssue(value);
  if (issue) throw new StoreError(conversationId, `${where} ${issue}`, { code: 'invalid_argument' });
}

/** Checks a `saveCounts` batch: an array of `{ seq, counts }`. */
export function validateCountsUpdates(
  conversationId: string,
  updates: unknown,
): asserts updates is readonly EntryCountsUpdate[] {
  if (!Array.isArray(updates)) {
    throw new StoreError(conversationId, 'counts updates must be an array', { code: 'invalid_argument' });
  }
  updates.forEach((update: unknown, i) => {
    const seq = isPlainObject(update) ? update.seq : undefined;
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) {
      throw new StoreError(conversationId, `updates[${i}].seq must be a non-negative integer`, {
        code: 'invalid_argument',
      });
    }
    validateEntryCounts(conversationId, `updates[${i}].counts`, (update as EntryCountsUpdate).counts);
    if ((update as EntryCountsUpdate).counts === undefined) {
      throw new StoreError(conversationId, `updates[${i}].counts is missing`, { code: 'invalid_argument' });
    }
  });
}

/** The generation a `saveCounts` names: a valid token, or `null` for a conversation without one. */
export function countsEpoch(
  conversationId: string,
  options: { epoch: string | null } | undefined,
): string | null {
  const epoch = options?.epoch;
  if (epoch === null) return null;
  if (typeof epoch !== 'string' || epoch.length === 0 || epoch.length > 200) {
    throw new StoreError(conversationId, 'saveCounts: epoch must be a generation token or null', {
      code: 'invalid_argument',
    });
  }
  return epoch;
}

/**
 * Checks a `saveCounts` call (the id, the updates, the generation) before any I/O; resolves the
 * generation it names.
 */
export function checkSaveCounts(
  conversationId: string,
  updates: unknown,
  options: { epoch: string | null } | undefined,
): string | null {
  validateConversationId(conversationId);
  validateCountsUpdates(conversationId, updates);
  return countsEpoch(conversationId, options);
}

/** The counts an entry holds with the updates of its seq merged in, in order. */
export function withUpdates(
  held: EntryCounts | undefined,
  seq: number,
  updates: readonly EntryCountsUpdate[],
): EntryCounts {
  let counts = held ?? {};
  for (const update of updates) if (update.seq === seq) counts = mergeCounts(counts, update.counts);
  return counts;
}

/** `base` with `added` merged in (a key given replaces the same key), at most `MAX_COUNT_KEYS` kept. */
export function mergeCounts(base: EntryCounts | undefined, added: EntryCounts): EntryCounts {
  const merged: EntryCounts = {};
  for (const [key, n] of Object.entries(base ?? {})) if (!(key in added)) merged[key] = n;
  Object.assign(merged, added);
  const keys = Object.keys(merged);
  for (const key of keys.slice(0, Math.max(0, keys.length - MAX_COUNT_KEYS))) delete merged[key];
  return merged;
}

/** The record to store for counts of the message stored as `bytes` (null when there are none). */
export function encodeCounts(bytes: string | Uint8Array, counts: EntryCounts | undefined): string | null {
  if (counts === undefined || Object.keys(counts).length === 0) return null;
  const record: CountsRecord = { d: countsDigest(bytes), c: counts };
  return JSON.stringify(record);
}

/** A stored record as a value: text parsed (undefined when it is not JSON), anything else as it is. */
function parsedRecord(stored: unknown): unknown {
  if (typeof stored !== 'string') return stored;
  try {
    return JSON.parse(stored);
  } catch {
    return undefined;
  }
}

/** A stored counts record as text or parsed, or undefined when it is not one (damaged: no counts). */
export function parseCountsRecord(stored: unknown): CountsRecord | undefined {
  const value = parsedRecord(stored);
  if (!isPlainObject(value) || typeof value.d !== 'string' || countsIssue(value.c) !== undefined)
    return undefined;
  return { d: value.d, c: value.c as EntryCounts };
}

/**
 * How many keys `value` holds when it is usable as counts (`countsIssue` finds nothing), else -1;
 * told without making a list of its keys (a read decodes a record per row).
 */
function usableCountKeys(value: unknown): number {
  if (!isPlainObject(value)) return -1;
  let keys = 0;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (++keys > MAX_COUNT_KEYS || key.length === 0 || key.length > MAX_KEY_CHARS) return -1;
    const n = value[key];
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) return -1;
  }
  return keys;
}

/**
 * The counts of a stored record that still hold for the message stored as `bytes`: undefined
 * when there is no record, it is damaged, holds no counts, or the message changed since (its
 * digest differs). What `parseCountsRecord` takes, checked as it checks it, without its copies.
 */
export function decodeCounts(stored: unknown, bytes: string | Uint8Array): EntryCounts | undefined {
  if (stored === null || stored === undefined) return undefined;
  const record = usableRecord(parsedRecord(stored));
  // `d === countsDigest(bytes)`, without cutting the digest to compare it.
  if (record === undefined || record.d.length !== DIGEST_CHARS) return undefined;
  return hash('sha256', bytes, 'base64url').startsWith(record.d) ? record.c : undefined;
}

/** `value` as a record when it is one (a digest, and counts `usableCountKeys` takes), else undefined. */
function usableRecord(value: unknown): CountsRecord | undefined {
  if (!isPlainObject(value) || typeof value.d !== 'string' || usableCountKeys(value.c) <= 0) return undefined;
  return value as unknown as CountsRecord;
}

/** How many distinct counts a `CountsRecords` keeps the decoding of. */
const DECODED_COUNTS = 4096;

/** How a record `encodeCounts` wrote begins: `{"d":"`, the digest, `","c":{`. */
const RECORD_HEAD = '{"d":"';
const COUNTS_HEAD = '","c":{';
const COUNTS_AT = RECORD_HEAD.length + DIGEST_CHARS + COUNTS_HEAD.length - 1;

/** Whether `code` is a character of base64url (a digest's). */
function isDigestChar(code: number): boolean {
  return (
    (code >= 48 && code <= 57) || // 0-9
    (code >= 65 && code <= 90) || // A-Z
    (code >= 97 && code <= 122) || // a-z
    code === 45 || // -
    code === 95 // _
  );
}

/**
 * The counts of a record as `encodeCounts` writes it, as JSON text (`{"d":"<digest>","c":<counts>}`
 * gives `<counts>`), or undefined when it is not written so. Told without a regular expression:
 * a read takes one per row.
 */
function encodedCountsText(stored: string): string | undefined {
  if (
    stored.length <= COUNTS_AT + 2 ||
    !stored.startsWith(RECORD_HEAD) ||
    !stored.startsWith(COUNTS_HEAD, RECORD_HEAD.length + DIGEST_CHARS) ||
    stored.charCodeAt(stored.length - 1) !== 125 // }
  )
    return undefined;
  for (let i = RECORD_HEAD.length; i < RECORD_HEAD.length + DIGEST_CHARS; i++)
    if (!isDigestChar(stored.charCodeAt(i))) return undefined;
  return stored.slice(COUNTS_AT, -1);
}

/**
 * Decodes the counts records a driver reads for a store that keeps them true to their message
 * itself (SQLite and Postgres clear an entry's counts, by trigger, in the statement that changes
 * its message), so the digest is not checked against the message again. A record is still checked as a record and its
 * counts as counts: anything else is no count. Records of equal counts (a read of many rows holds
 * one per token count seen) are parsed once and share one frozen object.
 */
export class CountsRecords {
  /** Decoded counts by their text; `null` where the text is no JSON (the record holds more keys). */
  readonly #decoded = new Map<string, EntryCounts | undefined | null>();

  decode(stored: unknown): EntryCounts | undefined {
    if (typeof stored !== 'string') return undefined;
    const text = encodedCountsText(stored);
    if (text === undefined) return this.#unusual(stored);
    let decoded = this.#decoded.get(text);
    if (decoded === undefined && !this.#decoded.has(text)) {
      const value = parsedRecord(text);
      decoded =
        value === undefined
          ? null
          : usableCountKeys(value) > 0
            ? Object.freeze(value as EntryCounts)
            : undefined;
      if (this.#decoded.size < DECODED_COUNTS) this.#decoded.set(text, decoded);
    }
    return decoded === null ? this.#unusual(stored) : decoded;
  }

  /** A record not written as `encodeCounts` writes it (spaced, keys reordered, damaged). */
  #unusual(stored: string): EntryCounts | undefined {
    return usableRecord(parsedRecord(stored))?.c;
  }
}

/** `entry` with `counts` set when there are any (never an `undefined` property). */
export function withCounts(entry: StoredEntry, counts: EntryCounts | undefined): StoredEntry {
  if (counts !== undefined) entry.counts = counts;
  return entry;
}

/**
 * The counts records of new entries, each tied to its message as serialized (`rows`, from
 * `serializeEntries`): what the drivers that store text keep beside each entry.
 */
export function newCountsRecords(
  entries: readonly NewEntry[],
  rows: ReadonlyArray<readonly [string, string]>,
): Array<string | null> {
  return entries.map((entry, i) => encodeCounts((rows[i] as readonly [string, string])[1], entry.counts));
}
