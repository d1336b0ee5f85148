/**
 * The file store's log index kept beside the log (`NAME.idx`, issue 32: a worker that never saw a
 * conversation serves its turn at the cost of its view). Without it, a process's first read of a
 * conversation read and scanned the whole log to find where each entry starts: 54 MB at 100,000
 * messages, 60–95 ms before a first turn that otherwise takes about 10. With it, that process
 * reads 8 bytes per entry and the lines it needs.
 *
 * Layout (little-endian): a 104-byte header (the magic `CKIDX01\n`; then, as 64-bit floats, the
 * log's inode, birth time, size and modification time when the index was written, the end of its
 * valid entries, the number of entries, a flag saying whether any entry has an id, and how many
 * bytes of `NAME.ids` hold all of them (-1: it does not); then the digest of the last entry's line,
 * in 32 ASCII bytes), then each entry's start as a 64-bit float. `NAME.ids` holds a first line
 * naming the log it is of (its inode and birth time), then a line `[seq,"id"]` per entry with an
 * id, in seq order: an append with ids by a process that never
 * read the log checks them against it (the index's count bounds its seqs; bytes past the header's
 * length, from a crash, are not read).
 *
 * It is a cache. It is written only under the conversation's lock, by the writer that changed the
 * log (an append adds its entries' starts, then the header; a replace writes it whole beside the
 * new log), and never flushed. A reader uses it only for the log it was written for: the same
 * inode and birth time, its last entry's line unchanged (by digest), and either the same size and
 * modification time, or a log that has only grown since (its new bytes are then indexed as an
 * instance that had indexed the log before indexes them). Anything else (another log in its place,
 * a log cut or edited, a crash between the log's write and the index's, an index of another
 * version, torn or damaged) and the reader indexes the whole log, as without it.
 */

import { type FileHandle, open } from 'node:fs/promises';
import { endianness } from 'node:os';
import { writeFileAtomic } from './atomic-write.js';
import { LineStarts } from './line-starts.js';

const MAGIC = Buffer.from('CKIDX01\n', 'latin1');
/** Bytes before the first entry's start. */
const INDEX_HEADER_BYTES = 104;
const ANCHOR_AT = 72;
const ANCHOR_BYTES = 32;

/** What an index records of its log. */
export interface PersistedIndex {
  ino: number;
  birthtimeMs: number;
  size: number;
  mtimeMs: number;
  validEnd: number;
  /** Each entry's byte offset in the log, by seq. */
  offsets: LineStarts;
  /** Whether an entry of the log has an id. */
  hasIds: boolean;
  /**
   * The bytes of `NAME.ids` (see {@link idsText}) that hold every id of the log, or null when it
   * does not (then an append with ids reads the log whole).
   */
  idsBytes: number | null;
  /** Digest of the last entry's line; '' when there is none. */
  anchor: string;
}

function header(index: Omit<PersistedIndex, 'offsets'>, count: number): Buffer {
  const buf = Buffer.alloc(INDEX_HEADER_BYTES, 0x20);
  MAGIC.copy(buf, 0);
  const fields = [
    index.ino,
    index.birthtimeMs,
    index.size,
    index.mtimeMs,
    index.validEnd,
    count,
    index.hasIds ? 1 : 0,
    index.idsBytes ?? -1,
  ];
  for (const [i, value] of fields.entries()) buf.writeDoubleLE(value, 8 + 8 * i);
  buf.write(index.anchor.slice(0, ANCHOR_BYTES), ANCHOR_AT, 'latin1');
  return buf;
}

/** Writes the index of a log whole, in place of any other (atomically: a reader sees one or the other). */
export async function writeIndex(path: string, index: PersistedIndex): Promise<void> {
  await writeFileAtomic(path, [header(index, index.offsets.length), index.offsets.doublesFrom(0)], {
    durable: false,
  });
}

/**
 * Adds the starts of entries `persisted` and on to an index that holds the first `persisted`
 * (written for the same log), then its header: a reader that reads the header before the new
 * starts are written sees the old count, and never a count beyond the starts written.
 */
export async function extendIndex(path: string, index: PersistedIndex, persisted: number): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    const more = index.offsets.doublesFrom(persisted);
    await writeAt(handle, more, INDEX_HEADER_BYTES + 8 * persisted);
    await writeAt(handle, header(index, index.offsets.length), 0);
  } finally {
    await handle.close();
  }
}

async function writeAt(handle: FileHandle, buf: Buffer, position: number): Promise<void> {
  let written = 0;
  while (written < buf.length) {
    const { bytesWritten } = await handle.write(buf, written, buf.length - written, position + written);
    written += bytesWritten;
  }
}

/**
 * The index at `path` when it was written for the log whose identity `log` gives (same inode and
 * birth time, not shorter): its header and its last page of starts, the other pages read as
 * reads need them (`LineStarts.load`, each checked then: rising from 0 and before its end).
 * Undefined when there is none, it is of another log or version, or its last page does not hold
 * together. The caller checks the last entry's line against `anchor`.
 */
export async function readIndex(
  path: string,
  log: { ino: number; birthtimeMs: number; size: number },
): Promise<PersistedIndex | undefined> {
  return withHeader(path, async (head, handle) => {
    const [ino, birthtimeMs, size, mtimeMs, validEnd, count, flags, idsBytes] = headerFields(head);
    if (ino !== log.ino || birthtimeMs !== log.birthtimeMs || size > log.size) return undefined;
    if (!Number.isSafeInteger(count) || count < 0 || !Number.isSafeInteger(validEnd) || validEnd !== size)
      return undefined;
    if (count === 0 && validEnd !== 0) return undefined;
    // The starts are read a page at a time as reads need them (see `LineStarts`): the last one
    // now, through this handle; the others later, from the file as it is then.
    let headerHandleOpen = true;
    const offsets = await LineStarts.paged(count, validEnd, (from, n) =>
      headerHandleOpen ? readDoubles(handle, from, n) : readStarts(path, ino, birthtimeMs, from, n),
    );
    headerHandleOpen = false;
    if (!offsets) return undefined;
    const anchor = head.toString('latin1', ANCHOR_AT, ANCHOR_AT + ANCHOR_BYTES).trimEnd();
    const idsKept = Number.isSafeInteger(idsBytes) && idsBytes >= 0 ? idsBytes : null;
    return {
      ino,
      birthtimeMs,
      size,
      mtimeMs,
      validEnd,
      offsets,
      hasIds: flags === 1,
      idsBytes: idsKept,
      anchor,
    };
  });
}

/** The header's numbers: inode, birth time, size, modification time, valid end, count, flags, ids bytes. */
function headerFields(head: Buffer): [number, number, number, number, number, number, number, number] {
  return Array.from({ length: 8 }, (_, i) => head.readDoubleLE(8 + 8 * i)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
}

/**
 * `use` of the index file at `path` open and its header, when it has one of this version;
 * undefined when there is no such file or it has none.
 */
async function withHeader<T>(
  path: string,
  use: (head: Buffer, handle: FileHandle) => Promise<T | undefined>,
): Promise<T | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const head = Buffer.alloc(INDEX_HEADER_BYTES);
    const { bytesRead } = await handle.read(head, 0, INDEX_HEADER_BYTES, 0);
    if (bytesRead !== INDEX_HEADER_BYTES || !head.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
    return await use(head, handle);
  } finally {
    await handle.close();
  }
}

/**
 * Starts `from` to `from + count - 1` from the index at `path`, when it is still of the log with
 * inode `ino` and birth time `birthtimeMs` and holds them (the index of a log only grows while
 * the log does: the starts it held once it still holds); undefined otherwise.
 */
function readStarts(
  path: string,
  ino: number,
  birthtimeMs: number,
  from: number,
  count: number,
): Promise<Float64Array | undefined> {
  return withHeader(path, async (head, handle) => {
    const [fileIno, fileBirthtime, , , , fileCount] = headerFields(head);
    if (fileIno !== ino || fileBirthtime !== birthtimeMs || fileCount < from + count) return undefined;
    return readDoubles(handle, from, count);
  });
}

/** Starts `from` to `from + count - 1` of the index open as `handle`; undefined when it ends before them. */
async function readDoubles(
  handle: FileHandle,
  from: number,
  count: number,
): Promise<Float64Array | undefined> {
  // Read straight into the doubles they are (the file is little-endian, as the machines Node
  // runs on almost all are; elsewhere each is read as little-endian).
  const doubles = new Float64Array(count);
  const body = Buffer.from(doubles.buffer);
  const got = (await handle.read(body, 0, body.length, INDEX_HEADER_BYTES + 8 * from)).bytesRead;
  if (got !== body.length) return undefined;
  if (endianness() !== 'LE') for (let i = 0; i < count; i++) doubles[i] = body.readDoubleLE(8 * i);
  return doubles;
}

/**
 * The lines `NAME.ids` keeps for message ids (one `[seq,"id"]` a line, in seq order): what an
 * append with ids checks its ids against when its process never read the log whole.
 */
export function idsText(ids: Iterable<readonly [string, number]>): string {
  let text = '';
  for (const [id, seq] of ids) text += `${JSON.stringify([seq, id])}\n`;
  return text;
}

/**
 * The first line of `NAME.ids`: the log it was written for (its inode and birth time), so that
 * the ids of another log (another conversation's file put in its place) are never taken for its.
 */
export function idsHead(log: { ino: number; birthtimeMs: number }): string {
  return `${JSON.stringify({ log: [log.ino, log.birthtimeMs] })}\n`;
}

/**
 * Which of `wanted` the first `bytes` bytes of `NAME.ids` hold, each with its seq, for a log of
 * `count` entries: each id looked for as its line's end, `,"id"]` and a newline (a quote inside an
 * id is escaped, so that text ends a line holding that id and no other), its seq read off the
 * line's start. Undefined when the file is not that long, was written for another log (its first
 * line, {@link idsHead}), does not end in a whole line, or a line found names a seq the log does not
 * reach (the caller then reads the log whole).
 */
export async function findIds(
  path: string,
  bytes: number,
  count: number,
  wanted: readonly string[],
  log: { ino: number; birthtimeMs: number },
): Promise<Map<string, number> | undefined> {
  const found = new Map<string, number>();
  if (bytes === 0 || wanted.length === 0) return found;
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch {
    return undefined;
  }
  let text: string;
  try {
    const buf = Buffer.allocUnsafe(bytes);
    const { bytesRead } = await handle.read(buf, 0, bytes, 0);
    if (bytesRead !== bytes) return undefined;
    text = buf.toString('utf8');
  } finally {
    await handle.close();
  }
  const head = idsHead(log);
  if (!text.startsWith(head) || !text.endsWith('\n')) return undefined;
  if (
    text.length > head.length &&
    !IDS_LINE.test(text.slice(text.lastIndexOf('\n', text.length - 2) + 1, -1))
  )
    return undefined;
  for (const id of wanted) {
    const needle = `,${JSON.stringify(id)}]\n`;
    for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
      const start = text.lastIndexOf('\n', at) + 1;
      const line = /^\[(\d+)$/.exec(text.slice(start, at));
      if (!line) continue;
      const seq = Number(line[1]);
      if (seq >= count) return undefined;
      found.set(id, seq);
      break;
    }
  }
  return found;
}

/** A line of `NAME.ids` without its newline. */
const IDS_LINE = /^\[\d+,"(?:[^"\\]|\\.)+"\]$/;

/** Writes `text` into the file at `path` from byte `position` on (made when absent and `position` is 0). */
export async function writeTextAt(path: string, text: string, position: number): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r+');
  } catch (error) {
    if (position !== 0) throw error;
    handle = await open(path, 'w');
  }
  try {
    await writeAt(handle, Buffer.from(text, 'utf8'), position);
  } finally {
    await handle.close();
  }
}
