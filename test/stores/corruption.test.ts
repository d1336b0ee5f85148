/**
 * Damaged storage surfaces as a `StoreError` that names the conversation (or the file) and
 * what was found, leaves what is there untouched, and still lets the valid part be read.
 * (Torn and garbage JSONL lines are covered with the file store's own tests.)
 */

import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidStoredMessageError, StoreError } from '../../src/errors.js';
import { ContextManager } from '../../src/manager.js';
import { encodeId } from '../../src/stores/keys.js';
import { openPostgresStore } from '../../src/stores/postgres.js';
import { openRedisStore } from '../../src/stores/redis.js';
import { openSqliteStore } from '../../src/stores/sqlite.js';
import type { ConversationStore, NewEntry } from '../../src/stores/types.js';
import { DATABASE_URL, missing, REDIS_URL, skipFor } from '../support/requirements.js';

const redisUrl = REDIS_URL;
const databaseUrl = DATABASE_URL;

const TIMESTAMP = '2025-01-02T03:04:05.678Z';
const ID = 'damaged/conversation';

function entry(text: string): NewEntry {
  return { message: { role: 'user', content: text }, metadata: { timestamp: TIMESTAMP } };
}

async function rejection(promise: Promise<unknown>): Promise<StoreError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(StoreError);
    return error as StoreError;
  }
  throw new Error('expected the call to reject, but it resolved');
}

const dirs: string[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ck-corrupt-'));
  dirs.push(dir);
  return dir;
}

describe('SQLite: a file that is not a database', () => {
  it('refuses a text file, naming the path and quoting what it starts with, and leaves it untouched', async () => {
    const path = join(tempDir(), 'notes.db');
    const text = 'These are my notes, not a database.\n'.repeat(20);
    writeFileSync(path, text);
    const error = await rejection(openSqliteStore(path));
    expect(error.code).toBe('not_a_database');
    expect(error.message).toContain(path);
    expect(error.message).toContain('is not a SQLite database');
    expect(error.message).toContain('These are my notes');
    expect(readFileSync(path, 'utf8')).toBe(text);
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('shows the first bytes of a binary file in hex', async () => {
    const path = join(tempDir(), 'random.db');
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...randomBytes(200)]);
    writeFileSync(path, bytes);
    const error = await rejection(openSqliteStore(path));
    expect(error.message).toContain(path);
    expect(error.message).toMatch(/bytes 89504e470d0a1a0a/);
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });

  it('refuses a directory', async () => {
    const path = join(tempDir(), 'a-directory');
    mkdirSync(path);
    const error = await rejection(openSqliteStore(path));
    expect(error.message).toContain(path);
    expect(error.message).toMatch(/is a directory/);
  });

  it('reports a truncated database as a StoreError, not a crash', async () => {
    const path = join(tempDir(), 'truncated.db');
    const store = await openSqliteStore(path);
    const big = 'x'.repeat(50_000);
    for (let i = 0; i < 20; i++) await store.append(ID, [entry(`${i} ${big}`)]);
    await store.close();
    truncateSync(path, 8192);
    // Depending on which pages survive, opening or reading fails: either way, a StoreError.
    let reopened: ConversationStore | undefined;
    try {
      reopened = await openSqliteStore(path);
      const error = await rejection(reopened.read(ID));
      expect(error.message).toContain(path);
      expect(error.message).toMatch(/malformed|corrupt|damaged/i);
    } catch (error) {
      expect(error).toBeInstanceOf(StoreError);
      expect((error as Error).message).toContain(path);
    } finally {
      await reopened?.close();
    }
  });
});

describe('Redis: a key of the wrong type', skipFor(missing.redis), () => {
  async function setup() {
    const keyPrefix = `ck-corrupt-${process.pid}-${randomBytes(4).toString('hex')}:`;
    const admin = createClient({ url: redisUrl as string });
    await admin.connect();
    const store = await openRedisStore(redisUrl as string, { keyPrefix });
    const base = `${keyPrefix}conv:${encodeId(ID)}`;
    cleanups.push(async () => {
      await store.close();
      for await (const keys of admin.scanIterator({ MATCH: `${keyPrefix}*` }))
        if (keys.length) await admin.del(keys);
      await admin.close();
    });
    return { admin, store, log: `${base}:log`, meta: `${base}:meta`, index: `${keyPrefix}conversations` };
  }

  it('names the conversation and the type found when the log is a string, and changes nothing', async () => {
    const { admin, store, log } = await setup();
    await admin.set(log, 'somebody else’s value');
    const calls = [
      () => store.append(ID, [entry('a')]),
      () => store.append(ID, [entry('a')], { expectedSeq: 0 }),
      () => store.read(ID),
      () => store.head(ID),
      () => store.replace(ID, [entry('b')]),
    ];
    for (const call of calls) {
      const error = await rejection(call());
      expect(error.conversationId).toBe(ID);
      expect(error.code).toBe('wrong_type');
      expect(error.message).toContain(JSON.stringify(ID));
      expect(error.message).toMatch(/holds a string/);
      expect(error.message).toContain(log);
    }
    expect(await admin.get(log)).toBe('somebody else’s value');
  });

  it('names the type found when the metadata key is a list', async () => {
    const { admin, store, meta } = await setup();
    await admin.rPush(meta, ['x', 'y']);
    for (const call of [
      () => store.getMeta(ID),
      () => store.setMeta(ID, { a: 1 }),
      () => store.replace(ID, []),
    ]) {
      const error = await rejection(call());
      expect(error.conversationId).toBe(ID);
      expect(error.message).toMatch(/holds a list/);
    }
    expect(await admin.lRange(meta, 0, -1)).toEqual(['x', 'y']);
  });

  it('names the type found when the conversation index is not a sorted set', async () => {
    const { admin, store, index } = await setup();
    await admin.hSet(index, 'field', 'value');
    const listed = await rejection(store.list());
    expect(listed.message).toMatch(/holds a hash/);
    expect(listed.message).toContain(index);
    const appended = await rejection(store.append(ID, [entry('a')]));
    expect(appended.message).toMatch(/holds a hash/);
    expect(await store.head(ID)).toBe(0);
    expect(await admin.hGetAll(index)).toEqual({ field: 'value' });
  });
});

interface DamageCase {
  name: string;
  /** Why this store cannot be tested here, when it cannot. */
  missing?: string | undefined;
  /**
   * An empty store, a function that overwrites entry `seq`'s stored message with `text`, and one
   * that overwrites its metadata and message with the JSON texts given.
   */
  open: () => Promise<{
    store: ConversationStore;
    damage: (seq: number, text: string) => Promise<void>;
    rewrite: (seq: number, metadata: string, message: string) => Promise<void>;
  }>;
}

const damageCases: DamageCase[] = [
  {
    name: 'sqlite',
    open: async () => {
      const path = join(tempDir(), 'store.db');
      const store = await openSqliteStore(path);
      return {
        store,
        damage: async (seq, text) => {
          const db = new Database(path);
          db.prepare('UPDATE entries SET message = ? WHERE conversation_id = ? AND seq = ?').run(
            text,
            ID,
            seq,
          );
          db.close();
        },
        rewrite: async (seq, metadata, message) => {
          const db = new Database(path);
          db.prepare(
            'UPDATE entries SET metadata = ?, message = ? WHERE conversation_id = ? AND seq = ?',
          ).run(metadata, message, ID, seq);
          db.close();
        },
      };
    },
  },
  {
    name: 'redis',
    missing: missing.redis,
    open: async () => {
      const keyPrefix = `ck-corrupt-${process.pid}-${randomBytes(4).toString('hex')}:`;
      const store = await openRedisStore(redisUrl as string, { keyPrefix });
      const admin = createClient({ url: redisUrl as string });
      await admin.connect();
      cleanups.push(async () => {
        for await (const keys of admin.scanIterator({ MATCH: `${keyPrefix}*` }))
          if (keys.length) await admin.del(keys);
        await admin.close();
      });
      return {
        store,
        damage: async (seq, text) => {
          await admin.lSet(`${keyPrefix}conv:${encodeId(ID)}:log`, seq, text);
        },
        rewrite: async (seq, metadata, message) => {
          await admin.lSet(
            `${keyPrefix}conv:${encodeId(ID)}:log`,
            seq,
            `{"metadata":${metadata},"message":${message}}`,
          );
        },
      };
    },
  },
  {
    name: 'postgres',
    missing: missing.postgres,
    open: async () => {
      const schema = `ck_corrupt_${process.pid}_${randomBytes(4).toString('hex')}`;
      const store = await openPostgresStore(databaseUrl as string, { schema });
      const admin = new pg.Client({ connectionString: databaseUrl });
      await admin.connect();
      cleanups.push(async () => {
        await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await admin.end();
      });
      return {
        store,
        damage: async (seq, text) => {
          await admin.query(`UPDATE "${schema}".contextkit_entries SET message = $1 WHERE seq = $2`, [
            text,
            seq,
          ]);
        },
        rewrite: async (seq, metadata, message) => {
          await admin.query(
            `UPDATE "${schema}".contextkit_entries SET metadata = $1, message = $2 WHERE seq = $3`,
            [metadata, message, seq],
          );
        },
      };
    },
  },
];

describe.each(damageCases)('$name: a damaged entry', ({ missing: reason, open }) => {
  it(
    'is named with its conversation, seq and content; the rest still reads; nothing is rewritten',
    skipFor(reason),
    async () => {
      const { store, damage } = await open();
      try {
        await store.append(ID, [entry('zero'), entry('one'), entry('two'), entry('three')]);
        await damage(2, '{"role":"user","content":"cut off here');
        const error = await rejection(store.read(ID));
        expect(error.conversationId).toBe(ID);
        expect(error.code).toBe('corrupt');
        expect(error.message).toMatch(/entry 2/);
        expect(error.message).toContain('cut off here');
        // The valid prefix, and what follows the damage, can still be read.
        expect((await store.read(ID, { limit: 2 })).map((e) => e.message.content)).toEqual(['zero', 'one']);
        expect((await store.read(ID, { fromSeq: 3 })).map((e) => e.message.content)).toEqual(['three']);
        // Appends continue after it, and the damaged entry is left as found.
        expect(await store.head(ID)).toBe(4);
        expect(await store.append(ID, [entry('four')], { expectedSeq: 4 })).toBe(4);
        expect(await rejection(store.read(ID, { fromSeq: 2, limit: 1 }))).toMatchObject({ code: 'corrupt' });
        await damage(1, 'null');
        expect((await rejection(store.read(ID, { fromSeq: 1, limit: 1 }))).message).toMatch(/entry 1/);
      } finally {
        await store.close();
      }
    },
  );
});

describe.each(damageCases)(
  '$name: entries changed by hand into what addMessage refuses',
  ({ missing: reason, open }) => {
    it(
      'a manager names them (deep metadata, a number read as Infinity), also under invalidStored: skip',
      skipFor(reason),
      async () => {
        const { store, rewrite } = await open();
        try {
          await store.append(ID, [entry('zero'), entry('one'), entry('two'), entry('three')]);
          const deep = `{"timestamp":"${TIMESTAMP}","deep":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
          await rewrite(1, deep, '{"role":"assistant","content":"one"}');
          await rewrite(2, `{"timestamp":"${TIMESTAMP}"}`, '{"role":"user","content":"two","n":1e999}');
          const strict = new ContextManager({ store, conversationId: ID });
          const error = await strict.getMessagesForRequest().catch((e: unknown) => e);
          expect(error).toBeInstanceOf(InvalidStoredMessageError);
          expect((error as InvalidStoredMessageError).seq).toBe(1);
          expect((error as Error).message).toMatch(
            /stored entry 1\.metadata\.deep(\[0\])+: nested more than 100/,
          );
          const warnings: string[] = [];
          const lenient = new ContextManager({ store, conversationId: ID, invalidStored: 'skip' });
          lenient.on('context:warn', (w) => warnings.push(w.message));
          const view = await lenient.getMessagesForRequest();
          expect(view.map((m) => (m as { content: unknown }).content)).toEqual(['zero', 'three']);
          expect(warnings.join('\n')).toMatch(/stored entry 2\.n: Infinity has no JSON form/);
        } finally {
          await store.close();
        }
      },
    );
  },
);

describe.each(damageCases)('$name: token counts of an entry changed by hand', ({ missing: reason, open }) => {
  it(
    'are left out once its message bytes changed, are kept again when counted again, and a damaged record is no count',
    skipFor(reason),
    async () => {
      const { store, rewrite } = await open();
      try {
        const counts = { 'openai:o200k_base/openai/v1': 9 };
        await store.append(
          ID,
          ['zero', 'one', 'two'].map((text) => ({ ...entry(text), counts })),
          { epoch: 'g' },
        );
        const metadata = JSON.stringify({ timestamp: TIMESTAMP });
        // Same meaning, other bytes; then other content: neither is what was counted.
        await rewrite(0, metadata, '{"role":"user", "content":"zero"}');
        await rewrite(1, metadata, '{"role":"user","content":"ONE"}');
        const read = await store.read(ID);
        expect(read.map((e) => e.counts)).toEqual([undefined, undefined, counts]);
        expect(read[1]?.message).toEqual({ role: 'user', content: 'ONE' });
        expect(await store.saveCounts(ID, [{ seq: 1, counts: { k: 4 } }], { epoch: 'g' })).toBe(true);
        expect((await store.read(ID)).map((e) => e.counts)).toEqual([undefined, { k: 4 }, counts]);
      } finally {
        await store.close();
      }
    },
  );
});
