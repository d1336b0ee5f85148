import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContextOverflowError } from '../src/errors.js';
import { ContextManager } from '../src/manager.js';
import { hasToolCalls } from '../src/messages/content.js';
import type { Message, MessageFormat } from '../src/messages/types.js';
import { validateRequest } from '../src/messages/validate-request.js';
import { getModelInfo } from '../src/tokens/catalog.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { conversationArb, type GeneratedConversation } from './support/arbitraries.js';
import { anthropicRequestProblems, messagesBody } from './support/fake-anthropic-server.js';
import { referenceProblems } from './support/reference-validator.js';

const MODEL: Record<MessageFormat, string> = {
  openai: 'gpt-4o',
  anthropic: 'claude-sonnet-4-5',
  'openai-responses': 'gpt-4o',
  gemini: 'gemini-2.5-flash',
  bedrock: 'claude-sonnet-4-5',
};
const RUNS = Number(process.env.PROPERTY_RUNS ?? 60);

const STRATEGIES = ['summarize', 'truncate', 'smart', 'layered'] as const;
type Strategy = (typeof STRATEGIES)[number];
const strategyArb = fc.constantFrom(...STRATEGIES);

async function managerWith(conv: GeneratedConversation, strategy: Strategy): Promise<ContextManager> {
  const ctx = new ContextManager({ model: MODEL[conv.format], strategy });
  for (let i = 0; i < conv.messages.length; i++) await ctx.addMessage(conv.messages[i], conv.options[i]);
  return ctx;
}

function isLatestUser(message: Message): boolean {
  if (message.role !== 'user') return false;
  if (typeof message.content === 'string') return true;
  return (message.content as Array<{ type: string }>).some((b) => b.type !== 'tool_result');
}

/** Checks every invariant of DESIGN.md that one view must hold. */
async function checkView(
  conv: GeneratedConversation,
  budgetShare: number,
  strategy: Strategy,
): Promise<void> {
  const ctx = await managerWith(conv, strategy);
  const counter = createTokenCounter(getModelInfo(MODEL[conv.format])!);
  const full = await counter.measure(conv.messages, { format: conv.format });
  const budget = Math.max(64, Math.floor(full * budgetShare));
  let view: Message[];
  try {
    view = await ctx.getMessagesForRequest({ tokenBudget: budget });
  } catch (err) {
    // Only allowed when the messages that must be kept are above the budget by themselves.
    expect(err).toBeInstanceOf(ContextOverflowError);
    const overflow = err as ContextOverflowError;
    expect(overflow.required).toBeGreaterThan(budget);
    const b = overflow.breakdown;
    expect(b.system + b.pinned + b.task + b.latestTurn + b.tools + b.overhead).toBeGreaterThan(budget);
    // The breakdown explains the total it reports: its parts add up to it.
    expect(b.system + b.pinned + b.task + b.latestTurn + b.tools + b.overhead + b.rest).toBe(
      overflow.required,
    );
    return;
  }
  // 1. Fits, by the library's own count measured afresh.
  const measured = await counter.measure(view, { format: conv.format });
  expect(measured).toBeLessThanOrEqual(budget);
  // 2. Valid, by the library's rules and by the independent reference.
  expect(validateRequest(view, conv.format).problems).toEqual([]);
  expect(referenceProblems(view, conv.format)).toEqual([]);
  if (conv.format === 'anthropic')
    expect(anthropicRequestProblems(messagesBody(view), { signatures: false })).toEqual([]);
  // 3. Keeps system, pinned and critical messages and the latest user message, verbatim.
  const json = new Set(view.map((m) => JSON.stringify(m)));
  conv.messages.forEach((m, i) => {
    const flags = conv.options[i]!;
    if (m.role === 'system' || m.role === 'developer' || flags.pinned || flags.critical) {
      expect(json.has(JSON.stringify(m))).toBe(true);
    }
  });
  const latest = conv.messages.findLast(isLatestUser);
  if (latest && typeof latest.content === 'string') expect(json.has(JSON.stringify(latest))).toBe(true);
  // 4. In order (clean conversations: nothing had to be moved).
  if (!conv.breakage.interleaved) {
    let cursor = 0;
    for (const m of view) {
      const s = JSON.stringify(m);
      const at = conv.messages.findIndex((x, i) => i >= cursor && JSON.stringify(x) === s);
      if (at >= 0) cursor = at + 1;
      // Not found after the cursor: it must be a message the view made (placeholder, cut, notice).
      else expect(conv.messages.some((x) => JSON.stringify(x) === s)).toBe(false);
    }
  }
  // 5. Non-destructive.
  expect(await ctx.getMessages()).toEqual(conv.messages);
  // 6. Deterministic.
  const again = await managerWith(conv, strategy);
  expect(await again.getMessagesForRequest({ tokenBudget: budget })).toEqual(view);
}

describe.each(['openai', 'anthropic'] as const)('every view, %s format, every strategy', (format) => {
  it('fits, is valid, keeps what must be kept, is ordered, non-destructive and deterministic', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb({ format }),
        fc.double({ min: 0.15, max: 1.3, noNaN: true }),
        strategyArb,
        checkView,
      ),
      { numRuns: RUNS },
    );
  });

  it('holds on conversations with huge results, images, and crash or hook damage', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb({ format, huge: true, broken: true, maxTurns: 3 }),
        fc.double({ min: 0.1, max: 1.2, noNaN: true }),
        strategyArb,
        checkView,
      ),
      { numRuns: Math.ceil(RUNS / 3) },
    );
  });

  it('between compactions each view extends the previous one byte for byte', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb({ format, minTurns: 3, maxTurns: 6 }),
        fc.double({ min: 0.3, max: 0.9, noNaN: true }),
        strategyArb,
        async (conv, share, strategy) => {
          const counter = createTokenCounter(getModelInfo(MODEL[format])!);
          const budget = Math.max(
            200,
            Math.floor((await counter.measure(conv.messages, { format })) * share),
          );
          const ctx = new ContextManager({ model: MODEL[format], strategy });
          let compactions = 0;
          ctx.on('context:post_compact', () => compactions++);
          let previous: Message[] | null = null;
          let seenCompactions = 0;
          for (let i = 0; i < conv.messages.length; i++) {
            const m = conv.messages[i]!;
            await ctx.addMessage(m, conv.options[i]);
            // Ask at the points an agent asks: after a user turn or a finished answer, no call pending.
            const next = conv.messages[i + 1];
            const atTurnEnd = !hasToolCalls(m) && (!next || next.role === 'user') && m.role !== 'tool';
            if (!atTurnEnd || (m.role === 'user' && !isLatestUser(m))) continue;
            let view: Message[];
            try {
              view = await ctx.getMessagesForRequest({ tokenBudget: budget });
            } catch (err) {
              expect(err).toBeInstanceOf(ContextOverflowError);
              previous = null;
              continue;
            }
            if (previous && compactions === seenCompactions) {
              expect(view.slice(0, previous.length)).toEqual(previous);
            }
            seenCompactions = compactions;
            previous = view;
          }
        },
      ),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });
});
