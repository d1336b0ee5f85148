/**
 * The SQLite store's full-text index: one FTS5 table for every conversation, written a batch of
 * appends at a time.
 *
 * - `entries_fts(conv, body)`, contentless (it keeps the index, not a second copy of the text,
 *   and `contentless_delete` lets rows go with their entries); its rowid is the entry's rowid.
 *   `conv` holds one token naming the conversation, so a search reads only that conversation's
 *   postings; `body` holds recall's searched text (src/recall/turn-text.ts), stemmed by FTS5's
 *   `porter` tokenizer. Ranked by BM25 on `body` alone.
 * - `conversations.search_head`: how many of the conversation's entries are indexed. Writing the
 *   index in every append's transaction cost more than half the append rate (FTS5 writes a
 *   segment per transaction): an append's entries wait in this process, their texts in hand, and
 *   are indexed {@link INDEX_BATCH} at a time, in a transaction of their own after the appends
 *   committed, or before a search reads the index, or when the store closes. Entries are indexed
 *   only when the index is level with them; one left behind (a database written before the index
 *   existed, a process that exited with entries waiting) is brought up by `catchUp`, a batch at
 *   a time, which recall calls when a search reports the index behind the log.
 * - A missing or damaged table never stops an append: indexing is skipped (the index falls
 *   behind) and `rebuild` creates the table again.
 */
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Message } from '../messages/types.js';
import { searchText } from '../recall/turn-text.js';
import { validateConversationId } from './keys.js';
import { parseStoredEntry } from './stored-json.js';
import type { SearchWithin, StoreSearch, StoreSearchResult } from './types.js';

/** The migration that adds the index (schema version 2). */
export const SQLITE_SEARCH_MIGRATION = `
  ALTER TABLE conversations ADD COLUMN search_head INTEGER NOT NULL DEFAULT 0;
  ${createTableSql()}`;

function createTableSql(): string {
  return `CREATE VIRTUAL TABLE entries_fts USING fts5(
     conv, body, tokenize = 'porter unicode61', content = '', contentless_delete = 1
   );`;
}

/** Entries indexed per transaction while catching up, so other writers are not held up long. */
const CATCH_UP_BATCH = 500;

/** The token naming a conversation in the `conv` column: any id becomes letters and digits. */
function conversationToken(conversationId: string): string {
  return `c${createHash('sha1').update(conversationId).digest('hex')}`;
}

/**
 * The FTS5 query for any of `words` in one conversation, or undefined when they hold no word.
 * Each word is cut at whatever is not a letter or digit (as the tokenizer cuts the text), so the
 * query holds nothing FTS5 would read as syntax.
 */
function matchExpression(conversationId: string, words: readonly string[]): string | undefined {
  const any = [...new Set(words.flatMap((w) => w.split(/[^\p{L}\p{N}]+/u)).filter((w) => w !== ''))];
  if (any.length === 0) return undefined;
  return `conv : "${conversationToken(conversationId)}" AND body : (${any.map((w) => `"${w}"`).join(' OR ')})`;
}

/** Appends whose entries wait before the index is written (one transaction for all of them). */
export const INDEX_BATCH = 64;

interface HeadRow {
  head: number;
  search_head: number;
}

/** The searchable text of each entry of a batch, computed before the write lock is taken. */
export function searchTexts(entries: ReadonlyArray<{ message: Message }>): string[] {
  return entries.map((entry) => searchText(entry.message));
}

/**
 * The index of one SQLite store. `run` is the store's wrapper that turns failures into
 * `StoreError`s naming the file.
 */
export class SqliteSearch implements StoreSearch {
  readonly #db: Database.Database;
  readonly #run: <T>(conversationId: string | undefined, what: string, work: () => T) => T;
  /** Resolves once the store's connection is free (a replace in slices holds it meanwhile). */
  readonly #idle: () => Promise<void> | undefined;
  readonly #statements = new Map<string, Database.Statement>();
  /** Per conversation, committed entries from `head` on that wait to be indexed. */
  readonly #waiting = new Map<string, { head: number; rowids: number[]; texts: string[] }>();

  constructor(
    db: Database.Database,
    run: <T>(conversationId: string | undefined, what: string, work: () => T) => T,
    idle: () => Promise<void> | undefined = () => undefined,
  ) {
    this.#db = db;
    this.#run = run;
    this.#idle = idle;
  }

  /** A statement prepared on first use (the table may be missing until `rebuild` makes it). */
  #statement(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #heads(conversationId: string): HeadRow {
    const row = this.#statement('SELECT head, search_head FROM conversations WHERE conversation_id = ?').get(
      conversationId,
    ) as HeadRow | undefined;
    return row ?? { head: 0, search_head: 0 };
  }

  /**
   * After an append committed its entries at `head` with `rowids`: keeps them to be indexed with
   * the next ones, and indexes them all once {@link INDEX_BATCH} wait. Never fails the append.
   */
  afterAppend(
    conversationId: string,
    head: number,
    rowids: readonly number[],
    texts: readonly string[],
  ): void {
    let waiting = this.#waiting.get(conversationId);
    if (waiting === undefined || waiting.head + waiting.rowids.length !== head) {
      // Another writer appended in between: its entries are left to `catchUp`.
      waiting = { head, rowids: [], texts: [] };
      this.#waiting.set(conversationId, waiting);
    }
    waiting.rowids.push(...rowids);
    waiting.texts.push(...texts);
    if (waiting.rowids.length >= INDEX_BATCH) this.flush(conversationId);
  }

  /**
   * Indexes the entries waiting for one conversation (or every conversation), in a transaction of
   * their own. A failure (the database busy, the table damaged) leaves the index behind, for
   * `catchUp`: it never fails the append or search that flushed.
   */
  flush(conversationId?: string): void {
    const ids = conversationId === undefined ? [...this.#waiting.keys()] : [conversationId];
    for (const id of ids) {
      const waiting = this.#waiting.get(id);
      if (waiting === undefined) continue;
      this.#waiting.delete(id);
      try {
        this.#db.transaction(() => this.#index(id, waiting.head, waiting.rowids, waiting.texts)).immediate();
      } catch {
        // Left behind; `catchUp` indexes from the log.
      }
    }
  }

  /**
   * Inside a transaction, after entries were inserted at `head` with `rowids`: indexes them when
   * the index is level with them, and moves the search head. A failing index is left behind.
   */
  #index(conversationId: string, head: number, rowids: readonly number[], texts: readonly string[]): void {
    const searchHead = this.#heads(conversationId).search_head;
    if (searchHead !== head) return;
    try {
      this.#db.exec('SAVEPOINT contextkit_fts');
      const insert = this.#statement('INSERT INTO entries_fts (rowid, conv, body) VALUES (?, ?, ?)');
      const token = conversationToken(conversationId);
      rowids.forEach((rowid, i) => {
        insert.run(rowid, token, texts[i] as string);
      });
      this.#statement('UPDATE conversations SET search_head = ? WHERE conversation_id = ?').run(
        head + rowids.length,
        conversationId,
      );
      this.#db.exec('RELEASE contextkit_fts');
    } catch {
      this.#db.exec('ROLLBACK TO contextkit_fts');
      this.#db.exec('RELEASE contextkit_fts');
    }
  }

  /**
   * Inside a replace's transaction, after new entries were inserted from seq `head` on (0: the
   * first of them, the index of the conversation starts afresh): indexes them. A replace in
   * chunks calls it once per chunk, in order.
   */
  afterReplace(conversationId: string, rowids: readonly number[], texts: readonly string[], head = 0): void {
    if (head === 0) {
      this.#waiting.delete(conversationId);
      this.#statement('UPDATE conversations SET search_head = 0 WHERE conversation_id = ?').run(
        conversationId,
      );
    }
    this.#index(conversationId, head, rowids, texts);
  }

  /**
   * Inside a replace's transaction, before the conversation's entries from `fromSeq` to before
   * `toSeq` go: removes their rows from the index. A failing index is left for `rebuild`.
   */
  removeRange(conversationId: string, fromSeq: number, toSeq: number): void {
    this.#waiting.delete(conversationId);
    this.#savepoint(() =>
      this.#statement(
        'DELETE FROM entries_fts WHERE rowid IN (SELECT rowid FROM entries WHERE conversation_id = ? AND seq >= ? AND seq < ?)',
      ).run(conversationId, fromSeq, toSeq),
    );
  }

  /** Runs `work` in a savepoint, rolled back (and left for `rebuild`) when it fails. */
  #savepoint(work: () => void): void {
    try {
      this.#db.exec('SAVEPOINT contextkit_fts');
      work();
      this.#db.exec('RELEASE contextkit_fts');
    } catch {
      this.#db.exec('ROLLBACK TO contextkit_fts');
      this.#db.exec('RELEASE contextkit_fts');
    }
  }

  /**
   * Inside a pop's transaction, before entry `seq` (the last, at `rowid`) goes: removes it from
   * the index when indexed, and from the entries waiting to be. A failing index is left for
   * `rebuild`.
   */
  beforeRemoveLast(conversationId: string, rowid: number, seq: number): void {
    const waiting = this.#waiting.get(conversationId);
    if (waiting !== undefined && waiting.head + waiting.rowids.length - 1 === seq) {
      waiting.rowids.pop();
      waiting.texts.pop();
      if (waiting.rowids.length === 0) this.#waiting.delete(conversationId);
    } else if (waiting !== undefined) {
      // Not level with the log: left to `catchUp`, as after another writer's append.
      this.#waiting.delete(conversationId);
    }
    try {
      this.#db.exec('SAVEPOINT contextkit_fts');
      if (this.#heads(conversationId).search_head > seq) {
        this.#statement('DELETE FROM entries_fts WHERE rowid = ?').run(rowid);
        this.#statement('UPDATE conversations SET search_head = ? WHERE conversation_id = ?').run(
          seq,
          conversationId,
        );
      }
      this.#db.exec('RELEASE contextkit_fts');
    } catch {
      this.#db.exec('ROLLBACK TO contextkit_fts');
      this.#db.exec('RELEASE contextkit_fts');
    }
  }

  /**
   * Inside a replace's or delete's transaction, before the conversation's entries go: removes
   * their rows from the index. A failing index is left for `rebuild`.
   */
  beforeRemove(conversationId: string): void {
    this.#waiting.delete(conversationId);
    this.#savepoint(() =>
      this.#statement(
        'DELETE FROM entries_fts WHERE rowid IN (SELECT rowid FROM entries WHERE conversation_id = ?)',
      ).run(conversationId),
    );
  }

  async find(
    conversationId: string,
    words: readonly string[],
    limit: number,
    within?: SearchWithin,
  ): Promise<StoreSearchResult> {
    await this.#idle();
    return this.#run(conversationId, 'search', () => {
      validateConversationId(conversationId);
      this.flush(conversationId);
      return this.#db.transaction((): StoreSearchResult => {
        const heads = this.#heads(conversationId);
        const result: StoreSearchResult = { hits: [], indexed: heads.search_head, head: heads.head };
        const match = matchExpression(conversationId, words);
        if (match === undefined || heads.head === 0 || limit <= 0) return result;
        const rows =
          within === undefined
            ? (this.#statement(
                `SELECT e.seq AS seq, f.score AS score
                 FROM (SELECT rowid, -bm25(entries_fts, 0.0, 1.0) AS score FROM entries_fts
                       WHERE entries_fts MATCH ? ORDER BY bm25(entries_fts, 0.0, 1.0) LIMIT ?) AS f
                 JOIN entries AS e ON e.rowid = f.rowid
                 ORDER BY f.score DESC`,
              ).all(match, limit) as Array<{ seq: number; score: number }>)
            : this.#findWithin(conversationId, match, limit, within);
        result.hits = rows.map((r) => ({ seq: r.seq, score: r.score }));
        return result;
      })();
    });
  }

  /**
   * The best `limit` matches among the entries `within` allows, filtered in the query before it
   * ranks and cuts (issue 31 item 4: filtered afterwards, a narrow filter's matches ranked out of
   * the capped list). The seq range becomes a rowid range FTS5 applies as it reads its postings
   * (an entry's rowid grows with its seq: entries are inserted in seq order and SQLite gives a new
   * row a rowid above every row the table holds), so a narrow range reads only its own rows.
   */
  #findWithin(
    conversationId: string,
    match: string,
    limit: number,
    within: SearchWithin,
  ): Array<{ seq: number; score: number }> {
    const low = this.#statement(
      'SELECT rowid FROM entries WHERE conversation_id = ? AND seq >= ? ORDER BY seq LIMIT 1',
    ).get(conversationId, within.fromSeq) as { rowid: number } | undefined;
    const high = this.#statement(
      'SELECT rowid FROM entries WHERE conversation_id = ? AND seq <= ? ORDER BY seq DESC LIMIT 1',
    ).get(conversationId, within.toSeq) as { rowid: number } | undefined;
    if (low === undefined || high === undefined || low.rowid > high.rowid) return [];
    // FTS5 reads the postings within the rowid range once (CROSS JOIN keeps it the outer loop:
    // driven from the entries, the MATCH would be evaluated again for every entry).
    const ranked = `SELECT e.seq AS seq, -f.rank AS score
       FROM (SELECT rowid, bm25(entries_fts, 0.0, 1.0) AS rank FROM entries_fts
             WHERE entries_fts MATCH ? AND rowid BETWEEN ? AND ?) AS f
       CROSS JOIN entries AS e ON e.rowid = f.rowid
       WHERE e.conversation_id = ? AND e.seq BETWEEN ? AND ?`;
    const order = 'ORDER BY f.rank LIMIT ?';
    const args = [match, low.rowid, high.rowid, conversationId, within.fromSeq, within.toSeq];
    if (within.seqs === undefined) {
      return this.#statement(`${ranked} ${order}`).all(...args, limit) as Array<{
        seq: number;
        score: number;
      }>;
    }
    return this.#statement(`${ranked} AND e.seq IN (SELECT value FROM json_each(?)) ${order}`).all(
      ...args,
      JSON.stringify(within.seqs),
      limit,
    ) as Array<{ seq: number; score: number }>;
  }

  async catchUp(conversationId: string): Promise<number> {
    await this.#idle();
    return this.#run(conversationId, 'search catch-up', () => {
      validateConversationId(conversationId);
      const token = conversationToken(conversationId);
      for (;;) {
        const done = this.#db
          .transaction((): number | undefined => {
            const heads = this.#heads(conversationId);
            if (heads.search_head >= heads.head) return heads.search_head;
            const rows = this.#statement(
              'SELECT rowid, seq, metadata, message FROM entries WHERE conversation_id = ? AND seq >= ? ORDER BY seq LIMIT ?',
            ).all(conversationId, heads.search_head, CATCH_UP_BATCH) as Array<{
              rowid: number;
              seq: number;
              metadata: unknown;
              message: unknown;
            }>;
            const insert = this.#statement('INSERT INTO entries_fts (rowid, conv, body) VALUES (?, ?, ?)');
            for (const row of rows) {
              const entry = parseStoredEntry(conversationId, row.seq, row.metadata, row.message);
              insert.run(row.rowid, token, searchText(entry.message));
            }
            this.#statement('UPDATE conversations SET search_head = ? WHERE conversation_id = ?').run(
              heads.search_head + rows.length,
              conversationId,
            );
            return undefined;
          })
          .immediate();
        if (done !== undefined) return done;
      }
    });
  }

  async rebuild(conversationId: string): Promise<number> {
    await this.#idle();
    this.#run(conversationId, 'search rebuild', () => {
      validateConversationId(conversationId);
      try {
        this.#db
          .transaction(() => {
            this.#statement(
              'DELETE FROM entries_fts WHERE rowid IN (SELECT rowid FROM entries WHERE conversation_id = ?)',
            ).run(conversationId);
            this.#statement('UPDATE conversations SET search_head = 0 WHERE conversation_id = ?').run(
              conversationId,
            );
          })
          .immediate();
      } catch {
        // The table itself is missing or damaged: make it again, empty, for every conversation;
        // each catches up on its next search.
        this.#statements.clear();
        this.#db
          .transaction(() => {
            this.#db.exec('DROP TABLE IF EXISTS entries_fts');
            this.#db.exec(createTableSql());
            this.#db.exec('UPDATE conversations SET search_head = 0');
          })
          .immediate();
      }
    });
    return this.catchUp(conversationId);
  }
}
