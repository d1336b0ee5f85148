/**
 * The Postgres store's full-text index: a `tsvector` column on the entries (English
 * configuration: stopwords out, Snowball stems) under a GIN index, written by the very statement
 * that appends the entries.
 *
 * - `entries.search` holds `to_tsvector('english', text)` of recall's searched text
 *   (src/recall/turn-text.ts); `conversations.search_head` how many of the conversation's entries
 *   are indexed. An append indexes its entries only when the index is level with the log; one left
 *   behind (a database written before the index existed) is brought up by `catchUp`, a batch at a
 *   time under the conversation's row lock.
 * - Ranked by `ts_rank` with length normalization (rank / (1 + log length)).
 * - `rebuild` makes sure the column and its index exist (a dropped one is made again), then
 *   indexes the conversation again.
 */
import type pg from 'pg';
import type { Message } from '../messages/types.js';
import { searchText } from '../recall/turn-text.js';
import type { SearchWithin, StoreSearch, StoreSearchResult } from './types.js';

/** The tables the index lives in, as the driver names them (quoted, schema-qualified). */
export interface SearchTables {
  conversations: string;
  entries: string;
  /** Unqualified prefix for index names. */
  indexPrefix: string;
}

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}

function indexName(t: SearchTables): string {
  return quote(`${t.indexPrefix}entries_search`);
}

/** The migration that adds the index (schema version 2). */
export function postgresSearchMigration(t: SearchTables): string[] {
  return [
    `ALTER TABLE ${t.conversations} ADD COLUMN search_head bigint NOT NULL DEFAULT 0`,
    `ALTER TABLE ${t.entries} ADD COLUMN search tsvector`,
    `CREATE INDEX ${indexName(t)} ON ${t.entries} USING GIN (search)`,
  ];
}

/** The searchable text of each entry of a batch, for the append statement's `$6`. */
export function searchTexts(entries: ReadonlyArray<{ message: Message }>): string[] {
  return entries.map((entry) => searchText(entry.message));
}

/**
 * `'a' | 'b'`: any of the words, each cut at whatever is not a letter or digit (as the parser
 * cuts the text), so nothing needs escaping.
 */
function anyOf(words: readonly string[]): string {
  const any = new Set(words.flatMap((w) => w.split(/[^\p{L}\p{N}]+/u)).filter((w) => w !== ''));
  return [...any].map((w) => `'${w}'`).join(' | ');
}

/** Entries indexed per transaction while catching up. */
const CATCH_UP_BATCH = 500;

function toCount(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

/**
 * The index of one Postgres store. `query` runs one statement on the pool and `transaction` runs
 * work on one connection, both turning failures into `StoreError`s that name the database.
 */
export class PostgresSearch implements StoreSearch {
  constructor(
    private readonly t: SearchTables,
    private readonly query: <R extends pg.QueryResultRow>(
      conversationId: string,
      what: string,
      text: string,
      values: unknown[],
    ) => Promise<R[]>,
    private readonly transaction: <T>(
      conversationId: string,
      what: string,
      work: (client: pg.PoolClient) => Promise<T>,
    ) => Promise<T>,
    private readonly nameOf: (conversationId: string) => Buffer,
  ) {}

  async find(
    conversationId: string,
    words: readonly string[],
    limit: number,
    within?: SearchWithin,
  ): Promise<StoreSearchResult> {
    const name = this.nameOf(conversationId);
    const heads = await this.query<{ head: string; search_head: string }>(
      conversationId,
      'search',
      `SELECT head, search_head FROM ${this.t.conversations} WHERE name_hash = sha256($1)`,
      [name],
    );
    const row = heads[0];
    const result: StoreSearchResult = {
      hits: [],
      indexed: row ? toCount(row.search_head) : 0,
      head: row ? toCount(row.head) : 0,
    };
    const any = anyOf(words);
    if (!row || any === '' || limit <= 0) return result;
    // A filter is applied in the query, before the ranking is cut to `limit` (issue 31 item 4:
    // applied afterwards, a narrow filter's matches ranked out of the capped list).
    const values: unknown[] = [name, any, limit];
    let where = '';
    if (within !== undefined) {
      values.push(within.fromSeq, within.toSeq);
      where = ' AND e.seq BETWEEN $4 AND $5';
      if (within.seqs !== undefined) {
        values.push(within.seqs);
        where += ' AND e.seq = ANY($6::bigint[])';
      }
    }
    const rows = await this.query<{ seq: string; score: number }>(
      conversationId,
      'search',
      `SELECT e.seq, ts_rank(e.search, q, 1) AS score
       FROM ${this.t.entries} e JOIN ${this.t.conversations} c ON c.id = e.conversation_id,
            to_tsquery('english', $2) q
       WHERE c.name_hash = sha256($1) AND e.search @@ q${where}
       ORDER BY score DESC, e.seq DESC
       LIMIT $3`,
      values,
    );
    result.hits = rows.map((r) => ({ seq: toCount(r.seq), score: r.score }));
    return result;
  }

  async catchUp(conversationId: string): Promise<number> {
    const name = this.nameOf(conversationId);
    for (;;) {
      const done = await this.transaction(conversationId, 'search catch-up', async (client) => {
        const locked = await client.query<{ id: string; head: string; search_head: string }>(
          `SELECT id, head, search_head FROM ${this.t.conversations} WHERE name_hash = sha256($1) FOR UPDATE`,
          [name],
        );
        const row = locked.rows[0];
        if (!row) return 0;
        const from = toCount(row.search_head);
        if (from >= toCount(row.head)) return from;
        const batch = await client.query<{ seq: string; message: string }>(
          `SELECT seq, message FROM ${this.t.entries} WHERE conversation_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`,
          [row.id, from, CATCH_UP_BATCH],
        );
        const seqs = batch.rows.map((r) => r.seq);
        const texts = batch.rows.map((r) => searchText(JSON.parse(r.message) as Message));
        await client.query(
          `UPDATE ${this.t.entries} AS e SET search = to_tsvector('english', t.body)
           FROM unnest($2::bigint[], $3::text[]) AS t(seq, body)
           WHERE e.conversation_id = $1 AND e.seq = t.seq`,
          [row.id, seqs, texts],
        );
        await client.query(`UPDATE ${this.t.conversations} SET search_head = $2 WHERE id = $1`, [
          row.id,
          from + seqs.length,
        ]);
        return undefined;
      });
      if (done !== undefined) return done;
    }
  }

  async rebuild(conversationId: string): Promise<number> {
    const name = this.nameOf(conversationId);
    await this.transaction(conversationId, 'search rebuild', async (client) => {
      await client.query(`ALTER TABLE ${this.t.entries} ADD COLUMN IF NOT EXISTS search tsvector`);
      await client.query(
        `CREATE INDEX IF NOT EXISTS ${indexName(this.t)} ON ${this.t.entries} USING GIN (search)`,
      );
      const locked = await client.query<{ id: string }>(
        `SELECT id FROM ${this.t.conversations} WHERE name_hash = sha256($1) FOR UPDATE`,
        [name],
      );
      const id = locked.rows[0]?.id;
      if (id === undefined) return;
      await client.query(`UPDATE ${this.t.entries} SET search = NULL WHERE conversation_id = $1`, [id]);
      await client.query(`UPDATE ${this.t.conversations} SET search_head = 0 WHERE id = $1`, [id]);
    });
    return this.catchUp(conversationId);
  }
}
