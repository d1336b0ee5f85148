import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { expectCountsFollowMessage } from '../../test/support/counts-follow.js';
import { DATABASE_URL, missing, skipFor } from '../../test/support/requirements.js';
import { testStore } from '../../test/support/store-conformance.js';
import { StoreError } from '../errors.js';
import { openPostgresStore, POSTGRES_SCHEMA_VERSION } from './postgres.js';
import type { NewEntry } from './types.js';

const url = DATABASE_URL;

let admin: Promise<pg.Client> | undefined;

/** One connection for inspection and cleanup, opened on first use. */
function adminClient(): Promise<pg.Client> {
  admin ??= (async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return client;
  })();
  return admin;
}

afterAll(async () => {
  if (admin) await (await admin).end();
});

function uniqueSchema(): string {
  return `ck_test_${process.pid}_${randomBytes(4).toString('hex')}`;
}

async function dropSchema(schema: string): Promise<void> {
  await (await adminClient()).query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

function entry(text: string): NewEntry {
  return { message: { role: 'user', content: text }, metadata: { timestamp: '2025-01-02T03:04:05.678Z' } };
}

describe('postgres', skipFor(missing.postgres), () => {
  testStore('postgres', async () => {
    const schema = uniqueSchema();
    return {
      store: await openPostgresStore(url as string, { schema }),
      reopen: () => openPostgresStore(url as string, { schema }),
      cleanup: () => dropSchema(schema),
    };
  });

  describe('PostgresStore', () => {
    it('migrates once when many workers open a new schema together, and records the version', async () => {
      const schema = uniqueSchema();
      try {
        const stores = await Promise.all(
          Array.from({ length: 6 }, () => openPostgresStore(url as string, { schema, maxConnections: 2 })),
        );
        await Promise.all(stores.map((store, i) => store.append('c', [entry(`w${i}`)])));
        expect(await stores[0]?.head('c')).toBe(6);
        await Promise.all(stores.map((store) => store.close()));
        const client = await adminClient();
        const { rows } = await client.query(`SELECT version FROM "${schema}".contextkit_schema`);
        expect(rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
      } finally {
        await dropSchema(schema);
      }
    });

    it('refuses a schema newer than it knows, changing nothing', async () => {
      const schema = uniqueSchema();
      try {
        const store = await openPostgresStore(url as string, { schema });
        await store.append('c', [entry('kept')]);
        await store.close();
        const client = await adminClient();
        await client.query(`UPDATE "${schema}".contextkit_schema SET version = 99`);
        await expect(openPostgresStore(url as string, { schema })).rejects.toMatchObject({
          code: 'schema_version',
          message: expect.stringMatching(/schema version 99 .*newer than .*upgrade contextkit/),
        });
        const { rows } = await client.query(`SELECT count(*)::int AS n FROM "${schema}".contextkit_entries`);
        expect(rows).toEqual([{ n: 1 }]);
      } finally {
        await dropSchema(schema);
      }
    });

    it('stores the JSON text exactly as serialized (text, not jsonb), keyed by (conversation_id, seq)', async () => {
      const schema = uniqueSchema();
      const store = await openPostgresStore(url as string, { schema, tablePrefix: 'ck_' });
      try {
        const message = { role: 'user' as const, content: 'x', zeta: 1, alpha: 1.5e300 };
        await store.append('c', [{ message, metadata: { timestamp: 't', b: 2, a: 1 } }]);
        const { rows } = await (await adminClient()).query(
          `SELECT e.seq::int AS seq, e.message, e.metadata FROM "${schema}".ck_entries e`,
        );
        expect(rows).toEqual([
          { seq: 0, message: JSON.stringify(message), metadata: '{"timestamp":"t","b":2,"a":1}' },
        ]);
        const { rows: keys } = await (await adminClient()).query(
          `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
           WHERE i.indrelid = '"${schema}".ck_entries'::regclass AND i.indisprimary ORDER BY a.attnum`,
        );
        expect(keys.map((k: { attname: string }) => k.attname)).toEqual(['conversation_id', 'seq']);
      } finally {
        await store.close();
        await dropSchema(schema);
      }
    });

    it('keeps stores with different table prefixes apart in one schema', async () => {
      const schema = uniqueSchema();
      const one = await openPostgresStore(url as string, { schema, tablePrefix: 'one_' });
      const two = await openPostgresStore(url as string, { schema, tablePrefix: 'two_' });
      try {
        await one.append('c', [entry('one')]);
        expect(await two.head('c')).toBe(0);
        expect((await one.list()).ids).toEqual(['c']);
        expect((await two.list()).ids).toEqual([]);
      } finally {
        await one.close();
        await two.close();
        await dropSchema(schema);
      }
    });

    it('migrates a version 1 schema and backfills its search index, leaving the log as it was', async () => {
      const schema = uniqueSchema();
      try {
        const first = await openPostgresStore(url as string, { schema });
        await first.append('c', [entry('the lighthouse keeper'), entry('plain line')]);
        await first.close();
        // Back to what the previous contextkit wrote: no search column, no search head.
        const client = await adminClient();
        await client.query(`ALTER TABLE "${schema}".contextkit_entries DROP COLUMN search`);
        await client.query(`ALTER TABLE "${schema}".contextkit_conversations DROP COLUMN search_head`);
        await client.query(`UPDATE "${schema}".contextkit_schema SET version = 1`);
        const store = await openPostgresStore(url as string, { schema });
        try {
          const before = await store.read('c');
          expect(await store.search.find('c', ['lighthouse'], 5)).toEqual({ hits: [], indexed: 0, head: 2 });
          await store.append('c', [entry('another lighthouse')]);
          expect((await store.search.find('c', ['lighthouse'], 5)).indexed).toBe(0);
          expect(await store.search.catchUp('c')).toBe(3);
          const found = await store.search.find('c', ['lighthouse'], 5);
          expect(found.hits.map((h) => h.seq).sort()).toEqual([0, 2]);
          expect((await store.read('c')).slice(0, 2)).toStrictEqual(before);
        } finally {
          await store.close();
        }
      } finally {
        await dropSchema(schema);
      }
    });

    it('clears the counts of a message changed by hand, in the statement that changes it', async () => {
      const schema = uniqueSchema();
      const store = await openPostgresStore(url as string, { schema });
      try {
        await store.append('c', [
          { ...entry('a'), counts: { k: 1 } },
          { ...entry('b'), counts: { k: 2 } },
        ]);
        const client = await adminClient();
        await client.query(`SET search_path TO "${schema}"`);
        try {
          await expectCountsFollowMessage(store, async (statement) => {
            const sql = statement
              .replaceAll('entries', 'contextkit_entries')
              .replace('SELECT seq,', 'SELECT seq::int,');
            return (await client.query(sql)).rows;
          });
        } finally {
          await client.query('RESET search_path');
        }
      } finally {
        await store.close();
        await dropSchema(schema);
      }
    });

    it('keeps, on upgrading a version 5 schema, only the counts whose digest still matches their message', async () => {
      const schema = uniqueSchema();
      try {
        const first = await openPostgresStore(url as string, { schema });
        await first.append('c', [
          { ...entry('kept, with ünïcode and 🚀'), counts: { k: 1 } },
          { ...entry('edited'), counts: { k: 2 } },
          entry('no counts'),
          { ...entry('damaged record'), counts: { k: 4 } },
          { ...entry('kept too'), counts: { k: 4, j: 5 } },
        ]);
        await first.close();
        // The schema as version 5 left it, then a message edited by hand and a record damaged.
        const client = await adminClient();
        const entries = `"${schema}".contextkit_entries`;
        await client.query(`DROP TRIGGER contextkit_entries_counts_follow_message ON ${entries}`);
        await client.query(`UPDATE "${schema}".contextkit_schema SET version = 5`);
        await client.query(
          `UPDATE ${entries} SET message = '{"role":"user","content":"edited by hand"}' WHERE seq = 1`,
        );
        await client.query(`UPDATE ${entries} SET counts = '{not json' WHERE seq = 3`);
        const store = await openPostgresStore(url as string, { schema });
        try {
          expect((await store.read('c')).map((e) => [e.message.content, e.counts])).toEqual([
            ['kept, with ünïcode and 🚀', { k: 1 }],
            ['edited by hand', undefined],
            ['no counts', undefined],
            ['damaged record', undefined],
            ['kept too', { k: 4, j: 5 }],
          ]);
          const { rows } = await client.query(
            `SELECT seq::int FROM ${entries} WHERE counts IS NULL ORDER BY seq`,
          );
          expect(rows).toEqual([{ seq: 1 }, { seq: 2 }, { seq: 3 }]);
          const version = await client.query(`SELECT version FROM "${schema}".contextkit_schema`);
          expect(version.rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
          // The trigger is back: an edit now clears the counts it leaves behind.
          await client.query(`UPDATE ${entries} SET message = '{"role":"user","content":"x"}' WHERE seq = 4`);
          expect((await store.read('c'))[4]!.counts).toBeUndefined();
        } finally {
          await store.close();
        }
      } finally {
        await dropSchema(schema);
      }
    });

    it('makes a dropped search index again on rebuild', async () => {
      const schema = uniqueSchema();
      const store = await openPostgresStore(url as string, { schema });
      try {
        await store.append('c', [entry('apples and pears')]);
        const client = await adminClient();
        await client.query(`DROP INDEX "${schema}".contextkit_entries_search`);
        expect(await store.search.rebuild('c')).toBe(1);
        const { rows } = await client.query(
          `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname = 'contextkit_entries_search'`,
          [schema],
        );
        expect(rows).toHaveLength(1);
        expect((await store.search.find('c', ['pear'], 5)).hits.map((h) => h.seq)).toEqual([0]);
      } finally {
        await store.close();
        await dropSchema(schema);
      }
    });

    it('keeps an id far beyond a btree row (10,000 characters)', async () => {
      const schema = uniqueSchema();
      const store = await openPostgresStore(url as string, { schema });
      try {
        const long = 'ü'.repeat(10_000);
        const longer = `${long}!`;
        await store.append(long, [entry('a')]);
        await store.append(longer, [entry('b')]);
        expect((await store.read(longer)).map((e) => e.message.content)).toEqual(['b']);
        expect((await store.list({ prefix: long })).ids).toEqual([long, longer]);
        expect((await store.list({ limit: 1 })).ids).toEqual([long]);
      } finally {
        await store.close();
        await dropSchema(schema);
      }
    });

    it('with mustExist, refuses a database without its tables and creates nothing, then opens one with them', async () => {
      const schema = uniqueSchema();
      try {
        const error = await openPostgresStore(url as string, { schema, mustExist: true }).catch(
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(StoreError);
        expect((error as StoreError).code).toBe('not_found');
        expect((error as Error).message).toMatch(/has no contextkit tables .*nothing was created/);
        const created = await (await adminClient()).query(
          'SELECT 1 FROM information_schema.schemata WHERE schema_name = $1',
          [schema],
        );
        expect(created.rowCount).toBe(0);

        const writer = await openPostgresStore(url as string, { schema });
        await writer.append('c', [entry('kept')]);
        await writer.close();
        const reader = await openPostgresStore(url as string, { schema, mustExist: true });
        expect((await reader.read('c')).map((e) => e.message.content)).toEqual(['kept']);
        await reader.close();
      } finally {
        await dropSchema(schema);
      }
    });
  });
});

describe('openPostgresStore', () => {
  it('rejects with a StoreError, password redacted, when nothing listens', async () => {
    const error = await openPostgresStore('postgres://user:s3cret@127.0.0.1:1/db').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(/cannot be opened/);
    expect((error as Error).message).not.toContain('s3cret');
  });

  it('rejects a schema or table prefix that is not a plain identifier', async () => {
    await expect(openPostgresStore('postgres://127.0.0.1:1/db', { schema: 'a"; drop' })).rejects.toThrow(
      /schema must be lowercase/,
    );
    await expect(openPostgresStore('postgres://127.0.0.1:1/db', { tablePrefix: 'X-' })).rejects.toThrow(
      /tablePrefix must be/,
    );
  });
});
