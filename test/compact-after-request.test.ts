/**
 * `compactAfterRequest` (issue 32: a compaction reads the history off the request path): a request
 * that passes the trigger sends its view as it is while it fits the budget, and the compaction runs
 * right after it, in the manager's queue; the next request sends the compacted view. A worker that
 * serves from the stored view record then never reads the whole history on a request's path, and
 * its views are byte for byte those of a long-lived manager with the same option.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CompactionReceipt } from '../src/events.js';
import { ContextGuard } from '../src/guard/guard.js';
import { WholeHistoryNeeded } from '../src/guard/guard-types.js';
import { ContextManager } from '../src/manager.js';
import type { MessageFormat } from '../src/messages/types.js';
import type { ContextManagerOptions } from '../src/options.js';
import { MemoryStore } from '../src/stores/memory.js';
import { longSessionMessages } from './support/arbitraries.js';
import { keepOpen } from './support/workers.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);
const MODEL: Record<string, string> = { openai: 'gpt-4o', anthropic: 'claude-sonnet-4-5' };
const clock = () => new Date(Date.UTC(2026, 10, 30));

type Outcome = { view: string } | { error: string };

async function viewOf(ctx: ContextManager, budget: number): Promise<Outcome> {
  try {
    return { view: JSON.stringify(await ctx.getMessagesForRequest({ tokenBudget: budget })) };
  } catch (err) {
    return { error: `${(err as Error).name}: ${(err as Error).message}` };
  }
}

/**
 * Counts, from now on, the served requests that gave way to a load of the whole history for a
 * compaction the view could go without (the guard's `WholeHistoryNeeded` for a compaction other
 * than one past the budget). A served request also loads for reasons of its own (a tool id its
 * record's filter may hold, say): those are not counted.
 */
function compactionLoads(): { count: () => number } {
  let count = 0;
  const fit = ContextGuard.prototype.fit;
  vi.spyOn(ContextGuard.prototype, 'fit').mockImplementation(async function (
    this: ContextGuard,
    ...args: Parameters<ContextGuard['fit']>
  ) {
    try {
      return await fit.apply(this, args);
    } catch (err) {
      if (
        err instanceof WholeHistoryNeeded &&
        err.reason.startsWith('compaction (') &&
        !err.reason.includes('over_budget')
      )
        count++;
      throw err;
    }
  });
  return { count: () => count };
}

/**
 * `longSessionMessages(length, format, seed)` with a request after every message, on one manager
 * kept all along and on a new worker per message (its own store), both with `compactAfterRequest`.
 * Expects the same view (or refusal) at every step. Resolves with the compactions the long-lived
 * manager made, the worker requests whose compaction was put off, and the compactions made on a
 * worker request's path for any reason but a view past the budget.
 */
async function longLivedAgainstWorkers(
  format: MessageFormat,
  seed: number,
  length: number,
  budget: number,
  more: Partial<ContextManagerOptions> = {},
): Promise<{ compactions: number; deferred: number; onPath: number }> {
  const messages = longSessionMessages(length, format, seed);
  const options: ContextManagerOptions = {
    model: MODEL[format]!,
    conversationId: 'c',
    now: clock,
    compactAfterRequest: true,
    ...more,
  };
  const kept = new ContextManager({ ...options, store: keepOpen(new MemoryStore()) });
  const workerStore = keepOpen(new MemoryStore());
  const run = { compactions: 0, deferred: 0, onPath: 0 };
  kept.on('context:post_compact', () => {
    run.compactions++;
  });
  try {
    for (const message of messages) {
      const worker = new ContextManager({ ...options, store: workerStore });
      let inRequest = false;
      let after = false;
      worker.on('context:post_compact', (e) => {
        if (inRequest && e.receipt.reason !== 'over_budget') run.onPath++;
        if (!inRequest) after = true;
      });
      let fresh: Outcome;
      try {
        await worker.addMessage(message);
        inRequest = true;
        fresh = await viewOf(worker, budget);
        inRequest = false;
      } finally {
        // Waits for the compaction the request put off.
        await worker.close();
      }
      if (after) run.deferred++;
      await kept.addMessage(message);
      expect(fresh).toEqual(await viewOf(kept, budget));
    }
  } finally {
    await kept.close();
  }
  return run;
}

describe('compactAfterRequest', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('sends the view that passes the trigger as it is, within the budget, and the next one compacted', async () => {
    const messages = longSessionMessages(120, 'openai', 3);
    const budget = 4_000;
    const ctx = new ContextManager({ model: 'gpt-4o', compactAfterRequest: true });
    const plain = new ContextManager({ model: 'gpt-4o' });
    const receipts: CompactionReceipt[] = [];
    const order: string[] = [];
    ctx.on('context:post_compact', (e) => {
      receipts.push(e.receipt);
      order.push('compact');
    });
    const warnings: string[] = [];
    ctx.on('context:warn', (w) => warnings.push(w.code));
    const plainWarnings: string[] = [];
    plain.on('context:warn', (w) => plainWarnings.push(w.code));
    let deferred = 0;
    for (const message of messages) {
      await ctx.addMessage(message);
      await plain.addMessage(message);
      const compactedBefore = receipts.length;
      const view = await ctx.getMessagesForRequest({ tokenBudget: budget });
      order.push('view');
      const usage = ctx.usage();
      // Every view fits its budget; a compaction never happens inside the request.
      expect(usage.tokens).toBeLessThanOrEqual(budget);
      expect(receipts.length).toBe(compactedBefore);
      expect(view.length).toBeGreaterThan(0);
      if (usage.tokens > usage.trigger) {
        deferred++;
        // The compaction runs right after: the next call waits for it, and its view is compacted.
        const next = await ctx.getMessagesForRequest({ tokenBudget: budget });
        expect(receipts.length).toBe(compactedBefore + 1);
        expect(ctx.usage().tokens).toBeLessThan(usage.tokens);
        // A compaction without the option sends the same view (same plan, same history).
        const compacted = await plain.getMessagesForRequest({ tokenBudget: budget });
        expect(JSON.stringify(next)).toBe(JSON.stringify(compacted));
      } else await plain.getMessagesForRequest({ tokenBudget: budget });
    }
    expect(deferred).toBeGreaterThan(2);
    // A view past the trigger that waits for its compaction is no `usage_high` news: the warning
    // fires as often as without the option (once, on the way up to the first trigger).
    const high = (codes: string[]) => codes.filter((w) => w === 'usage_high').length;
    expect(high(warnings)).toBe(high(plainWarnings));
    expect(high(warnings)).toBe(1);
    await ctx.close();
    await plain.close();
  });

  it('still compacts before sending a view that would pass the budget', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o', compactAfterRequest: true });
    const receipts: CompactionReceipt[] = [];
    ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
    for (const message of longSessionMessages(40, 'openai', 5)) await ctx.addMessage(message);
    const whole = await ctx.getTokenCount();
    const budget = Math.floor(whole / 2);
    await ctx.getMessagesForRequest({ tokenBudget: budget });
    expect(receipts).toHaveLength(1);
    expect(receipts[0]!.reason).toBe('over_budget');
    expect(ctx.usage().tokens).toBeLessThanOrEqual(budget);
    await ctx.close();
  });

  it('a compaction that fails after the request (the store down) is a warning; the next request past the trigger tries again', async () => {
    let down = false;
    const memory = new MemoryStore();
    // The store refuses every write of the metadata while it is down: the plan cannot be kept.
    const store = new Proxy(memory, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key, target);
        if (typeof value !== 'function') return value;
        if ((key === 'setMeta' || key === 'updateMeta') && down)
          return async () => {
            throw new Error('connection refused');
          };
        return value.bind(target);
      },
    });
    const ctx = new ContextManager({
      model: 'gpt-4o',
      store,
      conversationId: 'c',
      compactAfterRequest: true,
    });
    const warnings: string[] = [];
    ctx.on('context:warn', (w) => warnings.push(w.code));
    const receipts: CompactionReceipt[] = [];
    ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
    const budget = 4_000;
    const messages = longSessionMessages(120, 'openai', 3);
    let i = 0;
    // Up to the first request past the trigger, the store down from there on.
    for (; i < messages.length; i++) {
      await ctx.addMessage(messages[i]!);
      await ctx.getMessagesForRequest({ tokenBudget: budget });
      if (ctx.usage().tokens > ctx.usage().trigger) break;
    }
    expect(i).toBeLessThan(messages.length);
    down = true;
    // The compaction put off runs (and fails) before this call is answered: the same view again.
    const again = await ctx.getMessagesForRequest({ tokenBudget: budget });
    expect(warnings).toContain('compaction_failed');
    expect(receipts).toHaveLength(0);
    expect(ctx.usage().tokens).toBeGreaterThan(ctx.usage().trigger);
    expect(again.length).toBeGreaterThan(0);
    down = false;
    // The request just made put it off again: after it, it succeeds.
    await ctx.getMessagesForRequest({ tokenBudget: budget });
    expect(receipts).toHaveLength(1);
    expect(ctx.usage().tokens).toBeLessThan(ctx.usage().trigger);
    await ctx.close();
  });

  it('does not put off a compaction under a strategy function of yours: its decline refuses the request it was asked for', async () => {
    const ctx = new ContextManager({
      model: 'gpt-4o',
      compactAfterRequest: true,
      strategy: () => ({ decline: 'no compaction today' }),
    });
    const budget = 4_000;
    let declined: unknown;
    let served = 0;
    for (const message of longSessionMessages(120, 'openai', 3)) {
      await ctx.addMessage(message);
      served++;
      try {
        await ctx.getMessagesForRequest({ tokenBudget: budget });
      } catch (err) {
        declined = err;
        break;
      }
      // Never a view past the trigger: the request that passes it is the one declined.
      expect(ctx.usage().tokens).toBeLessThanOrEqual(ctx.usage().trigger);
    }
    expect((declined as Error).name).toBe('ContextDeclinedError');
    expect(served).toBeGreaterThan(10);
    await ctx.close();
  });

  it('does not put off a compaction with compactionNotice: the notice goes in the view the compaction makes', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o', compactAfterRequest: true, compactionNotice: true });
    let inRequest = false;
    const onPath: boolean[] = [];
    ctx.on('context:post_compact', () => onPath.push(inRequest));
    let noticed = 0;
    for (const message of longSessionMessages(120, 'openai', 3)) {
      await ctx.addMessage(message);
      const compactions = onPath.length;
      inRequest = true;
      const view = JSON.stringify(await ctx.getMessagesForRequest({ tokenBudget: 4_000 }));
      inRequest = false;
      if (onPath.length > compactions && view.includes('to fit the context window')) noticed++;
    }
    expect(onPath.length).toBeGreaterThan(2);
    expect(onPath.every((made) => made)).toBe(true);
    expect(noticed).toBe(onPath.length);
    await ctx.close();
  });

  it('serves workers that never keep a conversation the views a long-lived manager serves; none compacts on a request path, nor reads the whole history for a compaction', async () => {
    const total = { compactions: 0, deferred: 0, onPath: 0 };
    const needed = compactionLoads();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<MessageFormat>('openai', 'anthropic'),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 30, max: 90 }),
        fc.integer({ min: 1_500, max: 5_000 }),
        fc.constantFrom<'summarize' | 'layered'>('summarize', 'layered'),
        fc.boolean(),
        async (format, seed, length, budget, strategy, notices) => {
          const run = await longLivedAgainstWorkers(format, seed, length, budget, {
            strategy,
            ...(notices ? { budgetNotice: [0.5, 0.75, 0.9] } : {}),
          });
          for (const key of Object.keys(total) as Array<keyof typeof total>) total[key] += run[key];
        },
      ),
      { numRuns: Math.max(10, RUNS / 2) },
    );
    expect(total.compactions).toBeGreaterThan(0);
    expect(total.deferred).toBeGreaterThan(0);
    expect(total.onPath).toBe(0);
    expect(needed.count()).toBe(0);
    // Without the option, the same workers load the whole history for their compactions (what
    // the count above is able to see).
    const run = await longLivedAgainstWorkers('openai', 8, 80, 1_500, { compactAfterRequest: false });
    expect(run.deferred).toBe(0);
    expect(needed.count()).toBeGreaterThan(0);
  }, 600_000);
});
