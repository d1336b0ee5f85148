/**
 * Issue 32: "no event-loop stall over 50 ms in any `setMessages`". A replace of a whole history
 * (100,000 messages) held the event loop for 0.6–2.5 s on every driver: its entries were checked,
 * serialized and digested in one stretch, and SQLite wrote them in one synchronous transaction,
 * Postgres bound them in one statement, Redis sent them in one script. Now the work runs in
 * slices and the writes in chunks (SQLite: one transaction held open across chunks, every other
 * call on the store waiting for it; Redis: staged keys renamed into place; Postgres: a statement
 * per chunk in one transaction; file: the log written in parts, then renamed).
 *
 * Timings are the bench's (`npm run bench -- stateless`, its stall table); here, on every shared
 * driver: the event loop runs during a large replace, which reads back exactly as written; a
 * reader (another instance, as another process) sees the old history or the new, whole, never a
 * part; calls on the same instance made meanwhile complete; a replace that fails halfway leaves
 * the old history as it was and nothing of itself behind.
 */

import { setImmediate as tick } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { Message, MessageMetadata } from '../../src/messages/types.js';
import { WRITE_CHUNK_BYTES } from '../../src/stores/replace-rows.js';
import type { ConversationStore, NewEntry, StoredEntry } from '../../src/stores/types.js';
import { missing, REDIS_URL, skipFor } from '../support/requirements.js';
import { sharedDrivers } from './fixtures/drivers.js';
import { openSpec } from './fixtures/open-store.js';

const CONVERSATION = 'replace in slices';
const OTHER = 'replace in slices: another conversation';
const OLD = 40;
/** Entries of about 3 KB: the new history is several write chunks long. */
const NEW = 1_600;

const metadata = (i: number): MessageMetadata => ({
  timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
});

function history(n: number, tag: string, size: number): NewEntry[] {
  return Array.from({ length: n }, (_, i): NewEntry => {
    const message: Message =
      i % 2 === 0
        ? { role: 'user', content: `${tag} ${i}: ${'question '.repeat(size / 9)}` }
        : { role: 'assistant', content: `${tag} ${i}: ${'answer '.repeat(size / 7)}` };
    return { message, metadata: metadata(i), id: `${tag}-${i}`, counts: { o200k_base: 10 + i } };
  });
}

/** What a read gives back of `entries` written from seq 0. */
function asStored(entries: readonly NewEntry[]): StoredEntry[] {
  return entries.map(
    (e, seq) =>
      ({ seq, message: e.message, metadata: e.metadata, id: e.id, counts: e.counts }) as StoredEntry,
  );
}

/** How many times the event loop ran a macrotask while `work` ran. */
async function loopTurnsDuring<T>(work: Promise<T>): Promise<{ value: T; turns: number }> {
  let done = false;
  let turns = 0;
  const counting = (async () => {
    while (!done) {
      await tick();
      turns++;
    }
  })();
  try {
    return { value: await work, turns };
  } finally {
    done = true;
    await counting;
  }
}

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const oldEntries = history(OLD, 'old', 200);
const newEntries = history(NEW, 'new', 3_000);

it('the new history is several write chunks long', () => {
  const bytes = newEntries.reduce((sum, e) => sum + JSON.stringify(e.message).length, 0);
  expect(bytes).toBeGreaterThan(3 * WRITE_CHUNK_BYTES);
});

for (const driver of sharedDrivers(cleanups, [CONVERSATION, OTHER])) {
  describe(`${driver.name}: a replace of a long history in slices`, skipFor(driver.missing), () => {
    const fresh = async (): Promise<{
      store: ConversationStore;
      another: () => Promise<ConversationStore>;
    }> => {
      const spec = await driver.spec();
      const store = await openSpec(spec);
      cleanups.push(() => store.close());
      const another = async () => {
        const other = await openSpec(spec);
        cleanups.push(() => other.close());
        return other;
      };
      await store.replace(CONVERSATION, oldEntries);
      return { store, another };
    };

    it('lets the event loop run, and reads back exactly as written', async () => {
      const { store } = await fresh();
      const { turns } = await loopTurnsDuring(store.replace(CONVERSATION, newEntries));
      expect(turns).toBeGreaterThanOrEqual(4);
      expect(await store.head(CONVERSATION)).toBe(NEW);
      expect(await store.read(CONVERSATION)).toEqual(asStored(newEntries));
      // The ids are the new generation's: an old id is free again, a new one is held.
      await expect(store.append(CONVERSATION, [{ ...newEntries[5]!, id: 'new-5' }])).rejects.toMatchObject({
        code: 'duplicate_id',
      });
      expect(await store.append(CONVERSATION, [{ ...oldEntries[0]!, id: 'old-0' }])).toBe(NEW);
    });

    it('shows a reader elsewhere the old history or the new, whole', async () => {
      const { store, another } = await fresh();
      const reader = await another();
      const seen = new Set<number>();
      let replaced = false;
      const replacing = store.replace(CONVERSATION, newEntries).then(() => {
        replaced = true;
      });
      while (!replaced) {
        const read = await reader.read(CONVERSATION);
        if (read.length === OLD) expect(read).toEqual(asStored(oldEntries));
        else expect(read).toEqual(asStored(newEntries));
        seen.add(read.length);
        // A read served in one stretch (SQLite) never lets the replace's next chunk run.
        await tick();
      }
      await replacing;
      expect(await reader.read(CONVERSATION)).toEqual(asStored(newEntries));
      expect([...seen].every((n) => n === OLD || n === NEW)).toBe(true);
    });

    it('completes the calls made meanwhile on the same store', async () => {
      const { store } = await fresh();
      await store.replace(OTHER, oldEntries.slice(0, 3));
      const replacing = store.replace(CONVERSATION, newEntries);
      const during = Promise.all([
        store.read(OTHER),
        store.append(OTHER, [{ message: { role: 'user', content: 'meanwhile' }, metadata: metadata(99) }]),
        store.getMeta(CONVERSATION),
        store.head(CONVERSATION),
      ]);
      await replacing;
      const [read, head, , seen] = await during;
      expect(read).toEqual(asStored(oldEntries.slice(0, 3)));
      expect(head).toBe(3);
      expect([OLD, NEW]).toContain(seen);
      expect(await store.read(CONVERSATION)).toEqual(asStored(newEntries));
      expect(await store.head(OTHER)).toBe(4);
    });
  });
}

describe('SQLite: a replace that fails halfway', () => {
  it('rolls back: the old history stays, and the store goes on', async () => {
    const [sqlite] = sharedDrivers(cleanups, []).filter((d) => d.name === 'sqlite');
    const spec = await sqlite!.spec();
    const store = await openSpec(spec);
    cleanups.push(() => store.close());
    await store.replace(CONVERSATION, oldEntries);
    // Another connection (as another program would) makes the insert of seq 900 fail.
    const db = new Database(spec.location);
    db.exec(`CREATE TRIGGER fail_halfway BEFORE INSERT ON entries WHEN NEW.seq = 900
             BEGIN SELECT RAISE(ABORT, 'refused at 900'); END`);
    db.close();
    await expect(store.replace(CONVERSATION, newEntries)).rejects.toMatchObject({ code: 'store' });
    expect(await store.read(CONVERSATION)).toEqual(asStored(oldEntries));
    expect(await store.head(CONVERSATION)).toBe(OLD);
    const hits = await store.search!.find(CONVERSATION, ['question'], 100);
    expect(hits.hits.every((hit) => hit.seq < OLD)).toBe(true);
    expect(
      await store.append(CONVERSATION, [
        { message: { role: 'user', content: 'after' }, metadata: metadata(1) },
      ]),
    ).toBe(OLD);
  });

  it('keeps recall level with the new history', async () => {
    const [sqlite] = sharedDrivers(cleanups, []).filter((d) => d.name === 'sqlite');
    const store = await openSpec(await sqlite!.spec());
    cleanups.push(() => store.close());
    await store.replace(
      CONVERSATION,
      history(OLD, 'old', 200).map((e) => ({
        ...e,
        message: { role: 'user', content: `zebra ${String(e.message.content)}` } as Message,
      })),
    );
    await store.replace(CONVERSATION, newEntries);
    expect((await store.search!.find(CONVERSATION, ['zebra'], 10)).hits).toEqual([]);
    const found = await store.search!.find(CONVERSATION, ['answer'], 2_000);
    expect(found.indexed).toBe(NEW);
    expect(found.hits.length).toBe(NEW / 2);
  });
});

describe('Redis: a staged replace that fails at its end', skipFor(missing.redis), () => {
  it('leaves the old history as it was and removes its staged keys', async () => {
    const [redis] = sharedDrivers(cleanups, [CONVERSATION]).filter((d) => d.name === 'redis');
    const spec = await redis!.spec();
    const store = await openSpec(spec);
    cleanups.push(() => store.close());
    await store.replace(CONVERSATION, oldEntries);
    const { createClient } = await import('redis');
    const client = createClient({ url: REDIS_URL as string });
    await client.connect();
    try {
      // The conversation's id index made a string: the last script refuses it (a wrong type).
      const idsKeys: string[] = [];
      for await (const keys of client.scanIterator({ MATCH: `${spec.keyPrefix}*:ids`, COUNT: 1000 }))
        idsKeys.push(...keys);
      expect(idsKeys).toHaveLength(1);
      await client.set(idsKeys[0]!, 'not a hash');
      await expect(store.replace(CONVERSATION, newEntries)).rejects.toMatchObject({ code: 'wrong_type' });
      const staged: string[] = [];
      for await (const keys of client.scanIterator({ MATCH: `${spec.keyPrefix}*:staged:*`, COUNT: 1000 }))
        staged.push(...keys);
      expect(staged).toEqual([]);
      expect(await store.read(CONVERSATION)).toHaveLength(OLD);
    } finally {
      await client.close();
    }
  });
});
