/**
 * What a store that keeps counts true to their message in the database (SQLite's and Postgres's
 * trigger) is held to: an entry's counts go in the statement that changes its message by hand,
 * and counts kept again after are read as kept.
 */
import { expect } from 'vitest';
import type { ConversationStore } from '../../src/stores/types.js';

/** Runs one SQL statement on the store's table of entries, named `entries` in it. */
export type EntriesSql = (statement: string) => Promise<ReadonlyArray<Record<string, unknown>>>;

/** `store` holds conversation `c`: messages 'a' and 'b', stored with counts (`{ k: 1 }`, `{ k: 2 }`). */
export async function expectCountsFollowMessage(store: ConversationStore, sql: EntriesSql): Promise<void> {
  await sql(`UPDATE entries SET message = '{"role":"user","content":"b, longer"}' WHERE seq = 1`);
  // Changing the message and setting counts at once still leaves none: they were not made for it.
  await sql(
    `UPDATE entries SET message = '{"role":"user","content":"z"}', counts = (SELECT counts FROM entries WHERE seq = 0) WHERE seq = 0`,
  );
  expect(await sql('SELECT seq, counts FROM entries ORDER BY seq')).toEqual([
    { seq: 0, counts: null },
    { seq: 1, counts: null },
  ]);
  expect((await store.read('c')).map((e) => [e.message.content, e.counts])).toEqual([
    ['z', undefined],
    ['b, longer', undefined],
  ]);
  // Counts kept again after the edit are read as they were kept.
  expect(await store.saveCounts('c', [{ seq: 1, counts: { k: 3 } }], { epoch: await store.epoch('c') })).toBe(
    true,
  );
  expect((await store.read('c')).map((e) => e.counts)).toEqual([undefined, { k: 3 }]);
}
