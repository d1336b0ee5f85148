/**
 * The file store's token counts (issue 24 item 3), kept beside the log in `NAME.counts`:
 * one line `{"seq":N,"d":DIGEST,"c":{KEY:TOKENS,…}}` per entry counted, appended after the
 * log's own write (not flushed: counts are a cache, and a line lost or torn in a crash is only
 * a count made again). `d` is the digest of the entry's log line after its `{"seq":N,` prefix
 * (its metadata and message bytes), so a line whose bytes changed since, or a seq that now
 * holds another entry, finds no count. Lines of one seq merge in file order.
 */

import { type FileHandle, open } from 'node:fs/promises';
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

/** The first chunk {@link readCountsRange} reads from the end of a counts file; each next one is twice as large. */
const FIRST_CHUNK_BYTES = 64 * 1024;
/** The largest chunk it reads at once. */
const MAX_CHUNK_BYTES = 4 * 1024 * 1024;
/** Lines below the range in a row, read backwards, after which the range's records are all read. */
const STOP_AFTER_LINES_BELOW = 512;

/** What {@link readCountsRange} found, and how many bytes of the file it read for it. */
export interface CountsRange {
  bySeq: Map<number, CountsRecord[]>;
  bytesRead: number;
}

/**
 * The records of seqs in `[from, to)` of the counts file at `path` (none when it cannot be read),
 * read from its end backwards a chunk at a time, so that the counts of a conversation's last rows
 * (a worker serving a turn reads the rows after its view's record) cost what they hold, not the
 * whole file: 7.5 MB at 100,000 messages, read and scanned for every such read before.
 *
 * Lines are appended in seq order as entries are (a replace writes them in seq order too), and a
 * count made later for an older entry is appended then: every record of a seq from `from` on was
 * written after that entry was appended. So the scan stops once it has read
 * {@link STOP_AFTER_LINES_BELOW} lines in a row of seqs below `from`. A record it does not reach
 * (one written before a longer run of later counts of older entries, such as a manager counting
 * the whole history with a new tokenizer) is only a count the reader makes again: counts are a
 * cache, each tied to its line by digest, so a missing one is never a wrong one. Records of one seq
 * keep their file order. From seq 0 the whole file is read, as before.
 */
export async function readCountsRange(
  path: string,
  from: number,
  to: number,
  slices: Slices = new Slices(),
  firstChunk = FIRST_CHUNK_BYTES,
): Promise<CountsRange> {
  const parser = countsParser(from, to);
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch {
    return { bySeq: parser.bySeq, bytesRead: 0 };
  }
  // The in-range lines, from the file's last backwards.
  const found: string[] = [];
  let bytesRead = 0;
  let scanned = 0;
  // Lines below the range read since the last line in it.
  let below = 0;
  try {
    let end = (await handle.stat()).size;
    // The head of the later chunk's first line: the tail of a line that starts in this one.
    let carry: Buffer | undefined;
    scan: for (let chunk = firstChunk; end > 0; chunk = Math.min(chunk * 2, MAX_CHUNK_BYTES)) {
      const start = Math.max(0, end - chunk);
      const chunkBytes = Buffer.allocUnsafe(end - start);
      const { bytesRead: got } = await handle.read(chunkBytes, 0, chunkBytes.length, start);
      if (got !== chunkBytes.length) return { bySeq: new Map(), bytesRead };
      bytesRead += got;
      const bytes = carry ? Buffer.concat([chunkBytes, carry]) : chunkBytes;
      // Its first line starts in an earlier chunk unless this one starts the file.
      const first = start === 0 ? -1 : bytes.indexOf(NEWLINE);
      end = start;
      if (start > 0 && first < 0) {
        carry = bytes;
        continue;
      }
      carry = start > 0 ? bytes.subarray(0, first) : undefined;
      // Whole lines only: a chunk boundary never splits a character.
      const text = bytes.toString('utf8', first + 1);
      // Its lines from the last to the first.
      for (let stop = text.length; ; ) {
        const nl = stop > 0 ? text.lastIndexOf('\n', stop - 1) : -1;
        const at = nl + 1;
        if (stop > at) {
          const seq = leadingSeq(text, at) ?? seqOfLine(text.slice(at, stop));
          if (seq !== undefined && seq >= from && seq < to) {
            found.push(text.slice(at, stop));
            below = 0;
          } else if (seq !== undefined && seq < from && ++below >= STOP_AFTER_LINES_BELOW) break scan;
        }
        if (nl < 0) break;
        stop = nl;
        // The clock read every few hundred lines: most lines cost a prefix check.
        if (++scanned % 256 === 0) {
          const pause = slices.step();
          if (pause) await pause;
        }
      }
    }
  } catch {
    return { bySeq: new Map(), bytesRead };
  } finally {
    await handle.close().catch(() => {});
  }
  // Parsed in file order, in slices too (a whole conversation's counts are 100,000 lines).
  for (let i = found.length - 1; i >= 0; i--) {
    parser.line(found[i]!);
    if (i % 256 === 0) {
      const pause = slices.step();
      if (pause) await pause;
    }
  }
  return { bySeq: parser.bySeq, bytesRead };
}

/** The seq a line that does not start `{"seq":N,` holds, if it is a JSON object with one. */
function seqOfLine(line: string): number | undefined {
  try {
    const seq = (JSON.parse(line) as { seq?: unknown } | null)?.seq;
    return typeof seq === 'number' && Number.isSafeInteger(seq) ? seq : undefined;
  } catch {
    return undefined;
  }
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
