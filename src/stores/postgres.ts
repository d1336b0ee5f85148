/**
 * The shared-server driver on Postgres (`pg`, an optional peer dependency): any number of
 * workers on any number of machines append to the same conversations without losing or
 * duplicating a message.
 *
 * - The driver creates and migrates its own tables: a `<prefix>schema` table holds the schema
 *   version, and the ordered migrations below run in one transaction under
 *   `pg_advisory_xact_lock`, so workers starting together migrate exactly once.
 * - `<prefix>conversations` has one row per conversation (the id as UTF-8 `bytea`, its head,
 *   its metadata and CAS version); `<prefix>entries` has one row per message keyed by
 *   `(conversation_id, seq)`. The id is `bytea` because Postgres `text` cannot hold U+0000 and
 *   sorts by locale; bytes sort in code point order like every other driver.
 * - An append is one statement: it locks the conversation row (`SELECT … FOR UPDATE`),
 *   checks `expectedSeq` against its head, inserts the batch and moves the head, atomically;
 *   concurrent writers queue on the row, none overwrites another, and the
 *   `(conversation_id, seq)` primary key would refuse a duplicate even if that failed.
 * - Messages and metadata are `text` holding the JSON as written, not `jsonb`, which would
 *   reorder keys and normalize numbers and so break byte-for-byte export round trips.
 *
 * Needs Postgres 12 or later (stored generated columns).
 */

import { createHash } from 'node:crypto';
import pg from 'pg';
import { ConflictError, DuplicateMessageIdError, EpochConflictError, StoreError } from '../errors.js';
import { redactUrl, redactUrlsIn } from '../redact-url.js';
import { mapInSlices } from '../slices.js';
import {
  CountsRecords,
  checkSaveCounts,
  decodeCounts,
  encodeCounts,
  newCountsRecords,
  withCounts,
  withUpdates,
} from './entry-counts.js';
import { validateConversationId } from './keys.js';
import { listOptions } from './page.js';
import { PostgresSearch, postgresSearchMigration, searchTexts } from './postgres-search.js';
import { pageStart, prefixUpperBound } from './prefix-range.js';
import { prepareSqlReplace } from './replace-rows.js';
import { parseStoredEntry, parseStoredObject, serializeEntries, stringifyForStore } from './stored-json.js';
import type {
  AppendOptions,
  ConversationPage,
  ConversationStore,
  EntryCountsUpdate,
  GenerationWatch,
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

/** Where the driver keeps its tables, and how many connections it may hold. */
export interface PostgresStoreOptions {
  /** The Postgres schema holding the tables; created when absent (default `public`). */
  schema?: string;
  /** Prepended to every table name (default `contextkit_`), so several stores can share a schema. */
  tablePrefix?: string;
  /** Most connections the pool opens (default 10). */
  maxConnections?: number;
  /**
   * Open only a store contextkit already created: a database without contextkit's tables (in
   * `schema`, with `tablePrefix`) is a `StoreError` with code `not_found`, and nothing is
   * created. For tools that only read, where a mistyped URL should say so.
   */
  mustExist?: boolean;
}

/** The schema version this code writes; a newer database is refused rather than misread. */
export const POSTGRES_SCHEMA_VERSION = 6;

/** Bytes of an id that the listing index covers: a btree entry must stay under ~2.7 kB. */
const INDEXED_ID_BYTES = 1024;

interface Tables {
  schema: string;
  conversations: string;
  entries: string;
  /** A name for indexes, unqualified. */
  indexPrefix: string;
  /** The `LISTEN`/`NOTIFY` channel generation changes go to, quoted. */
  channel: string;
}

/**
 * Ordered migrations; entry `i` takes the schema from version `i` to `i + 1`. The
 * conversation lookup goes through `name_hash` (SHA-256 of the id) because a btree cannot
 * index ids of any length; listing goes through an index on the id's first bytes.
 */
const MIGRATIONS: ReadonlyArray<(t: Tables) => string[]> = [
  (t) => [
    `CREATE TABLE ${t.conversations} (
       id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
       name bytea NOT NULL,
       name_hash bytea GENERATED ALWAYS AS (sha256(name)) STORED NOT NULL UNIQUE,
       head bigint NOT NULL DEFAULT 0,
       meta_value text,
       meta_version bigint NOT NULL DEFAULT 0
     )`,
    `CREATE INDEX ${quote(`${t.indexPrefix}conversations_name`)} ON ${t.conversations}
       ((substring(name FROM 1 FOR ${INDEXED_ID_BYTES})), name_hash)`,
    `CREATE TABLE ${t.entries} (
       conversation_id bigint NOT NULL REFERENCES ${t.conversations} (id) ON DELETE CASCADE,
       seq bigint NOT NULL,
       metadata text NOT NULL,
       message text NOT NULL,
       PRIMARY KEY (conversation_id, seq)
     )`,
  ],
  // The full-text index recall searches (postgres-search.ts).
  postgresSearchMigration,
  // The generation `replace` renews and appends check (ConversationStore.epoch).
  (t) => [`ALTER TABLE ${t.conversations} ADD COLUMN IF NOT EXISTS epoch text`],
  // Each entry's token counts by tokenizer, tied to its message text (entry-counts.ts).
  (t) => [`ALTER TABLE ${t.entries} ADD COLUMN IF NOT EXISTS counts text`],
  // The caller's message ids (NewEntry.id): one entry per id in a conversation, looked up by append.
  (t) => [
    `ALTER TABLE ${t.entries} ADD COLUMN IF NOT EXISTS message_id text`,
    `CREATE UNIQUE INDEX IF NOT EXISTS ${quote(`${t.indexPrefix}entries_message_id`)}
       ON ${t.entries} (conversation_id, message_id) WHERE message_id IS NOT NULL`,
  ],
  // Counts follow their message in the database itself (`CountsRecords`): what an earlier version
  // kept is kept only where its digest (`countsDigest`: the sha256 of the message's UTF-8 bytes,
  // base64url, 22 characters) still matches the message, then a trigger clears an entry's counts
  // whenever its message is changed, by contextkit or by hand.
  (t) => {
    const recordDigest = `${t.schema}.${quote(`${t.indexPrefix}counts_record_digest`)}`;
    const follow = `${t.schema}.${quote(`${t.indexPrefix}counts_follow_message`)}`;
    return [
      `CREATE OR REPLACE FUNCTION ${recordDigest}(record text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
       BEGIN
         RETURN (record::jsonb) ->> 'd';
       EXCEPTION WHEN others THEN
         RETURN NULL;
       END $$`,
      `UPDATE ${t.entries} SET counts = NULL
       WHERE counts IS NOT NULL
         AND ${recordDigest}(counts) IS DISTINCT FROM
             left(translate(encode(sha256(convert_to(message, 'UTF8')), 'base64'), '+/=', '-_'), 22)`,
      `DROP FUNCTION ${recordDigest}(text)`,
      `CREATE OR REPLACE FUNCTION ${follow}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         NEW.counts := NULL;
         RETURN NEW;
       END $$`,
      `DROP TRIGGER IF EXISTS ${quote(`${t.indexPrefix}entries_counts_follow_message`)} ON ${t.entries}`,
      `CREATE TRIGGER ${quote(`${t.indexPrefix}entries_counts_follow_message`)}
       BEFORE UPDATE OF message ON ${t.entries}
       FOR EACH ROW WHEN (OLD.message IS DISTINCT FROM NEW.message)
       EXECUTE FUNCTION ${follow}()`,
    ];
  },
];

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}

/** A quoted identifier's name, as `pg_notify` takes it (only names `quote` made of [a-z0-9_]). */
function unquote(quoted: string): string {
  return quoted.slice(1, -1);
}

function checkIdentifier(option: string, value: string, maxLength: number): void {
  if (typeof value !== 'string' || !IDENTIFIER.test(value) || value.length > maxLength) {
    throw new StoreError(
      undefined,
      `Postgres option ${option} must be lowercase letters, digits and _ (not starting with a digit), at most ${maxLength} characters; got ${JSON.stringify(value)}`,
      { code: 'invalid_argument' },
    );
  }
}

/** The URL without its credentials, for error messages (see `redactUrl`). */
function redact(url: string): string {
  return redactUrl(url);
}

function errorText(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.map((e: unknown) => errorText(e)).join('; ');
  }
  return redactUrlsIn(error instanceof Error ? error.message || error.name : String(error));
}

function idBytes(conversationId: string): Buffer {
  return Buffer.from(conversationId, 'utf8');
}

const statementNames = new Map<string, string>();

/** A stable name for a prepared statement: its text's digest (the text embeds the tables). */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `contextkit_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    statementNames.set(text, name);
  }
  return name;
}

/** Postgres returns bigint as a string; every count here fits a double. */
function toCount(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

/** The SQLSTATE of a `pg` error (`23505`: a unique index refused a row), if it has one. */
function pgCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

interface LockedConversation {
  id: string;
  head: number;
  metaVersion: number;
}

/**
 * Conversations in Postgres tables. Open it with {@link openPostgresStore}, which creates
 * and migrates the tables (under `schema`, named with `tablePrefix`); an append is one statement that
 * locks the conversation's row.
 */
export class PostgresStore implements ConversationStore {
  readonly kind = 'postgres';
  readonly #pool: pg.Pool;
  readonly #where: string;
  readonly #t: Tables;
  #closed = false;
  readonly #url: string;
  /** The connection that `LISTEN`s for generation changes, once a `watch` asked for it. */
  #listener: Promise<pg.Client> | undefined;
  /** True while the listener is connected and listening. */
  #listening = false;
  /** Watchers by the hex SHA-256 of their conversation id (the notifications' payload). */
  readonly #watchers = new Map<string, Set<() => void>>();
  /** Full-text search over the entries, kept in the same tables (tsvector + GIN). */
  readonly search: PostgresSearch;

  /** Use {@link openPostgresStore}: the tables must be migrated before the first call. */
  private constructor(pool: pg.Pool, where: string, tables: Tables, url: string) {
    this.#url = url;
    this.#pool = pool;
    this.#where = where;
    this.#t = tables;
    this.search = new PostgresSearch(
      tables,
      (id, what, text, values) => {
        this.#checkOpen(id);
        validateConversationId(id);
        return this.#query(id, what, text, values);
      },
      (id, what, work) => {
        this.#checkOpen(id);
        validateConversationId(id);
        return this.#transaction(id, what, work);
      },
      idBytes,
    );
  }

  /** @internal Opens the pool and migrates; see {@link openPostgresStore}. */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    checkOptionNames('Postgres', options, ['schema', 'tablePrefix', 'maxConnections', 'mustExist']);
    const schema = options.schema ?? 'public';
    const tablePrefix = options.tablePrefix ?? 'contextkit_';
    checkIdentifier('schema', schema, 63);
    // The longest derived name is `<prefix>conversations_name` (18 more characters).
    if (tablePrefix !== '') checkIdentifier('tablePrefix', tablePrefix, 63 - 18);
    const maxConnections = options.maxConnections ?? 10;
    if (!Number.isSafeInteger(maxConnections) || maxConnections < 1) {
      throw new StoreError(
        undefined,
        `Postgres option maxConnections must be a positive integer, got ${maxConnections}`,
        {
          code: 'invalid_argument',
        },
      );
    }
    const where = redact(url);
    const tables: Tables = {
      schema: quote(schema),
      conversations: `${quote(schema)}.${quote(`${tablePrefix}conversations`)}`,
      entries: `${quote(schema)}.${quote(`${tablePrefix}entries`)}`,
      indexPrefix: tablePrefix,
      channel: quote(
        `contextkit_gen_${createHash('sha256').update(`${schema}.${tablePrefix}`).digest('hex').slice(0, 24)}`,
      ),
    };
    const pool = new pg.Pool({ connectionString: url, max: maxConnections, connectionTimeoutMillis: 10_000 });
    // An idle connection that drops (server restart) is replaced on the next call; without a
    // listener the pool's 'error' event would end the process.
    pool.on('error', () => {});
    const store = new PostgresStore(pool, where, tables, url);
    const schemaTable = `${quote(schema)}.${quote(`${tablePrefix}schema`)}`;
    try {
      if (options.mustExist) await store.#checkExists(schemaTable);
      await store.#migrate(schemaTable, `${schema}.${tablePrefix}`);
    } catch (error) {
      await pool.end().catch(() => {});
      if (error instanceof StoreError) throw error;
      throw new StoreError(undefined, `Postgres store ${where} cannot be opened: ${errorText(error)}`, {
        cause: error,
      });
    }
    return store;
  }

  async #checkExists(schemaTable: string): Promise<void> {
    const found = await this.#pool.query<{ table: string | null }>('SELECT to_regclass($1) AS "table"', [
      schemaTable,
    ]);
    if (found.rows[0]?.table == null) {
      throw new StoreError(
        undefined,
        `Postgres store ${this.#where} has no contextkit tables (${schemaTable} is missing; check the URL, schema and table prefix; nothing was created)`,
        { code: 'not_found' },
      );
    }
  }

  async #migrate(schemaTable: string, lockName: string): Promise<void> {
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`contextkit schema ${lockName}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.#t.schema}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${schemaTable} (
           one boolean PRIMARY KEY DEFAULT true CHECK (one),
           version integer NOT NULL,
           migrated_at timestamptz NOT NULL DEFAULT now()
         )`,
      );
      const found = await client.query<{ version: number }>(`SELECT version FROM ${schemaTable}`);
      const current = found.rows[0]?.version ?? 0;
      if (current > MIGRATIONS.length) {
        throw new StoreError(
          undefined,
          `Postgres store ${this.#where} has schema version ${current} in ${schemaTable}, newer than this contextkit knows (${MIGRATIONS.length}); upgrade contextkit`,
          { code: 'schema_version' },
        );
      }
      for (let version = current; version < MIGRATIONS.length; version++) {
        for (const statement of (MIGRATIONS[version] as (t: Tables) => string[])(this.#t)) {
          await client.query(statement);
        }
      }
      if (current !== MIGRATIONS.length) {
        await client.query(
          `INSERT INTO ${schemaTable} (version) VALUES ($1)
           ON CONFLICT (one) DO UPDATE SET version = excluded.version, migrated_at = now()`,
          [MIGRATIONS.length],
        );
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  #checkOpen(conversationId: string | undefined): void {
    if (this.#closed) {
      throw new StoreError(conversationId, `Postgres store ${this.#where} is closed`, { code: 'closed' });
    }
  }

  #failure(conversationId: string | undefined, what: string, error: unknown): StoreError {
    if (error instanceof StoreError) return error;
    return new StoreError(
      conversationId,
      `Postgres store ${this.#where}: ${what} failed: ${errorText(error)}`,
      {
        cause: error,
      },
    );
  }

  /** Runs `work` in one transaction on one connection, rolling back on any failure. */
  async #transaction<T>(
    conversationId: string,
    what: string,
    work: (client: pg.PoolClient) => Promise<T>,
  ): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw this.#failure(conversationId, what, error);
    }
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch {
        broken = true;
      }
      throw this.#failure(conversationId, what, error);
    } finally {
      // A connection whose rollback failed is in an unknown state: destroy it.
      client.release(broken);
    }
  }

  async #query<R extends pg.QueryResultRow>(
    conversationId: string | undefined,
    what: string,
    text: string,
    values: unknown[],
  ): Promise<R[]> {
    try {
      // A named statement is parsed and planned once per connection, not on every call.
      return (await this.#pool.query<R>({ name: statementName(text), text, values })).rows;
    } catch (error) {
      throw this.#failure(conversationId, what, error);
    }
  }

  /**
   * Locks the conversation's row for the rest of the transaction, creating it when `create`
   * is set; `undefined` when absent and not created.
   */
  async #lock(client: pg.PoolClient, name: Buffer, create: boolean): Promise<LockedConversation | undefined> {
    const select = `SELECT id, head, meta_version FROM ${this.#t.conversations} WHERE name_hash = sha256($1) FOR UPDATE`;
    for (;;) {
      const found = await client.query<{ id: string; head: string; meta_version: string }>(select, [name]);
      const row = found.rows[0];
      if (row) return { id: row.id, head: toCount(row.head), metaVersion: toCount(row.meta_version) };
      if (!create) return undefined;
      // A concurrent creator makes this wait for its commit, then do nothing; the next select
      // then sees (and locks) its row.
      const inserted = await client.query<{ id: string }>(
        `INSERT INTO ${this.#t.conversations} (name) VALUES ($1) ON CONFLICT (name_hash) DO NOTHING RETURNING id`,
        [name],
      );
      const id = inserted.rows[0]?.id;
      if (id !== undefined) return { id, head: 0, metaVersion: 0 };
    }
  }

  async #insertEntries(
    client: pg.PoolClient,
    id: string,
    firstSeq: number,
    rows: Array<[string, string]>,
    texts: readonly string[],
    counts: ReadonlyArray<string | null>,
    messageIds: ReadonlyArray<string | null>,
  ) {
    // One statement per batch: unnest keeps it one round trip whatever the batch size.
    await client.query(
      `INSERT INTO ${this.#t.entries} (conversation_id, seq, metadata, message, search, counts, message_id)
       SELECT $1, $2::bigint + t.ord - 1, t.metadata, t.message, to_tsvector('english', t.body), t.counts, t.message_id
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
         WITH ORDINALITY AS t(metadata, message, body, counts, message_id, ord)`,
      [id, firstSeq, rows.map((r) => r[0]), rows.map((r) => r[1]), texts, counts, messageIds],
    );
  }

  async append(
    conversationId: string,
    entries: readonly NewEntry[],
    options?: AppendOptions,
  ): Promise<number> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const { expected, epoch } = checkAppendArguments(conversationId, entries, options);
    const rows = serializeEntries(conversationId, entries);
    const counts = newCountsRecords(entries, rows);
    const texts = searchTexts(entries);
    if (rows.length === 0) {
      await this.#checkEpoch(conversationId, epoch);
      const head = await this.head(conversationId);
      if (expected !== undefined && expected !== head)
        throw new ConflictError(conversationId, expected, head);
      return head;
    }
    const name = idBytes(conversationId);
    const ids = batchIds(entries).map(({ id }) => id);
    for (;;) {
      // One statement, so the row lock is held only while the server runs it, never across a
      // round trip. The lock is taken only on a row whose head matches `expectedSeq` (re-checked
      // on the latest version after waiting), so a writer that lost the race neither queues for
      // the lock nor writes WAL: it learns the current head and goes. The entries are indexed
      // for search when the index is level with the log (postgres-search.ts).
      // Ids: the row is locked only when none of the batch's ids is stored (one lookup each in
      // the (conversation_id, message_id) index, $9 empty when the batch has none). The unique
      // index backs this when two writers add one id at once: the second insert fails, and the
      // next round sees the first one's entry.
      let result: Array<{ current: string | null; taken: string | null; held: string | null }>;
      try {
        result = await this.#query<{ current: string | null; taken: string | null; held: string | null }>(
          conversationId,
          'append',
          `WITH current AS (
             SELECT id, head FROM ${this.#t.conversations} WHERE name_hash = sha256($1)
           ), locked AS (
             SELECT id, head, search_head = head AS level FROM ${this.#t.conversations} AS c
             WHERE name_hash = sha256($1) AND ($2::bigint IS NULL OR head = $2::bigint)
               AND ($7::text IS NULL OR epoch IS NULL OR epoch = $7::text)
               AND (cardinality($9::text[]) = 0 OR NOT EXISTS (
                 SELECT 1 FROM ${this.#t.entries} e WHERE e.conversation_id = c.id AND e.message_id = ANY($9::text[])))
             FOR UPDATE
           ), inserted AS (
             INSERT INTO ${this.#t.entries} (conversation_id, seq, metadata, message, search, counts, message_id)
             SELECT locked.id, locked.head + t.ord - 1, t.metadata, t.message,
                    CASE WHEN locked.level THEN to_tsvector('english', t.body) END, t.counts, t.message_id
             FROM locked, unnest($3::text[], $4::text[], $6::text[], $8::text[], $10::text[])
               WITH ORDINALITY AS t(metadata, message, body, counts, message_id, ord)
           ), moved AS (
             UPDATE ${this.#t.conversations} AS c SET head = locked.head + $5, epoch = COALESCE(c.epoch, $7::text),
               search_head = CASE WHEN locked.level THEN locked.head + $5 ELSE c.search_head END
             FROM locked WHERE c.id = locked.id
           )
           SELECT (SELECT head FROM current) AS current, (SELECT head FROM locked) AS taken,
             CASE WHEN cardinality($9::text[]) > 0 AND NOT EXISTS (SELECT 1 FROM locked) THEN (
               SELECT json_agg(json_build_array(e.message_id, e.seq))::text
               FROM ${this.#t.entries} e, current
               WHERE e.conversation_id = current.id AND e.message_id = ANY($9::text[])
             ) END AS held`,
          [
            name,
            expected ?? null,
            rows.map((r) => r[0]),
            rows.map((r) => r[1]),
            rows.length,
            texts,
            epoch ?? null,
            counts,
            ids,
            entries.map((entry) => entry.id ?? null),
          ],
        );
      } catch (error) {
        if (
          ids.length > 0 &&
          (error as StoreError).cause &&
          pgCode((error as StoreError).cause) === '23505'
        ) {
          continue;
        }
        throw error;
      }
      const row = result[0];
      if (row?.taken !== null && row?.taken !== undefined) return toCount(row.taken);
      if (row?.current !== null && row?.current !== undefined) {
        await this.#checkEpoch(conversationId, epoch);
        if (row.held !== null && row.held !== undefined) {
          const pairs = JSON.parse(row.held) as Array<[string, number | string]>;
          throw new DuplicateMessageIdError(
            conversationId,
            pairs.map(([id, seq]) => ({ id, seq: Number(seq) })),
          );
        }
        const seen = toCount(row.current);
        // Not locked although the row was there: the head moved, or the row went away
        // (a concurrent delete) while this waited. The snapshot may predate that commit, so
        // ask again; when the head still matches, the row was recreated: try again.
        const actual = expected === undefined || seen === expected ? await this.head(conversationId) : seen;
        if (expected !== undefined && actual !== expected)
          throw new ConflictError(conversationId, expected, actual);
        continue;
      }
      // First append to this conversation: create its row (a concurrent creator wins
      // harmlessly), then append as above.
      if (expected !== undefined && expected !== 0) throw new ConflictError(conversationId, expected, 0);
      await this.#query(
        conversationId,
        'append',
        `INSERT INTO ${this.#t.conversations} (name) VALUES ($1) ON CONFLICT (name_hash) DO NOTHING`,
        [name],
      );
    }
  }

  /** Rejects with `EpochConflictError` when the conversation has a generation other than `epoch`. */
  async #checkEpoch(conversationId: string, epoch: string | undefined): Promise<void> {
    if (epoch === undefined) return;
    const current = await this.epoch(conversationId);
    if (current !== null && current !== epoch) throw new EpochConflictError(conversationId, epoch, current);
  }

  async epoch(conversationId: string): Promise<string | null> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const rows = await this.#query<{ epoch: string | null }>(
      conversationId,
      'epoch',
      `SELECT epoch FROM ${this.#t.conversations} WHERE name_hash = sha256($1)`,
      [idBytes(conversationId)],
    );
    return rows[0]?.epoch ?? null;
  }

  async read(conversationId: string, options?: ReadOptions): Promise<StoredEntry[]> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const { fromSeq, limit } = readRange(conversationId, options);
    if (limit === 0) return [];
    const withCountsColumn = options?.counts !== false;
    const rows = await this.#query<{
      seq: string;
      metadata: unknown;
      message: unknown;
      counts: unknown;
      message_id: string | null;
    }>(
      conversationId,
      'read',
      // The conversation's id looked up first (an InitPlan), so the rows come off the primary key
      // in seq order and a LIMIT stops the scan: joined, the planner read every row of the
      // conversation and sorted them (43 ms for the first two of 100k rows, 0.05 ms so).
      // Without counts (`counts: false`) the column is not sent, nor its digest checked.
      `SELECT e.seq, e.metadata, e.message, ${withCountsColumn ? 'e.counts' : 'NULL AS counts'}, e.message_id
       FROM ${this.#t.entries} e
       WHERE e.conversation_id = (SELECT id FROM ${this.#t.conversations} WHERE name_hash = sha256($1))
         AND e.seq >= $2
       ORDER BY e.seq
       LIMIT $3`,
      [idBytes(conversationId), fromSeq, Number.isFinite(limit) ? limit : null],
    );
    // Parsed (and their counts decoded) in slices that yield: a resume of a long conversation
    // never holds the event loop for the whole of it (issue 32: no stall over 50 ms). A counts
    // record the table holds was made for the message beside it (the trigger of the last
    // migration clears it when the message changes): its digest is not checked again.
    const counts = withCountsColumn ? new CountsRecords() : null;
    return mapInSlices(rows, (row) => {
      const entry = parseStoredEntry(conversationId, toCount(row.seq), row.metadata, row.message);
      if (typeof row.message_id === 'string') entry.id = row.message_id;
      return withCounts(entry, counts?.decode(row.counts));
    });
  }

  async head(conversationId: string): Promise<number> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const rows = await this.#query<{ head: string }>(
      conversationId,
      'head',
      `SELECT head FROM ${this.#t.conversations} WHERE name_hash = sha256($1)`,
      [idBytes(conversationId)],
    );
    return rows[0] ? toCount(rows[0].head) : 0;
  }

  async replace(
    conversationId: string,
    entries: readonly NewEntry[],
    options?: { epoch?: string },
  ): Promise<void> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    // Checked and made ready in slices that yield, and written a chunk of rows per statement: one
    // statement of 100,000 rows held the event loop for seconds while the driver bound it.
    const { epoch, rows, counts, texts, chunks } = await prepareSqlReplace(conversationId, entries, options);
    const ids = entries.map((entry) => entry.id ?? null);
    const name = idBytes(conversationId);
    await this.#transaction(conversationId, 'replace', async (client) => {
      // The row is kept (or made) even when nothing is left in it: it holds the new generation,
      // which must never go back (ConversationStore.epoch); `list` leaves empty rows out.
      const locked = (await this.#lock(client, name, true)) as LockedConversation;
      await client.query(`DELETE FROM ${this.#t.entries} WHERE conversation_id = $1`, [locked.id]);
      for (const [start, end] of chunks) {
        await this.#insertEntries(
          client,
          locked.id,
          start,
          rows.slice(start, end),
          texts.slice(start, end),
          counts.slice(start, end),
          ids.slice(start, end),
        );
      }
      await client.query(
        `UPDATE ${this.#t.conversations} SET head = $2, search_head = $2, epoch = $3 WHERE id = $1`,
        [locked.id, rows.length, epoch],
      );
      await this.#notify(client, name);
    });
  }

  async pop(conversationId: string): Promise<StoredEntry | undefined> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const epoch = newEpoch();
    return this.#transaction(conversationId, 'pop', async (client) => {
      const locked = await this.#lock(client, idBytes(conversationId), false);
      if (locked === undefined || locked.head === 0) return undefined;
      const seq = locked.head - 1;
      // The entry's search vector is in its row: it leaves the index with it.
      const removed = await client.query<{ metadata: unknown; message: unknown; message_id: string | null }>(
        `DELETE FROM ${this.#t.entries} WHERE conversation_id = $1 AND seq = $2 RETURNING metadata, message, message_id`,
        [locked.id, seq],
      );
      const row = removed.rows[0];
      if (!row) {
        throw new StoreError(conversationId, `entry ${seq} is missing although the head is ${locked.head}`, {
          code: 'corrupt',
        });
      }
      const entry = parseStoredEntry(conversationId, seq, row.metadata, row.message);
      if (typeof row.message_id === 'string') entry.id = row.message_id;
      await this.#notify(client, idBytes(conversationId));
      // Kept when emptied, with its new generation (see replace).
      await client.query(
        `UPDATE ${this.#t.conversations} SET head = $2, search_head = LEAST(search_head, $2), epoch = $3 WHERE id = $1`,
        [locked.id, seq, epoch],
      );
      return entry;
    });
  }

  /**
   * In one transaction holding the conversation's row: checks the generation, reads the
   * entries' message text and counts, and writes the merged counts tied to that text.
   */
  async saveCounts(
    conversationId: string,
    updates: readonly EntryCountsUpdate[],
    options: { epoch: string | null },
  ): Promise<boolean> {
    this.#checkOpen(conversationId);
    const epoch = checkSaveCounts(conversationId, updates, options);
    return this.#transaction(conversationId, 'saveCounts', async (client) => {
      const locked = await client.query<{ id: string }>(
        `SELECT id FROM ${this.#t.conversations} WHERE name_hash = sha256($1) AND epoch IS NOT DISTINCT FROM $2::text FOR UPDATE`,
        [idBytes(conversationId), epoch],
      );
      const id = locked.rows[0]?.id;
      if (id === undefined) return false;
      const seqs = [...new Set(updates.map((u) => u.seq))];
      const held = await client.query<{ seq: string; message: unknown; counts: unknown }>(
        `SELECT seq, message, counts FROM ${this.#t.entries} WHERE conversation_id = $1 AND seq = ANY($2::bigint[])`,
        [id, seqs],
      );
      const written: Array<[number, string]> = [];
      for (const row of held.rows) {
        if (typeof row.message !== 'string') continue;
        const seq = toCount(row.seq);
        const counts = withUpdates(decodeCounts(row.counts, row.message), seq, updates);
        written.push([seq, encodeCounts(row.message, counts) as string]);
      }
      if (written.length > 0) {
        await client.query(
          `UPDATE ${this.#t.entries} AS e SET counts = t.counts
           FROM unnest($2::bigint[], $3::text[]) AS t(seq, counts)
           WHERE e.conversation_id = $1 AND e.seq = t.seq`,
          [id, written.map((w) => w[0]), written.map((w) => w[1])],
        );
      }
      return true;
    });
  }

  async getMeta(conversationId: string): Promise<MetaRecord> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const rows = await this.#query<{ meta_value: unknown; meta_version: string }>(
      conversationId,
      'getMeta',
      `SELECT meta_value, meta_version FROM ${this.#t.conversations} WHERE name_hash = sha256($1)`,
      [idBytes(conversationId)],
    );
    const row = rows[0];
    const version = row ? toCount(row.meta_version) : 0;
    if (!row || version === 0) return { value: null, version: 0 };
    return { value: parseStoredObject(conversationId, 'metadata', row.meta_value), version };
  }

  async setMeta(
    conversationId: string,
    value: Record<string, unknown>,
    options?: { expectedVersion?: number },
  ): Promise<number> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const expected = checkSetMetaArguments(conversationId, value, options);
    const text = stringifyForStore(conversationId, 'metadata', value);
    const name = idBytes(conversationId);
    // One statement, atomic on its own: create-or-bump, guarded by the expected version.
    const rows =
      expected === undefined || expected === 0
        ? await this.#query<{ meta_version: string }>(
            conversationId,
            'setMeta',
            `INSERT INTO ${this.#t.conversations} AS c (name, meta_value, meta_version) VALUES ($1, $2, 1)
             ON CONFLICT (name_hash) DO UPDATE SET meta_value = excluded.meta_value, meta_version = c.meta_version + 1
             WHERE $3::bigint IS NULL OR c.meta_version = $3
             RETURNING meta_version`,
            [name, text, expected ?? null],
          )
        : await this.#query<{ meta_version: string }>(
            conversationId,
            'setMeta',
            `UPDATE ${this.#t.conversations} SET meta_value = $2, meta_version = meta_version + 1
             WHERE name_hash = sha256($1) AND meta_version = $3
             RETURNING meta_version`,
            [name, text, expected],
          );
    const row = rows[0];
    if (row) return toCount(row.meta_version);
    const actual = (await this.getMeta(conversationId)).version;
    throw new ConflictError(conversationId, expected ?? 0, actual, 'version');
  }

  async list(options?: { prefix?: string; cursor?: string; limit?: number }): Promise<ConversationPage> {
    this.#checkOpen(undefined);
    const { prefix, cursor, limit } = listOptions(options);
    const start = pageStart(prefix, cursor);
    const upper = prefixUpperBound(prefix);
    // The first two conditions let the planner walk the index on the id's first bytes; the
    // full comparison then decides, so ids longer than the indexed part still sort exactly.
    const rows = await this.#query<{ name: Buffer }>(
      undefined,
      'list',
      `SELECT name FROM ${this.#t.conversations}
       WHERE (head > 0 OR meta_version > 0)
         AND substring(name FROM 1 FOR ${INDEXED_ID_BYTES}) >= substring($1::bytea FROM 1 FOR ${INDEXED_ID_BYTES})
         AND ($2::bytea IS NULL OR substring(name FROM 1 FOR ${INDEXED_ID_BYTES}) <= substring($2::bytea FROM 1 FOR ${INDEXED_ID_BYTES}))
         AND (CASE WHEN $3 THEN name > $1::bytea ELSE name >= $1::bytea END)
         AND ($2::bytea IS NULL OR name < $2::bytea)
       ORDER BY substring(name FROM 1 FOR ${INDEXED_ID_BYTES}), name
       LIMIT $4`,
      [
        idBytes(start.from),
        upper === undefined ? null : idBytes(upper),
        start.exclusive,
        Number.isFinite(limit) ? limit + 1 : null,
      ],
    );
    const ids = rows.map((row) => row.name.toString('utf8'));
    if (ids.length <= limit) return { ids };
    const page = ids.slice(0, limit);
    return { ids: page, cursor: page[page.length - 1] as string };
  }

  async delete(conversationId: string, options?: { epoch?: string }): Promise<void> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const epoch = checkDeleteArguments(conversationId, options);
    const name = idBytes(conversationId);
    // The row stays, emptied, with a new generation (a tombstone: see ConversationStore.epoch), so
    // an append in flight that names the old one is refused. The entries are deleted after the
    // row is locked, in a statement of their own, so one committed by an append that held the
    // lock before this is seen and goes too.
    await this.#transaction(conversationId, 'delete', async (client) => {
      const locked = (await this.#lock(client, name, true)) as LockedConversation;
      await client.query(`DELETE FROM ${this.#t.entries} WHERE conversation_id = $1`, [locked.id]);
      await client.query(
        `UPDATE ${this.#t.conversations}
         SET head = 0, search_head = 0, meta_value = NULL, meta_version = 0, epoch = $2 WHERE id = $1`,
        [locked.id, epoch],
      );
      await this.#notify(client, name);
    });
  }

  /** Tells watchers (when the transaction commits) that the conversation's generation changed. */
  async #notify(client: pg.PoolClient, name: Buffer): Promise<void> {
    await client.query(`SELECT pg_notify($1, encode(sha256($2), 'hex'))`, [unquote(this.#t.channel), name]);
  }

  /**
   * Reports generation changes from `NOTIFY`s that `replace`, `pop` and `delete` send in their
   * transactions, through one listening connection per store; `onChange` also runs once it
   * listens. If that connection drops, watches stay not live (their holders read the generation).
   */
  watch(conversationId: string, onChange: () => void): GenerationWatch {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const key = createHash('sha256').update(idBytes(conversationId)).digest('hex');
    let callbacks = this.#watchers.get(key);
    if (!callbacks) {
      callbacks = new Set();
      this.#watchers.set(key, callbacks);
    }
    const held = callbacks;
    held.add(onChange);
    this.#listen().then(onChange, () => undefined);
    const listening = () => this.#listening;
    return {
      get live() {
        return listening();
      },
      close: () => {
        held.delete(onChange);
        if (held.size === 0 && this.#watchers.get(key) === held) this.#watchers.delete(key);
      },
    };
  }

  /** The listening connection, connected on first use. */
  #listen(): Promise<pg.Client> {
    this.#listener ??= (async () => {
      const client = new pg.Client({ connectionString: this.#url });
      const down = () => {
        this.#listening = false;
      };
      client.on('error', down);
      client.on('end', down);
      client.on('notification', (message) => {
        for (const callback of this.#watchers.get(message.payload ?? '') ?? []) callback();
      });
      await client.connect();
      await client.query(`LISTEN ${this.#t.channel}`);
      this.#listening = true;
      return client;
    })();
    return this.#listener;
  }

  /** Ends the pool after the calls in flight; idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#listening = false;
    const listener = await this.#listener?.catch(() => undefined);
    await listener?.end().catch(() => undefined);
    await this.#pool.end();
  }
}

/**
 * Connects to Postgres at `url` (`postgres://user:pass@host:port/db`), creates or migrates the
 * tables, and returns the store; the driver behind `postgres://` store URLs. Rejects with a
 * `StoreError` (password redacted) when the server cannot be reached or the schema is newer
 * than this code.
 */
export async function openPostgresStore(url: string, options?: PostgresStoreOptions): Promise<PostgresStore> {
  return PostgresStore.open(url, options);
}
