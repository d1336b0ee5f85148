import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { missing, REDIS_URL, skipFor } from '../../test/support/requirements.js';
import { testStore } from '../../test/support/store-conformance.js';
import { StoreError } from '../errors.js';
import { encodeId } from './keys.js';
import { openRedisStore } from './redis.js';
import type { NewEntry } from './types.js';

const url = REDIS_URL;

async function connectAdmin() {
  const client = createClient({ url: url as string });
  client.on('error', () => {});
  await client.connect();
  return client;
}

let admin: ReturnType<typeof connectAdmin> | undefined;

/** One connection for setup and cleanup, opened on first use. */
function adminClient(): ReturnType<typeof connectAdmin> {
  admin ??= connectAdmin();
  return admin;
}

afterAll(async () => {
  if (admin) await (await admin).close();
});

/** Deletes every key under `prefix` (made of [a-z0-9:-] only, so it needs no glob escaping). */
async function deleteKeys(prefix: string): Promise<void> {
  const client = await adminClient();
  for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
    if (keys.length > 0) await client.del(keys);
  }
}

function uniquePrefix(): string {
  return `ck-test-${process.pid}-${randomBytes(4).toString('hex')}:`;
}

function entry(text: string): NewEntry {
  return { message: { role: 'user', content: text }, metadata: { timestamp: '2025-01-02T03:04:05.678Z' } };
}

describe('redis', skipFor(missing.redis), () => {
  testStore('redis', async () => {
    const keyPrefix = uniquePrefix();
    return {
      store: await openRedisStore(url as string, { keyPrefix }),
      reopen: () => openRedisStore(url as string, { keyPrefix }),
      cleanup: () => deleteKeys(keyPrefix),
    };
  });

  describe('RedisStore', () => {
    it('keeps a list per conversation, a hash for metadata and a sorted set of ids under its prefix', async () => {
      const keyPrefix = uniquePrefix();
      const store = await openRedisStore(url as string, { keyPrefix });
      const client = await adminClient();
      try {
        const id = 'team/Ünï';
        await store.append(id, [entry('a'), entry('b')]);
        await store.setMeta(id, { plan: 1 });
        const base = `${keyPrefix}conv:${encodeId(id)}`;
        expect(await client.type(`${base}:log`)).toBe('list');
        expect(await client.lLen(`${base}:log`)).toBe(2);
        expect(await client.lIndex(`${base}:log`, 0)).toBe(
          '{"metadata":{"timestamp":"2025-01-02T03:04:05.678Z"},"message":{"role":"user","content":"a"}}',
        );
        expect(await client.hGetAll(`${base}:meta`)).toEqual({ value: '{"plan":1}', version: '1' });
        expect(await client.zRange(`${keyPrefix}conversations`, 0, -1)).toEqual([id]);
      } finally {
        await store.close();
        await deleteKeys(keyPrefix);
      }
    });

    it('keeps stores with different prefixes apart', async () => {
      const [p1, p2] = [uniquePrefix(), uniquePrefix()];
      const one = await openRedisStore(url as string, { keyPrefix: p1 });
      const two = await openRedisStore(url as string, { keyPrefix: p2 });
      try {
        await one.append('c', [entry('one')]);
        expect(await two.head('c')).toBe(0);
        expect((await two.list()).ids).toEqual([]);
      } finally {
        await one.close();
        await two.close();
        await deleteKeys(p1);
        await deleteKeys(p2);
      }
    });

    it('loads its scripts again after the server forgot them', async () => {
      const keyPrefix = uniquePrefix();
      const store = await openRedisStore(url as string, { keyPrefix });
      try {
        await store.append('c', [entry('before')]);
        await (await adminClient()).scriptFlush();
        expect(await store.append('c', [entry('after')], { expectedSeq: 1 })).toBe(1);
        expect(await store.setMeta('c', { a: 1 })).toBe(1);
        expect((await store.read('c')).map((e) => e.message.content)).toEqual(['before', 'after']);
      } finally {
        await store.close();
        await deleteKeys(keyPrefix);
      }
    });

    it('appends a batch larger than one Lua unpack() in one atomic step', async () => {
      const keyPrefix = uniquePrefix();
      const store = await openRedisStore(url as string, { keyPrefix });
      try {
        const batch = Array.from({ length: 12_345 }, (_, i) => entry(`m${i}`));
        expect(await store.append('c', batch, { expectedSeq: 0 })).toBe(0);
        expect(await store.head('c')).toBe(12_345);
        const tail = await store.read('c', { fromSeq: 12_343 });
        expect(tail.map((e) => [e.seq, e.message.content])).toEqual([
          [12_343, 'm12343'],
          [12_344, 'm12344'],
        ]);
      } finally {
        await store.close();
        await deleteKeys(keyPrefix);
      }
    });

    // Issue 32: a replace of 100,000 entries (300,001 script arguments) failed with "Maximum call
    // stack size exceeded" inside node-redis, which spread the arguments into a call.
    it('replaces a conversation with 100,000 entries in one script and appends after them', async () => {
      const keyPrefix = uniquePrefix();
      const store = await openRedisStore(url as string, { keyPrefix });
      try {
        await store.append('c', [entry('old')]);
        const entries = Array.from({ length: 100_000 }, (_, i) => entry(`m${i}`));
        await store.replace('c', entries);
        expect(await store.head('c')).toBe(100_000);
        const tail = await store.read('c', { fromSeq: 99_999 });
        expect(tail.map((e) => [e.seq, e.message.content])).toEqual([[99_999, 'm99999']]);
        expect(await store.append('c', [entry('next')], { expectedSeq: 100_000 })).toBe(100_000);
      } finally {
        await store.close();
        await deleteKeys(keyPrefix);
      }
    });

    /** `n` entries tagged `tag`, each with its own counts. */
    const generation = (tag: string, n: number): NewEntry[] =>
      Array.from({ length: n }, (_, i) => ({ ...entry(`${tag} ${i}`), counts: { k: i + 1 } }));
    const shown = (entries: ReadonlyArray<NewEntry>) =>
      entries.map((e) => ({ content: (e.message as { content?: unknown }).content, counts: e.counts }));

    it('reads a log longer than a page a page at a time: every entry with its counts, from any seq, to any limit', async () => {
      const keyPrefix = uniquePrefix();
      const store = await openRedisStore(url as string, { keyPrefix });
      try {
        const entries = generation('m', 4_500);
        await store.replace('c', entries);
        expect(shown(await store.read('c'))).toEqual(shown(entries));
        const from = await store.read('c', { fromSeq: 1_999 });
        expect(from.map((e) => e.seq)).toEqual(entries.slice(1_999).map((_, i) => 1_999 + i));
        expect(shown(from)).toEqual(shown(entries.slice(1_999)));
        expect(shown(await store.read('c', { fromSeq: 100, limit: 4_001 }))).toEqual(
          shown(entries.slice(100, 4_101)),
        );
        expect(await store.read('c', { fromSeq: 4_500 })).toEqual([]);
      } finally {
        await store.close();
        await deleteKeys(keyPrefix);
      }
    });

    it('shows a reader each replace whole, though its read spans pages: never the pages of two generations', async () => {
      const keyPrefix = uniquePrefix();
      const writer = await openRedisStore(url as string, { keyPrefix });
      const reader = await openRedisStore(url as string, { keyPrefix });
      // Each longer than two pages, so that a replace can land between a read's pages.
      const shapes = [generation('a', 5_000), generation('b', 6_500), generation('c', 5_000)];
      try {
        await writer.replace('c', shapes[0]!);
        let writing = true;
        const replaces = (async () => {
          for (let i = 1; i <= 40; i++) await writer.replace('c', shapes[i % 3]!);
          await writer.delete('c');
          writing = false;
        })();
        let reads = 0;
        while (writing) {
          const got = shown(await reader.read('c'));
          reads++;
          if (got.length === 0) continue;
          const tag = String(got[0]?.content).slice(0, 1);
          expect(got).toEqual(shown(shapes['abc'.indexOf(tag)]!));
        }
        await replaces;
        expect(reads).toBeGreaterThan(3);
        expect(await reader.read('c')).toEqual([]);
      } finally {
        await writer.close();
        await reader.close();
        await deleteKeys(keyPrefix);
      }
    });
  });
});

describe('openRedisStore', () => {
  it('rejects with a StoreError, password redacted, when nothing listens', async () => {
    const error = await openRedisStore('redis://user:s3cret@127.0.0.1:1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(/cannot be reached/);
    expect((error as Error).message).not.toContain('s3cret');
  });
});
