/**
 * Issue 31 item 1: `clear()` must never be undone by a writer already in flight. A clear used to
 * remove the conversation's generation; an append that named the old generation, delayed past
 * the clear, was accepted and wrote that generation back, so a third manager still holding the
 * cleared history never noticed (it kept sending the cleared messages, even after `sync()`).
 *
 * Every store (memory, file, SQLite, Redis, Postgres), each manager on its own store instance as
 * another process would have: one deterministic run with one delayed append, and a fast-check
 * property over random interleavings of concurrent `addMessage`, `clear`, `setMessages` and
 * `sync()` with random delays on every store call: afterwards every manager holds exactly what
 * the store holds.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ContextManager } from '../../src/manager.js';
import type { Message } from '../../src/messages/types.js';
import { MemoryStore } from '../../src/stores/memory.js';
import type { ConversationStore } from '../../src/stores/types.js';
import { skipFor } from '../support/requirements.js';
import { sharedDrivers } from './fixtures/drivers.js';
import { openSpec } from './fixtures/open-store.js';

const CONVERSATION = 'clear in flight';
const CARD = 'my card is 4111 1111 1111 1111';

const user = (content: string): Message => ({ role: 'user', content });
const texts = (messages: readonly Message[]) => messages.map((m) => String(m.content));

/** The store's async calls a wrapper may hold back. */
const CALLS = new Set(['append', 'read', 'head', 'epoch', 'replace', 'pop', 'delete', 'getMeta', 'setMeta']);

/**
 * `store` with each async call first awaiting `before(name)`; the rest (kind, search, watch) as
 * it is. Calls go to the store itself (its private fields need it as `this`).
 */
function held(
  store: ConversationStore,
  before: (call: string) => Promise<void>,
  keepOpen = false,
): ConversationStore {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'close' && keepOpen) return async () => undefined;
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof prop !== 'string' || typeof value !== 'function') return value;
      if (!CALLS.has(prop)) return (value as (...a: unknown[]) => unknown).bind(target);
      return async (...args: unknown[]) => {
        await before(prop);
        return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
      };
    },
  });
}

interface Opened {
  /** A new store instance over the same data, as another process would open it. */
  open: () => Promise<ConversationStore>;
}

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const drivers: Array<{ name: string; missing?: string | undefined; place: () => Promise<Opened> }> = [
  {
    name: 'memory',
    place: async () => {
      const shared = new MemoryStore();
      // One store shared by the managers; closing one manager's view must not close it for the rest.
      return { open: async () => held(shared, async () => undefined, true) };
    },
  },
  ...sharedDrivers(cleanups, [CONVERSATION]).map((driver) => ({
    name: driver.name,
    missing: driver.missing,
    place: async (): Promise<Opened> => {
      const spec = await driver.spec();
      return { open: () => openSpec(spec) };
    },
  })),
];

async function storedTexts(store: ConversationStore): Promise<string[]> {
  return (await store.read(CONVERSATION)).map((e) => String(e.message.content));
}

for (const driver of drivers) {
  describe(`${driver.name}: clear() with a writer in flight`, skipFor(driver.missing), () => {
    it('one append delayed past a clear is refused, re-applied in the new generation, and a third manager sees the clear', async () => {
      const place = await driver.place();
      const stores: ConversationStore[] = [];
      const open = async () => {
        const store = await place.open();
        stores.push(store);
        return store;
      };
      // Writer A's appends wait at a gate once it is armed: A has read the generation already.
      let armed = false;
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let reachedGate: () => void = () => undefined;
      const atGate = new Promise<void>((resolve) => {
        reachedGate = resolve;
      });
      const writerStore = held(await open(), async (call) => {
        if (call !== 'append' || !armed) return;
        armed = false;
        reachedGate();
        await gate;
      });
      const writer = new ContextManager({ store: writerStore, conversationId: CONVERSATION });
      const third = new ContextManager({ store: await open(), conversationId: CONVERSATION });
      const thirdWarnings: string[] = [];
      third.on('context:warn', (w) => thirdWarnings.push(w.code));
      try {
        await writer.addMessage(user('task: pay the invoice'));
        await third.addMessage(user(CARD));
        await writer.sync();
        expect(texts(await third.getMessages())).toEqual(['task: pay the invoice', CARD]);

        armed = true;
        const late = writer.addMessage(user('late reply'));
        await atGate;
        const clearer = new ContextManager({ store: await open(), conversationId: CONVERSATION });
        await clearer.getMessages();
        await clearer.clear();
        release();
        await late;

        const check = await open();
        // The late message went in the new generation, alone: nothing of the cleared history is back.
        expect(await storedTexts(check)).toEqual(['late reply']);
        expect(texts(await writer.getMessages())).toEqual(['late reply']);
        await clearer.addMessage(user('after the clear'));
        expect(await storedTexts(check)).toEqual(['late reply', 'after the clear']);

        // The third manager still holds the cleared history: sync() and its next request see the clear.
        await third.sync();
        expect(texts(await third.getMessages())).toEqual(await storedTexts(check));
        expect(thirdWarnings).toContain('history_replaced');
        const view = texts(await third.getMessagesForRequest());
        expect(view.join('\n')).not.toContain('4111');
        await third.addMessage(user('third again'));
        expect(await storedTexts(check)).toEqual(['late reply', 'after the clear', 'third again']);
        await clearer.close();
      } finally {
        await writer.close();
        await third.close();
        for (const store of stores) await store.close().catch(() => undefined);
      }
    });

    it('property: after any interleaving of concurrent adds, clears, setMessages and syncs, every manager holds what the store holds', async () => {
      type Op = { who: number; kind: 'add' | 'clear' | 'sync' } | { who: number; kind: 'set'; keep: number };
      const op: fc.Arbitrary<Op> = fc.oneof(
        { weight: 6, arbitrary: fc.record({ who: fc.nat({ max: 2 }), kind: fc.constant('add' as const) }) },
        { weight: 2, arbitrary: fc.record({ who: fc.nat({ max: 2 }), kind: fc.constant('clear' as const) }) },
        { weight: 2, arbitrary: fc.record({ who: fc.nat({ max: 2 }), kind: fc.constant('sync' as const) }) },
        {
          weight: 1,
          arbitrary: fc.record({
            who: fc.nat({ max: 2 }),
            kind: fc.constant('set' as const),
            keep: fc.nat({ max: 3 }),
          }),
        },
      );
      const runs = driver.name === 'memory' ? 60 : 12;
      await fc.assert(
        fc.asyncProperty(
          // Rounds of operations started together; each store call first waits 0-2 ms.
          fc.array(fc.array(op, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }),
          fc.array(fc.nat({ max: 2 }), { minLength: 1, maxLength: 32 }),
          async (rounds, delays) => {
            const place = await driver.place();
            let tick = 0;
            const pause = async () => {
              const ms = delays[tick++ % delays.length] as number;
              await sleep(ms);
            };
            const stores: ConversationStore[] = [];
            const managers: ContextManager[] = [];
            for (let i = 0; i < 3; i++) {
              const store = await place.open();
              stores.push(store);
              managers.push(
                new ContextManager({
                  store: held(store, pause),
                  conversationId: CONVERSATION,
                  maxTokens: 1_000_000,
                }),
              );
            }
            let n = 0;
            try {
              for (const round of rounds) {
                await Promise.all(
                  round.map(async (o) => {
                    const ctx = managers[o.who] as ContextManager;
                    if (o.kind === 'add') await ctx.addMessage(user(`m${n++}`));
                    else if (o.kind === 'clear') await ctx.clear();
                    else if (o.kind === 'sync') await ctx.sync();
                    else if (o.kind === 'set') {
                      const messages = Array.from({ length: o.keep }, () => user(`r${n++}`));
                      await ctx.setMessages(messages, { replace: true });
                    }
                  }),
                );
              }
              const check = stores[0] as ConversationStore;
              const now = await storedTexts(check);
              expect(new Set(now).size).toBe(now.length);
              for (const ctx of managers) {
                await ctx.sync();
                expect(texts(await ctx.getMessages())).toEqual(now);
              }
            } finally {
              for (const ctx of managers) await ctx.close();
              for (const store of stores) await store.close().catch(() => undefined);
            }
          },
        ),
        { numRuns: runs },
      );
    }, 120_000);
  });
}
