/**
 * The `usage_high` warning fires once when the view passes `warnAt` and again only after usage
 * truly fell back (src/meter/usage-warning.ts). Its state is stored state (metadata field
 * `usageWarning`, issue 32): a worker that never saw the conversation (a new manager each turn,
 * served from the stored view record or loading the history) warns when a long-lived manager
 * would. Before, each such worker started from a warning that had not fired, and warned at every
 * turn the view stayed past `warnAt`, up to the trigger.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContextManager } from '../src/manager.js';
import { MemoryStore } from '../src/stores/memory.js';
import { keepOpen } from './support/workers.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 25);

/** The turns at which `usage_high` fired, on one manager or on a new one per turn. */
async function warnedAt(
  worker: 'long-lived' | 'served' | 'loaded',
  words: readonly number[],
  budget: number,
): Promise<number[]> {
  const store = keepOpen(new MemoryStore());
  const options = { model: 'gpt-4o', store, conversationId: 'c', storedView: worker !== 'loaded' };
  const kept = new ContextManager(options);
  await kept.addMessage({ role: 'system', content: 'You keep the project notes.' });
  const warned: number[] = [];
  let turn = 0;
  const listen = (ctx: ContextManager) =>
    ctx.on('context:warn', (w) => {
      if (w.code === 'usage_high') warned.push(turn);
    });
  listen(kept);
  for (const [t, n] of words.entries()) {
    turn = t;
    const ctx = worker === 'long-lived' ? kept : new ContextManager(options);
    if (ctx !== kept) listen(ctx);
    await ctx.addMessage({ role: 'user', content: `Note ${t}: ${'entry '.repeat(n)}` });
    await ctx.getMessagesForRequest({ tokenBudget: budget });
    await ctx.addMessage({ role: 'assistant', content: `Noted ${t}.` });
    if (ctx !== kept) await ctx.close();
  }
  await kept.close();
  return warned;
}

describe('the usage_high warning, whichever worker serves', () => {
  it('fires at the turns it fires on a long-lived manager, on a new manager each turn (served from the record or loaded)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 5, max: 40 }), { minLength: 100, maxLength: 100 }),
        fc.integer({ min: 2_500, max: 4_000 }),
        async (words, budget) => {
          const longLived = await warnedAt('long-lived', words, budget);
          // The views grow past warnAt by a few tokens a turn: the warning fires, once per crossing.
          expect(longLived.length).toBeGreaterThan(0);
          expect(await warnedAt('served', words, budget)).toEqual(longLived);
          expect(await warnedAt('loaded', words, budget)).toEqual(longLived);
        },
      ),
      { numRuns: Math.max(3, Math.floor(RUNS / 5)), endOnFailure: true },
    );
  }, 120_000);
});
