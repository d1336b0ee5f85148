/**
 * The embedded driver: many conversations in one SQLite file (`better-sqlite3`, an optional
 * peer dependency), shared safely by any number of processes on one machine.
 *
 * - WAL journal, so readers never block the writer and a killed process loses nothing that
 *   was committed.
 * - `synchronous=FULL` by default: every commit is fsynced, so an append that resolved survives
 *   power loss too (the promise of `ConversationStore.append`). `synchronous: 'normal'` keeps
 *   crash safety for the process but may lose the last commits on power loss; it is about 10×
 *   faster for one-at-a-time appends.
 * - An entry's token counts are cleared by a trigger in the statement that changes its message,
 *   by contextkit or by hand, so what the table holds was made for the message beside it and a
 *   read takes it without hashing every message again (schema version 6).
 * - Each write is one `BEGIN IMMEDIATE` transaction that reads the head and checks
 *   `expectedSeq` while holding the write lock; other processes wait up to `busyTimeoutMs`.
 *
 * better-sqlite3 is synchronous: a call blocks the event loop while it runs (and while it
 * waits for another process's lock), which is what makes one transaction per call cheap.
 */

import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { setImmediate as setImmediatePromise } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { ConflictError, DuplicateMessageIdError, EpochConflictError, StoreError } from '../errors.js';
import { SLICE_MS, Slices } from '../slices.js';
import {
  CountsRecords,
  checkSaveCounts,
  decodeCounts,
  encodeCounts,
  mergeCounts,
  newCountsRecords,
  withCounts,
} from './entry-counts.js';
import { validateConversationId } from './keys.js';
import { listOptions } from './page.js';
import { pageStart, prefixUpperBound } from './prefix-range.js';
import { prepareSqlReplace } from './replace-rows.js';
import { SqliteCheckpointer } from './sqlite-checkpoint.js';
import { SQLITE_SEARCH_MIGRATION, SqliteSearch, searchTexts } from './sqlite-search.js';
import {
  describeFound,
  parseStoredEntry,
  parseStoredObject,
  serializeEntries,
  stringifyForStore,
} from './stored-json.js';
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
  checkSetMetaArguments,
  newEpoch,
  readRange,
} from './validate.js';

/** How a SQLite store trades durability for speed, and how long it waits for other processes. */
export interface SqliteStoreOptions {
  /**
   * `full` (default): fsync on every commit, so a resolved append survives power loss.
   * `normal`: a resolved append survives the process being killed, not the machine losing power.
   */
  synchronous?: 'full' | 'normal';
  /** How long a call waits for another process's write lock before failing (default 10 000 ms). */
  busyTimeoutMs?: number;
  /**
   * Open only a database contextkit already created: a missing file, or a SQLite file without
   * contextkit's tables, is a `StoreError` with code `not_found`, and nothing is created or
   * changed. For tools that only read, where a mistyped path should say so.
   */
  mustExist?: boolean;
}

/** The schema version this code writes; a newer file is refused rather than misread. */
export const SQLITE_SCHEMA_VERSION = 6;

const SQLITE_HEADER = 'SQLite format 3\u0000';

/**
 * Ordered migrations; entry `i` takes the schema from version `i` to `i + 1`.
 *
 * One `conversations` row per conversation that has entries, metadata or a generation holds its head (so
 * the append transaction reads one row) and its metadata with the CAS version; listing pages
 * through its primary key. `entries` is a rowid table (not WITHOUT ROWID) because a message
 * may be megabytes.
 */
const MIGRATIONS: ReadonlyArray<string | ((db: Database.Database) => void)> = [
  `CREATE TABLE conversations (
     conversation_id TEXT NOT NULL PRIMARY KEY,
     head INTEGER NOT NULL DEFAULT 0,
     meta_value TEXT,
     meta_version INTEGER NOT NULL DEFAULT 0
   ) WITHOUT ROWID;
   CREATE TABLE entries (
     conversation_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     metadata TEXT NOT NULL,
     message TEXT NOT NULL,
     PRIMARY KEY (conversation_id, seq)
   );`,
  // The full-text index recall searches (sqlite-search.ts).
  SQLITE_SEARCH_MIGRATION,
  // The generation `replace` renews and appends check (ConversationStore.epoch).
  'ALTER TABLE conversations ADD COLUMN epoch TEXT;',
  // Each entry's token counts by tokenizer, tied to its message text (entry-counts.ts).
  'ALTER TABLE entries ADD COLUMN counts TEXT;',
  // The caller's message ids (NewEntry.id), one entry per id in a conversation, looked up by append.
  `ALTER TABLE entries ADD COLUMN message_id TEXT;
   CREATE UNIQUE INDEX entries_message_id ON entries (conversation_id, message_id) WHERE message_id IS NOT NULL;`,
  // Counts follow their message in the database itself (`CountsRecords`): what an earlier
  // version kept is kept only where its digest still matches the message, then a trigger clears
  // an entry's counts whenever its message is changed.
  (db) => {
    db.function('contextkit_counts_hold', { deterministic: true }, (counts: unknown, message: unknown) =>
      typeof message === 'string' && decodeCounts(counts, message) !== undefined ? 1 : 0,
    );
    db.exec(`UPDATE entries SET counts = NULL
               WHERE counts IS NOT NULL AND contextkit_counts_hold(counts, message) = 0;
             CREATE TRIGGER IF NOT EXISTS entries_counts_follow_message AFTER UPDATE OF message ON entries
             BEGIN UPDATE entries SET counts = NULL WHERE rowid = NEW.rowid; END;`);
  },
];

interface HeadRow {
  head: number;
  meta_version: number;
  epoch: string | null;
}

interface EntryRow {
  seq: number;
  metadata: unknown;
  message: unknown;
  counts: unknown;
  message_id: unknown;
}

interface MetaRow {
  meta_value: unknown;
  meta_version: number;
}

function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Refuses, before SQLite touches it, a path that is a directory or a file that is not a
 * SQLite database, so nothing of it is overwritten and the error says what is there.
 */
function checkDatabaseFile(path: string, mustExist: boolean): void {
  if (path === ':memory:' || path === '') {
    if (mustExist) {
      throw new StoreError(
        undefined,
        `SQLite store ${JSON.stringify(path)} is a new in-memory database every time, so it cannot already exist`,
        {
          code: 'not_found',
        },
      );
    }
    return;
  }
  let size: number;
  try {
    const stat = statSync(path);
    if (stat.isDirectory()) {
      throw new StoreError(undefined, `SQLite store ${path} is a directory, not a database file`, {
        code: 'not_a_database',
      });
    }
    size = stat.size;
  } catch (error) {
    if (error instanceof StoreError) throw error;
    if (errorCode(error) === 'ENOENT') {
      if (!mustExist) return;
      throw new StoreError(
        undefined,
        `no SQLite store at ${path}: the file ${resolve(path)} does not exist (check the path; nothing was created)`,
        { cause: error, code: 'not_found' },
      );
    }
    throw new StoreError(undefined, `SQLite store ${path} cannot be read: ${errorText(error)}`, {
      cause: error,
    });
  }
  if (size === 0) return;
  const header = Buffer.alloc(Math.min(size, 64));
  const fd = openSync(path, 'r');
  try {
    readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (header.subarray(0, SQLITE_HEADER.length).toString('latin1') === SQLITE_HEADER) return;
  throw new StoreError(
    undefined,
    `SQLite store ${path} is not a SQLite database (${size} bytes starting with ${describeHeader(header)}); ` +
      'point the store at a new path or at a database contextkit created — the file was left untouched',
    { code: 'not_a_database' },
  );
}

/** Whether contextkit's schema table is in the database (read without taking any lock for writing). */
function hasSchemaTable(db: Database.Database): boolean {
  return (
    db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'contextkit_schema'").get() !==
    undefined
  );
}

function describeHeader(header: Buffer): string {
  const text = header.toString('utf8');
  // Mostly printable text is shown as text; anything else as hex.
  const printable = text.replace(/[^\x20-\x7e\n\r\t\u00a0-\uffff]/g, '').length;
  if (!text.includes('\ufffd') && printable >= text.length * 0.9) return describeFound(text);
  return `bytes ${header.subarray(0, 16).toString('hex')}`;
}

/** An entry from its row, with the counts that still hold for its message text. */
/** `read` starts with pages of this many rows. */
const READ_PAGE_ROWS = 256;
/** Pages stay between these many rows (a page of long messages shrinks, of short ones grows). */
const MIN_PAGE_ROWS = 16;
const MAX_PAGE_ROWS = 8192;
/** Old rows a large replace deletes per slice (`#replaceInSlices`). */
const REPLACE_DELETE_ROWS = 2_000;

/** How many times `read` starts again when a replace comes between its pages. */
const READ_ATTEMPTS = 4;

/** The next page's size: halved when a page took over half a slice, doubled under a quarter. */
function nextPageRows(rows: number, ms: number): number {
  if (ms > SLICE_MS / 2) return Math.max(MIN_PAGE_ROWS, rows >> 1);
  if (ms < SLICE_MS / 4) return Math.min(MAX_PAGE_ROWS, rows * 2);
  return rows;
}

function storedRow(conversationId: string, row: EntryRow): StoredEntry {
  return storedTuple(
    conversationId,
    [row.seq, row.metadata, row.message, row.counts, row.message_id],
    new CountsRecords(),
  );
}

/** An entry row as `read` takes it: its columns in order (no object with named fields per row). */
type EntryTuple = [seq: number, metadata: unknown, message: unknown, counts: unknown, message_id: unknown];

/** An entry from its row, its counts record decoded by `counts` (none with `null`). */
function storedTuple(conversationId: string, row: EntryTuple, counts: CountsRecords | null): StoredEntry {
  const entry = parseStoredEntry(conversationId, row[0], row[1], row[2]);
  if (typeof row[4] === 'string') entry.id = row[4];
  return withCounts(entry, counts?.decode(row[3]));
}

/**
 * Flushes to disk what was written to `path` so far (`fdatasync` on the thread pool, off the event
 * loop). Best effort: a file that cannot be opened is left to the commit's own sync.
 */
async function syncFile(path: string): Promise<void> {
  let file: Awaited<ReturnType<typeof openFile>> | undefined;
  try {
    // SQLite holds no lock on the WAL file itself (its locks are on the database and -shm files),
    // so opening and closing it here releases none of them.
    file = await openFile(path, 'r+');
    await file.datasync();
  } catch {
    // The commit syncs the WAL anyway.
  } finally {
    await file?.close().catch(() => {});
  }
}

/**
 * Conversations in one SQLite file. Open it with {@link openSqliteStore} (or construct it
 * directly: opening is synchronous). A WAL journal; each write is one
 * `BEGIN IMMEDIATE` transaction, other processes waiting up to `busyTimeoutMs` for the lock;
 * `synchronous` trades durability for speed.
 */
export class SqliteStore implements ConversationStore {
  readonly kind = 'sqlite';
  /** The database file, as given. */
  readonly path: string;
  readonly #db: Database.Database;
  readonly #busyTimeoutMs: number;
  #closed = false;
  /**
   * Set while a large replace holds its transaction open across slices that yield (`replace`):
   * every other use of the connection waits for it, or it would run inside that transaction.
   */
  #replacing: Promise<void> | null = null;
  /** Whether the replace holding the transaction is the one running now (its own statements). */
  #replaceRunning = false;
  /** Full-text search over the entries, kept in the same file (FTS5). */
  readonly search: SqliteSearch;
  /** Whether every commit fsyncs (`synchronous: 'full'`). */
  readonly #syncFull: boolean;
  /**
   * Checkpoints the WAL a large replace left, off the event loop (null for a database without a
   * WAL: `:memory:`, a temporary one).
   */
  #checkpointer: SqliteCheckpointer | null = null;

  readonly #selectHead: Database.Statement<[string], HeadRow>;
  readonly #insertEntry: Database.Statement<[string, number, string, string, string | null, string | null]>;
  readonly #selectId: Database.Statement<[string, string], { seq: number }>;
  readonly #selectCounts: Database.Statement<[string, number], { message: unknown; counts: unknown }>;
  readonly #updateCounts: Database.Statement<[string, string, number]>;
  readonly #upsertHead: Database.Statement<[string, number]>;
  readonly #setEpoch: Database.Statement<[string, string]>;
  readonly #deleteEntries: Database.Statement<[string]>;
  readonly #deleteRange: Database.Statement<[string, number, number]>;
  readonly #tombstone: Database.Statement<[string, string]>;
  readonly #selectEntries: Database.Statement<[string, number, number], EntryTuple>;
  readonly #selectMeta: Database.Statement<[string], MetaRow>;
  readonly #selectLast: Database.Statement<[string, number], EntryRow & { rowid: number }>;
  readonly #deleteEntry: Database.Statement<[string, number]>;
  readonly #upsertMeta: Database.Statement<[string, string, number]>;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    checkOptionNames('SQLite', options, ['synchronous', 'busyTimeoutMs', 'mustExist']);
    const synchronous = options.synchronous ?? 'full';
    if (synchronous !== 'full' && synchronous !== 'normal') {
      throw new StoreError(
        undefined,
        `SQLite option synchronous must be 'full' or 'normal', got ${String(synchronous)}`,
        {
          code: 'invalid_argument',
        },
      );
    }
    const busyTimeoutMs = options.busyTimeoutMs ?? 10_000;
    if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
      throw new StoreError(
        undefined,
        `SQLite option busyTimeoutMs must be a non-negative integer, got ${busyTimeoutMs}`,
        {
          code: 'invalid_argument',
        },
      );
    }
    this.path = path;
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#syncFull = synchronous === 'full';
    const mustExist = options.mustExist === true;
    checkDatabaseFile(path, mustExist);
    let db: Database.Database;
    try {
      db = new Database(path, { timeout: busyTimeoutMs, fileMustExist: mustExist });
    } catch (error) {
      throw new StoreError(undefined, `SQLite store ${path} cannot be opened: ${errorText(error)}`, {
        cause: error,
        code: mustExist && errorCode(error) === 'SQLITE_CANTOPEN' ? 'not_found' : 'store',
      });
    }
    this.#db = db;
    this.search = new SqliteSearch(
      db,
      (id, what, work) => this.#run(id, what, work),
      () => this.#idle(),
    );
    try {
      // Checked before the journal mode is set, which would already write to a foreign file.
      if (mustExist && !hasSchemaTable(db)) {
        throw new StoreError(
          undefined,
          `SQLite store ${path} holds no contextkit tables (check the path; nothing was created or changed)`,
          { code: 'not_found' },
        );
      }
      const journal = db.pragma('journal_mode = WAL', { simple: true });
      db.pragma(`synchronous = ${synchronous.toUpperCase()}`);
      if (journal === 'wal') this.#checkpointer = new SqliteCheckpointer(db, synchronous);
      this.#migrate();
      this.#selectHead = db.prepare<[string], HeadRow>(
        'SELECT head, meta_version, epoch FROM conversations WHERE conversation_id = ?',
      );
      this.#insertEntry = db.prepare<[string, number, string, string, string | null, string | null]>(
        'INSERT INTO entries (conversation_id, seq, metadata, message, counts, message_id) VALUES (?, ?, ?, ?, ?, ?)',
      );
      this.#selectId = db.prepare<[string, string], { seq: number }>(
        'SELECT seq FROM entries WHERE conversation_id = ? AND message_id = ?',
      );
      this.#selectCounts = db.prepare<[string, number], { message: unknown; counts: unknown }>(
        'SELECT message, counts FROM entries WHERE conversation_id = ? AND seq = ?',
      );
      this.#updateCounts = db.prepare<[string, string, number]>(
        'UPDATE entries SET counts = ? WHERE conversation_id = ? AND seq = ?',
      );
      this.#upsertHead = db.prepare<[string, number]>(
        `INSERT INTO conversations (conversation_id, head) VALUES (?, ?)
         ON CONFLICT (conversation_id) DO UPDATE SET head = excluded.head`,
      );
      this.#setEpoch = db.prepare<[string, string]>(
        `INSERT INTO conversations (conversation_id, epoch) VALUES (?, ?)
         ON CONFLICT (conversation_id) DO UPDATE SET epoch = excluded.epoch`,
      );
      this.#deleteEntries = db.prepare<[string]>('DELETE FROM entries WHERE conversation_id = ?');
      this.#deleteRange = db.prepare<[string, number, number]>(
        'DELETE FROM entries WHERE conversation_id = ? AND seq >= ? AND seq < ?',
      );
      // A deleted conversation keeps its row, empty, with a new generation (ConversationStore.epoch):
      // an emptied row is never deleted, or an append naming the old generation would be taken.
      this.#tombstone = db.prepare<[string, string]>(
        `INSERT INTO conversations (conversation_id, epoch) VALUES (?, ?)
         ON CONFLICT (conversation_id) DO UPDATE
         SET head = 0, search_head = 0, meta_value = NULL, meta_version = 0, epoch = excluded.epoch`,
      );
      this.#selectEntries = db
        .prepare<[string, number, number], EntryTuple>(
          'SELECT seq, metadata, message, counts, message_id FROM entries WHERE conversation_id = ? AND seq >= ? ORDER BY seq LIMIT ?',
        )
        .raw();
      this.#selectLast = db.prepare<[string, number], EntryRow & { rowid: number }>(
        'SELECT rowid, seq, metadata, message, counts, message_id FROM entries WHERE conversation_id = ? AND seq = ?',
      );
      this.#deleteEntry = db.prepare<[string, number]>(
        'DELETE FROM entries WHERE conversation_id = ? AND seq = ?',
      );
      this.#selectMeta = db.prepare<[string], MetaRow>(
        'SELECT meta_value, meta_version FROM conversations WHERE conversation_id = ?',
      );
      this.#upsertMeta = db.prepare<[string, string, number]>(
        `INSERT INTO conversations (conversation_id, meta_value, meta_version) VALUES (?, ?, ?)
         ON CONFLICT (conversation_id) DO UPDATE SET meta_value = excluded.meta_value, meta_version = excluded.meta_version`,
      );
    } catch (error) {
      db.close();
      if (error instanceof StoreError) throw error;
      const code = errorCode(error);
      if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
        throw new StoreError(
          undefined,
          `SQLite store ${path} is damaged or not a database: ${errorText(error)}`,
          {
            cause: error,
            code: 'not_a_database',
          },
        );
      }
      throw new StoreError(undefined, `SQLite store ${path} cannot be opened: ${errorText(error)}`, {
        cause: error,
      });
    }
  }

  /** Brings the schema to {@link SQLITE_SCHEMA_VERSION} under the write lock, once per file. */
  #migrate(): void {
    const db = this.#db;
    db.transaction(() => {
      db.exec('CREATE TABLE IF NOT EXISTS contextkit_schema (version INTEGER NOT NULL)');
      const row = db.prepare('SELECT version FROM contextkit_schema').get() as
        | { version: number }
        | undefined;
      const current = row?.version ?? 0;
      if (current > MIGRATIONS.length) {
        throw new StoreError(
          undefined,
          `SQLite store ${this.path} has schema version ${current}, newer than this contextkit knows (${MIGRATIONS.length}); upgrade contextkit`,
          { code: 'schema_version' },
        );
      }
      for (let version = current; version < MIGRATIONS.length; version++) {
        const migration = MIGRATIONS[version]!;
        if (typeof migration === 'string') db.exec(migration);
        else migration(db);
      }
      if (row === undefined)
        db.prepare('INSERT INTO contextkit_schema (version) VALUES (?)').run(MIGRATIONS.length);
      else if (current !== MIGRATIONS.length)
        db.prepare('UPDATE contextkit_schema SET version = ?').run(MIGRATIONS.length);
    }).immediate();
  }

  /** Runs one call's work, turning SQLite failures into a `StoreError` that names the file. */
  #run<T>(conversationId: string | undefined, what: string, work: () => T): T {
    if (this.#closed) {
      throw new StoreError(conversationId, `SQLite store ${this.path} is closed`, { code: 'closed' });
    }
    if (this.#replacing !== null && !this.#replaceRunning) {
      // A call that did not wait for `#idle` would run inside the replace's open transaction.
      throw new Error(`internal: SQLite store ${this.path} used for ${what} while a replace holds it`);
    }
    try {
      return work();
    } catch (error) {
      if (error instanceof StoreError) throw error;
      const code = errorCode(error);
      const hint =
        code === 'SQLITE_BUSY'
          ? ` (another process held the write lock longer than busyTimeoutMs=${this.#busyTimeoutMs})`
          : '';
      throw new StoreError(
        conversationId,
        `SQLite store ${this.path}: ${what} failed: ${errorText(error)}${hint}`,
        {
          cause: error,
          code: code === 'SQLITE_BUSY' ? 'busy' : 'store',
        },
      );
    }
  }

  /**
   * Resolves once no replace holds the connection (at once, with no promise, when none does):
   * each method waits for it before its first statement, as it would have waited for the
   * replace's transaction had it run in one synchronous stretch.
   */
  #idle(): Promise<void> | undefined {
    if (this.#replacing === null) return undefined;
    return (async () => {
      while (this.#replacing !== null) await this.#replacing;
    })();
  }

  async append(
    conversationId: string,
    entries: readonly NewEntry[],
    options?: AppendOptions,
  ): Promise<number> {
    await this.#idle();
    return this.#run(conversationId, 'append', () => {
      validateConversationId(conversationId);
      const { expected, epoch } = checkAppendArguments(conversationId, entries, options);
      const rows = serializeEntries(conversationId, entries);
      const counts = newCountsRecords(entries, rows);
      const texts = searchTexts(entries);
      let rowids: number[] = [];
      const first = this.#db
        .transaction(() => {
          const row = this.#selectHead.get(conversationId);
          const head = row?.head ?? 0;
          const current = row?.epoch ?? null;
          if (epoch !== undefined && current !== null && current !== epoch)
            throw new EpochConflictError(conversationId, epoch, current);
          // One lookup in the (conversation_id, message_id) index per id, inside the transaction.
          const held = batchIds(entries).flatMap(({ id }) => {
            const found = this.#selectId.get(conversationId, id);
            return found === undefined ? [] : [{ id, seq: found.seq }];
          });
          if (held.length > 0) throw new DuplicateMessageIdError(conversationId, held);
          if (expected !== undefined && expected !== head)
            throw new ConflictError(conversationId, expected, head);
          if (rows.length === 0) return head;
          if (epoch !== undefined && current === null) this.#setEpoch.run(conversationId, epoch);
          rowids = rows.map(
            ([metadata, message], i) =>
              this.#insertEntry.run(
                conversationId,
                head + i,
                metadata,
                message,
                counts[i] ?? null,
                entries[i]?.id ?? null,
              ).lastInsertRowid as number,
          );
          this.#upsertHead.run(conversationId, head + rows.length);
          return head;
        })
        .immediate();
      if (rowids.length > 0) this.search.afterAppend(conversationId, first, rowids, texts);
      return first;
    });
  }

  /**
   * Reads a page of rows at a time (its size kept near a slice's time), yielding to the event
   * loop between pages when the slice is spent, so reading a long conversation (a resume) never
   * holds the process for long. Each page is read with the conversation's generation in one
   * transaction; a page of another generation than the first (a replace, a pop came between)
   * starts the read again, and after {@link READ_ATTEMPTS} such starts it is read in one go.
   */
  async read(conversationId: string, options?: ReadOptions): Promise<StoredEntry[]> {
    await this.#idle();
    const { fromSeq, limit } = this.#run(conversationId, 'read', () => {
      validateConversationId(conversationId);
      return readRange(conversationId, options);
    });
    // Counts repeat (one per token count seen): each is parsed and checked once per read.
    const counts = options?.counts === false ? null : new CountsRecords();
    const slices = new Slices();
    let pageRows = READ_PAGE_ROWS;
    for (let attempt = 1; attempt < READ_ATTEMPTS; attempt++) {
      const out: StoredEntry[] = [];
      let epoch: string | null | undefined;
      let from = fromSeq;
      for (;;) {
        // A replace that began since the last page holds the connection: its end is a new generation.
        const wait = this.#idle();
        if (wait) await wait;
        const want = Math.min(limit - out.length, pageRows);
        const started = performance.now();
        const page = this.#run(conversationId, 'read', () => this.#readPage(conversationId, from, want));
        if (epoch === undefined) epoch = page.epoch;
        else if (page.epoch !== epoch) break;
        for (const row of page.rows) out.push(storedTuple(conversationId, row, counts));
        if (page.rows.length < want || out.length >= limit) return out;
        from = page.rows.at(-1)![0] + 1;
        pageRows = nextPageRows(pageRows, performance.now() - started);
        const pause = slices.step();
        if (pause) await pause;
      }
    }
    return this.#run(conversationId, 'read', () => {
      const rows = this.#selectEntries.all(conversationId, fromSeq, Number.isFinite(limit) ? limit : -1);
      return rows.map((row) => storedTuple(conversationId, row, counts));
    });
  }

  /** Up to `limit` rows from `fromSeq` on, with the conversation's generation, in one transaction. */
  #readPage(
    conversationId: string,
    fromSeq: number,
    limit: number,
  ): { epoch: string | null; rows: EntryTuple[] } {
    return this.#db.transaction(() => ({
      epoch: this.#selectHead.get(conversationId)?.epoch ?? null,
      rows: this.#selectEntries.all(conversationId, fromSeq, limit),
    }))();
  }

  async head(conversationId: string): Promise<number> {
    await this.#idle();
    return this.#run(conversationId, 'head', () => {
      validateConversationId(conversationId);
      return this.#selectHead.get(conversationId)?.head ?? 0;
    });
  }

  async epoch(conversationId: string): Promise<string | null> {
    await this.#idle();
    return this.#run(conversationId, 'epoch', () => {
      validateConversationId(conversationId);
      return this.#selectHead.get(conversationId)?.epoch ?? null;
    });
  }

  async replace(
    conversationId: string,
    entries: readonly NewEntry[],
    options?: { epoch?: string },
  ): Promise<void> {
    await this.#idle();
    this.#run(conversationId, 'replace', () => validateConversationId(conversationId));
    // Checked and made ready in slices that yield (issue 32: a replace of 100,000 entries held
    // the event loop for 2.5 s in one stretch).
    const { epoch, rows, counts, texts, chunks } = await prepareSqlReplace(conversationId, entries, options);
    // Entries [start, end) inserted and indexed (from 0: the index of the conversation afresh).
    const insert = (start: number, end: number): void => {
      const rowids: number[] = [];
      for (let seq = start; seq < end; seq++) {
        const [metadata, message] = rows[seq] as [string, string];
        const id = entries[seq]?.id ?? null;
        rowids.push(
          this.#insertEntry.run(conversationId, seq, metadata, message, counts[seq] ?? null, id)
            .lastInsertRowid as number,
        );
      }
      this.search.afterReplace(conversationId, rowids, texts.slice(start, end), start);
    };
    const finish = () => {
      this.#upsertHead.run(conversationId, rows.length);
      this.#setEpoch.run(conversationId, epoch);
    };
    const wait = this.#idle();
    if (wait) await wait;
    if (chunks.length <= 1) {
      this.#run(conversationId, 'replace', () =>
        this.#db
          .transaction(() => {
            this.search.beforeRemove(conversationId);
            this.#deleteEntries.run(conversationId);
            insert(0, rows.length);
            finish();
          })
          .immediate(),
      );
      return;
    }
    await this.#replaceInSlices(conversationId, chunks, insert, finish);
  }

  /**
   * A replace too large for one stretch: one `BEGIN IMMEDIATE` transaction (other processes see
   * the old history until it commits, as with a replace in one go), written a chunk of rows at a
   * time with the event loop let run between chunks. Meanwhile every other call on this store
   * waits (`#idle`) instead of running inside the open transaction; a failure rolls it all back.
   */
  async #replaceInSlices(
    conversationId: string,
    chunks: ReadonlyArray<[number, number]>,
    insert: (start: number, end: number) => void,
    finish: () => void,
  ): Promise<void> {
    let release!: () => void;
    this.#replacing = new Promise((resolve) => {
      release = resolve;
    });
    const step = <T>(work: () => T): T => {
      this.#replaceRunning = true;
      try {
        return this.#run(conversationId, 'replace', work);
      } finally {
        this.#replaceRunning = false;
      }
    };
    let open = false;
    try {
      step(() => this.#db.exec('BEGIN IMMEDIATE'));
      open = true;
      const held = step(() => this.#selectHead.get(conversationId)?.head ?? 0);
      // The old rows go a chunk at a time too (their index rows first).
      for (let from = 0; from < held; from += REPLACE_DELETE_ROWS) {
        step(() => {
          this.search.removeRange(conversationId, from, from + REPLACE_DELETE_ROWS);
          this.#deleteRange.run(conversationId, from, from + REPLACE_DELETE_ROWS);
        });
        await setImmediatePromise();
      }
      // Rows past the head (none in a sound file) go with the last chunk.
      step(() => {
        this.search.beforeRemove(conversationId);
        this.#deleteEntries.run(conversationId);
      });
      for (const [start, end] of chunks) {
        step(() => insert(start, end));
        await setImmediatePromise();
      }
      step(finish);
      await this.#commitLarge(step);
      open = false;
    } finally {
      if (open) {
        this.#replaceRunning = true;
        try {
          if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
        } catch {
          // The connection rolled back on its own.
        } finally {
          this.#replaceRunning = false;
        }
      }
      this.#replacing = null;
      release();
    }
  }

  /**
   * Commits a large replace's transaction without the stretch its `COMMIT` would hold (issue 32:
   * 205 ms at 100,000 messages). Of that, about 100 ms was the automatic checkpoint copying the
   * ~100 MB the transaction wrote to the WAL into the database file, and with `synchronous: 'full'`
   * 30–80 ms the fsync of those WAL pages. So the checkpoint is kept out of this commit and run
   * afterwards by {@link SqliteCheckpointer} on a connection of its own in a worker thread (the
   * automatic one is back on once it is done, so the WAL cannot keep growing), and the WAL's pages
   * already written are flushed to disk first from the thread pool, leaving the commit's own
   * fsync (kept: durability as configured) little to wait for.
   */
  async #commitLarge(step: <T>(work: () => T) => T): Promise<void> {
    const checkpointer = this.#checkpointer;
    if (checkpointer !== null && this.#syncFull) await syncFile(`${this.#db.name}-wal`);
    const deferred = checkpointer?.deferAutomatic() ?? false;
    let committed = false;
    try {
      step(() => this.#db.exec('COMMIT'));
      committed = true;
    } finally {
      if (deferred) checkpointer!.afterCommit(committed);
    }
  }

  async pop(conversationId: string): Promise<StoredEntry | undefined> {
    await this.#idle();
    return this.#run(conversationId, 'pop', () => {
      validateConversationId(conversationId);
      const epoch = newEpoch();
      return this.#db
        .transaction(() => {
          const head = this.#selectHead.get(conversationId)?.head ?? 0;
          const row = head > 0 ? this.#selectLast.get(conversationId, head - 1) : undefined;
          if (!row) return undefined;
          const entry = storedRow(conversationId, row);
          this.search.beforeRemoveLast(conversationId, row.rowid, row.seq);
          this.#deleteEntry.run(conversationId, row.seq);
          this.#upsertHead.run(conversationId, row.seq);
          this.#setEpoch.run(conversationId, epoch);
          return entry;
        })
        .immediate();
    });
  }

  async saveCounts(
    conversationId: string,
    updates: readonly EntryCountsUpdate[],
    options: { epoch: string | null },
  ): Promise<boolean> {
    await this.#idle();
    return this.#run(conversationId, 'saveCounts', () => {
      const epoch = checkSaveCounts(conversationId, updates, options);
      return this.#db
        .transaction(() => {
          if ((this.#selectHead.get(conversationId)?.epoch ?? null) !== epoch) return false;
          for (const { seq, counts } of updates) {
            const row = this.#selectCounts.get(conversationId, seq);
            if (!row || typeof row.message !== 'string') continue;
            const held = decodeCounts(row.counts, row.message);
            const record = encodeCounts(row.message, mergeCounts(held, counts));
            if (record !== null) this.#updateCounts.run(record, conversationId, seq);
          }
          return true;
        })
        .immediate();
    });
  }

  async getMeta(conversationId: string): Promise<MetaRecord> {
    await this.#idle();
    return this.#run(conversationId, 'getMeta', () => {
      validateConversationId(conversationId);
      const row = this.#selectMeta.get(conversationId);
      if (row === undefined || row.meta_version === 0) return { value: null, version: 0 };
      return {
        value: parseStoredObject(conversationId, 'metadata', row.meta_value),
        version: row.meta_version,
      };
    });
  }

  async setMeta(
    conversationId: string,
    value: Record<string, unknown>,
    options?: { expectedVersion?: number },
  ): Promise<number> {
    await this.#idle();
    return this.#run(conversationId, 'setMeta', () => {
      validateConversationId(conversationId);
      const expected = checkSetMetaArguments(conversationId, value, options);
      const text = stringifyForStore(conversationId, 'metadata', value);
      return this.#db
        .transaction(() => {
          const current = this.#selectHead.get(conversationId)?.meta_version ?? 0;
          if (expected !== undefined && expected !== current) {
            throw new ConflictError(conversationId, expected, current, 'version');
          }
          this.#upsertMeta.run(conversationId, text, current + 1);
          return current + 1;
        })
        .immediate();
    });
  }

  async list(options?: { prefix?: string; cursor?: string; limit?: number }): Promise<ConversationPage> {
    await this.#idle();
    return this.#run(undefined, 'list', () => {
      const { prefix, cursor, limit } = listOptions(options);
      const start = pageStart(prefix, cursor);
      const upper = prefixUpperBound(prefix);
      // Emptied and deleted conversations keep their row (their generation) but are not listed.
      const clauses = [
        start.exclusive ? 'conversation_id > ?' : 'conversation_id >= ?',
        '(head > 0 OR meta_version > 0)',
      ];
      const params: Array<string | number> = [start.from];
      if (upper !== undefined) {
        clauses.push('conversation_id < ?');
        params.push(upper);
      }
      // One more than asked tells whether another page follows.
      params.push(Number.isFinite(limit) ? limit + 1 : -1);
      const ids = this.#db
        .prepare(
          `SELECT conversation_id FROM conversations WHERE ${clauses.join(' AND ')} ORDER BY conversation_id LIMIT ?`,
        )
        .pluck()
        .all(...params) as string[];
      if (ids.length <= limit) return { ids };
      const page = ids.slice(0, limit);
      return { ids: page, cursor: page[page.length - 1] as string };
    });
  }

  async delete(conversationId: string, options?: { epoch?: string }): Promise<void> {
    await this.#idle();
    this.#run(conversationId, 'delete', () => {
      validateConversationId(conversationId);
      const epoch = checkDeleteArguments(conversationId, options);
      this.#db
        .transaction(() => {
          this.search.beforeRemove(conversationId);
          this.#deleteEntries.run(conversationId);
          this.#tombstone.run(conversationId, epoch);
        })
        .immediate();
    });
  }

  /** Closes the file (checkpointing the WAL when this is the last connection); idempotent. */
  async close(): Promise<void> {
    await this.#idle();
    if (this.#closed) return;
    this.#closed = true;
    this.search.flush();
    // Its connection first, so that this one is the file's last and checkpoints the WAL on close.
    await this.#checkpointer?.close();
    this.#db.close();
  }
}

/**
 * Opens (creating and migrating when needed) the SQLite store at `path`; the driver behind
 * `sqlite:PATH` store URLs. Rejects with a `StoreError` naming the path when the file is not
 * a SQLite database, leaving it untouched.
 */
export async function openSqliteStore(path: string, options?: SqliteStoreOptions): Promise<SqliteStore> {
  return new SqliteStore(path, options);
}
