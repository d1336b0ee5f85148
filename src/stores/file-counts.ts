/**
 * The file store's token counts (issue 24 item 3), kept beside the log in `NAME.counts`:
 * one line `{"seq":N,"d":DIGEST,"c":{KEY:TOKENS,…}}` per entry counted, appended after the
 * log's own write (not flushed: counts are a cache, and a line lost or torn in a crash is only
 * a count made again). `d` is the digest of the entry's log line after its `{"seq":N,` prefix
 * (its metadata and message bytes), so a line whose bytes changed since, or a seq that now
 * holds another entry, finds no count. Lines of one seq merge in file order.
 */

import { Slices } from '../slices.js';
import {
  type CountsRecord,
  countsDigest,
  mergeCounts,
  parseCountsRecord,
  withCounts,
} from './entry-counts.js';
import type { EntryCounts, StoredEntry } from './types.js';

const NEWLINE = 0x0a;
const PREFIX = /^\{"seq":\d+(?:,"batch":\d+)?,/;

/** The bytes of a log line (without its newline) that a count is tied to: all after `{"seq":N,`. */
export function lineBody(line: Buffer): Buffer {
  const head = PREFIX.exec(line.toString('latin1', 0, Math.min(line.length, 48)));
  return head ? line.subarray(head[0].length) : line;
}

/** The counts-file line of an entry whose log line is `line`. */
export function countsLine(seq: number, line: Buffer, counts: EntryCounts): string {
  return `{"seq":${seq},"d":${JSON.stringify(countsDigest(lineBody(line)))},"c":${JSON.stringify(counts)}}\n`;
}

/** The lines of a batch's bytes (each ending in a newline), without their newlines. */
export function splitLines(data: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  while (start < data.length) {
    let nl = data.indexOf(NEWLINE, start);
    if (nl === -1) nl = data.length;
    lines.push(data.subarray(start, nl));
    start = nl + 1;
  }
  return lines;
}

/**
 * The records of a counts file by seq, in file order, for seqs in `[from, to)`. A line that is
 * not a record (torn by a crash, edited by hand) is no count.
 */
export function parseCountsFile(text: string, from: number, to: number): Map<number, CountsRecord[]> {
  const parser = countsParser(from, to);
  for (const line of text.split('\n')) parser.line(line);
  return parser.bySeq;
}

/**
 * `parseCountsFile` a slice at a time, yielding between slices (a long conversation's counts).
 * Only the lines of seqs in range are parsed: the seq is read off each line's `{"seq":N,` prefix
 * first (a worker reading the rows of one view reads a few lines of a long file's thousands).
 */
export async function parseCountsFileInSlices(
  text: string,
  from: number,
  to: number,
  slices: Slices = new Slices(),
): Promise<Map<number, CountsRecord[]>> {
  const parser = countsParser(from, to);
  let lines = 0;
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const seq = leadingSeq(text, start);
    // A line whose prefix is not read as a seq goes to the parser, which decides.
    if (seq === undefined || (seq >= from && seq < to)) parser.line(text.slice(start, end));
    start = end + 1;
    // The clock read every few hundred lines: most lines cost a prefix check.
    if (++lines % 256 === 0) {
      const pause = slices.step();
      if (pause) await pause;
    }
  }
  return parser.bySeq;
}

/** N of a line starting `{"seq":N,` at `at`, or undefined when it does not start so. */
function leadingSeq(text: string, at: number): number | undefined {
  if (!text.startsWith('{"seq":', at)) return undefined;
  let n = 0;
  let i = at + 7;
  const first = i;
  for (; i < text.length && i - first < 16; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
  }
  return i > first && text.charCodeAt(i) === 44 ? n : undefined;
}

function countsParser(
  from: number,
  to: number,
): { line: (line: string) => void; bySeq: Map<number, CountsRecord[]> } {
  const bySeq = new Map<number, CountsRecord[]>();
  const line = (text: string): void => {
    if (text.length === 0) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return;
    }
    const seq = (value as { seq?: unknown } | null)?.seq;
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < from || seq >= to) return;
    const record = parseCountsRecord(value);
    if (!record) return;
    const list = bySeq.get(seq);
    if (list) list.push(record);
    else bySeq.set(seq, [record]);
  };
  return { line, bySeq };
}

/**
 * Gives each entry the counts whose digest matches its log line in `bytes` (the log from the
 * line of `entries[0]` on, whole lines), merged in file order.
 */
export function attachCounts(
  entries: readonly StoredEntry[],
  bytes: Buffer,
  records: Map<number, CountsRecord[]>,
): void {
  if (records.size === 0) return;
  const lines = splitLines(bytes);
  entries.forEach((entry, i) => {
    const list = records.get(entry.seq);
    const line = lines[i];
    if (!list || !line) return;
    const digest = countsDigest(lineBody(line));
    let counts: EntryCounts | undefined;
    for (const record of list) if (record.d === digest) counts = mergeCounts(counts, record.c);
    withCounts(entry, counts);
  });
}
