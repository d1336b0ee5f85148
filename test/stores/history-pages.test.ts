/**
 * `historyPages` on every driver: pages in seq order of the size asked, from the seq asked, and a
 * conversation replaced (or deleted, or popped) between two pages rejects the next with a conflict.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, StoreError } from '../../src/errors.js';
import { historyPages } from '../../src/stores/history-pages.js';
import { MemoryStore } from '../../src/stores/memory.js';
import type { ConversationStore, NewEntry, StoredEntry } from '../../src/stores/types.js';
import { skipFor } from '../support/requirements.js';
import { sharedDrivers } from './fixtures/drivers.js';
import { openSpec } from './fixtures/open-store.js';

const ID = 'paged';
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const entries = (n: number, tag = 'm'): NewEntry[] =>
  Array.from({ length: n }, (_, i) => ({
    message: { role: 'user', content: `${tag} ${i}` },
    metadata: { timestamp: '2025-01-02T03:04:05.678Z' },
  }));

async function collect(pages: AsyncIterable<StoredEntry[]>): Promise<StoredEntry[][]> {
  const out: StoredEntry[][] = [];
  for await (const page of pages) out.push(page);
  return out;
}

/** Runs `body` on a new, empty store of a driver, and closes it. */
async function onStore(
  open: () => Promise<ConversationStore>,
  body: (store: ConversationStore) => Promise<void>,
): Promise<void> {
  const store = await open();
  try {
    await body(store);
  } finally {
    await store.close();
  }
}

const drivers = [
  { name: 'memory', missing: undefined, open: async (): Promise<ConversationStore> => new MemoryStore() },
  ...sharedDrivers(cleanups, [ID]).map((d) => ({
    name: d.name,
    missing: d.missing,
    open: async () => openSpec(await d.spec()),
  })),
];

describe.each(drivers)('historyPages on the $name store', ({ missing: reason, open }) => {
  it('gives the entries in seq order, a page of pageSize at a time, from fromSeq', skipFor(reason), () =>
    onStore(open, async (store) => {
      await store.append(ID, entries(25));
      const pages = await collect(historyPages(store, ID, { pageSize: 10 }));
      expect(pages.map((p) => p.length)).toEqual([10, 10, 5]);
      expect(pages.flat().map((e) => e.seq)).toEqual([...Array(25).keys()]);
      expect(pages.flat()).toEqual(await store.read(ID));

      const from = await collect(historyPages(store, ID, { pageSize: 10, fromSeq: 7 }));
      expect(from.map((p) => p.map((e) => e.seq)[0])).toEqual([7, 17]);
      expect(from.flat().map((e) => e.message.content)).toEqual(
        entries(25)
          .slice(7)
          .map((e) => e.message.content),
      );

      expect(await collect(historyPages(store, ID, { pageSize: 5 }))).toHaveLength(5);
      expect(await collect(historyPages(store, ID, { fromSeq: 25 }))).toEqual([]);
      expect(await collect(historyPages(store, 'never-written'))).toEqual([]);
      expect((await collect(historyPages(store, ID))).map((p) => p.length)).toEqual([25]);
    }),
  );

  it(
    'rejects the next page with a conflict when the conversation is replaced in the middle',
    skipFor(reason),
    () =>
      onStore(open, async (store) => {
        await store.append(ID, entries(30));
        const seen: StoredEntry[][] = [];
        let error: unknown;
        try {
          for await (const page of historyPages(store, ID, { pageSize: 10 })) {
            seen.push(page);
            if (seen.length === 1) await store.replace(ID, entries(30, 'new'));
          }
        } catch (e) {
          error = e;
        }
        expect(seen).toHaveLength(1);
        expect(seen[0]!.map((e) => e.message.content)).toEqual(entries(10).map((e) => e.message.content));
        expect(error).toBeInstanceOf(StoreError);
        expect(error).toMatchObject({ code: 'conflict', conversationId: ID });
        expect((error as Error).message).toMatch(/replaced while paging/);

        // Deleted or popped between pages: the same.
        for (const change of [() => store.pop(ID), () => store.delete(ID)]) {
          await store.replace(ID, entries(30));
          const pages = historyPages(store, ID, { pageSize: 10 })[Symbol.asyncIterator]();
          expect((await pages.next()).value).toHaveLength(10);
          await change();
          await expect(pages.next()).rejects.toMatchObject({ code: 'conflict' });
        }

        // Appends between pages are no replace: they are read.
        await store.replace(ID, entries(10));
        const pages: StoredEntry[][] = [];
        for await (const page of historyPages(store, ID, { pageSize: 10 })) {
          pages.push(page);
          if (pages.length === 1) await store.append(ID, entries(3, 'late'));
        }
        expect(pages.map((p) => p.length)).toEqual([10, 3]);
      }),
  );
});

it('refuses a bad pageSize or fromSeq at once', () => {
  const store = new MemoryStore();
  for (const options of [
    { pageSize: 0 },
    { pageSize: 1.5 },
    { pageSize: Number.NaN },
    { fromSeq: -1 },
    { fromSeq: 0.5 },
  ]) {
    expect(() => historyPages(store, ID, options)).toThrow(InvalidArgumentError);
  }
});
