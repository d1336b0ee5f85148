import { describe, expect, it } from 'vitest';
import { ContextDeclinedError, ContextOverflowError } from '../errors.js';
import { ContextManager } from '../manager.js';
import { ContextMeasurer } from '../measure/measurer.js';
import type { Message } from '../messages/types.js';
import { parseFactsBlock } from '../tools/facts-block.js';
import { validateRequest } from '../wire/validate-request.js';
import { ContextGuard } from './guard.js';

const filler = (n: number, seed = 0) =>
  Array.from({ length: n }, (_, i) => `note${(i * 7 + seed) % 53} stuff${i % 11}`).join(' ');

function chat(turns: number): Message[] {
  const messages: Message[] = [{ role: 'system', content: 'You are a support agent.' }];
  for (let t = 0; t < turns; t++) {
    messages.push({ role: 'user', content: `question ${t} about order A${1000 + t}: ${filler(80, t)}` });
    messages.push({ role: 'assistant', content: `answer ${t}: ${filler(40, t)}` });
  }
  return messages;
}

describe('ContextMeasurer on its own', () => {
  it('measures a request with the model’s tokenizer, its budget, share and breakdown', async () => {
    const measurer = new ContextMeasurer({ model: 'gpt-4o' });
    const messages = chat(3);
    const tools = [
      { type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object' } } },
    ];
    const m = await measurer.measure({ messages, tools, tokenBudget: 10_000 });
    const reference = new ContextManager({ model: 'gpt-4o' });
    for (const message of messages) await reference.addMessage(message);
    await reference.getMessagesForRequest({ tools, tokenBudget: 10_000 });
    expect(m.tokens).toBe(reference.usage().tokens);
    expect(m.budget).toBe(10_000);
    expect(m.pct).toBeCloseTo(m.tokens / 10_000);
    expect(m.exact).toBe(true);
    expect(m.breakdown.system).toBeGreaterThan(0);
    expect(m.breakdown.tools).toBeGreaterThan(0);
    expect(m.breakdown.system + m.breakdown.messages + m.breakdown.tools + m.breakdown.overhead).toBe(
      m.tokens,
    );
  });

  it('learns from usage: the next measurement of a Claude request moves toward what was billed', async () => {
    const measurer = new ContextMeasurer({ model: 'claude-sonnet-4-5' });
    const messages = chat(2);
    const first = await measurer.measure({ messages });
    await measurer.recordUsage({ model: 'claude-sonnet-4-5', inputTokens: first.tokens * 2 }, messages);
    const second = await measurer.measure({ messages });
    expect(second.tokens).toBeGreaterThan(first.tokens);
    expect(second.tokens).toBeLessThan(first.tokens * 2);
    expect(second.exact).toBe(false);
  });
});

describe('ContextGuard on its own', () => {
  it('says ok under the trigger and gives the messages back as they are', async () => {
    const guard = new ContextGuard({ measurer: new ContextMeasurer({ model: 'gpt-4o' }) });
    const messages = chat(2);
    const decision = await guard.check(messages, { tokenBudget: 50_000 });
    expect(decision.action).toBe('ok');
    expect(decision.messages).toEqual(messages);
  });

  it('compacts past the trigger into a valid view within the budget, stable while messages extend', async () => {
    const guard = new ContextGuard({
      measurer: new ContextMeasurer({ model: 'gpt-4o' }),
      strategy: 'truncate',
    });
    const messages = chat(30);
    const first = await guard.check(messages, { tokenBudget: 3_000 });
    expect(first.action).toBe('compact');
    expect(first.receipt?.reason).toBe('over_budget');
    expect(first.tokens).toBeLessThanOrEqual(3_000);
    expect(validateRequest(first.messages!, 'openai').valid).toBe(true);
    messages.push({ role: 'user', content: 'and one more question' });
    const next = await guard.check(messages, { tokenBudget: 3_000 });
    expect(next.action).toBe('ok');
    expect(next.messages!.slice(0, first.messages!.length)).toEqual(first.messages);
  });

  it('decides without fitting when asked, and declines what cannot fit', async () => {
    const guard = new ContextGuard({ measurer: new ContextMeasurer({ model: 'gpt-4o' }) });
    const messages = chat(30);
    const due = await guard.check(messages, { tokenBudget: 3_000, fit: false });
    expect(due.action).toBe('compact');
    expect(due.messages).toBeUndefined();
    const big: Message[] = [
      { role: 'system', content: filler(400) },
      { role: 'user', content: 'hi' },
    ];
    const declined = await new ContextGuard({ measurer: new ContextMeasurer({ model: 'gpt-4o' }) }).check(
      big,
      {
        tokenBudget: 300,
      },
    );
    expect(declined.action).toBe('decline');
    expect(declined.error).toBeInstanceOf(ContextOverflowError);
    expect(declined.messages).toBeUndefined();
  });

  it('warns when what is sent passes warnAt', async () => {
    const measurer = new ContextMeasurer({ model: 'gpt-4o' });
    const guard = new ContextGuard({ measurer, levels: { warnAt: 0.1 } });
    const codes: string[] = [];
    measurer.events.on('context:warn', (w) => codes.push(w.code));
    const decision = await guard.check(chat(4), { tokenBudget: 5_000 });
    expect(decision.action).toBe('warn');
    expect(decision.reason).toMatch(/% of the 5000-token budget/);
    expect(codes).toEqual(['usage_high']);
  });
});

describe('custom strategies that warn or decline', () => {
  it('raises the strategy’s warning and still returns a fitted view', async () => {
    const ctx = new ContextManager({
      model: 'gpt-4o',
      strategy: (input) => ({
        drop: input.atoms.filter((a) => a.protection === 'none' && a.inView).map((a) => a.id),
        warn: 'dropping everything old',
      }),
    });
    for (const m of chat(20)) await ctx.addMessage(m);
    const warnings: Array<{ code: string; message: string }> = [];
    ctx.on('context:warn', (w) => warnings.push(w));
    const view = await ctx.getMessagesForRequest({ tokenBudget: 2_000 });
    expect(warnings).toContainEqual({ code: 'strategy_warn', message: 'dropping everything old' });
    expect(validateRequest(view, 'openai').valid).toBe(true);
  });

  it('declines with ContextDeclinedError, keeps no plan and changes nothing stored', async () => {
    let calls = 0;
    const ctx = new ContextManager({
      model: 'gpt-4o',
      strategy: () => {
        calls++;
        return { decline: 'this conversation must not lose anything' };
      },
    });
    for (const m of chat(20)) await ctx.addMessage(m);
    const before = await ctx.getMessages();
    const error = await ctx.getMessagesForRequest({ tokenBudget: 2_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextDeclinedError);
    expect(error).toBeInstanceOf(ContextOverflowError);
    expect((error as ContextDeclinedError).reason).toBe('this conversation must not lose anything');
    expect((error as Error).message).toMatch(/declined/);
    expect(ctx.currentPlan()).toBeNull();
    expect(await ctx.getMessages()).toEqual(before);
    await expect(ctx.getMessagesForRequest({ tokenBudget: 2_000 })).rejects.toBeInstanceOf(
      ContextDeclinedError,
    );
    expect(calls).toBe(2);
  });
});

describe('retries and the critical floor', () => {
  it('re-plans lower while the rendered view is above criticalFloor, at most maxCompactRetries times', async () => {
    // A summarizer that writes far more than the reserve it is given: the first plan overshoots.
    let summaries = 0;
    const tools = {
      kind: 'verbose',
      summarize: async () => {
        summaries++;
        return filler(150);
      },
      extractFacts: async () => [],
    };
    const plans: number[] = [];
    const make = (options: { maxCompactRetries?: number; criticalFloor?: number }) => {
      // A memory share of 0.2 gives the summary a reserve of a tenth of the budget, which it overshoots.
      const ctx = new ContextManager({ model: 'gpt-4o', tools, summaryShare: 0.2, ...options });
      ctx.on('context:post_compact', (e) => plans.push(e.tokens));
      return ctx;
    };
    const strict = make({ criticalFloor: 0.3, maxCompactRetries: 2 });
    for (const m of chat(30)) await strict.addMessage(m);
    await strict.getMessagesForRequest({ tokenBudget: 4_000 });
    expect(strict.usage().tokens).toBeLessThanOrEqual(4_000);
    // A plan aims at the target (0.6), above the floor (0.3): it is made again, lower.
    expect(summaries).toBeGreaterThan(1);
    expect(summaries).toBeLessThanOrEqual(3);
    const none = make({ criticalFloor: 0.3, maxCompactRetries: 0 });
    for (const m of chat(30)) await none.addMessage(m);
    summaries = 0;
    await none.getMessagesForRequest({ tokenBudget: 4_000 });
    expect(summaries).toBe(1);
    expect(strict.usage().tokens).toBeLessThanOrEqual(none.usage().tokens);
  });
});

describe('autoCompact: false', () => {
  it('never compacts on a request, only on compact(); over the budget a request throws', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o', autoCompact: false });
    for (const m of chat(30)) await ctx.addMessage(m);
    const full = await ctx.getTokenCount();
    const view = await ctx.getMessagesForRequest({ tokenBudget: Math.ceil(full * 1.05) + 50 });
    expect(view).toHaveLength(61);
    await expect(ctx.getMessagesForRequest({ tokenBudget: Math.floor(full / 2) })).rejects.toBeInstanceOf(
      ContextOverflowError,
    );
    const receipt = await ctx.compact({ tokenBudget: Math.floor(full / 2) });
    expect(receipt?.reason).toBe('threshold');
    const fitted = await ctx.getMessagesForRequest({ tokenBudget: Math.floor(full / 2) });
    expect(fitted.length).toBeLessThan(61);
  });
});

describe('the facts block a view carries', () => {
  it('is read back by parseFactsBlock, each fact with the message it came from', async () => {
    // The first message's facts are asked for below, so it must leave the view: the task not kept.
    const ctx = new ContextManager({ model: 'gpt-4o', strategy: 'truncate', protectTask: false });
    await ctx.addMessage({ role: 'system', content: 'You are a support agent.' });
    for (let t = 0; t < 12; t++) {
      await ctx.addMessage({
        role: 'user',
        content: `Please check reservation R${t}X${t}Q9 for user_${t}_77 and file /srv/claims/${t}.pdf. ${filler(60, t)}`,
      });
      await ctx.addMessage({ role: 'assistant', content: `Looking at R${t}X${t}Q9 now. ${filler(30, t)}` });
    }
    const view = await ctx.getMessagesForRequest({ tokenBudget: 2_500 });
    const block = view.find(
      (m) => typeof m.content === 'string' && m.content.includes('<!-- contextkit:facts -->'),
    );
    expect(block).toBeDefined();
    const facts = parseFactsBlock(block!.content as string);
    expect(facts.length).toBeGreaterThan(3);
    const entries = await ctx.getEntries();
    for (const fact of facts) {
      expect(fact.seq).toBeGreaterThanOrEqual(0);
      expect(JSON.stringify(entries[fact.seq]!.message)).toContain(fact.value);
    }
    expect(facts.map((f) => f.value)).toEqual(expect.arrayContaining(['R0X0Q9', '/srv/claims/0.pdf']));
  });
});
