/**
 * One round trip per steady turn on Redis and Postgres (issue 24 item 4): a request reads
 * nothing of its own while the store's generation notifications are live (the append is the
 * turn's one round trip); a change another writer makes is reported by the store, and the next
 * request reads the generation again and reloads. Round trips are counted on the driver's
 * client (every command sent), not on the store's methods.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { ContextManager } from '../../src/manager.js';
import type { ConversationStore } from '../../src/stores/types.js';
import { skipFor } from '../support/requirements.js';
import { sharedDrivers } from './fixtures/drivers.js';
import { openSpec } from './fixtures/open-store.js';

const ID = 'round trips';
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

/** Counts the store's method calls (each at least one round trip), `watch` aside. */
function counted(store: ConversationStore): { store: ConversationStore; calls: string[] } {
  const calls: string[] = [];
  const proxy = new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (key !== 'watch' && key !== 'close') calls.push(String(key));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls };
}

/** Waits until `check` holds (a notification arrives shortly after the change commits). */
async function eventually(check: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Adds a message and makes two requests, the second once the generation watch is up. */
async function warmUp(ctx: ContextManager, text: string): Promise<void> {
  await ctx.addMessage({ role: 'user', content: text });
  await ctx.getMessagesForRequest();
  // The watch comes up, and the first request after it reads the generation once.
  await new Promise((resolve) => setTimeout(resolve, 200));
  await ctx.getMessagesForRequest();
}

const drivers = sharedDrivers(cleanups, [ID]).filter((d) => d.name === 'redis' || d.name === 'postgres');

describe.each(drivers)('$name: round trips of a steady turn', ({ missing: reason, spec: makeSpec }) => {
  it(
    'a request makes none of its own once the generation is watched; an append is one',
    skipFor(reason),
    async () => {
      const spec = await makeSpec();
      const { store, calls } = counted(await openSpec(spec));
      const ctx = new ContextManager({ store, conversationId: ID, model: 'gpt-4o' });
      try {
        await warmUp(ctx, 'hello');
        for (let i = 0; i < 5; i++) {
          calls.length = 0;
          await ctx.addMessage({ role: 'user', content: `turn ${i}` });
          await ctx.getMessagesForRequest();
          expect(calls).toEqual(['append']);
        }
      } finally {
        await ctx.close();
      }
    },
  );

  it('a replace by another writer is reported, and the next request reads it', skipFor(reason), async () => {
    const spec = await makeSpec();
    const raw = await openSpec(spec);
    const { store, calls } = counted(raw);
    const other = await openSpec(spec);
    const ctx = new ContextManager({ store, conversationId: ID, model: 'gpt-4o' });
    try {
      await warmUp(ctx, 'old');
      let reported = 0;
      // Watched on the manager's store: its notifications reach the manager's watch at once.
      const watch = raw.watch?.(ID, () => {
        reported++;
      });
      await eventually(() => watch?.live === true);
      reported = 0;
      await other.replace(ID, [
        { message: { role: 'user', content: 'new' }, metadata: { timestamp: '2025-01-02T03:04:05.678Z' } },
      ]);
      await eventually(() => reported > 0);
      watch?.close();
      calls.length = 0;
      const view = await ctx.getMessagesForRequest();
      expect(view).toEqual([{ role: 'user', content: 'new' }]);
      expect(calls[0]).toBe('epoch');
      // And then none again.
      calls.length = 0;
      await ctx.getMessagesForRequest();
      expect(calls).toEqual([]);
    } finally {
      await ctx.close();
      await other.close();
    }
  });
});
