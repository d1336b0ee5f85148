/**
 * Hooks before and after compaction (issue 25): a veto is honoured while the view fits and
 * refused over the budget; pinned content is kept in the view until the next compaction, counted
 * against the budget, trimmed or refused past the room left (with a `context:warn`); a hook that
 * throws loses nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BeforeCompactionInfo } from '../src/compaction/hooks.js';
import { fitPinned, pinnedTexts, TRIMMED_MARK } from '../src/compaction/hooks.js';
import type { CompactionReceipt } from '../src/events.js';
import { ContextManager } from '../src/manager.js';
import type { Message } from '../src/messages/types.js';
import { messageText } from '../src/wire/content.js';
import { conversationArb } from './support/arbitraries.js';
import { checkEachView } from './support/generated-views.js';
import { providerProblems } from './support/provider-checks.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 25);
const BUDGET = 3_000;
const KEPT = '[contextkit: kept after compaction]';

async function session(ctx: ContextManager, turns = 30, from = 0): Promise<Message[]> {
  const views: Message[][] = [];
  if (from === 0) await ctx.addMessage({ role: 'system', content: 'You are a careful coding agent.' });
  for (let t = from; t < from + turns; t++) {
    await ctx.addMessage({
      role: 'user',
      content: `Step ${t}: update src/mod${t}.ts ${'and check it '.repeat(30).trim()}`,
    });
    await ctx.addMessage({
      role: 'assistant',
      content: `Updated src/mod${t}.ts (order W-${4400 + t}) ${'tests pass '.repeat(30).trim()}`,
    });
    views.push(await ctx.getMessagesForRequest({ tokenBudget: BUDGET }));
    expect(ctx.usage().tokens).toBeLessThanOrEqual(BUDGET);
  }
  return views.at(-1)!;
}

function warnings(ctx: ContextManager): Array<{ code: string; message: string }> {
  const out: Array<{ code: string; message: string }> = [];
  ctx.on('context:warn', (w) => out.push(w));
  return out;
}

describe('pinnedTexts and fitPinned', () => {
  const tokensOf = (t: readonly string[]) => Math.ceil(t.join('\n\n').length / 4);

  it('reads strings, skips empty ones and refuses anything else', () => {
    expect(pinnedTexts(undefined)).toEqual({ texts: [] });
    expect(pinnedTexts('a')).toEqual({ texts: ['a'] });
    expect(pinnedTexts(['a', ' ', 'b'])).toEqual({ texts: ['a', 'b'] });
    expect(pinnedTexts([1])).toEqual({ texts: [], problem: expect.stringContaining('string') });
  });

  it('keeps what fits whole, trims the first that does not, refuses the rest', () => {
    const texts = ['a'.repeat(40), 'b'.repeat(400), 'c'.repeat(40)];
    expect(fitPinned(texts, 1_000, tokensOf)).toEqual({ texts, trimmed: 0, refused: 0 });
    const fitted = fitPinned(texts, 60, tokensOf);
    expect(fitted.trimmed).toBe(1);
    expect(fitted.refused).toBe(1);
    expect(fitted.texts[0]).toBe(texts[0]);
    expect(fitted.texts[1]!.endsWith(TRIMMED_MARK)).toBe(true);
    expect(tokensOf(fitted.texts)).toBeLessThanOrEqual(60);
    expect(fitPinned(texts, 5, tokensOf)).toEqual({ texts: [], trimmed: 0, refused: 3 });
  });
});

describe('onAfterCompaction', () => {
  it('adds pinned content back after each compaction, kept until the next, within the budget', async () => {
    const receipts: CompactionReceipt[] = [];
    const infos: BeforeCompactionInfo[] = [];
    let version = 0;
    const ctx = new ContextManager({
      model: 'gpt-4o',
      onBeforeCompaction: (info) => {
        infos.push(info);
        return undefined;
      },
      onAfterCompaction: (receipt) => {
        receipts.push(receipt);
        version++;
        return { pinned: [`AGENTS.md (v${version}): run npm test before every commit.`] };
      },
    });
    await session(ctx);
    expect(receipts.length).toBeGreaterThanOrEqual(2);
    const view = await ctx.getMessagesForRequest({ tokenBudget: BUDGET });
    const kept = view.filter((m) => messageText(m).startsWith(KEPT));
    expect(kept).toHaveLength(1);
    expect(messageText(kept[0]!)).toContain(`AGENTS.md (v${version})`);
    expect(providerProblems(view, 'openai')).toEqual([]);
    // The hook before the second compaction saw what the first one pinned.
    expect(infos[1]!.pinned).toEqual(['AGENTS.md (v1): run npm test before every commit.']);
    expect(ctx.currentPlan()!.pinned).toEqual([`AGENTS.md (v${version}): run npm test before every commit.`]);
    // Never stored.
    expect((await ctx.getMessages()).some((m) => messageText(m).startsWith(KEPT))).toBe(false);
  });

  it('trims content past the room under the trigger, with a warning, and keeps the view within budget', async () => {
    const ctx = new ContextManager({
      model: 'gpt-4o',
      onAfterCompaction: () => ({ pinned: ['instructions '.repeat(3_000), 'never shown'] }),
    });
    const warned = warnings(ctx);
    await session(ctx);
    expect(warned.some((w) => w.code === 'hook_pinned_trimmed')).toBe(true);
    const plan = ctx.currentPlan()!;
    expect(plan.pinned).toHaveLength(1);
    expect(plan.pinned![0]!.endsWith(TRIMMED_MARK)).toBe(true);
    expect(plan.tokens).toBeLessThanOrEqual(Math.floor(0.92 * BUDGET));
  });
});

describe('onBeforeCompaction', () => {
  it('vetoes a compaction while the view fits, not once it is over the budget', async () => {
    const reasons: string[] = [];
    const ctx = new ContextManager({
      model: 'gpt-4o',
      onBeforeCompaction: (info) => {
        reasons.push(info.reason);
        return { veto: true };
      },
    });
    const warned = warnings(ctx);
    await session(ctx, 30);
    // Vetoed at the trigger; compacted once the view would have gone over the budget.
    expect(reasons[0]).toBe('threshold');
    expect(reasons).toContain('over_budget');
    expect(warned.some((w) => w.code === 'hook_veto_refused')).toBe(true);
    expect(ctx.currentPlan()).not.toBeNull();
  });

  it('pins content through the compaction, room made for it while planning', async () => {
    const ctx = new ContextManager({
      model: 'claude-sonnet-4-5',
      onBeforeCompaction: () => ({ pinned: 'Task state: 12 of 30 modules migrated; next is src/mod13.ts.' }),
    });
    const view = await session(ctx);
    expect(view.some((m) => messageText(m).includes('Task state: 12 of 30 modules migrated'))).toBe(true);
    expect(providerProblems(view, 'anthropic')).toEqual([]);
    const receipt = await ctx.compact({ force: true, tokenBudget: BUDGET });
    expect(receipt?.pinned).toMatchObject({ texts: 1, trimmed: 0, refused: 0 });
  });

  it('a hook that throws is passed over with a warning; nothing is lost', async () => {
    const ctx = new ContextManager({
      model: 'gpt-4o',
      onBeforeCompaction: () => {
        throw new Error('disk unreadable');
      },
      onAfterCompaction: async () => {
        throw new Error('also broken');
      },
    });
    const warned = warnings(ctx);
    await session(ctx, 20);
    expect(warned.filter((w) => w.code === 'hook_failed').map((w) => w.message)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('disk unreadable'),
        expect.stringContaining('also broken'),
      ]),
    );
    expect(ctx.currentPlan()).not.toBeNull();
    expect(await ctx.getMessages()).toHaveLength(41);
  });
});

describe('compaction hooks over generated conversations', () => {
  it('never leave a view over budget or invalid, and never change stored history', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb({ maxTurns: 6 }),
        fc.integer({ min: 600, max: 5_000 }),
        fc.nat(6_000),
        fc.nat(6_000),
        fc.boolean(),
        async (conv, budget, before, after, veto) => {
          const ctx = new ContextManager({
            model: conv.format === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4o',
            onBeforeCompaction: () => ({ veto, pinned: 'b'.repeat(before) }),
            onAfterCompaction: () => ({ pinned: ['a '.repeat(after)] }),
          });
          await checkEachView(ctx, conv, budget);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
