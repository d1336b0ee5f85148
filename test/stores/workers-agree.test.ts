/**
 * Issue 32, item 3: workers agree. Two managers serving the same stored conversation in turn (a
 * request goes to whichever worker is free) serve the views one long-lived manager would: the
 * worker that compacts first stores its plan, and the other adopts it (compare-and-set on the
 * stored record) instead of making a plan of its own one turn later, so the prompt cache keeps
 * hitting whichever worker serves.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ContextManager } from '../../src/manager.js';
import { createOfflineTools } from '../../src/tools/offline.js';
import type { ContextTools } from '../../src/tools/types.js';
import { longSessionMessages } from '../support/arbitraries.js';
import { skipFor } from '../support/requirements.js';
import { turnsOf } from '../support/workers.js';
import { workerDrivers } from './fixtures/drivers.js';

const CONVERSATION = 'workers-agree';
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const drivers = workerDrivers(cleanups, [CONVERSATION, `${CONVERSATION}-race`]);

const OPTIONS = { model: 'gpt-4o', maxTokens: 6_000, compactWhenCacheExpired: false } as const;

describe('workers sharing a store serve the same views', () => {
  for (const driver of drivers) {
    it(`${driver.name}: two workers in turn serve what one manager serves`, {
      ...skipFor(driver.missing),
      timeout: 120_000,
    }, async () => {
      const open = await driver.open();
      const [a, b] = [
        new ContextManager({ ...OPTIONS, store: await open(), conversationId: CONVERSATION }),
        new ContextManager({ ...OPTIONS, store: await open(), conversationId: CONVERSATION }),
      ];
      const one = new ContextManager({ ...OPTIONS });
      const turns = turnsOf(longSessionMessages(400, 'openai', 32));
      let compactions = 0;
      one.on('context:post_compact', () => {
        compactions++;
      });
      try {
        for (let t = 0; t < turns.length; t++) {
          const worker = t % 2 === 0 ? a : b;
          await worker.sync();
          await worker.addMessages(turns[t]!);
          await one.addMessages(turns[t]!);
          const served = await worker.getMessagesForRequest();
          const expected = await one.getMessagesForRequest();
          expect(JSON.stringify(served), `turn ${t}, served by ${t % 2 === 0 ? 'a' : 'b'}`).toBe(
            JSON.stringify(expected),
          );
        }
        // The session compacted many times, half of them on the other worker's turn.
        expect(compactions).toBeGreaterThan(4);
      } finally {
        await a.close();
        await b.close();
      }
    });
  }

  /** The offline tools, with a summary that differs on each call (as a model's does). */
  function modelLikeTools(worker: string): ContextTools {
    const offline = createOfflineTools();
    let calls = 0;
    return {
      kind: 'model-like',
      summarize: async (entries, options) =>
        `${await offline.summarize(entries, options)}\n(${worker}, call ${++calls})`,
      extractFacts: (entries, options) => offline.extractFacts(entries, options),
    };
  }

  for (const driver of drivers) {
    it(`${driver.name}: two workers compacting at once end on the plan stored first`, {
      ...skipFor(driver.missing),
      timeout: 120_000,
    }, async () => {
      const open = await driver.open();
      const id = `${CONVERSATION}-race`;
      const [a, b] = [
        new ContextManager({
          ...OPTIONS,
          store: await open(),
          conversationId: id,
          tools: modelLikeTools('a'),
        }),
        new ContextManager({
          ...OPTIONS,
          store: await open(),
          conversationId: id,
          tools: modelLikeTools('b'),
        }),
      ];
      const turns = turnsOf(longSessionMessages(400, 'openai', 33));
      let compactions = 0;
      for (const m of [a, b])
        m.on('context:post_compact', () => {
          compactions++;
        });
      try {
        for (let t = 0; t < turns.length; t++) {
          await a.sync();
          await a.addMessages(turns[t]!);
          await b.sync();
          // Both serve the same turn at once: where a compaction is due, both make a plan (their
          // summaries differ), and the one that stores second gives way to the first.
          await Promise.all([a.getMessagesForRequest(), b.getMessagesForRequest()]);
          const [againA, againB] = [await a.getMessagesForRequest(), await b.getMessagesForRequest()];
          expect(JSON.stringify(againA), `turn ${t}: the next views agree`).toBe(JSON.stringify(againB));
        }
        expect(compactions).toBeGreaterThan(4);
      } finally {
        await a.close();
        await b.close();
      }
    });
  }
});
