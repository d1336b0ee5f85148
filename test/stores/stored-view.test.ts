/**
 * Issue 32 item 1 on every store: workers that never keep a conversation (each turn a new manager
 * on its own connection) serve an agent's turns from the stored view record and the rows the view
 * holds. Their views are byte for byte those of workers that load the whole history each turn, and
 * a turn served so reads about the view's rows, not the history's.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ContextManager } from '../../src/manager.js';
import { MemoryStore } from '../../src/stores/memory.js';
import type { ConversationStore } from '../../src/stores/types.js';
import { longSessionMessages } from '../support/arbitraries.js';
import { skipFor } from '../support/requirements.js';
import { keepOpen, turnsOf } from '../support/workers.js';
import { workerDrivers } from './fixtures/drivers.js';

const CONVERSATION = 'stored-view';
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const drivers = workerDrivers(cleanups, [CONVERSATION]);
const OPTIONS = {
  model: 'gpt-4o',
  compactWhenCacheExpired: false,
  now: () => new Date(Date.UTC(2026, 10, 29)),
};
const BUDGET = 12_000;

/** `store`, counting the rows its reads return, and whether a read took the whole log. */
function counted(store: ConversationStore): { store: ConversationStore; rows: number; whole: boolean } {
  const tally = { rows: 0, whole: false, store };
  tally.store = new Proxy(store, {
    get(target, key) {
      if (key === 'read')
        return async (id: string, options?: { fromSeq?: number; limit?: number }) => {
          if (options === undefined) tally.whole = true;
          const rows = await target.read(id, options);
          tally.rows += rows.length;
          return rows;
        };
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return tally;
}

describe('workers that keep no conversation, on every store', () => {
  for (const driver of drivers) {
    it(`${driver.name}: serve each turn from the record and the view's rows, as workers that load the history do`, {
      ...skipFor(driver.missing),
      timeout: 180_000,
    }, async () => {
      const opener = await driver.open();
      // One memory store is every worker's: closing a manager must not close it.
      const open = async () => (driver.name === 'memory' ? keepOpen(await opener()) : opener());
      const reference = keepOpen(new MemoryStore());
      const session = longSessionMessages(2_400, 'openai', 41);
      const turns = turnsOf(session);
      // The first 2,000 messages as an earlier worker left them (its view served: the record kept).
      let stored = 0;
      let t = 0;
      while (stored < 2_000) stored += turns[t++]!.length;
      for (const [store, storedView] of [
        [await open(), true],
        [reference, false],
      ] as const) {
        const writer = new ContextManager({ ...OPTIONS, store, conversationId: CONVERSATION, storedView });
        await writer.setMessages(turns.slice(0, t).flat(), { replace: true });
        await writer.getMessagesForRequest({ tokenBudget: BUDGET });
        await writer.close();
      }
      let unread = 0;
      const first = t;
      for (; t < turns.length; t++) {
        const tally = counted(await open());
        const worker = new ContextManager({ ...OPTIONS, store: tally.store, conversationId: CONVERSATION });
        const whole = new ContextManager({
          ...OPTIONS,
          store: reference,
          conversationId: CONVERSATION,
          storedView: false,
        });
        await worker.addMessages(turns[t]!);
        await whole.addMessages(turns[t]!);
        const view = await worker.getMessagesForRequest({ tokenBudget: BUDGET });
        expect(JSON.stringify(view)).toBe(
          JSON.stringify(await whole.getMessagesForRequest({ tokenBudget: BUDGET })),
        );
        if (!tally.whole) {
          unread++;
          // The view's rows and the few between its runs, not the history's thousands.
          expect(tally.rows).toBeLessThan(view.length * 2 + 64);
        }
        await worker.close();
        await whole.close();
      }
      // Only turns that compacted read the whole history.
      expect(unread).toBeGreaterThan((turns.length - first) / 2);
      const check = await open();
      expect((await check.read(CONVERSATION)).map((e) => e.message)).toEqual(
        (await reference.read(CONVERSATION)).map((e) => e.message),
      );
      await check.close();
    });

    it(`${driver.name}: with compactAfterRequest, no turn reads the whole history on its request path, compactions included`, {
      ...skipFor(driver.missing),
      timeout: 180_000,
    }, async () => {
      const opener = await driver.open();
      const open = async () => (driver.name === 'memory' ? keepOpen(await opener()) : opener());
      const options = { ...OPTIONS, compactAfterRequest: true };
      const session = longSessionMessages(2_400, 'openai', 43);
      const turns = turnsOf(session);
      let stored = 0;
      let t = 0;
      while (stored < 2_000) stored += turns[t++]!.length;
      const writer = new ContextManager({ ...options, store: await open(), conversationId: CONVERSATION });
      await writer.setMessages(turns.slice(0, t).flat(), { replace: true });
      await writer.getMessagesForRequest({ tokenBudget: BUDGET });
      await writer.close();
      // The same turns on one manager kept all along, with the same option: the views to serve.
      const kept = new ContextManager({ ...options, conversationId: CONVERSATION });
      await kept.setMessages(turns.slice(0, t).flat());
      await kept.getMessagesForRequest({ tokenBudget: BUDGET });
      let compactedAfter = 0;
      let readWhole = 0;
      const onPath: string[] = [];
      for (; t < turns.length; t++) {
        const tally = counted(await open());
        const worker = new ContextManager({ ...options, store: tally.store, conversationId: CONVERSATION });
        let inRequest = true;
        worker.on('context:post_compact', (e) => {
          if (inRequest) onPath.push(e.receipt.reason);
          else compactedAfter++;
        });
        await worker.addMessages(turns[t]!);
        await kept.addMessages(turns[t]!);
        const compactedBefore = onPath.length;
        const view = await worker.getMessagesForRequest({ tokenBudget: BUDGET });
        inRequest = false;
        // A turn that leaps past the budget is compacted before its view is sent, the history read
        // first (as without the option); no other turn reads it on its path.
        if (tally.whole && onPath.length === compactedBefore) readWhole++;
        expect(JSON.stringify(view)).toBe(
          JSON.stringify(await kept.getMessagesForRequest({ tokenBudget: BUDGET })),
        );
        // Waits for the compaction the request put off: it reads the whole history, after the request.
        await worker.close();
      }
      await kept.close();
      expect(compactedAfter).toBeGreaterThan(0);
      expect(readWhole).toBe(0);
      expect(onPath.every((reason) => reason === 'over_budget')).toBe(true);
    });
  }
});
