/**
 * Summaries prepared ahead as stored state (issue 32: the plan is stored state, and workers
 * agree). What a worker prepared for the next compaction lives beside the conversation (metadata
 * field `ahead`): where the preparation stands (the plan it prepares the successor of, the usage
 * it was planned at, whether its range is settled, the range's seqs) and, once back, the model's
 * summary and facts. A worker that never saw the preparation then neither prepares it again (a
 * worker serving from the stored view record would load the whole history for it) nor asks the
 * model again, and its compaction takes the model's summary as the worker that asked would.
 *
 * The model's answer is bound to the messages it was asked about by a digest of each one's
 * content, and to the summary it built on by that summary's digest: it is taken only where every
 * one of those messages is still stored as it was and the previous summary is the same, so a
 * summary of other messages (a history replaced or edited since, another process's) never gets
 * in. The record keeps the digest of its own JSON (`sum`, src/record-sum.ts): one changed where it
 * is kept (the model's summary rewritten by hand, say) is not taken. A record of another
 * generation or plan, of another version, not of this shape or whose sum does not hold is
 * ignored: the preparation is then made again, as before it was stored.
 */

import { createHash } from 'node:crypto';
import type { HistoryEntry } from '../messages/types.js';
import { heldSum } from '../record-sum.js';

/** The record's version: a record of another is ignored. */
export const STORED_AHEAD_VERSION = 1;

/** The model's answer for some of the range, as stored. */
export interface StoredAheadMemory {
  /** Digest of the summary it built on (`textDigest`), null for none. */
  previous: string | null;
  focus: string | null;
  /** The room the plan gave the summary. */
  maxTokens: number;
  /** The messages it summarizes: seq and content digest (`entryDigest`), ascending. */
  entries: Array<[number, string]>;
  /** The messages it read for facts, likewise. */
  factEntries: Array<[number, string]>;
  summary: string;
  /** The model's fact items as it gave them (checked against the messages again when taken). */
  facts: unknown[];
}

/** Where a preparation stands, as stored. */
export interface StoredAhead {
  v: typeof STORED_AHEAD_VERSION;
  /** The store generation it was made in. */
  epoch: string | null;
  /** Digest of the stored plan it prepares the successor of (see `storedPlanSum`), null for none. */
  plan: string | null;
  triedAt: number;
  settled: boolean;
  /** Seqs of every message of the range prepared. */
  seqs: number[];
  memory?: StoredAheadMemory;
}

/**
 * The plan made ahead for the successor of the stored plan (`AheadState.spec`), kept beside the
 * conversation under its own key (`aheadSpec`, with its own sum) so that a worker that did not
 * prepare it compacts with it as the worker that did: the same range, so the model's summary of it
 * stands (before, such a worker planned afresh, and a range other than the one the model summarized
 * took an offline summary). Apart from `ahead`, which a worker serving from the stored view record
 * decodes at every turn: only a worker that loaded the history decodes this one.
 */
export interface StoredSpec {
  v: typeof STORED_AHEAD_VERSION;
  /** The store generation it was made in. */
  epoch: string | null;
  /** Digest of the stored plan it is the successor of (see `storedPlanSum`), null for none. */
  plan: string | null;
  /** The plan made ahead, as `encodePlan` keeps it, its summary's text left out (the compaction writes it). */
  spec: Record<string, unknown>;
  /** The messages its summary stands for: seq and content digest (`entryDigest`), ascending. */
  entries: Array<[number, string]>;
  /** Digest of the summary it builds on (`textDigest`), null for none. */
  previous: string | null;
  focus: string | null;
  /** The room the plan gives the summary. */
  maxTokens: number;
}

/** The stored plan made ahead, or undefined where there is none usable (absent, another version, not of this shape, its sum not holding). */
export function decodeStoredSpec(value: unknown): StoredSpec | undefined {
  const r = boundRecord<StoredSpec>(value);
  if (!r) return undefined;
  if (typeof r.spec !== 'object' || r.spec === null || !isDigested(r.entries)) return undefined;
  if (!(r.previous === null || typeof r.previous === 'string')) return undefined;
  if (!(r.focus === null || typeof r.focus === 'string') || !isSeq(r.maxTokens)) return undefined;
  return r as StoredSpec;
}

/** Digest of a stored message's content, binding a prepared answer to it. */
export function entryDigest(entry: HistoryEntry): string {
  return createHash('sha256').update(JSON.stringify(entry.message)).digest('base64url').slice(0, 22);
}

/** Digest of a summary text (null for none). */
export function textDigest(text: string | undefined): string | null {
  return text === undefined ? null : createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

/** The stored record, or undefined where there is none usable (absent, another version, not of this shape, its sum not holding). */
export function decodeStoredAhead(value: unknown): StoredAhead | undefined {
  const r = boundRecord<StoredAhead>(value);
  if (!r) return undefined;
  if (typeof r.triedAt !== 'number' || !Number.isFinite(r.triedAt) || typeof r.settled !== 'boolean')
    return undefined;
  if (!Array.isArray(r.seqs) || !r.seqs.every(isSeq)) return undefined;
  if (r.memory !== undefined && !isMemory(r.memory)) return undefined;
  return r as StoredAhead;
}

/**
 * `value` as a record of this version bound to a generation and a plan digest, its sum holding
 * (src/record-sum.ts: a record changed where it is kept is not taken); undefined otherwise. Its
 * other fields are the caller's to check.
 */
function boundRecord<T extends { v: number; epoch: string | null; plan: string | null }>(
  value: unknown,
): Partial<T> | undefined {
  if (typeof value !== 'object' || value === null || heldSum(value) === undefined) return undefined;
  const r = value as Partial<T>;
  if (r.v !== STORED_AHEAD_VERSION) return undefined;
  if (!(r.epoch === null || typeof r.epoch === 'string')) return undefined;
  if (!(r.plan === null || typeof r.plan === 'string')) return undefined;
  return r;
}

function isSeq(n: unknown): n is number {
  return Number.isSafeInteger(n) && (n as number) >= 0;
}

function isDigested(list: unknown): list is Array<[number, string]> {
  return (
    Array.isArray(list) &&
    list.every(
      (pair) => Array.isArray(pair) && pair.length === 2 && isSeq(pair[0]) && typeof pair[1] === 'string',
    )
  );
}

function isMemory(m: unknown): m is StoredAheadMemory {
  if (typeof m !== 'object' || m === null) return false;
  const memory = m as Partial<StoredAheadMemory>;
  return (
    (memory.previous === null || typeof memory.previous === 'string') &&
    (memory.focus === null || typeof memory.focus === 'string') &&
    isSeq(memory.maxTokens) &&
    isDigested(memory.entries) &&
    isDigested(memory.factEntries) &&
    typeof memory.summary === 'string' &&
    Array.isArray(memory.facts)
  );
}

/**
 * The stored messages a memory names, each still stored as it was (`stored` indexed by seq);
 * undefined where one is not.
 */
export function storedEntriesOf(
  digested: ReadonlyArray<readonly [number, string]>,
  stored: readonly HistoryEntry[],
): HistoryEntry[] | undefined {
  const out: HistoryEntry[] = [];
  for (const [seq, digest] of digested) {
    const entry = stored[seq];
    if (!entry || entry.seq !== seq || entryDigest(entry) !== digest) return undefined;
    out.push(entry);
  }
  return out;
}
