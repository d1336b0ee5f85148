/**
 * Property (fast-check): any interleaving of two managers on one conversation (appends, replaces,
 * clears, syncs, requests) never throws, never stores a message twice, and after each append,
 * sync or request of a manager, that manager holds exactly what the store holds: no manager
 * diverges from the store, whatever the other did.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContextManager } from '../../src/manager.js';
import type { Message } from '../../src/messages/types.js';
import { MemoryStore } from '../../src/stores/memory.js';
import { openSqliteStore } from '../../src/stores/sqlite.js';
import type { ConversationStore } from '../../src/stores/types.js';

type Op =
  | { who: 0 | 1; kind: 'add' }
  | { who: 0 | 1; kind: 'replace'; keep: number }
  | { who: 0 | 1; kind: 'clear' | 'sync' | 'request' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ who: fc.constantFrom(0 as const, 1 as const), kind: fc.constant('add' as const) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      who: fc.constantFrom(0 as const, 1 as const),
      kind: fc.constant('replace' as const),
      keep: fc.nat({ max: 6 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      who: fc.constantFrom(0 as const, 1 as const),
      kind: fc.constantFrom('clear' as const, 'sync' as const, 'request' as const),
    }),
  },
);

const CONVERSATION = 'property';

async function stored(store: ConversationStore): Promise<string[]> {
  return (await store.read(CONVERSATION)).map((e) => String(e.message.content));
}

async function run(store: ConversationStore, ops: readonly Op[]): Promise<void> {
  const managers = [0, 1].map(
    () => new ContextManager({ store, conversationId: CONVERSATION, maxTokens: 1_000_000 }),
  );
  let n = 0;
  for (const op of ops) {
    const ctx = managers[op.who] as ContextManager;
    const held = async () => (await ctx.getMessages()).map((m) => String(m.content));
    switch (op.kind) {
      case 'add':
        await ctx.addMessage({ role: 'user', content: `m${n++}` });
        expect(await held()).toEqual(await stored(store));
        break;
      case 'replace': {
        const messages: Message[] = Array.from({ length: op.keep }, () => ({
          role: 'user',
          content: `r${n++}`,
        }));
        await ctx.setMessages(messages, { replace: true });
        expect(await held()).toEqual(await stored(store));
        break;
      }
      case 'clear':
        await ctx.clear();
        expect(await stored(store)).toEqual([]);
        break;
      case 'sync':
        await ctx.sync();
        expect(await held()).toEqual(await stored(store));
        break;
      case 'request': {
        // A request takes in a replacement, not a plain tail: it must never show a replaced history.
        const view = (await ctx.getMessagesForRequest()).map((m) => String(m.content));
        const now = await stored(store);
        for (const text of view) expect(now).toContain(text);
        break;
      }
    }
    const all = await stored(store);
    expect(new Set(all).size).toBe(all.length);
  }
  for (const m of managers) await m.close();
}

describe('two managers on one conversation, any interleaving', () => {
  it('memory store: no error, no duplicate, each manager holds what the store holds', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), (ops) =>
        run(new MemoryStore(), ops),
      ),
      { numRuns: 150 },
    );
  });

  it('SQLite store: the same', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
        const store = await openSqliteStore(':memory:');
        try {
          await run(store, ops);
        } finally {
          await store.close();
        }
      }),
      { numRuns: 40 },
    );
  });
});
