/**
 * The embedded durable store: a directory of JSONL logs, one per conversation, that several
 * processes can share.
 *
 * Layout, for a conversation whose id encodes (see `keys.ts`) to NAME:
 * - `NAME.jsonl`: the log (format in `jsonl-log.ts`), appended one batch per `write` and
 *   flushed (`fdatasync`) before `append` resolves;
 * - `NAME.meta.json`: `{"version":N,"value":{…}}`, replaced through a temp file and `rename`;
 * - `NAME.id`: the full id, only when NAME is the hashed form of a long id;
 * - `NAME.epoch`: the conversation's generation (see `ConversationStore.epoch`), written before
 *   the log on `replace` (so a crash between the two can only make writers reload needlessly);
 * - `NAME.counts`: token counts of entries (format in `file-counts.ts`), a cache beside the log;
 * - `NAME.idx`: where each entry of the log starts (format in `file-index.ts`), a cache written
 *   by the writer that changed the log, so a process that never read it reads the pages of it
 *   that hold the lines it needs (see `line-starts.ts`) and those lines, not the whole log;
 * - `NAME.ids`: the log's message ids with their seqs (same file), a cache beside the index that
 *   an append with ids checks them against;
 * - `NAME.lock`: present while one process writes (see `file-lock.ts`);
 * - `NAME.jsonl.torn-TIME`: the bytes of a torn write, moved aside (never deleted) on repair.
 * Encoded names contain no `.`, so the part before the first `.` is always the name, and temp
 * files (starting with `.`) are never mistaken for conversations.
 *
 * Within a process, operations on one conversation run one at a time (a promise chain per
 * conversation). Across processes, every write (append, replace, setMeta, delete) holds the
 * conversation's lock file, and an append checks `expectedSeq` against the head read under
 * that lock, so two processes never both append at the same sequence number. Reads take no
 * lock: a whole-file replace is an atomic rename, and a reader that meets an unfinished batch
 * at the end (a write in progress, or a crash) re-reads under the lock before deciding it is
 * torn.
 *
 * `head()` does not re-read the log each time: the byte offset of every entry is cached per
 * conversation together with the file's inode, birth time, size and mtime and a digest of its
 * last indexed line; when another process appends, the size changes and only the new bytes are
 * indexed; a replaced or truncated file (new inode, smaller size) is indexed again from the
 * start. A file deleted and written again by another process often gets the old inode back
 * (ext4 reuses them), with an mtime in the same clock tick: so the cache is trusted only while
 * the line it ended on still holds the same bytes at the same place, and a tail that looks torn
 * is judged, and cut, only from an index made afresh from the whole file under the lock. Indexing checks each line's framing
 * (sequence number, batch marker, newline); `read` parses and checks in full the lines it
 * returns, so damage inside a line is reported by the read that meets it.
 */

import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { appendFile, type FileHandle, open, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ConflictError, DuplicateMessageIdError, EpochConflictError, StoreError } from '../errors.js';
import { forEachInSlices, Slices } from '../slices.js';
import { makeDirectory, syncDirectory, writeAll, writeFileAtomic } from './atomic-write.js';
import { checkSaveCounts } from './entry-counts.js';
import { attachCounts, countsLine, readCountsRange, splitLines } from './file-counts.js';
import { extendIndex, findIds, idsHead, idsText, readIndex, writeIndex, writeTextAt } from './file-index.js';
import { type FileLockOptions, withFileLock } from './file-lock.js';
import {
  batchLine,
  formatBatch,
  indexLog,
  indexLogInSlices,
  type LogIndex,
  type LogLocation,
  parseEntries,
} from './jsonl-log.js';
import { decodeId, encodeId, isHashedName, validateConversationId } from './keys.js';
import { LineStarts, StartsUnreadable } from './line-starts.js';
import { listOptions, pageIds } from './page.js';
import { serializeInSlices, WRITE_CHUNK_BYTES } from './replace-rows.js';
import { serializeEntries, stringifyForStore } from './stored-json.js';
import type {
  AppendOptions,
  ConversationPage,
  ConversationStore,
  EntryCountsUpdate,
  MetaRecord,
  NewEntry,
  ReadOptions,
  StoredEntry,
} from './types.js';
import {
  batchIds,
  checkAppendArguments,
  checkDeleteArguments,
  checkOptionNames,
  checkReplaceArgumentsInSlices,
  checkSetMetaArguments,
  newEpoch,
  readRange,
} from './validate.js';

/** `read` parses the bytes it read about this many at a time (see `Slices`). */
const PARSE_PART_BYTES = 256 * 1024;

/** Options of {@link FileStore}. */
export interface FileStoreOptions {
  /**
   * Told about a torn write found at the end of a log (and what was done with it) and about
   * files in the directory that are not conversations. Defaults to `process.emitWarning`.
   */
  onWarning?: (message: string) => void;
  /** How long a write waits for another process's lock before failing. Default 10 s. */
  lockTimeoutMs?: number;
  /** Age after which a lock is taken to be abandoned even if its pid seems alive. Default 30 s. */
  staleLockMs?: number;
  /**
   * Refuse a directory that does not exist (a `StoreError` with code `not_found`) instead of
   * creating it on the first write: for tools that only read, where a mistyped path should say
   * so rather than look like an empty store.
   */
  mustExist?: boolean;
}

interface Paths {
  log: string;
  meta: string;
  lock: string;
  id: string;
  epoch: string;
  counts: string;
  /** The log's index (file-index.ts). */
  idx: string;
  /** The log's message ids (file-index.ts). */
  ids: string;
}

interface CachedIndex extends LogIndex {
  ino: number;
  birthtimeMs: number;
  size: number;
  mtimeMs: number;
  /** Digest of the last entry's line (bytes `offsets.last()` to `validEnd`); '' when there is none. */
  anchor: string;
  warned?: boolean;
  /** How many entries' starts `NAME.idx` holds for this log (unknown: it is written whole next). */
  persisted?: number;
  /** Read from `NAME.idx`, whose lines this process has not all checked. */
  fromIndexFile?: true;
  /**
   * The log has ids this index does not all know (read from `NAME.idx`): an append with ids looks
   * them up in `NAME.ids`, or indexes the log whole.
   */
  idsUnknown?: true;
  /** The bytes of `NAME.ids` that hold every id of this log as `NAME.idx` holds it (unknown: written whole next). */
  idsPersisted?: number;
}

/** What of a cached index carries over to the index of more of the same log. */
function sameLogFields(
  index: CachedIndex,
): Pick<CachedIndex, 'persisted' | 'fromIndexFile' | 'idsUnknown' | 'idsPersisted'> {
  return {
    ...(index.idsPersisted !== undefined ? { idsPersisted: index.idsPersisted } : {}),
    ...(index.persisted !== undefined ? { persisted: index.persisted } : {}),
    ...(index.fromIndexFile ? { fromIndexFile: true } : {}),
    ...(index.idsUnknown ? { idsUnknown: true } : {}),
  };
}

/** The file's identity as `stat` gives it, which a delete and re-create may keep (see above). */
type FileStamp = Pick<CachedIndex, 'ino' | 'birthtimeMs' | 'size' | 'mtimeMs'>;

function fileStamp(info: { ino: number; birthtimeMs: number; size: number; mtimeMs: number }): FileStamp {
  return { ino: info.ino, birthtimeMs: info.birthtimeMs, size: info.size, mtimeMs: info.mtimeMs };
}

function digest(bytes: Buffer): string {
  return createHash('sha1').update(bytes).digest('base64');
}

/** The digest of the last line of an index over `bytes` (which start at byte `base`). */
function anchorOf(index: LogIndex, bytes: Buffer, base: number): string {
  const last = index.offsets.last();
  return last === undefined ? '' : digest(bytes.subarray(last - base, index.validEnd - base));
}

/** The file changed under a read (it shrank, or another took its name): index it again. */
class FileChanged extends Error {}

/** Entries `NAME.idx` may lag its log by before an append writes it (see `#persistIndex`). */
const PERSIST_EVERY = 32;

/** Conversations whose log index one store instance keeps in memory (4 bytes an entry read, and its ids). */
const INDEX_CACHE_CONVERSATIONS = 256;

/** How many times a read starts again on a log that changed under it before it gives up. */
const SNAPSHOT_RETRIES = 5;

/** Whether `path` still names the file indexed as `index` (its inode: not replaced or removed since). */
async function stillNamed(path: string, index: CachedIndex): Promise<boolean> {
  const named = await stat(path).catch(() => null);
  return named !== null && named.ino === index.ino;
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

async function openIfExists(path: string, flags: string): Promise<FileHandle | undefined> {
  try {
    return await open(path, flags);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

async function unlinkIfExists(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

/** The generation in an epoch file, or `null` when there is none. */
async function readEpoch(path: string): Promise<string | null> {
  try {
    const text = (await readFile(path, 'utf8')).trim();
    return text === '' ? null : text;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    throw error;
  }
}

/** Rejects with `EpochConflictError` when the conversation has a generation other than `epoch`. */
function checkEpoch(conversationId: string, epoch: string | undefined, current: string | null): void {
  if (epoch !== undefined && current !== null && current !== epoch) {
    throw new EpochConflictError(conversationId, epoch, current);
  }
}

/**
 * Appends the counts of entries about to be appended as `data` (their log lines from seq `first`
 * on) beside the log, before the log's own write (a replace writes the whole file:
 * `replaceFiles`). Not flushed: counts are a cache (see file-counts.ts).
 */
async function appendCounts(
  path: string,
  first: number,
  data: Buffer,
  entries: readonly NewEntry[],
): Promise<void> {
  let text = '';
  if (entries.some((entry) => entry.counts !== undefined)) {
    const lines = splitLines(data);
    entries.forEach((entry, i) => {
      if (entry.counts !== undefined && Object.keys(entry.counts).length > 0)
        text += countsLine(first + i, lines[i] as Buffer, entry.counts);
    });
  }
  // Each append starts on a line of its own, so a line torn by a crash spoils no later one.
  if (text.length > 0) await appendFile(path, `\n${text}`);
}

/**
 * A replace's log (in parts of about {@link WRITE_CHUNK_BYTES}) and counts file, made in slices
 * that yield (issue 32: one stretch of 100,000 entries held the event loop for 0.6 s). The bytes
 * are those `formatBatch` and `writeCounts` make for the same entries.
 */
async function replaceFiles(
  conversationId: string,
  entries: readonly NewEntry[],
  slices: Slices,
): Promise<{ log: Buffer[]; counts: string; offsets: LineStarts; size: number; anchor: string }> {
  const rows = await serializeInSlices(conversationId, entries, slices);
  const log: Buffer[] = [];
  let part = '';
  let counts = '';
  // Where each line starts in the log (its index, file-index.ts), and the digest of the last.
  const offsets = new LineStarts();
  let bytes = 0;
  let anchor = '';
  await forEachInSlices(
    rows,
    ([metadata, message], i) => {
      const entry = entries[i] as NewEntry;
      const line = batchLine(0, i, rows.length, { metadata, message, id: entry.id });
      if (entry.counts !== undefined && Object.keys(entry.counts).length > 0)
        counts += countsLine(i, Buffer.from(line.slice(0, -1), 'utf8'), entry.counts);
      offsets.push(bytes);
      bytes += Buffer.byteLength(line, 'utf8');
      if (i === rows.length - 1) anchor = digest(Buffer.from(line, 'utf8'));
      part += line;
      if (part.length >= WRITE_CHUNK_BYTES) {
        log.push(Buffer.from(part, 'utf8'));
        part = '';
      }
    },
    slices,
  );
  if (part.length > 0) log.push(Buffer.from(part, 'utf8'));
  return { log, counts, offsets: offsets.trim(), size: bytes, anchor };
}

async function readBytes(handle: FileHandle, start: number, end: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(end - start);
  let filled = 0;
  while (filled < buf.length) {
    const { bytesRead } = await handle.read(buf, filled, buf.length - filled, start + filled);
    if (bytesRead === 0) throw new FileChanged();
    filled += bytesRead;
  }
  return buf;
}

/** Throws unless `dir` is an existing directory; `given` is the path as the caller wrote it. */
function checkDirectory(dir: string, given: string): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(dir).isDirectory();
  } catch (error) {
    if (errorCode(error) === 'ENOENT') {
      throw new StoreError(
        undefined,
        `no file store at ${given}: the directory ${dir} does not exist (check the path; nothing was created)`,
        { cause: error, code: 'not_found' },
      );
    }
    throw new StoreError(undefined, `the file store at ${dir} cannot be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (!isDirectory) {
    throw new StoreError(undefined, `the file store at ${given} is a file, not a directory`, {
      code: 'not_a_directory',
    });
  }
}

/**
 * Conversation logs as JSONL files in one directory (`file:DIR`), durable before `append`
 * resolves, safe to share between processes, and readable by hand. One `.jsonl` log and
 * one metadata file per conversation (beside them, caches of its token counts, of where each
 * entry starts and of its ids, so a process that never read a long log need not read it whole);
 * every write holds the conversation's lock file (`lockTimeoutMs`, `staleLockMs`); a torn write
 * is moved aside (never deleted), with a warning.
 */
export class FileStore implements ConversationStore {
  readonly kind = 'file';
  /** The directory, made absolute at construction so a later `chdir` does not move it. */
  readonly dir: string;
  readonly #warnHandler: (message: string) => void;
  readonly #lock: FileLockOptions;
  /** Log indexes by name, least recently used first, at most {@link INDEX_CACHE_CONVERSATIONS}. */
  readonly #cache = new Map<string, CachedIndex>();
  readonly #queues = new Map<string, Promise<void>>();
  readonly #pending = new Set<Promise<void>>();
  readonly #verifiedIds = new Set<string>();
  readonly #skippedNames = new Set<string>();
  /** Conversations whose `NAME.idx` pointed a read at a line that is not there: indexed whole from then on. */
  readonly #indexDistrusted = new Set<string>();
  #dirReady: Promise<void> | undefined;
  #closed = false;

  constructor(dir: string, options: FileStoreOptions = {}) {
    checkOptionNames('File', options, ['onWarning', 'lockTimeoutMs', 'staleLockMs', 'mustExist']);
    if (typeof dir !== 'string' || dir.length === 0) {
      throw new StoreError(undefined, 'the file store needs a directory path');
    }
    this.dir = resolve(dir);
    if (options.mustExist) checkDirectory(this.dir, dir);
    this.#warnHandler = options.onWarning ?? ((message) => process.emitWarning(message, 'ContextkitWarning'));
    this.#lock = { timeoutMs: options.lockTimeoutMs ?? 10_000, staleMs: options.staleLockMs ?? 30_000 };
  }

  #warn(message: string): void {
    try {
      this.#warnHandler(message);
    } catch {
      // A failing warning handler must not fail the store operation that warned.
    }
  }

  #paths(name: string): Paths {
    const base = join(this.dir, name);
    return {
      log: `${base}.jsonl`,
      meta: `${base}.meta.json`,
      lock: `${base}.lock`,
      id: `${base}.id`,
      epoch: `${base}.epoch`,
      counts: `${base}.counts`,
      idx: `${base}.idx`,
      ids: `${base}.ids`,
    };
  }

  #ensureDir(): Promise<void> {
    this.#dirReady ??= makeDirectory(this.dir).catch((error: unknown) => {
      this.#dirReady = undefined;
      throw new StoreError(
        undefined,
        `the file store at ${this.dir} cannot be created there (${(error as Error).message}); choose a directory on a writable file system`,
        { cause: error },
      );
    });
    return this.#dirReady;
  }

  /** Runs `fn` after every earlier operation on the same conversation in this instance. */
  #run<T>(
    operation: string,
    conversationId: string,
    fn: (where: LogLocation, name: string, paths: Paths) => Promise<T>,
  ): Promise<T> {
    if (this.#closed) {
      return Promise.reject(
        new StoreError(undefined, `the file store at ${this.dir} is closed`, { code: 'closed' }),
      );
    }
    let name: string;
    try {
      validateConversationId(conversationId);
      name = encodeId(conversationId);
    } catch (error) {
      return Promise.reject(error);
    }
    const paths = this.#paths(name);
    const where = { conversationId, file: paths.log };
    const previous = this.#queues.get(name) ?? Promise.resolve();
    const task = previous.then(() =>
      fn(where, name, paths).catch((error: unknown) => {
        if (error instanceof StoreError) throw error;
        throw new StoreError(
          conversationId,
          `${operation} failed in ${this.dir}: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }),
    );
    const settled = task.then(
      () => undefined,
      () => undefined,
    );
    this.#queues.set(name, settled);
    this.#pending.add(settled);
    void settled.then(() => {
      this.#pending.delete(settled);
      if (this.#queues.get(name) === settled) this.#queues.delete(name);
    });
    return task;
  }

  #locked<T>(paths: Paths, conversationId: string, fn: () => Promise<T>): Promise<T> {
    return withFileLock(paths.lock, conversationId, this.#lock, fn);
  }

  /**
   * Makes sure a hashed (long-id) name belongs to this id: refuses a name whose sidecar holds
   * another id, and on a write (under the lock) writes the `.id` sidecar when it is missing,
   * also when another instance deleted the conversation since this one last looked.
   */
  async #checkIdFile(conversationId: string, name: string, paths: Paths, create: boolean): Promise<void> {
    if (!isHashedName(name) || (!create && this.#verifiedIds.has(name))) return;
    let stored: string | undefined;
    try {
      stored = await readFile(paths.id, 'utf8');
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
    }
    if (stored === undefined) {
      if (!create) return;
      await writeFileAtomic(paths.id, conversationId);
    } else if (stored !== conversationId) {
      throw new StoreError(
        conversationId,
        `${paths.id} names another conversation (${JSON.stringify(stored.slice(0, 60))}); the directory holds a file this store did not write`,
        { code: 'corrupt' },
      );
    }
    this.#verifiedIds.add(name);
  }

  /** The cached index of `name`, now the most recently used. */
  #cachedIndex(name: string): CachedIndex | undefined {
    const cached = this.#cache.get(name);
    if (cached) {
      this.#cache.delete(name);
      this.#cache.set(name, cached);
    }
    return cached;
  }

  /**
   * Caches `index` as the most recently used, letting the least recently used go past
   * {@link INDEX_CACHE_CONVERSATIONS} (a process serving many conversations holds a bounded number
   * of indexes; one let go is read again from `NAME.idx`).
   */
  #keepIndex(name: string, index: CachedIndex): void {
    this.#cache.delete(name);
    this.#cache.set(name, index);
    for (const oldest of this.#cache.keys()) {
      if (this.#cache.size <= INDEX_CACHE_CONVERSATIONS) break;
      this.#cache.delete(oldest);
    }
  }

  /**
   * The cached index, when it still describes the start of this file: same inode and birth
   * time, not shorter, and the line it ended on still there byte for byte. A file deleted and
   * written again can pass the `stat` checks alone.
   */
  async #trusted(name: string, handle: FileHandle, info: FileStamp): Promise<CachedIndex | undefined> {
    const cached = this.#cachedIndex(name);
    if (
      !cached ||
      cached.ino !== info.ino ||
      cached.birthtimeMs !== info.birthtimeMs ||
      info.size < cached.size
    ) {
      return undefined;
    }
    const last = cached.offsets.last();
    if (last !== undefined && digest(await readBytes(handle, last, cached.validEnd)) !== cached.anchor) {
      return undefined;
    }
    return cached;
  }

  /** Indexes the whole file, as it is now. */
  async #fullIndex(where: LogLocation, handle: FileHandle, info: FileStamp): Promise<CachedIndex> {
    const bytes = await readBytes(handle, 0, info.size);
    const index = await indexLogInSlices(bytes, 0, 0, where);
    return { ...index, ...info, anchor: anchorOf(index, bytes, 0) };
  }

  /**
   * Indexes the bytes appended after `cached`; `undefined` when they do not continue it
   * cleanly (torn, or not a valid continuation): only a whole-file index may judge those.
   */
  async #indexAppended(
    where: LogLocation,
    handle: FileHandle,
    cached: CachedIndex,
    info: FileStamp,
  ): Promise<CachedIndex | undefined> {
    const bytes = await readBytes(handle, cached.size, info.size);
    let more: LogIndex;
    try {
      more = indexLog(bytes, cached.size, cached.offsets.length, where);
    } catch (error) {
      if (error instanceof StoreError) return undefined;
      throw error;
    }
    if (more.torn) return undefined;
    const offsets = cached.offsets;
    offsets.append(more.offsets);
    const anchor = more.offsets.length > 0 ? anchorOf(more, bytes, cached.size) : cached.anchor;
    let ids = cached.ids;
    if (more.ids) {
      ids ??= new Map();
      for (const [id, seq] of more.ids) if (!ids.has(id)) ids.set(id, seq);
    }
    return {
      ...sameLogFields(cached),
      offsets,
      validEnd: more.validEnd,
      ...info,
      anchor,
      ...(ids ? { ids } : {}),
    };
  }

  /**
   * The log's index as `NAME.idx` keeps it (file-index.ts), when it was written for this log and
   * its last entry's line is unchanged; undefined otherwise (the caller indexes the whole log).
   */
  async #persistedIndex(
    where: LogLocation,
    name: string,
    handle: FileHandle,
    info: FileStamp,
  ): Promise<CachedIndex | undefined> {
    if (this.#indexDistrusted.has(name)) return undefined;
    const kept = await readIndex(this.#paths(name).idx, info);
    if (!kept) return undefined;
    const last = kept.offsets.last();
    const anchor = last === undefined ? '' : digest(await readBytes(handle, last, kept.validEnd));
    if (anchor !== kept.anchor) return undefined;
    const cached: CachedIndex = {
      offsets: kept.offsets,
      validEnd: kept.validEnd,
      ino: kept.ino,
      birthtimeMs: kept.birthtimeMs,
      size: kept.size,
      mtimeMs: kept.mtimeMs,
      anchor,
      persisted: kept.offsets.length,
      fromIndexFile: true,
      ...(kept.hasIds ? { idsUnknown: true } : {}),
      ...(kept.idsBytes !== null ? { idsPersisted: kept.idsBytes } : {}),
    };
    if (info.size === kept.size) return info.mtimeMs === kept.mtimeMs ? cached : undefined;
    return this.#indexAppended(where, handle, cached, info);
  }

  /**
   * Keeps `index` (this log's, just changed under the lock) in `NAME.idx`, and its ids in
   * `NAME.ids`: the starts and ids of the entries since the files were written added when they
   * hold the rest of this log's, else written whole. The files may lag the log by fewer than
   * {@link PERSIST_EVERY} entries: a reader indexes those from the log, as it does the entries
   * another process appended since. A failed write only costs a later reader a whole-log index.
   */
  async #persistIndex(paths: Paths, index: CachedIndex): Promise<void> {
    const persisted = index.persisted;
    const extend = persisted !== undefined && persisted <= index.offsets.length;
    if (extend && index.offsets.length - persisted < PERSIST_EVERY) return;
    try {
      if (index.validEnd !== index.size) throw new Error('not the whole file');
      let idsBytes: number | null;
      if (extend && index.idsPersisted !== undefined) {
        // The file holds the ids of every entry before `persisted`; the index knows every one since
        // (appended here, or indexed from the log): theirs are added to it.
        const added = [...(index.ids ?? [])]
          .filter(([, seq]) => seq >= persisted)
          .sort((x, y) => x[1] - y[1]);
        const lines = idsText(added);
        // The file starts with the log it is of (written with its first ids).
        const text = lines.length > 0 && index.idsPersisted === 0 ? idsHead(index) + lines : lines;
        if (text.length > 0) await writeTextAt(paths.ids, text, index.idsPersisted);
        idsBytes = index.idsPersisted + Buffer.byteLength(text);
      } else if (index.idsUnknown) idsBytes = null;
      else if ((index.ids?.size ?? 0) === 0) idsBytes = 0;
      else {
        const text =
          idsHead(index) + idsText([...(index.ids as Map<string, number>)].sort((x, y) => x[1] - y[1]));
        await writeFileAtomic(paths.ids, text, { durable: false });
        idsBytes = Buffer.byteLength(text);
      }
      const kept = {
        ino: index.ino,
        birthtimeMs: index.birthtimeMs,
        size: index.size,
        mtimeMs: index.mtimeMs,
        validEnd: index.validEnd,
        offsets: index.offsets,
        hasIds: (index.ids?.size ?? 0) > 0 || index.idsUnknown === true,
        idsBytes,
        anchor: index.anchor,
      };
      if (extend) await extendIndex(paths.idx, kept, persisted);
      else {
        // Written whole: every start, read from the file it replaces where not read yet.
        await index.offsets.load(0, index.offsets.length - 1);
        await writeIndex(paths.idx, kept);
      }
      index.persisted = index.offsets.length;
      if (idsBytes === null) delete index.idsPersisted;
      else index.idsPersisted = idsBytes;
    } catch {
      delete index.persisted;
      delete index.idsPersisted;
      await unlinkIfExists(paths.idx).catch(() => {});
    }
  }

  /**
   * Loads the starts of seqs `from` to `to` into `index` where it read them from `NAME.idx` (see
   * `LineStarts`). A page that cannot be read or does not hold together means the file is no
   * longer trusted: it is removed and `FileChanged` thrown (the caller indexes the log whole).
   */
  async #loadStarts(name: string, paths: Paths, index: CachedIndex, from: number, to: number): Promise<void> {
    if (index.offsets.loaded(from, to)) return;
    try {
      await index.offsets.load(from, to);
    } catch (error) {
      if (!(error instanceof StartsUnreadable)) throw error;
      this.#indexDistrusted.add(name);
      this.#cache.delete(name);
      await unlinkIfExists(paths.idx);
      throw new FileChanged();
    }
  }

  /** The log's index, from the cache when the file is unchanged, else by reading it. */
  async #index(where: LogLocation, name: string, handle: FileHandle, locked: boolean): Promise<CachedIndex> {
    for (let attempt = 0; ; attempt++) {
      try {
        const info = fileStamp(await handle.stat());
        const cached = await this.#trusted(name, handle, info);
        if (cached && cached.size === info.size && cached.mtimeMs === info.mtimeMs) {
          if (cached.torn && locked) this.#warnTorn(where, cached);
          return cached;
        }
        const appended =
          cached && !cached.torn && info.size > cached.size
            ? await this.#indexAppended(where, handle, cached, info)
            : undefined;
        const next =
          appended ??
          (await this.#persistedIndex(where, name, handle, info)) ??
          (await this.#fullIndex(where, handle, info));
        this.#keepIndex(name, next);
        if (next.torn && locked) this.#warnTorn(where, next);
        return next;
      } catch (error) {
        this.#cache.delete(name);
        if (!(error instanceof FileChanged) || attempt >= 5) throw error;
      }
    }
  }

  #warnTorn(where: LogLocation, index: CachedIndex): void {
    if (index.warned || !index.torn) return;
    index.warned = true;
    const { torn } = index;
    this.#warn(
      `conversation ${JSON.stringify(where.conversationId)}: ${where.file} ends in a torn write at line ${torn.line} ` +
        `(${torn.bytes} bytes: ${torn.found}), likely a crash mid-append; reading the ${index.offsets.length} ` +
        'valid entries before it. The torn bytes will be moved aside before the next append.',
    );
  }

  /**
   * Opens the log and indexes it; when the end looks torn, looks again under the lock, since
   * an unfinished batch is usually another process's write still in progress.
   */
  async #snapshot<T>(
    where: LogLocation,
    name: string,
    paths: Paths,
    absent: T,
    /** `lastTry`: a `FileChanged` thrown now fails the call rather than reading again. */
    use: (handle: FileHandle, index: CachedIndex, lastTry: boolean) => Promise<T>,
  ): Promise<T> {
    const attempt = async (locked: boolean): Promise<{ value: T } | undefined> => {
      for (let tries = 0; ; tries++) {
        const handle = await openIfExists(paths.log, 'r');
        if (!handle) {
          this.#cache.delete(name);
          return { value: absent };
        }
        try {
          const index = await this.#index(where, name, handle, locked);
          if (index.torn && !locked) return undefined;
          return { value: await use(handle, index, tries >= SNAPSHOT_RETRIES) };
        } catch (error) {
          if (!(error instanceof FileChanged) || tries >= SNAPSHOT_RETRIES) throw error;
          this.#cache.delete(name);
        } finally {
          await handle.close();
        }
      }
    };
    const unlocked = await attempt(false);
    if (unlocked) return unlocked.value;
    const locked = await this.#locked(paths, where.conversationId, () => attempt(true));
    return (locked as { value: T }).value;
  }

  /** Copies a torn tail to `NAME.jsonl.torn-TIME` and cuts the log back to its valid prefix. */
  async #setTornAside(
    where: LogLocation,
    name: string,
    handle: FileHandle,
    index: CachedIndex,
  ): Promise<CachedIndex> {
    if (!index.torn) return index;
    // Cut only what the whole file, read now under the lock, shows to be torn.
    const fresh = await this.#fullIndex(where, handle, fileStamp(await handle.stat()));
    this.#keepIndex(name, fresh);
    const torn = fresh.torn;
    if (!torn) return fresh;
    const bytes = await readBytes(handle, torn.fromByte, torn.fromByte + torn.bytes);
    const stamp = Date.now();
    let aside = `${where.file}.torn-${stamp}`;
    let asideHandle: FileHandle | undefined;
    for (let n = 1; !asideHandle; n++) {
      try {
        asideHandle = await open(aside, 'wx');
      } catch (error) {
        if (errorCode(error) !== 'EEXIST' || n > 100) throw error;
        aside = `${where.file}.torn-${stamp}-${n}`;
      }
    }
    try {
      await writeAll(asideHandle, bytes);
      await asideHandle.sync();
    } finally {
      await asideHandle.close();
    }
    await handle.truncate(fresh.validEnd);
    await handle.datasync();
    await syncDirectory(this.dir);
    this.#warn(
      `conversation ${JSON.stringify(where.conversationId)}: moved the torn write at line ${torn.line} of ${where.file} ` +
        `(${torn.bytes} bytes) to ${aside} and cut the log to its ${fresh.offsets.length} valid entries`,
    );
    const repaired: CachedIndex = {
      offsets: fresh.offsets,
      validEnd: fresh.validEnd,
      ...fileStamp(await handle.stat()),
      anchor: fresh.anchor,
      ...(fresh.ids ? { ids: fresh.ids } : {}),
    };
    this.#keepIndex(name, repaired);
    return repaired;
  }

  async #readMeta(where: LogLocation, paths: Paths): Promise<MetaRecord> {
    let text: string;
    try {
      text = await readFile(paths.meta, 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return { value: null, version: 0 };
      throw error;
    }
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch {
      record = undefined;
    }
    const { version, value } = (typeof record === 'object' && record !== null ? record : {}) as Record<
      string,
      unknown
    >;
    if (
      typeof version !== 'number' ||
      !Number.isSafeInteger(version) ||
      version < 1 ||
      typeof value !== 'object' ||
      value === null ||
      Array.isArray(value)
    ) {
      throw new StoreError(
        where.conversationId,
        `${paths.meta} holds ${JSON.stringify(text.slice(0, 60))}, not a metadata record; it was not changed — restore or remove it`,
        { code: 'corrupt' },
      );
    }
    return { value: value as Record<string, unknown>, version };
  }

  async append(
    conversationId: string,
    entries: readonly NewEntry[],
    options?: AppendOptions,
  ): Promise<number> {
    return this.#run('append', conversationId, async (where, name, paths) => {
      const { expected, epoch } = checkAppendArguments(conversationId, entries, options);
      const serialized = serializeEntries(conversationId, entries).map(([metadata, message], i) => ({
        metadata,
        message,
        id: entries[i]?.id,
      }));
      if (serialized.length === 0) {
        await this.#checkIdFile(conversationId, name, paths, false);
        checkEpoch(conversationId, epoch, await readEpoch(paths.epoch));
        const head = await this.#snapshot(where, name, paths, 0, async (_, index) => index.offsets.length);
        if (expected !== undefined && expected !== head) {
          throw new ConflictError(conversationId, expected, head);
        }
        return head;
      }
      await this.#ensureDir();
      return this.#locked(paths, conversationId, async () => {
        await this.#checkIdFile(conversationId, name, paths, true);
        const current = await readEpoch(paths.epoch);
        checkEpoch(conversationId, epoch, current);
        const handle = await open(paths.log, 'a+');
        let removeEmpty = false;
        try {
          let index = await this.#index(where, name, handle, true);
          if (index.torn) index = await this.#setTornAside(where, name, handle, index);
          // An index read from `NAME.idx` does not know the log's ids: the batch's are looked for in
          // `NAME.ids` (which holds those of the entries the index file holds) and among those indexed
          // since; without that file, the log is indexed whole.
          const wanted = batchIds(entries).map(({ id }) => id);
          let found: Map<string, number> | undefined = new Map();
          if (index.idsUnknown && wanted.length > 0) {
            const { idsPersisted, persisted } = index;
            found =
              idsPersisted !== undefined && persisted !== undefined
                ? await findIds(paths.ids, idsPersisted, persisted, wanted, index)
                : undefined;
          }
          if (found === undefined) {
            const whole = await this.#fullIndex(where, handle, fileStamp(await handle.stat()));
            index = index.persisted === undefined ? whole : { ...whole, persisted: index.persisted };
            this.#keepIndex(name, index);
          }
          const head = index.offsets.length;
          // Each id looked up where it was found or in the index, made from the log under the lock.
          const held = wanted.flatMap((id) => {
            const seq = found?.get(id) ?? index.ids?.get(id);
            return seq === undefined ? [] : [{ id, seq }];
          });
          if (held.length > 0) {
            removeEmpty = head === 0 && index.validEnd === 0;
            throw new DuplicateMessageIdError(conversationId, held);
          }
          if (expected !== undefined && expected !== head) {
            removeEmpty = head === 0 && index.validEnd === 0;
            throw new ConflictError(conversationId, expected, head);
          }
          const data = formatBatch(head, serialized);
          const start = index.validEnd;
          // The counts first: a reader elsewhere that finds the new entries in the log then finds
          // their counts too. Until then they are of seqs its log does not reach, and if the log
          // write fails they are tied (by digest) to lines that never come.
          await appendCounts(paths.counts, head, data, entries);
          await writeAll(handle, data);
          await handle.datasync();
          if (start === 0) await syncDirectory(this.dir);
          if (epoch !== undefined && current === null) await writeFileAtomic(paths.epoch, `${epoch}\n`);
          const info = await handle.stat();
          if (info.size === start + data.length) {
            // Every line of `data` ends in a newline: record where each one starts.
            let lineStart = 0;
            while (lineStart < data.length) {
              index.offsets.push(start + lineStart);
              lineStart = data.indexOf(0x0a, lineStart) + 1;
            }
            const end = start + data.length;
            const last = index.offsets.last() as number;
            let ids = index.ids;
            for (const { id, index: i } of batchIds(entries)) {
              ids ??= new Map();
              ids.set(id, head + i);
            }
            const next: CachedIndex = {
              ...sameLogFields(index),
              offsets: index.offsets,
              validEnd: end,
              ...fileStamp(info),
              anchor: digest(data.subarray(last - start)),
              ...(ids ? { ids } : {}),
            };
            this.#keepIndex(name, next);
            await this.#persistIndex(paths, next);
          } else {
            this.#cache.delete(name);
          }
          return head;
        } finally {
          await handle.close();
          if (removeEmpty) {
            await unlinkIfExists(paths.log);
            this.#cache.delete(name);
          }
        }
      });
    });
  }

  async read(conversationId: string, options?: ReadOptions): Promise<StoredEntry[]> {
    return this.#run('read', conversationId, async (where, name, paths) => {
      const { fromSeq, limit } = readRange(conversationId, options);
      await this.#checkIdFile(conversationId, name, paths, false);
      return this.#snapshot<StoredEntry[]>(where, name, paths, [], async (handle, index, lastTry) => {
        const count = index.offsets.length;
        if (fromSeq >= count || limit === 0) return [];
        const endSeq = Math.min(count, fromSeq + limit);
        await this.#loadStarts(name, paths, index, fromSeq, endSeq);
        const start = index.offsets.get(fromSeq) as number;
        const end = endSeq < count ? (index.offsets.get(endSeq) as number) : index.validEnd;
        const bytes = await readBytes(handle, start, end);
        const slices = new Slices();
        // The records of the rows read, read from the counts file's end (see `readCountsRange`).
        const records =
          options?.counts === false
            ? null
            : (await readCountsRange(paths.counts, fromSeq, endSeq, slices)).bySeq;
        // The counts file is of the log in place now: if that is no longer the log read (a replace,
        // a clear or a delete since), its records may be of another generation only. Read again;
        // after several replaces in a row, take what counts still match (never a wrong one: each
        // is tied to its line by digest) rather than fail the read.
        if (records && !lastTry && !(await stillNamed(paths.log, index))) throw new FileChanged();
        // Parsed (and their counts checked) a part of the bytes read at a time, yielding between
        // parts when the slice is spent: a long conversation (a resume) never holds the process.
        const entries: StoredEntry[] = [];
        for (let from = fromSeq; from < endSeq; ) {
          const offset = index.offsets.get(from) as number;
          let to = from + 1;
          while (to < endSeq && (index.offsets.get(to) as number) - offset < PARSE_PART_BYTES) to++;
          const part = bytes.subarray(
            offset - start,
            (to < endSeq ? (index.offsets.get(to) as number) : end) - start,
          );
          let parsed: StoredEntry[];
          try {
            parsed = parseEntries(part, from, where);
          } catch (error) {
            // `NAME.idx` pointed at bytes that are not those lines: the log is indexed whole again.
            if (!(error instanceof StoreError) || !index.fromIndexFile) throw error;
            this.#indexDistrusted.add(name);
            this.#cache.delete(name);
            await unlinkIfExists(paths.idx);
            throw new FileChanged();
          }
          if (records) attachCounts(parsed, part, records);
          for (const entry of parsed) entries.push(entry);
          from = to;
          const pause = slices.step();
          if (pause) await pause;
        }
        return entries;
      });
    });
  }

  async head(conversationId: string): Promise<number> {
    return this.#run('head', conversationId, async (where, name, paths) => {
      await this.#checkIdFile(conversationId, name, paths, false);
      return this.#snapshot(where, name, paths, 0, async (_, index) => index.offsets.length);
    });
  }

  async epoch(conversationId: string): Promise<string | null> {
    return this.#run('epoch', conversationId, async (_where, name, paths) => {
      await this.#checkIdFile(conversationId, name, paths, false);
      return readEpoch(paths.epoch);
    });
  }

  async replace(
    conversationId: string,
    entries: readonly NewEntry[],
    options?: { epoch?: string },
  ): Promise<void> {
    return this.#run('replace', conversationId, async (_where, name, paths) => {
      const slices = new Slices();
      const epoch = await checkReplaceArgumentsInSlices(conversationId, entries, options, slices);
      const { log, counts, offsets, size, anchor } = await replaceFiles(conversationId, entries, slices);
      await this.#ensureDir();
      await this.#locked(paths, conversationId, async () => {
        await this.#checkIdFile(conversationId, name, paths, entries.length > 0);
        this.#cache.delete(name);
        await writeFileAtomic(paths.epoch, `${epoch}\n`);
        if (entries.length === 0) {
          await unlinkIfExists(paths.log);
          await unlinkIfExists(paths.counts);
          await unlinkIfExists(paths.idx);
          await unlinkIfExists(paths.ids);
          await syncDirectory(this.dir);
        } else {
          // A reader elsewhere takes the log and then the counts file, without the lock. Until the
          // new log is in place the counts file holds both generations' records (each tied to its
          // line by digest: the old log's and the new one's each find theirs), then the new one's
          // alone; a read whose log was replaced before it took the counts reads again (`read`).
          // Both swaps are atomic, never a file half written.
          if (counts.length > 0) {
            const previous = await readFile(paths.counts, 'utf8').catch(() => '');
            const joined = previous.length === 0 || previous.endsWith('\n') ? previous : `${previous}\n`;
            await writeFileAtomic(paths.counts, joined + counts, { durable: false });
          }
          await writeFileAtomic(paths.log, log);
          if (counts.length === 0) await unlinkIfExists(paths.counts);
          else await writeFileAtomic(paths.counts, counts, { durable: false });
          // The new log's index beside it, so that a process that never read it need not read it whole.
          const info = fileStamp(await stat(paths.log));
          const index: CachedIndex = { offsets, validEnd: size, ...info, anchor };
          const ids = new Map<string, number>();
          for (const { id, index: seq } of batchIds(entries)) if (!ids.has(id)) ids.set(id, seq);
          if (ids.size > 0) index.ids = ids;
          await this.#persistIndex(paths, index);
        }
      });
    });
  }

  async pop(conversationId: string): Promise<StoredEntry | undefined> {
    return this.#run('pop', conversationId, async (where, name, paths) => {
      await this.#checkIdFile(conversationId, name, paths, false);
      if (!(await this.#snapshot(where, name, paths, false, async (_, index) => index.offsets.length > 0))) {
        return undefined;
      }
      return this.#locked(paths, conversationId, async () => {
        const handle = await openIfExists(paths.log, 'r+');
        if (!handle) return undefined;
        let entries: StoredEntry[];
        try {
          let index = await this.#index(where, name, handle, true);
          if (index.torn) index = await this.#setTornAside(where, name, handle, index);
          entries = parseEntries(await readBytes(handle, 0, index.validEnd), 0, where);
        } finally {
          await handle.close();
        }
        const last = entries.pop();
        if (!last) return undefined;
        // The rest is rewritten whole: the last entry may end a batch, which cut short would look torn.
        this.#cache.delete(name);
        await unlinkIfExists(paths.idx);
        await unlinkIfExists(paths.ids);
        await writeFileAtomic(paths.epoch, `${newEpoch()}\n`);
        if (entries.length === 0) {
          await unlinkIfExists(paths.log);
          await syncDirectory(this.dir);
        } else {
          await writeFileAtomic(
            paths.log,
            formatBatch(
              0,
              entries.map((entry) => ({
                metadata: JSON.stringify(entry.metadata),
                message: JSON.stringify(entry.message),
                id: entry.id,
              })),
            ),
          );
        }
        return last;
      });
    });
  }

  async saveCounts(
    conversationId: string,
    updates: readonly EntryCountsUpdate[],
    options: { epoch: string | null },
  ): Promise<boolean> {
    return this.#run('saveCounts', conversationId, async (where, name, paths) => {
      const epoch = checkSaveCounts(conversationId, updates, options);
      await this.#checkIdFile(conversationId, name, paths, false);
      if ((await readEpoch(paths.epoch)) !== epoch) return false;
      return this.#locked(paths, conversationId, async () => {
        if ((await readEpoch(paths.epoch)) !== epoch) return false;
        const handle = await openIfExists(paths.log, 'r');
        if (!handle) return true;
        try {
          let index = await this.#index(where, name, handle, true);
          let text = '';
          for (const { seq, counts } of updates) {
            if (seq >= index.offsets.length) continue;
            try {
              await this.#loadStarts(name, paths, index, seq, seq + 1);
            } catch (error) {
              // `NAME.idx` no longer trusted: the log is indexed whole.
              if (!(error instanceof FileChanged)) throw error;
              index = await this.#index(where, name, handle, true);
              if (seq >= index.offsets.length) continue;
            }
            const start = index.offsets.get(seq) as number;
            const end =
              seq + 1 < index.offsets.length ? (index.offsets.get(seq + 1) as number) : index.validEnd;
            text += countsLine(
              seq,
              (await readBytes(handle, start, end)).subarray(0, end - start - 1),
              counts,
            );
          }
          if (text.length > 0) await appendFile(paths.counts, `\n${text}`);
          return true;
        } finally {
          await handle.close();
        }
      });
    });
  }

  async getMeta(conversationId: string): Promise<MetaRecord> {
    return this.#run('getMeta', conversationId, async (where, name, paths) => {
      await this.#checkIdFile(conversationId, name, paths, false);
      return this.#readMeta(where, paths);
    });
  }

  async setMeta(
    conversationId: string,
    value: Record<string, unknown>,
    options?: { expectedVersion?: number },
  ): Promise<number> {
    return this.#run('setMeta', conversationId, async (where, name, paths) => {
      const expected = checkSetMetaArguments(conversationId, value, options);
      const json = stringifyForStore(conversationId, 'metadata', value);
      await this.#ensureDir();
      return this.#locked(paths, conversationId, async () => {
        await this.#checkIdFile(conversationId, name, paths, true);
        const current = (await this.#readMeta(where, paths)).version;
        if (expected !== undefined && expected !== current) {
          throw new ConflictError(conversationId, expected, current, 'version');
        }
        const version = current + 1;
        await writeFileAtomic(paths.meta, `{"version":${version},"value":${json}}\n`);
        return version;
      });
    });
  }

  async list(options?: { prefix?: string; cursor?: string; limit?: number }): Promise<ConversationPage> {
    if (this.#closed)
      throw new StoreError(undefined, `the file store at ${this.dir} is closed`, { code: 'closed' });
    const checked = listOptions(options);
    let files: string[];
    try {
      files = await readdir(this.dir);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return { ids: [] };
      throw new StoreError(undefined, `cannot list ${this.dir}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const names = new Set<string>();
    for (const file of files) {
      const dot = file.indexOf('.');
      if (dot <= 0) continue;
      const ext = file.slice(dot);
      if (ext === '.jsonl' || ext === '.meta.json') names.add(file.slice(0, dot));
    }
    const ids = await Promise.all(
      [...names].map(async (name): Promise<string | undefined> => {
        try {
          if (!isHashedName(name)) return decodeId(name);
          const id = await readFile(join(this.dir, `${name}.id`), 'utf8');
          if (encodeId(id) === name) return id;
        } catch {
          // Reported below.
        }
        if (!this.#skippedNames.has(name)) {
          this.#skippedNames.add(name);
          this.#warn(
            `${join(this.dir, name)}.*: not a conversation this store wrote (its name does not decode); skipped`,
          );
        }
        return undefined;
      }),
    );
    return pageIds(
      ids.filter((id): id is string => id !== undefined),
      checked,
    );
  }

  async delete(conversationId: string, options?: { epoch?: string }): Promise<void> {
    return this.#run('delete', conversationId, async (_where, name, paths) => {
      const epoch = checkDeleteArguments(conversationId, options);
      const exists = await stat(this.dir).then(
        () => true,
        () => false,
      );
      if (!exists) return;
      await this.#locked(paths, conversationId, async () => {
        // The new generation first (as on `replace`): an append waiting for the lock with the old
        // one is refused, and a crash before the log goes only makes writers reload. The `.id`
        // sidecar stays with it, so the tombstone's name still says whose it is.
        await this.#checkIdFile(conversationId, name, paths, true);
        await writeFileAtomic(paths.epoch, `${epoch}\n`);
        await unlinkIfExists(paths.log);
        await unlinkIfExists(paths.meta);
        await unlinkIfExists(paths.counts);
        await unlinkIfExists(paths.idx);
        await unlinkIfExists(paths.ids);
        this.#cache.delete(name);
        this.#verifiedIds.delete(name);
        await syncDirectory(this.dir);
      });
    });
  }

  /** Waits for the operations already started, then refuses new ones. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#pending);
  }
}
