/**
 * The budget notice (`budgetNotice`) tells each level once on the way up
 * (src/view/budget-notice.ts). The highest level told is stored state (metadata field
 * `budgetNoticed`, issue 32): a worker that never saw the conversation (a new manager each turn,
 * served from the stored view record or loading the history) sends the view a long-lived manager
 * sends, notice included. Before, each such worker started from no level told, and told the level
 * again at every turn the view stayed past it (45 of 90 views differed in a session here).
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContextManager } from '../src/manager.js';
import type { MessageFormat } from '../src/messages/types.js';
import { MemoryStore } from '../src/stores/memory.js';
import { longSessionMessages } from './support/arbitraries.js';
import { keepOpen } from './support/workers.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);
const MODEL: Record<string, string> = { openai: 'gpt-4o', anthropic: 'claude-sonnet-4-5' };
const LEVELS = [0.5, 0.75, 0.9];
const NOTICE = 'of the context budget is in use';

/** The views of a session, a request after every message, on one manager or on a new one per message. */
async function views(
  worker: 'long-lived' | 'served' | 'loaded',
  format: MessageFormat,
  seed: number,
  length: number,
  budget: number,
): Promise<string[]> {
  const store = keepOpen(new MemoryStore());
  const options = {
    model: MODEL[format]!,
    store,
    conversationId: 'c',
    budgetNotice: LEVELS,
    storedView: worker !== 'loaded',
    now: () => new Date(Date.UTC(2026, 10, 30)),
  };
  const kept = new ContextManager(options);
  const out: string[] = [];
  for (const message of longSessionMessages(length, format, seed)) {
    const ctx = worker === 'long-lived' ? kept : new ContextManager(options);
    await ctx.addMessage(message);
    out.push(JSON.stringify(await ctx.getMessagesForRequest({ tokenBudget: budget })));
    if (ctx !== kept) await ctx.close();
  }
  await kept.close();
  return out;
}

describe('the budget notice, whichever worker serves', () => {
  it('is in the views it is in on a long-lived manager, on a new manager each turn (served from the record or loaded)', async () => {
    let told = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<MessageFormat>('openai', 'anthropic'),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 40, max: 90 }),
        fc.integer({ min: 1_500, max: 4_000 }),
        async (format, seed, length, budget) => {
          const longLived = await views('long-lived', format, seed, length, budget);
          told += longLived.filter((v) => v.includes(NOTICE)).length;
          expect(await views('served', format, seed, length, budget)).toEqual(longLived);
          expect(await views('loaded', format, seed, length, budget)).toEqual(longLived);
        },
      ),
      { numRuns: Math.max(5, RUNS / 4) },
    );
    expect(told).toBeGreaterThan(0);
  }, 300_000);

  it('a stored state that is corrupt or was changed starts afresh, with a warning', async () => {
    const store = keepOpen(new MemoryStore());
    const options = { model: 'gpt-4o', store, conversationId: 'c', budgetNotice: LEVELS };
    const first = new ContextManager(options);
    // Up to the first view that tells a level (a view ending with the model's turn tells none).
    for (const message of longSessionMessages(90, 'openai', 4)) {
      await first.addMessage(message);
      const view = JSON.stringify(await first.getMessagesForRequest({ tokenBudget: 3_000 }));
      if (view.includes(NOTICE)) break;
    }
    await first.close();
    const meta = await store.getMeta('c');
    expect(meta.value?.budgetNoticed).toBeDefined();
    // A level changed by hand: its sum no longer holds.
    await store.setMeta('c', {
      ...meta.value,
      budgetNoticed: { ...(meta.value!.budgetNoticed as object), level: 0.1 },
    });
    const warnings: string[] = [];
    const next = new ContextManager(options);
    next.on('context:warn', (w) => warnings.push(w.code));
    const view = JSON.stringify(await next.getMessagesForRequest({ tokenBudget: 3_000 }));
    expect(warnings).toContain('stored_guard_unreadable');
    // Started afresh: the level the view is past is told again.
    expect(view).toContain(NOTICE);
    await next.close();
  });
});
