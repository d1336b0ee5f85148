/**
 * Identified messages (issue 33 item 1): `addMessage(message, { id })` stores a message once
 * however often it is added, whichever manager (process) added it first, on every store. A
 * retried add says it was already there; the same id with another message, a bad id or an
 * unknown option is refused, storing nothing.
 *
 * The crash-and-retry rounds: four writers, each on its own store instance, add identified
 * messages; an add's acknowledgement is lost after the store committed it (or the append fails
 * before it), as when a durable engine's worker dies between the two, and the step is retried by
 * a new manager (a new process) with the same id. Afterwards the store holds every message
 * exactly once: 0 duplicates, 0 losses.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, MessageIdConflictError } from '../../src/errors.js';
import { ContextManager } from '../../src/manager.js';
import type { Message } from '../../src/messages/types.js';
import { MemoryStore } from '../../src/stores/memory.js';
import type { ConversationStore } from '../../src/stores/types.js';
import { skipFor } from '../support/requirements.js';
import { sharedDrivers } from './fixtures/drivers.js';
import { openSpec } from './fixtures/open-store.js';

const CONVERSATION = 'identified';
const user = (content: string): Message => ({ role: 'user', content });

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A store that does not close: the memory store is shared by every "process" of a test. */
function unclosable(store: ConversationStore): ConversationStore {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'close') return async () => undefined;
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const drivers: Array<{
  name: string;
  missing?: string | undefined;
  place: () => Promise<() => Promise<ConversationStore>>;
}> = [
  {
    name: 'memory',
    place: async () => {
      const shared = new MemoryStore();
      return async () => unclosable(shared);
    },
  },
  ...sharedDrivers(cleanups, [CONVERSATION]).map((driver) => ({
    name: driver.name,
    missing: driver.missing,
    place: async () => {
      const spec = await driver.spec();
      return () => openSpec(spec);
    },
  })),
];

/** The store's messages by content, and how often each is there. */
async function tally(store: ConversationStore): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const e of await store.read(CONVERSATION)) {
    const text = String(e.message.content);
    counts.set(text, (counts.get(text) ?? 0) + 1);
  }
  return counts;
}

/** Lost acknowledgement: the append commits, then the caller hears of a failure. */
class LostAck extends Error {}

for (const driver of drivers) {
  describe(`${driver.name}: identified messages`, skipFor(driver.missing), () => {
    it('an id added twice, by two managers, is stored once; the second add says it was already there', async () => {
      const open = await driver.place();
      const a = new ContextManager({ store: await open(), conversationId: CONVERSATION });
      const b = new ContextManager({ store: await open(), conversationId: CONVERSATION });
      try {
        expect(await a.addMessage(user('task'), { id: 'u1' })).toEqual({
          seq: 0,
          id: 'u1',
          duplicate: false,
        });
        expect(await b.addMessage(user('plain'))).toEqual({ seq: 1, duplicate: false });
        // b holds u1 already (taken in with its append); a has not seen b's message yet.
        expect(await b.addMessage(user('task'), { id: 'u1' })).toEqual({ seq: 0, id: 'u1', duplicate: true });
        expect(await a.addMessage(user('reply'), { id: 'r1' })).toEqual({
          seq: 2,
          id: 'r1',
          duplicate: false,
        });
        const again = await b.addMessage(user('reply'), { id: 'r1' });
        expect(again).toEqual({ seq: 2, id: 'r1', duplicate: true });
        // b took in a's reply to answer: both hold the store's history.
        const stored = (await a.getMessages()).map((m) => m.content);
        expect(stored).toEqual(['task', 'plain', 'reply']);
        expect((await b.getMessages()).map((m) => m.content)).toEqual(stored);
        expect((await b.getEntries()).map((e) => e.id)).toEqual(['u1', undefined, 'r1']);
        // A new manager loads the ids with the history.
        const c = new ContextManager({ store: await open(), conversationId: CONVERSATION });
        expect(await c.addMessage(user('plain reply'), { id: 'r1' }).catch((e: unknown) => e)).toBeInstanceOf(
          MessageIdConflictError,
        );
        await c.close();
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('refuses another message under a stored id, a bad id and an unknown option, storing nothing', async () => {
      const open = await driver.place();
      const store = await open();
      const ctx = new ContextManager({ store, conversationId: CONVERSATION });
      try {
        await ctx.addMessage(
          { role: 'user', content: [{ type: 'text', text: 'pay 10 EUR' }] },
          { id: 'step-1' },
        );
        const conflict = await ctx
          .addMessage({ role: 'user', content: [{ type: 'text', text: 'pay 99 EUR' }] }, { id: 'step-1' })
          .catch((e: unknown) => e);
        expect(conflict).toBeInstanceOf(MessageIdConflictError);
        expect(conflict).toMatchObject({
          id: 'step-1',
          seq: 0,
          path: 'content[0].text',
          code: 'message_id_conflict',
        });
        expect((conflict as Error).message).toContain('"pay 10 EUR"');
        expect((conflict as Error).message).toContain('"pay 99 EUR"');
        for (const bad of ['', 'x'.repeat(257), 'nul\u0000', 'lone \udc00', 7, null]) {
          const error = await ctx.addMessage(user('x'), { id: bad as string }).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(InvalidArgumentError);
          expect((error as Error).message).toMatch(/^addMessage options\.id: /);
        }
        const typo = await ctx.addMessage(user('x'), { idd: 'a' } as never).catch((e: unknown) => e);
        expect(typo).toBeInstanceOf(InvalidArgumentError);
        expect((typo as Error).message).toMatch(/options\.idd: unknown option \(did you mean "id"\?\)/);
        expect((await store.read(CONVERSATION)).map((e) => e.id)).toEqual(['step-1']);
        expect(await ctx.getMessages()).toHaveLength(1);
      } finally {
        await ctx.close();
      }
    });

    it('0 duplicates and 0 losses over 1,000 crash-and-retry rounds, four writers at once', async () => {
      const open = await driver.place();
      const WRITERS = 4;
      const ROUNDS = 250;
      let crashes = 0;
      let retries = 0;
      let duplicates = 0;
      // A fixed pseudo-random sequence per writer (reproducible).
      const random = (seed: number) => () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
        return seed / 2_147_483_648;
      };
      const writer = async (w: number) => {
        const next = random(w + 1);
        let fail: 'after' | 'before' | null = null;
        const make = async () => {
          const inner = await open();
          const store = new Proxy(inner, {
            get(target, prop) {
              const value = Reflect.get(target, prop, target) as unknown;
              if (prop !== 'append' || typeof value !== 'function') {
                return typeof value === 'function'
                  ? (value as (...a: unknown[]) => unknown).bind(target)
                  : value;
              }
              return async (...args: unknown[]) => {
                const how = fail;
                fail = null;
                if (how === 'before') throw new LostAck('the worker died before the append');
                const seq = await (value as (...a: unknown[]) => Promise<number>).apply(target, args);
                if (how === 'after') throw new LostAck('the worker died after the commit');
                return seq;
              };
            },
          });
          return new ContextManager({ store, conversationId: CONVERSATION, maxTokens: 10_000_000 });
        };
        let ctx = await make();
        for (let round = 0; round < ROUNDS; round++) {
          const text = `w${w} step ${round}`;
          const roll = next();
          fail = roll < 0.3 ? 'after' : roll < 0.4 ? 'before' : null;
          for (;;) {
            try {
              const added = await ctx.addMessage(user(text), { id: `w${w}:${round}` });
              if (added.duplicate) duplicates++;
              break;
            } catch (error) {
              if (!(error instanceof LostAck)) throw error;
              crashes++;
              retries++;
              // The engine retries the step in a new process: a new manager over a new connection.
              await ctx.close().catch(() => undefined);
              ctx = await make();
            }
          }
        }
        await ctx.close();
      };
      await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
      const check = await open();
      try {
        const counts = await tally(check);
        const twice = [...counts].filter(([, n]) => n > 1);
        let missing = 0;
        for (let w = 0; w < WRITERS; w++)
          for (let round = 0; round < ROUNDS; round++) if (!counts.has(`w${w} step ${round}`)) missing++;
        console.log(
          `${driver.name}: ${WRITERS * ROUNDS} identified adds, ${crashes} lost acknowledgements retried (${retries} retries, ${duplicates} answered "already there"): ${twice.length} duplicates, ${missing} lost`,
        );
        expect(twice).toEqual([]);
        expect(missing).toBe(0);
        expect(counts.size).toBe(WRITERS * ROUNDS);
        expect(duplicates).toBeGreaterThan(0);
      } finally {
        await check.close();
      }
    }, 300_000);
  });
}

describe('identified messages without a store, and ephemeral ones', () => {
  it('are checked against the manager’s own history', async () => {
    const ctx = new ContextManager({});
    expect(await ctx.addMessage(user('a'), { id: 'a' })).toEqual({ seq: 0, id: 'a', duplicate: false });
    expect(await ctx.addMessage(user('a'), { id: 'a' })).toEqual({ seq: 0, id: 'a', duplicate: true });
    expect(await ctx.addMessage(user('note'), { id: 'n', ephemeral: true })).toEqual({
      seq: 1,
      id: 'n',
      duplicate: false,
    });
    expect(await ctx.addMessage(user('note'), { id: 'n', ephemeral: true })).toMatchObject({
      duplicate: true,
    });
    expect(await ctx.addMessage(user('b'), { id: 'a' }).catch((e: unknown) => e)).toBeInstanceOf(
      MessageIdConflictError,
    );
    expect((await ctx.getMessages()).map((m) => m.content)).toEqual(['a', 'note']);
  });
});
