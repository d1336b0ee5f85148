/**
 * The digest a record kept as JSON beside a conversation carries of itself (issue 32: a plan
 * record that is corrupt or was changed is rebuilt from the history, never used). The compaction
 * plan and the summary prepared ahead keep, under the key `sum`, the SHA-256 of their JSON text
 * without it: a record whose `sum` is missing or does not hold was damaged, changed by hand, or
 * written by a version that kept none, and is not used. The stored view record keeps its text
 * and its digest apart instead (see src/view/stored-view.ts).
 *
 * What it holds against: a damaged row, a hand edit, a writer that does not know the record. Not
 * against one who recomputes the digest: whoever can write the metadata can write the messages.
 */

import { createHash } from 'node:crypto';

/** The digest of `record`'s JSON text without its `sum` key (key order as it stands). */
export function recordSum(record: Readonly<Record<string, unknown>>): string {
  const { sum: _, ...rest } = record;
  return createHash('sha256').update(JSON.stringify(rest)).digest('base64url');
}

/** `record` with its `sum`, last (any `sum` it held is replaced). */
export function withSum<T extends Record<string, unknown>>(record: T): T & { sum: string } {
  const { sum: _, ...rest } = record;
  return { ...rest, sum: recordSum(rest) } as T & { sum: string };
}

/** The record's `sum` when it holds (it is the digest of the rest), else undefined. */
export function heldSum(record: unknown): string | undefined {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return undefined;
  const sum = (record as { sum?: unknown }).sum;
  if (typeof sum !== 'string') return undefined;
  return recordSum(record as Record<string, unknown>) === sum ? sum : undefined;
}
