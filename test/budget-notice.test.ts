/**
 * The budget notice (issue 25): at the usage levels the user sets, a short message at the very
 * end of the view tells the model how much room is left; once per level on the way up, after the
 * last cache breakpoint, counted within the budget, never stored, and the next view still starts
 * with everything the noticed view sent before it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../src/errors.js';
import { ContextManager } from '../src/manager.js';
import type { Message } from '../src/messages/types.js';
import { budgetNoticeText, nextBudgetNotice } from '../src/view/budget-notice.js';
import { messageText } from '../src/wire/content.js';
import { conversationArb } from './support/arbitraries.js';
import { checkEachView } from './support/generated-views.js';
import { providerProblems } from './support/provider-checks.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 25);
const NOTICE = /^\[contextkit: \d+% of the context budget is in use; about [\d,]+ tokens are left/;

const isNotice = (m: Message) => NOTICE.test(messageText(m));

describe('nextBudgetNotice', () => {
  it('tells each level once on the way up, and again after usage fell below it', () => {
    const levels = [0.5, 0.75, 0.9];
    let state: number | undefined;
    const told: Array<number | undefined> = [];
    for (const usage of [0.2, 0.55, 0.6, 0.8, 0.95, 0.96, 0.4, 0.52, 0.53]) {
      const next = nextBudgetNotice(state, usage, levels);
      told.push(next.level);
      state = next.state;
    }
    expect(told).toEqual([undefined, 0.5, undefined, 0.75, 0.9, undefined, undefined, 0.5, undefined]);
    // A leap past two levels tells the higher one only.
    expect(nextBudgetNotice(undefined, 0.8, levels)).toEqual({ state: 0.75, level: 0.75 });
  });

  it('says the share in use and the tokens left', () => {
    expect(budgetNoticeText(7_600, 10_000)).toBe(
      '[contextkit: 76% of the context budget is in use; about 2,400 tokens are left before older turns are compacted. Keep replies and tool calls focused.]',
    );
  });
});

describe('budgetNotice in the manager', () => {
  const turn = (i: number): Message[] => [
    {
      role: 'user',
      content: `Question ${i}: tell me about the harbour, the boats and the tides ${'and more '.repeat(20)}`,
    },
    {
      role: 'assistant',
      content: `Answer ${i}: the harbour is busy in the morning ${'with boats '.repeat(20)}`,
    },
  ];

  it('is refused unless it is a non-empty list of shares', () => {
    for (const bad of [[], [0], [1.5], 'half', [Number.NaN]]) {
      expect(() => new ContextManager({ budgetNotice: bad as number[] })).toThrow(ConfigurationError);
    }
  });

  for (const provider of ['openai', 'anthropic', 'gemini'] as const) {
    it(`${provider}: tells the model at each level, at the end, once, and never stores it`, async () => {
      const model =
        provider === 'anthropic'
          ? 'claude-sonnet-4-5'
          : provider === 'gemini'
            ? 'gemini-2.5-flash'
            : 'gpt-4o';
      const ctx = new ContextManager({
        model,
        budgetNotice: [0.3, 0.6],
        compactThreshold: 0.9,
        targetUsage: 0.5,
        ...(provider === 'anthropic' ? { cacheBreakpoints: 'auto' as const } : {}),
      });
      await ctx.addMessage({ role: 'system', content: 'You are a harbour guide.' });
      const budget = 4_000;
      let previous: Message[] | null = null;
      const noticed: number[] = [];
      for (let i = 0; i < 30; i++) {
        for (const m of turn(i)) await ctx.addMessage(provider === 'gemini' ? gemini(m) : m);
        await ctx.addMessage(
          provider === 'gemini'
            ? gemini({ role: 'user', content: `Next ${i}?` })
            : { role: 'user', content: `Next ${i}?` },
        );
        const view = await ctx.getMessagesForRequest({ tokenBudget: budget, provider });
        expect(ctx.usage().tokens).toBeLessThanOrEqual(budget);
        const notices = view.filter(isNotice);
        expect(notices.length).toBeLessThanOrEqual(1);
        expect(providerProblems(view, provider)).toEqual([]);
        if (notices.length === 1) {
          noticed.push(i);
          // At the very end, after every cache breakpoint.
          expect(view.at(-1)).toBe(notices[0]);
          expect(JSON.stringify(notices[0])).not.toContain('cache_control');
        }
        // Between compactions, the view starts with the previous one, its notice left out.
        if (previous && !ctx.currentPlan()) {
          const before = previous.filter((m) => !isNotice(m));
          expect(unmarked(view.slice(0, before.length))).toEqual(unmarked(before));
        }
        previous = view;
        const stored = await ctx.getMessages();
        expect(stored.some(isNotice)).toBe(false);
      }
      // Both levels were crossed (and told again after each compaction brought usage down).
      expect(noticed.length).toBeGreaterThanOrEqual(2);
    });
  }

  it('keeps every generated view within its budget, notices included, with the stored history unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb({ maxTurns: 6 }),
        fc.integer({ min: 800, max: 6_000 }),
        async (conv, budget) => {
          const ctx = new ContextManager({
            model: conv.format === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4o',
            budgetNotice: [0.1, 0.2, 0.4, 0.8],
          });
          await checkEachView(ctx, conv, budget, (view) => {
            expect(view.filter(isNotice).length).toBeLessThanOrEqual(1);
          });
        },
      ),
      { numRuns: RUNS },
    );
  });
});

/** Messages without Anthropic cache marks (which move from request to request, on copies). */
function unmarked(messages: readonly Message[]): unknown {
  return JSON.parse(JSON.stringify(messages), (key, value) => {
    if (key === 'cache_control') return undefined;
    if (
      key === 'content' &&
      Array.isArray(value) &&
      value.length === 1 &&
      value[0].type === 'text' &&
      Object.keys(value[0]).length === 2
    )
      return value[0].text;
    return value;
  });
}

function gemini(m: Message): Message {
  return {
    role: m.role === 'assistant' ? 'model' : 'user',
    parts: [{ text: messageText(m) }],
  } as unknown as Message;
}
