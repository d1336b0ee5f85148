/**
 * A whole conversation made ready to be written (`replace`: `setMessages`, an import), in slices
 * that yield (issue 32: no event-loop stall over 50 ms in a `setMessages`). Serializing, checking
 * and digesting 100,000 messages took 0.6–1 s in one stretch on every driver; here the same work
 * runs {@link SLICE_MS}-long slices at a time, with the same results and the same errors in the
 * same order as `serializeEntries` gives.
 */

import { searchText } from '../recall/turn-text.js';
import { mapInSlices, Slices } from '../slices.js';
import { encodeCounts } from './entry-counts.js';
import { stringifyForStore } from './stored-json.js';
import type { NewEntry } from './types.js';
import { checkEntryValues, checkReplaceArgumentsInSlices } from './validate.js';

/** The JSON bytes a driver writes per batch at most before it lets the event loop run again. */
export const WRITE_CHUNK_BYTES = 1 << 20;

/**
 * `serializeEntries` in slices: each entry's metadata and message as JSON text, after the same
 * checks in the same order (the depth of every entry, then serialization, then the rest).
 */
export async function serializeInSlices(
  conversationId: string,
  entries: readonly NewEntry[],
  slices: Slices = new Slices(),
): Promise<Array<[string, string]>> {
  const one = (entry: NewEntry, i: number, depthOnly: boolean) => {
    checkEntryValues(conversationId, [entry], { depthOnly }, i);
  };
  await mapInSlices(entries, (entry, i) => one(entry, i, true), slices);
  const rows = await mapInSlices(
    entries,
    (entry, i): [string, string] => [
      stringifyForStore(conversationId, `entries[${i}].metadata`, entry.metadata),
      stringifyForStore(conversationId, `entries[${i}].message`, entry.message),
    ],
    slices,
  );
  await mapInSlices(entries, (entry, i) => one(entry, i, false), slices);
  return rows;
}

/** Each entry's counts record (`encodeCounts` of the text it is tied to), in slices. */
export function countsInSlices(
  entries: readonly NewEntry[],
  texts: readonly string[],
  slices: Slices,
): Promise<Array<string | null>> {
  return mapInSlices(entries, (entry, i) => encodeCounts(texts[i] as string, entry.counts), slices);
}

/** The searchable text of each entry (recall's index), in slices. */
export function searchTextsInSlices(entries: readonly NewEntry[], slices: Slices): Promise<string[]> {
  return mapInSlices(entries, (entry) => searchText(entry.message), slices);
}

/**
 * Indices cutting `sizes` into runs of at most {@link WRITE_CHUNK_BYTES} (at least one item each):
 * `[start, end)` pairs in order.
 */
export function writeChunks(sizes: readonly number[], maxBytes = WRITE_CHUNK_BYTES): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < sizes.length; i++) {
    if (i > start && bytes + (sizes[i] as number) > maxBytes) {
      out.push([start, i]);
      start = i;
      bytes = 0;
    }
    bytes += sizes[i] as number;
  }
  if (start < sizes.length) out.push([start, sizes.length]);
  return out;
}

/** A replace's rows as the SQL drivers write them, made ready in slices (see `prepareSqlReplace`). */
export interface SqlReplace {
  /** The generation the conversation takes. */
  epoch: string;
  /** Each entry's metadata and message as JSON text. */
  rows: Array<[string, string]>;
  /** Each entry's counts record, tied to its message text. */
  counts: Array<string | null>;
  /** Each entry's searchable text (the full-text index). */
  texts: string[];
  /** The rows cut into write chunks (`writeChunks`). */
  chunks: Array<[number, number]>;
}

/** What SQLite and Postgres write for a replace, checked and made in slices that yield. */
export async function prepareSqlReplace(
  conversationId: string,
  entries: readonly NewEntry[],
  options: { epoch?: string } | undefined,
): Promise<SqlReplace> {
  const slices = new Slices();
  const epoch = await checkReplaceArgumentsInSlices(conversationId, entries, options, slices);
  const rows = await serializeInSlices(conversationId, entries, slices);
  const counts = await countsInSlices(
    entries,
    rows.map((row) => row[1]),
    slices,
  );
  const texts = await searchTextsInSlices(entries, slices);
  const chunks = writeChunks(rows.map(([metadata, message]) => metadata.length + message.length));
  return { epoch, rows, counts, texts, chunks };
}
