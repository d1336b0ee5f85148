/**
 * `addMessages` is all or nothing (issue 31 item 6): a batch with a message `addMessage` refuses
 * stores none of it, on a store or not, and the batch without that message stores each once.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conversationArb } from '../test/support/arbitraries.js';
import { InvalidMessageError } from './errors.js';
import { ContextManager } from './manager.js';
import { MemoryStore } from './stores/memory.js';

const REFUSED = [
  { role: 'assistant', content: 42 },
  { role: 'tool', content: 'no call id' },
  { role: 'nobody', content: 'hi' },
  'not a message',
] as const;

describe('ContextManager.addMessages', () => {
  it('property: a batch with one refused message stores nothing; without it, each message once', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb({ format: 'openai', images: false }),
        fc.nat(),
        fc.constantFrom(...REFUSED),
        fc.boolean(),
        async (conv, at, bad, stored) => {
          const store = stored ? new MemoryStore() : null;
          const ctx = new ContextManager({
            model: 'gpt-4o',
            ...(store ? { store, conversationId: 'c' } : {}),
          });
          const split = Math.min(conv.messages.length - 1, 1 + (at % conv.messages.length));
          const head = conv.messages.slice(0, split);
          const batch = conv.messages.slice(split);
          await ctx.addMessages(head);
          const k = at % (batch.length + 1);
          const tampered = [...batch.slice(0, k), bad, ...batch.slice(k)];
          await expect(ctx.addMessages(tampered)).rejects.toBeInstanceOf(InvalidMessageError);
          expect(await ctx.getMessages()).toEqual(head);
          if (store) expect(await store.read('c')).toHaveLength(head.length);
          await ctx.addMessages(batch);
          expect(await ctx.getMessages()).toEqual(conv.messages);
          if (store) expect((await store.read('c')).map((e) => e.message)).toEqual(conv.messages);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('refuses a batch that is not an array with a typed error', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await expect(ctx.addMessages('hello' as never)).rejects.toBeInstanceOf(InvalidMessageError);
  });
});
