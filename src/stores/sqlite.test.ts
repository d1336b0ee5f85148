import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { expectCountsFollowMessage } from '../../test/support/counts-follow.js';
import { testStore } from '../../test/support/store-conformance.js';
import { ConflictError, StoreError } from '../errors.js';
import { openSqliteStore, SQLITE_SCHEMA_VERSION, SqliteStore } from './sqlite.js';
import { INDEX_BATCH } from './sqlite-search.js';
import type { NewEntry } from './types.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ck-sqlite-'));
  dirs.push(dir);
  return join(dir, 'store.db');
}

function entry(text: string): NewEntry {
  return { message: { role: 'user', content: text }, metadata: { timestamp: '2025-01-02T03:04:05.678Z' } };
}

/** A new store file holding conversation `c`: messages 'a' and 'b', stored with counts. */
async function twoCounted(): Promise<{ path: string; store: SqliteStore }> {
  const path = tempPath();
  const store = await openSqliteStore(path);
  await store.append('c', [
    { ...entry('a'), counts: { k: 1 } },
    { ...entry('b'), counts: { k: 2 } },
  ]);
  return { path, store };
}

testStore('sqlite', async () => {
  const path = tempPath();
  return { store: await openSqliteStore(path), reopen: () => openSqliteStore(path) };
});

describe('SqliteStore', () => {
  it('puts the file in WAL mode and records its schema version', async () => {
    const path = tempPath();
    await (await openSqliteStore(path)).close();
    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.prepare('SELECT version FROM contextkit_schema').all()).toEqual([
        { version: SQLITE_SCHEMA_VERSION },
      ]);
    } finally {
      db.close();
    }
  });

  it('refuses a file whose schema is newer than it knows, changing nothing', async () => {
    const path = tempPath();
    const store = await openSqliteStore(path);
    await store.append('c', [entry('kept')]);
    await store.close();
    const db = new Database(path);
    db.prepare('UPDATE contextkit_schema SET version = 99').run();
    db.close();
    await expect(openSqliteStore(path)).rejects.toMatchObject({
      code: 'schema_version',
      message: expect.stringMatching(/schema version 99, newer than .*upgrade contextkit/),
    });
    const check = new Database(path, { readonly: true });
    expect(check.prepare('SELECT count(*) AS n FROM entries').get()).toEqual({ n: 1 });
    check.close();
  });

  it('shares one file between connections as it would between processes', async () => {
    const path = tempPath();
    const a = await openSqliteStore(path);
    const b = await openSqliteStore(path, { synchronous: 'normal' });
    try {
      expect(await a.append('c', [entry('from a')], { expectedSeq: 0 })).toBe(0);
      await expect(b.append('c', [entry('from b')], { expectedSeq: 0 })).rejects.toBeInstanceOf(
        ConflictError,
      );
      expect(await b.append('c', [entry('from b')], { expectedSeq: await b.head('c') })).toBe(1);
      expect((await a.read('c')).map((e) => e.message.content)).toEqual(['from a', 'from b']);
      await b.setMeta('c', { by: 'b' });
      await expect(a.setMeta('c', { by: 'a' }, { expectedVersion: 0 })).rejects.toMatchObject({ actual: 1 });
      expect((await a.list()).ids).toEqual(['c']);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('gives up after busyTimeoutMs when another connection holds the write lock', async () => {
    const path = tempPath();
    const store = await openSqliteStore(path, { busyTimeoutMs: 100 });
    const holder = new Database(path);
    holder.exec('BEGIN IMMEDIATE');
    try {
      const started = Date.now();
      const error = await store.append('c', [entry('blocked')]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toMatchObject({ code: 'busy', conversationId: 'c' });
      expect((error as Error).message).toMatch(/busyTimeoutMs=100/);
      expect(Date.now() - started).toBeGreaterThanOrEqual(90);
      // Reads do not need the write lock (WAL).
      expect(await store.head('c')).toBe(0);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(await store.append('c', [entry('now')])).toBe(0);
    await store.close();
  });

  it('rejects bad options', () => {
    const path = tempPath();
    expect(() => new SqliteStore(path, { synchronous: 'off' as 'full' })).toThrow(/synchronous must be/);
    expect(() => new SqliteStore(path, { busyTimeoutMs: -1 })).toThrow(/busyTimeoutMs/);
  });

  it('works in memory', async () => {
    const store = await openSqliteStore(':memory:');
    expect(await store.append('c', [entry('x')])).toBe(0);
    expect(store.kind).toBe('sqlite');
    await store.close();
  });

  it('backfills the search index of a database written before it existed, leaving the log as it was', async () => {
    const path = tempPath();
    // A version 1 file, as the previous contextkit wrote it.
    const old = new Database(path);
    old.exec(`CREATE TABLE contextkit_schema (version INTEGER NOT NULL);
      INSERT INTO contextkit_schema (version) VALUES (1);
      CREATE TABLE conversations (conversation_id TEXT NOT NULL PRIMARY KEY, head INTEGER NOT NULL DEFAULT 0,
        meta_value TEXT, meta_version INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
      CREATE TABLE entries (conversation_id TEXT NOT NULL, seq INTEGER NOT NULL, metadata TEXT NOT NULL,
        message TEXT NOT NULL, PRIMARY KEY (conversation_id, seq));`);
    const insert = old.prepare('INSERT INTO entries VALUES (?, ?, ?, ?)');
    for (let seq = 0; seq < 1_200; seq++) {
      insert.run(
        'c',
        seq,
        JSON.stringify({ timestamp: '2025-01-02T03:04:05.678Z' }),
        JSON.stringify({ role: 'user', content: seq === 700 ? 'the lighthouse keeper' : `line ${seq}` }),
      );
    }
    old.prepare('INSERT INTO conversations (conversation_id, head) VALUES (?, ?)').run('c', 1_200);
    old.close();
    const store = await openSqliteStore(path);
    try {
      const before = await store.read('c');
      expect(await store.search.find('c', ['lighthouse'], 5)).toEqual({ hits: [], indexed: 0, head: 1_200 });
      // Behind the log, an append leaves the index to catch up rather than leaving a gap in it.
      await store.append('c', [entry('a lighthouse at the end')]);
      expect((await store.search.find('c', ['lighthouse'], 5)).indexed).toBe(0);
      expect(await store.search.catchUp('c')).toBe(1_201);
      const found = await store.search.find('c', ['lighthouse'], 5);
      expect(found.hits.map((h) => h.seq).sort()).toEqual([1_200, 700].sort());
      expect(found.indexed).toBe(1_201);
      expect((await store.read('c')).slice(0, 1_200)).toStrictEqual(before);
    } finally {
      await store.close();
    }
  });

  // A count whose message bytes changed is left out on every driver (test/stores/corruption.test.ts).
  it('reads a damaged or foreign counts record as no count, and keeps the rest', async () => {
    const { path, store } = await twoCounted();
    try {
      const db = new Database(path);
      db.prepare("UPDATE entries SET counts = '{not json' WHERE seq = 0").run();
      db.prepare(`UPDATE entries SET counts = '{"d":"x","c":{"k":-5}}' WHERE seq = 1`).run();
      db.close();
      expect((await store.read('c')).map((e) => e.counts)).toEqual([undefined, undefined]);
      expect((await store.read('c')).map((e) => e.message.content)).toEqual(['a', 'b']);
    } finally {
      await store.close();
    }
  });

  it('clears the counts of a message changed by hand, in the statement that changes it', async () => {
    const { path, store } = await twoCounted();
    const db = new Database(path);
    try {
      await expectCountsFollowMessage(store, async (statement) => {
        const prepared = db.prepare(statement);
        if (prepared.reader) return prepared.all() as Array<Record<string, unknown>>;
        prepared.run();
        return [];
      });
    } finally {
      db.close();
      await store.close();
    }
  });

  it('keeps, on upgrading a version 5 file, only the counts whose digest still matches their message', async () => {
    const path = tempPath();
    const store = await openSqliteStore(path);
    await store.append('c', [
      { ...entry('kept'), counts: { k: 1 } },
      { ...entry('edited'), counts: { k: 2 } },
      { ...entry('no counts') },
      { ...entry('kept too'), counts: { k: 4, j: 5 } },
    ]);
    await store.close();
    // The file as version 5 left it, then a message edited by hand (no trigger then to clear its counts).
    const db = new Database(path);
    db.exec(`DROP TRIGGER entries_counts_follow_message; UPDATE contextkit_schema SET version = 5;
      UPDATE entries SET message = '{"role":"user","content":"edited by hand"}' WHERE seq = 1;`);
    expect(db.prepare('SELECT count(*) AS n FROM entries WHERE counts IS NOT NULL').get()).toEqual({ n: 3 });
    db.close();
    const upgraded = await openSqliteStore(path);
    try {
      expect((await upgraded.read('c')).map((e) => [e.message.content, e.counts])).toEqual([
        ['kept', { k: 1 }],
        ['edited by hand', undefined],
        ['no counts', undefined],
        ['kept too', { k: 4, j: 5 }],
      ]);
      const check = new Database(path, { readonly: true });
      expect(check.prepare('SELECT version FROM contextkit_schema').get()).toEqual({
        version: SQLITE_SCHEMA_VERSION,
      });
      expect(check.prepare('SELECT counts FROM entries WHERE seq = 1').get()).toEqual({ counts: null });
      expect(
        check
          .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name = 'entries_counts_follow_message'",
          )
          .all(),
      ).toHaveLength(1);
      check.close();
    } finally {
      await upgraded.close();
    }
  });

  it('indexes appends a batch at a time, and before any search, so recall sees every entry', async () => {
    const path = tempPath();
    const store = await openSqliteStore(path);
    try {
      const heads = () => {
        const raw = new Database(path, { readonly: true });
        try {
          return raw
            .prepare('SELECT search_head AS s FROM conversations WHERE conversation_id = ?')
            .get('c') as {
            s: number;
          };
        } finally {
          raw.close();
        }
      };
      for (let i = 0; i < INDEX_BATCH - 1; i++) await store.append('c', [entry(`note ${i} pear`)]);
      // Waiting: the appends did not write the index.
      expect(heads().s).toBe(0);
      await store.append('c', [entry('the last pear')]);
      expect(heads().s).toBe(INDEX_BATCH);
      await store.append('c', [entry('a lone quince')]);
      // A search indexes what waits first: it finds the newest entry.
      expect(await store.search.find('c', ['quince'], 5)).toEqual({
        hits: [{ seq: INDEX_BATCH, score: expect.any(Number) }],
        indexed: INDEX_BATCH + 1,
        head: INDEX_BATCH + 1,
      });
      await store.append('c', [entry('one more quince')]);
    } finally {
      await store.close();
    }
    // Closing indexed what waited.
    const reopened = await openSqliteStore(path);
    try {
      expect((await reopened.search.find('c', ['quince'], 5)).hits.map((h) => h.seq).sort()).toEqual([
        INDEX_BATCH,
        INDEX_BATCH + 1,
      ]);
    } finally {
      await reopened.close();
    }
  });

  it('keeps appending when the search table is gone, and rebuilds it', async () => {
    const path = tempPath();
    const store = await openSqliteStore(path);
    try {
      await store.append('c', [entry('first apple')]);
      await store.append('d', [entry('other apple')]);
      // Appends are indexed a batch at a time (or before a search): index both before the drop.
      await store.search.find('c', ['apple'], 5);
      await store.search.find('d', ['apple'], 5);
      const raw = new Database(path);
      raw.exec('DROP TABLE entries_fts');
      raw.close();
      expect(await store.append('c', [entry('second apple')])).toBe(1);
      await expect(store.search.find('c', ['apple'], 5)).rejects.toBeInstanceOf(StoreError);
      expect(await store.search.rebuild('c')).toBe(2);
      expect((await store.search.find('c', ['apple'], 5)).hits.map((h) => h.seq).sort()).toEqual([0, 1]);
      // Every other conversation catches up on its own next search.
      expect((await store.search.find('d', ['apple'], 5)).indexed).toBe(0);
      expect(await store.search.catchUp('d')).toBe(1);
      expect((await store.read('c')).map((e) => e.message.content)).toEqual(['first apple', 'second apple']);
    } finally {
      await store.close();
    }
  });
});
