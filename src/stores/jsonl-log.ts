/**
 * The file store's on-disk log format, kept apart from the I/O so it can be tested on bytes.
 *
 * One JSON object a line: `{"seq":N,"metadata":{…},"message":{…}}`, with `"id":"…"` after the
 * seq (and batch) when the message was added with an id. The first line of a batch
 * of more than one entry also carries `"batch":K` (K lines written by one `write`), so a
 * reader can tell a whole batch from one cut short by a crash or still being written, and a
 * batch stays all-or-nothing on disk too. JSON never contains a raw newline, so lines split on
 * `\n` bytes exactly.
 *
 * A damaged end (a last line without its newline or that is not JSON, or a batch with lines
 * missing) is a torn write: the valid prefix before it is the log. Damage followed by intact
 * entries, or a sequence number out of order, is corruption: an error, never a guess.
 */

import { StoreError } from '../errors.js';
import type { Message, MessageMetadata } from '../messages/types.js';
import { Slices } from '../slices.js';
import { LineStarts } from './line-starts.js';
import type { StoredEntry } from './types.js';

/** Where a log lives, for error messages. */
export interface LogLocation {
  conversationId: string;
  file: string;
}

/** The end of a log that a write did not finish. */
export interface TornTail {
  /** Byte offset where the damage starts (the end of the valid prefix). */
  fromByte: number;
  /** How many bytes it spans, to the end of the file. */
  bytes: number;
  /** 1-based line number of its first line. */
  line: number;
  /** What was found there, for the warning. */
  found: string;
}

/** Where each entry of a log's valid prefix starts, found without parsing every message. */
export interface LogIndex {
  /** Byte offset of each entry's line, by sequence number. */
  offsets: LineStarts;
  /** Byte offset just after the valid prefix (after its last whole batch). */
  validEnd: number;
  torn?: TornTail;
  /** Each message id of the valid prefix and its entry's seq (the first, should one repeat); absent when none. */
  ids?: Map<string, number>;
}

const NEWLINE = 0x0a;
const FAST_LINE = /^\{"seq":(\d+)(?:,"batch":(\d+))?,"(metadata|message|id)":/;

/** A short, escaped excerpt of what a line holds. */
function excerpt(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type LineCheck =
  | { ok: true; batch: number | undefined; entry?: StoredEntry; id?: string }
  | { ok: false; kind: 'json' | 'shape' | 'seq'; found: string };

/** Judges one line fully: JSON, shape, and the sequence number it must carry. */
function checkParsed(text: string, seq: number): LineCheck {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, kind: 'json', found: `${excerpt(text)}, which is not JSON` };
  }
  if (!isPlainObject(value))
    return { ok: false, kind: 'shape', found: `${excerpt(text)}, which is not an entry` };
  const { seq: lineSeq, batch, message, metadata, id } = value;
  if (typeof lineSeq !== 'number' || !isPlainObject(message) || !isPlainObject(metadata)) {
    return {
      ok: false,
      kind: 'shape',
      found: `${excerpt(text)}, which lacks a numeric "seq", a "message" object or a "metadata" object`,
    };
  }
  if (lineSeq !== seq) return { ok: false, kind: 'seq', found: `seq ${lineSeq} where ${seq} was expected` };
  if (batch !== undefined && (typeof batch !== 'number' || !Number.isSafeInteger(batch) || batch < 2)) {
    return { ok: false, kind: 'shape', found: `a bad "batch" value ${JSON.stringify(batch)}` };
  }
  if (id !== undefined && (typeof id !== 'string' || id.length === 0)) {
    return { ok: false, kind: 'shape', found: `a bad "id" value ${excerpt(JSON.stringify(id) ?? '')}` };
  }
  const entry: StoredEntry = {
    seq,
    message: message as unknown as Message,
    metadata: metadata as MessageMetadata,
  };
  if (id !== undefined) entry.id = id;
  return { ok: true, batch: batch as number | undefined, entry, ...(id === undefined ? {} : { id }) };
}

/**
 * The JSON string starting at byte `from` (its opening quote) of a line ending before `end`,
 * decoded, or undefined when it is not one.
 */
function jsonStringAt(buf: Buffer, from: number, end: number): string | undefined {
  if (buf[from] !== 0x22) return undefined;
  for (let i = from + 1; i < end; i++) {
    const byte = buf[i];
    if (byte === 0x5c) i++;
    else if (byte === 0x22) {
      try {
        const value: unknown = JSON.parse(buf.toString('utf8', from, i + 1));
        return typeof value === 'string' ? value : undefined;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** The fast path for lines this module wrote; anything else gets the full check. */
function checkLine(buf: Buffer, start: number, end: number, seq: number): LineCheck {
  const head = FAST_LINE.exec(buf.toString('utf8', start, Math.min(end, start + 48)));
  if (head && buf[end - 1] === 0x7d) {
    if (Number(head[1]) !== seq)
      return { ok: false, kind: 'seq', found: `seq ${head[1]} where ${seq} was expected` };
    const batch = head[2] === undefined ? undefined : Number(head[2]);
    if (batch === undefined || batch >= 2) {
      if (head[3] !== 'id') return { ok: true, batch };
      // The id is read here (the index looks ids up); the line's other fields only by `read`.
      const id = jsonStringAt(buf, start + Buffer.byteLength(head[0]), end);
      if (id !== undefined && id.length > 0) return { ok: true, batch, id };
    }
  }
  return checkParsed(buf.toString('utf8', start, end), seq);
}

/** Whether any line from `start` on parses as an entry (of any sequence number). */
function hasEntryAfter(buf: Buffer, start: number): boolean {
  let pos = start;
  while (pos < buf.length) {
    const nl = buf.indexOf(NEWLINE, pos);
    const end = nl === -1 ? buf.length : nl;
    try {
      const value: unknown = JSON.parse(buf.toString('utf8', pos, end));
      if (isPlainObject(value) && typeof value.seq === 'number') return true;
    } catch {
      // Not an entry; keep looking.
    }
    if (nl === -1) break;
    pos = nl + 1;
  }
  return false;
}

function corrupt(where: LogLocation, line: number, found: string): StoreError {
  return new StoreError(
    where.conversationId,
    `${where.file} line ${line}: found ${found}; the log is corrupt before its end, so it was not read or changed — restore it from a backup or cut it at that line`,
    { code: 'corrupt' },
  );
}

/**
 * Indexes `buf`, the bytes of a log from byte `base` on, where `base` is a batch boundary
 * holding entry `firstSeq`. Throws a `StoreError` (code `corrupt`) naming the line for damage
 * before the end; reports damage at the end as `torn`.
 */
export function indexLog(buf: Buffer, base: number, firstSeq: number, where: LogLocation): LogIndex {
  const steps = indexSteps(buf, base, firstSeq, where);
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** `indexLog` a slice at a time, yielding between slices (a long log read whole on a cold start). */
export async function indexLogInSlices(
  buf: Buffer,
  base: number,
  firstSeq: number,
  where: LogLocation,
  slices: Slices = new Slices(),
): Promise<LogIndex> {
  const steps = indexSteps(buf, base, firstSeq, where);
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    const pause = slices.step();
    if (pause) await pause;
  }
}

/** Lines `indexSteps` indexes between two yields. */
const INDEX_STEP_LINES = 256;

/** `indexLog`'s work, yielding every `INDEX_STEP_LINES` lines. */
function* indexSteps(
  buf: Buffer,
  base: number,
  firstSeq: number,
  where: LogLocation,
): Generator<void, LogIndex> {
  const offsets = new LineStarts();
  const lineIds: Array<[string, number]> = [];
  let committed = 0;
  let validEnd = 0;
  let remaining = 0;
  let pos = 0;
  let problem:
    | { start: number; kind: 'json' | 'shape' | 'seq' | 'batch' | 'unterminated'; found: string }
    | undefined;
  while (pos < buf.length) {
    const nl = buf.indexOf(NEWLINE, pos);
    const seq = firstSeq + offsets.length;
    if (nl === -1) {
      problem = {
        start: pos,
        kind: 'unterminated',
        found: `${excerpt(buf.toString('utf8', pos, Math.min(buf.length, pos + 80)))} without a final newline`,
      };
      break;
    }
    const check = checkLine(buf, pos, nl, seq);
    if (!check.ok) {
      problem = { start: pos, kind: check.kind, found: check.found };
      break;
    }
    if (check.batch !== undefined) {
      if (remaining > 0) {
        problem = {
          start: pos,
          kind: 'batch',
          found: `a new batch while ${remaining} line(s) of the previous one are missing`,
        };
        break;
      }
      remaining = check.batch;
    }
    const id = check.id ?? check.entry?.id;
    if (id !== undefined) lineIds.push([id, seq]);
    offsets.push(base + pos);
    if (remaining > 0) remaining--;
    pos = nl + 1;
    if (remaining === 0) {
      committed = offsets.length;
      validEnd = pos;
    }
    if (offsets.length % INDEX_STEP_LINES === 0) yield;
  }
  if (problem) {
    const line = firstSeq + offsets.length + 1;
    const tornKind = problem.kind === 'unterminated' || problem.kind === 'json';
    const nl = buf.indexOf(NEWLINE, problem.start);
    if (!tornKind || (nl !== -1 && hasEntryAfter(buf, nl + 1))) throw corrupt(where, line, problem.found);
  }
  const withIds = (index: LogIndex): LogIndex => {
    const ids = new Map<string, number>();
    for (const [id, seq] of lineIds) if (seq < firstSeq + offsets.length && !ids.has(id)) ids.set(id, seq);
    if (ids.size > 0) index.ids = ids;
    return index;
  };
  if (!problem && remaining === 0) return withIds({ offsets: offsets.trim(), validEnd: base + validEnd });
  offsets.truncate(committed);
  offsets.trim();
  const found = problem
    ? problem.found
    : `a batch with ${remaining} of its line(s) missing (starting at line ${firstSeq + committed + 1})`;
  return withIds({
    offsets,
    validEnd: base + validEnd,
    torn: { fromByte: base + validEnd, bytes: buf.length - validEnd, line: firstSeq + committed + 1, found },
  });
}

/**
 * Parses whole lines of a valid region (ending in a newline) into entries numbered from
 * `firstSeq`, checking each fully; the index only checked their framing.
 */
export function parseEntries(buf: Buffer, firstSeq: number, where: LogLocation): StoredEntry[] {
  const entries: StoredEntry[] = [];
  let pos = 0;
  while (pos < buf.length) {
    let nl = buf.indexOf(NEWLINE, pos);
    if (nl === -1) nl = buf.length;
    const seq = firstSeq + entries.length;
    const check = checkParsed(buf.toString('utf8', pos, nl), seq);
    if (!check.ok || !check.entry)
      throw corrupt(where, seq + 1, check.ok ? 'an unreadable entry' : check.found);
    entries.push(check.entry);
    pos = nl + 1;
  }
  return entries;
}

/**
 * Formats a batch as the bytes of one append. Entries arrive already serialized, so a value
 * that cannot be JSON-encoded fails before the lock is taken and nothing is written.
 */
export function formatBatch(
  firstSeq: number,
  batch: ReadonlyArray<{ metadata: string; message: string; id?: string | undefined }>,
): Buffer {
  let text = '';
  batch.forEach((entry, i) => {
    text += batchLine(firstSeq, i, batch.length, entry);
  });
  return Buffer.from(text, 'utf8');
}

/**
 * Line `i` of a batch of `n` entries whose first is `firstSeq` (with its newline): the first line
 * of a batch of more than one says how many it holds, so a batch torn by a crash is seen whole or
 * not at all.
 */
export function batchLine(
  firstSeq: number,
  i: number,
  n: number,
  entry: { metadata: string; message: string; id?: string | undefined },
): string {
  const marker = i === 0 && n > 1 ? `,"batch":${n}` : '';
  const id = entry.id === undefined ? '' : `,"id":${JSON.stringify(entry.id)}`;
  return `{"seq":${firstSeq + i}${marker}${id},"metadata":${entry.metadata},"message":${entry.message}}\n`;
}
