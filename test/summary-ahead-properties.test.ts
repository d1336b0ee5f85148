/**
 * Summaries prepared ahead (`summaryAhead`), on generated agent conversations driven turn by turn
 * with a model that answers at once, late, or never: every view fits and is valid, between
 * compactions each view extends the previous one byte for byte (the prepared summary comes in
 * only at a compaction), nothing stored changes, and a fact the model reports that no message
 * holds never reaches a view.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CompactionReceipt } from '../src/events.js';
import { ContextManager } from '../src/manager.js';
import type { Message, MessageFormat } from '../src/messages/types.js';
import { getModelInfo } from '../src/tokens/catalog.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { validateRequest } from '../src/wire/validate-request.js';
import { conversationArb, type GeneratedConversation } from './support/arbitraries.js';
import { referenceProblems } from './support/reference-validator.js';

const MODEL: Record<'openai' | 'anthropic', string> = { openai: 'gpt-4o', anthropic: 'claude-sonnet-4-5' };
const RUNS = Number(process.env.PROPERTY_RUNS ?? 60);
const INVENTED = 'INVENTED-VALUE-7731';

type Answer = 'at once' | 'next turn' | 'never';

/** How the compactions of all runs went with the prepared summary (the property must reach each path). */
const outcomes = new Map<string, number>();

/**
 * A Chat Completions endpoint: one JSON object with a short summary and two facts, one of which
 * no message holds. `next turn` holds each answer until `release()`; `never` never answers.
 */
function fakeModel(answer: Answer) {
  const held: Array<() => void> = [];
  const reply = (init?: RequestInit): Response => {
    const body = JSON.parse(String(init?.body)) as { messages: Array<{ content: string }> };
    const system = body.messages[0]!.content;
    const summary = 'The model wrote this summary of the earlier turns.';
    const facts = [
      { key: 'invented', value: INVENTED, category: 'identifier', seq: 1 },
      { key: 'summary_word', value: 'the', category: 'other', seq: 1 },
    ];
    const content = system.includes('"summary"')
      ? JSON.stringify({ summary, facts })
      : system.includes('JSON array')
        ? JSON.stringify(facts)
        : summary;
    return new Response(
      JSON.stringify({
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      }),
      { status: 200, headers: { 'content-type': 'application/json' } },
    );
  };
  return {
    fetch: ((_url: string | URL | Request, init?: RequestInit) => {
      if (answer === 'at once') return Promise.resolve(reply(init));
      return new Promise<Response>((resolve) => {
        if (answer === 'next turn') held.push(() => resolve(reply(init)));
      });
    }) as typeof fetch,
    release() {
      for (const answerNow of held.splice(0)) answerNow();
    },
  };
}

/** Lets what was queued after a request (the preparation) and the answers released run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 4; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

async function drive(conv: GeneratedConversation, share: number, answer: Answer, at: number | undefined) {
  const format = conv.format as 'openai' | 'anthropic';
  const counter = createTokenCounter(getModelInfo(MODEL[format])!);
  const budget = Math.max(300, Math.floor((await counter.measure(conv.messages, { format })) * share));
  const model = fakeModel(answer);
  const ctx = new ContextManager({
    model: MODEL[format],
    llm: {
      provider: 'openai',
      baseURL: 'http://model.invalid/v1',
      apiKey: 'k',
      model: 'small',
      fetch: model.fetch,
    },
    ...(at !== undefined ? { summaryAhead: { at } } : {}),
  });
  const receipts: CompactionReceipt[] = [];
  ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
  let previous: Message[] | null = null;
  let compactions = 0;
  for (let i = 0; i < conv.messages.length; i++) {
    const message = conv.messages[i]!;
    if (message.role === 'assistant' && i > 0) {
      let view: Message[];
      try {
        view = await ctx.getMessagesForRequest({ tokenBudget: budget });
      } catch {
        // What must be kept does not fit this budget: the plain property tests cover that case.
        previous = null;
        await ctx.addMessage(message, conv.options[i]);
        continue;
      }
      expect(ctx.usage().tokens).toBeLessThanOrEqual(budget);
      expect(validateRequest(view, format).problems).toEqual([]);
      expect(referenceProblems(view, format)).toEqual([]);
      expect(JSON.stringify(view)).not.toContain(INVENTED);
      if (previous && receipts.length === compactions) {
        expect(JSON.stringify(view.slice(0, previous.length))).toBe(JSON.stringify(previous));
      }
      compactions = receipts.length;
      previous = view;
      model.release();
      await settle();
    }
    await ctx.addMessage(message, conv.options[i]);
  }
  expect(await ctx.getMessages()).toEqual(conv.messages);
  for (const r of receipts) {
    outcomes.set(r.prepared ?? 'no summary', (outcomes.get(r.prepared ?? 'no summary') ?? 0) + 1);
    if (r.summary && r.prepared === 'used') expect(r.summary.tools).toBe('openai');
    // The model's summary of what was prepared, the rest of a range that grew offline on top.
    else if (r.summary && r.prepared === 'partial') expect(r.summary.tools).toBe('openai+offline');
    else if (r.summary && r.prepared !== undefined) expect(r.summary.tools).toBe('offline');
    if (answer === 'never') expect(['used', 'partial']).not.toContain(r.prepared);
  }
}

describe.each(['openai', 'anthropic'] as const)('summaries prepared ahead, %s conversations', (format) => {
  it('every view fits, is valid and extends the previous one between compactions; nothing stored changes; invented facts stay out', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb({ format: format as MessageFormat, minTurns: 4, maxTurns: 9 }),
        fc.double({ min: 0.25, max: 0.8, noNaN: true }),
        fc.constantFrom<Answer>('at once', 'next turn', 'never'),
        fc.option(fc.double({ min: 0.3, max: 0.8, noNaN: true }), { nil: undefined }),
        drive,
      ),
      { numRuns: RUNS },
    );
    expect(outcomes.get('used') ?? 0).toBeGreaterThan(0);
    expect(outcomes.get('pending') ?? 0).toBeGreaterThan(0);
  });
});
