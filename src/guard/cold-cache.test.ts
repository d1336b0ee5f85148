import { describe, expect, it } from 'vitest';
import type { CompactionReceipt } from '../events.js';
import { ContextManager } from '../manager.js';
import { validateRequest } from '../messages/validate-request.js';

const BUDGET = 10_000;

/** A conversation grown turn by turn (30 s apart) until its view is at 77–90% of the budget. */
async function nearTrigger(idleMinutes: number, compactWhenCacheExpired = true) {
  let clock = Date.parse('2026-03-01T09:00:00Z');
  const ctx = new ContextManager({
    model: 'claude-sonnet-4-5',
    now: () => new Date(clock),
    compactWhenCacheExpired,
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
