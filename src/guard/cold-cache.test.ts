import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { longSessionMessages } from '../../test/support/arbitraries.js';
import type { CompactionReceipt } from '../events.js';
import { ContextManager } from '../manager.js';
import { validateRequest } from '../wire/validate-request.js';

const BUDGET = 10_000;

/** A conversation grown turn by turn (30 s apart) until its view is at 77–90% of the budget. */
async function nearTrigger(idleMinutes: number, compactWhenCacheExpired = true) {
  let clock = Date.parse('2026-03-01T09:00:00Z');
  const ctx = new ContextManager({
    model: 'claude-sonnet-4-5',
    now: () => new Date(clock),
    compactWhenCacheExpired,
    // Marks sent, so the prompt cache is used at all (issue 34: no breakpoint, no cache).
    cacheBreakpoints: 'auto',
  });
  const receipts: CompactionReceipt[] = [];
  ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
  await ctx.addMessage({ role: 'system', content: 'You are a support agent.' });
  let turn = 0;
  while (ctx.usage().pct < 0.77 || turn === 0) {
    clock += 30_000;
    await ctx.addMessage({ role: 'user', content: `question ${turn}: ${'about the order '.repeat(40)}` });
    await ctx.getMessagesForRequest({ tokenBudget: BUDGET });
    await ctx.addMessage({ role: 'assistant', content: `answer ${turn}` });
    turn++;
  }
  expect(receipts).toHaveLength(0);
  expect(ctx.usage().pct).toBeLessThan(0.9);
  clock += idleMinutes * 60_000;
  await ctx.addMessage({ role: 'user', content: 'back again' });
  const view = await ctx.getMessagesForRequest({ tokenBudget: BUDGET });
  return { ctx, receipts, view };
}

describe('a compaction due soon runs when the prompt cache has expired anyway', () => {
  it('after an idle spell longer than the TTL', async () => {
    const { ctx, receipts, view } = await nearTrigger(10);
    expect(receipts.map((r) => r.reason)).toEqual(['cache_expired']);
    expect(ctx.usage().pct).toBeLessThanOrEqual(0.7);
    expect(validateRequest(view, 'anthropic').problems).toEqual([]);
    expect(ctx.usage().cost!.last.cacheExpired).toBe(true);
    // Nothing stored is lost: the whole history is still there.
    expect((await ctx.getEntries()).at(-1)!.message).toEqual({ role: 'user', content: 'back again' });
  });

  it('not when turned off', async () => {
    const { receipts, ctx } = await nearTrigger(10, false);
    expect(receipts).toHaveLength(0);
    expect(ctx.usage().cost!.last.cacheExpired).toBe(true);
  });

  it('not while the cache is warm', async () => {
    const { receipts, ctx } = await nearTrigger(1);
    expect(receipts).toHaveLength(0);
    expect(ctx.usage().cost!.last.cachedTokens).toBeGreaterThan(0);
  });
});

describe('invariants with idle spells (property)', () => {
  it('every view is valid and within budget, and nothing stored changes', async () => {
    let early = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1000 }),
        fc.array(fc.integer({ min: 0, max: 12 }), { minLength: 60, maxLength: 60 }),
        fc.constantFrom('openai' as const, 'anthropic' as const),
        async (seed, gaps, format) => {
          let clock = Date.parse('2026-05-01T08:00:00Z');
          const ctx = new ContextManager({
            model: format === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4o',
            now: () => new Date(clock),
          });
          ctx.on('context:post_compact', (e) => {
            if (e.receipt.reason === 'cache_expired') early++;
          });
          const messages = longSessionMessages(240, format, seed);
          const budget = 8_000;
          for (let i = 0; i < messages.length; i++) {
            // Minutes before each message: mostly none, sometimes past the cache's TTL.
            clock += (gaps[i % gaps.length]! > 9 ? gaps[i % gaps.length]! : 0) * 60_000 + 5_000;
            await ctx.addMessage(messages[i]);
            if (messages[i + 1]?.role !== 'assistant') continue;
            try {
              const view = await ctx.getMessagesForRequest({ tokenBudget: budget });
              expect(validateRequest(view, format).problems).toEqual([]);
              expect(ctx.usage().tokens).toBeLessThanOrEqual(budget);
            } catch (error) {
              // A turn whose must-keep part is over the budget is declined, never sent.
              expect((error as Error).name).toBe('ContextOverflowError');
            }
          }
          const stored = (await ctx.getEntries()).map((e) => e.message);
          expect(stored).toEqual(messages);
        },
      ),
      { numRuns: 8 },
    );
    // The policy did act in these sessions.
    expect(early).toBeGreaterThan(0);
  });
});
