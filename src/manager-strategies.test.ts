import { describe, expect, it } from 'vitest';
import { longSessionMessages } from '../test/support/arbitraries.js';
import type { StrategyInput } from './compaction/strategy.js';
import { ContextOverflowError } from './errors.js';
import type { CompactionReceipt } from './events.js';
import { ContextManager, type ContextManagerOptions } from './manager.js';
import type { Message } from './messages/types.js';
import { validateRequest } from './wire/validate-request.js';

const filler = (n: number, seed = 0) =>
  Array.from({ length: n }, (_, i) => `note${(i * 7 + seed) % 53} stuff${i % 11}`).join(' ');

const call = (id: string, name: string, args = '{}'): Message => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name, arguments: args } }],
});

async function build(options: ContextManagerOptions, turns: number, size = 100) {
  const ctx = new ContextManager({ model: 'gpt-4o', ...options });
  const receipts: CompactionReceipt[] = [];
  ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
  await ctx.addMessage({ role: 'system', content: 'You are a support agent.' });
  for (let t = 0; t < turns; t++) {
    await ctx.addMessage({ role: 'user', content: `question ${t}: ${filler(size, t)}` });
    await ctx.addMessage({ role: 'assistant', content: `answer ${t}: ${filler(size / 2, t)}` });
  }
  return { ctx, receipts };
}

describe('smart strategy', () => {
  it('keeps an early user decision over later chatter', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o', strategy: 'smart' });
    await ctx.addMessage({ role: 'system', content: 'sys' });
    await ctx.addMessage({
      role: 'user',
      content: 'Decided: we will use PostgreSQL 16 for order ORD-88421, never MySQL.',
    });
    await ctx.addMessage({ role: 'assistant', content: 'Confirmed, PostgreSQL 16 it is.' });
    for (let t = 0; t < 30; t++) {
      await ctx.addMessage({ role: 'user', content: `chatter ${filler(60, t)}` });
      await ctx.addMessage({ role: 'assistant', content: `sure ${filler(30, t)}` });
    }
    const view = await ctx.getMessagesForRequest({ tokenBudget: 2500 });
    expect(JSON.stringify(view)).toContain('Decided: we will use PostgreSQL 16 for order ORD-88421');
    expect(ctx.usage().tokens).toBeLessThanOrEqual(2500);
  });
});

describe('layered strategy and the guard', () => {
  it('acts at 0.5, lets its level fall after compacting, and does not re-summarize at moderate usage', async () => {
    const { ctx, receipts } = await build({ strategy: 'layered' }, 20);
    const full = await ctx.getTokenCount();
    const budget = Math.floor(full / 0.55);
    await ctx.getMessagesForRequest({ tokenBudget: budget });
    expect(receipts).toHaveLength(1); // healthy: the old zone summarized
    expect(receipts[0]!.summarized.length).toBeGreaterThan(0);
    const after = ctx.usage().pct;
    expect(after).toBeLessThan(0.55);
    for (let i = 0; i < 4; i++) {
      await ctx.addMessage({ role: 'user', content: `small ${i}` });
      await ctx.getMessagesForRequest({ tokenBudget: budget });
    }
    expect(receipts).toHaveLength(1);
  });

  it('does not take the first measurement for a jump, and escalates on a real leap', async () => {
    const { ctx, receipts } = await build({ strategy: 'layered' }, 20);
    const full = await ctx.getTokenCount();
    // First request at 0.72: pressure, not escalated to urgent.
    await ctx.getMessagesForRequest({ tokenBudget: Math.floor(full / 0.72) });
    expect(receipts).toHaveLength(1);
    const firstLeft = receipts[0]!.messagesAfter;
    const { ctx: ctx2, receipts: receipts2 } = await build({ strategy: 'layered' }, 20);
    const budget2 = Math.floor(full / 0.4);
    await ctx2.getMessagesForRequest({ tokenBudget: budget2 });
    expect(receipts2).toHaveLength(0);
    // One huge tool result: usage leaps by more than 0.3 of the budget.
    await ctx2.addMessage(call('big', 'dump'));
    await ctx2.addMessage({ role: 'tool', tool_call_id: 'big', content: filler(Math.floor(budget2 / 6), 1) });
    await ctx2.getMessagesForRequest({ tokenBudget: budget2 });
    expect(receipts2).toHaveLength(1);
    expect(firstLeft).toBeGreaterThan(0);
    // The leap was acted on: the same step asked for again is no leap (it is older than the plan).
    await ctx2.getMessagesForRequest({ tokenBudget: budget2 });
    await ctx2.getMessagesForRequest({ tokenBudget: budget2 });
    expect(receipts2).toHaveLength(1);
  });

  it('reads a leap from the history: a worker that never saw the request before it escalates alike', async () => {
    const leapTo = async (ctx: ContextManager, budget: number) => {
      await ctx.addMessage(call('big', 'dump'));
      await ctx.addMessage({
        role: 'tool',
        tool_call_id: 'big',
        content: filler(Math.floor(budget / 11), 1),
      });
      return JSON.stringify(await ctx.getMessagesForRequest({ tokenBudget: budget }));
    };
    const { ctx: seen, receipts: seenReceipts } = await build({ strategy: 'layered' }, 20);
    const budget = Math.floor((await seen.getTokenCount()) / 0.4);
    await seen.getMessagesForRequest({ tokenBudget: budget });
    const seenView = await leapTo(seen, budget);
    // The same history, never asked for a view before the leap.
    const { ctx: fresh, receipts: freshReceipts } = await build({ strategy: 'layered' }, 20);
    expect(await leapTo(fresh, budget)).toBe(seenView);
    const timeless = (list: CompactionReceipt[]) => list.map(({ durationMs: _, ...receipt }) => receipt);
    expect(timeless(freshReceipts)).toEqual(timeless(seenReceipts));
    expect(freshReceipts.map((r) => r.reason)).toEqual(['threshold']);
    // Escalated (pressure to urgent): without the escalation the same usage is planned otherwise.
    const { ctx: calm, receipts: calmReceipts } = await build(
      { strategy: 'layered', guard: { jumpEscalation: 1 } },
      20,
    );
    await leapTo(calm, budget);
    expect(timeless(calmReceipts)).not.toEqual(timeless(freshReceipts));
  });

  it('warns once when usage passes warnAt, again only after it fell back', async () => {
    const { ctx } = await build({ guard: { warnAt: 0.5 } }, 6);
    const warnings: string[] = [];
    ctx.on('context:warn', (w) => warnings.push(w.code));
    const full = await ctx.getTokenCount();
    await ctx.getMessagesForRequest({ tokenBudget: Math.floor(full / 0.6) });
    await ctx.getMessagesForRequest({ tokenBudget: Math.floor(full / 0.6) });
    expect(warnings.filter((w) => w === 'usage_high')).toHaveLength(1);
    await ctx.getMessagesForRequest({ tokenBudget: full * 10 });
    await ctx.getMessagesForRequest({ tokenBudget: Math.floor(full / 0.6) });
    expect(warnings.filter((w) => w === 'usage_high')).toHaveLength(2);
  });

  it('declines above declineAt after compacting, with the history untouched', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o', guard: { declineAt: 0.5 } });
    await ctx.addMessage({ role: 'system', content: filler(200) });
    await ctx.addMessage({ role: 'user', content: 'hi' });
    const before = await ctx.getMessages();
    const full = await ctx.getTokenCount();
    await expect(ctx.getMessagesForRequest({ tokenBudget: Math.floor(full * 1.5) })).rejects.toBeInstanceOf(
      ContextOverflowError,
    );
    expect(await ctx.getMessages()).toEqual(before);
  });
});

describe('a custom strategy', () => {
  it('decides what leaves; protected choices are refused with a warning; the view still fits', async () => {
    const seen: StrategyInput[] = [];
    const { ctx } = await build(
      {
        strategy: (input) => {
          seen.push(input);
          // Summarize every other unprotected atom, and try to drop the system prompt.
          const open = input.atoms.filter((a) => a.protection === 'none' && a.inView);
          return { summarize: open.filter((_, i) => i % 2 === 0).map((a) => a.id), drop: [0] };
        },
      },
      20,
    );
    const warnings: string[] = [];
    ctx.on('context:warn', (w) => warnings.push(w.code));
    const view = await ctx.getMessagesForRequest({ tokenBudget: 2000 });
    expect(seen).toHaveLength(1);
    expect(warnings).toContain('strategy_refused');
    expect(view[0]).toEqual({ role: 'system', content: 'You are a support agent.' });
    expect(ctx.usage().tokens).toBeLessThanOrEqual(2000);
    expect(validateRequest(view, 'openai').valid).toBe(true);
  });
});

describe('deduplication', () => {
  it('drops older copies of a repeated exchange first', async () => {
    // Clearing (which runs first) is kept out of the way: every result is among the kept ones.
    const ctx = new ContextManager({
      model: 'gpt-4o',
      strategy: 'truncate',
      facts: 'none',
      keepToolResults: 100,
    });
    const receipts: CompactionReceipt[] = [];
    ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
    await ctx.addMessage({ role: 'user', content: `start ${filler(150)}` });
    for (let i = 0; i < 12; i++) {
      await ctx.addMessage(call(`poll${i}`, 'job_status', '{"job":"J-7"}'));
      await ctx.addMessage({
        role: 'tool',
        tool_call_id: `poll${i}`,
        content: `job J-7 is still running ${filler(40)}`,
      });
    }
    await ctx.addMessage({ role: 'user', content: 'and now?' });
    const full = await ctx.getTokenCount();
    await ctx.getMessagesForRequest({ tokenBudget: Math.floor(full * 1.02) });
    // The first user message (not a repeat) outlives the repeated polls.
    expect(receipts[0]!.dropped).not.toContain(0);
    expect(receipts[0]!.dropped.length).toBeGreaterThan(0);
  });
});

describe('clearing with context-editing options', () => {
  async function toolSession(options: ContextManagerOptions) {
    const ctx = new ContextManager({ model: 'gpt-4o', ...options });
    const receipts: CompactionReceipt[] = [];
    ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
    await ctx.addMessage({ role: 'user', content: 'go' });
    for (let i = 0; i < 8; i++) {
      const name = i % 2 === 0 ? 'read_file' : 'memory';
      await ctx.addMessage(call(`c${i}`, name, `{"path":"src/f${i}.ts"}`));
      await ctx.addMessage({ role: 'tool', tool_call_id: `c${i}`, content: filler(400, i) });
    }
    // The reads are an older turn: the current turn (after the latest user message) is never
    // cleared while it fits the budget.
    await ctx.addMessage({ role: 'user', content: 'now summarize what you read' });
    return { ctx, receipts };
  }

  it('never clears excluded tools, and clears inputs when asked', async () => {
    const { ctx, receipts } = await toolSession({
      clearing: { excludeTools: ['memory'], clearToolInputs: true },
    });
    const full = await ctx.getTokenCount();
    // Target 0.6 × 1.3 of the history: clearing two or three old read_file results is enough.
    const budget = Math.floor(full * 1.3);
    await ctx.compact({ force: true, tokenBudget: budget });
    const view = await ctx.getMessagesForRequest({ tokenBudget: budget });
    expect(receipts[0]!.dropped).toEqual([]);
    expect(receipts[0]!.cleared.length).toBeGreaterThan(0);
    expect(receipts[0]!.cleared.every((c) => c.tool === 'read_file')).toBe(true);
    const stored = await ctx.getMessages();
    for (const c of receipts[0]!.cleared) {
      const id = (stored[c.callSeq] as { tool_calls: Array<{ id: string }> }).tool_calls[0]!.id;
      const shown = view.find(
        (m) => m.role === 'assistant' && 'tool_calls' in m && m.tool_calls?.[0]?.id === id,
      ) as {
        tool_calls: Array<{ function: { arguments: string } }>;
      };
      expect(shown.tool_calls[0]!.function.arguments).toBe('{}');
    }
    // Stored history keeps the inputs.
    expect(JSON.stringify(stored)).toContain('src/f0.ts');
  });

  it('clears on its own past its trigger, and at least clearAtLeast once it starts', async () => {
    const { ctx, receipts } = await toolSession({ clearing: { trigger: 2000, clearAtLeast: 1500 } });
    const full = await ctx.getTokenCount();
    await ctx.getMessagesForRequest({ tokenBudget: full * 10 });
    expect(receipts).toHaveLength(1);
    expect(receipts[0]!.reason).toBe('clearing');
    expect(receipts[0]!.dropped).toEqual([]);
    expect(receipts[0]!.tokensBefore - receipts[0]!.tokensAfter).toBeGreaterThanOrEqual(1500);
  });
});

describe('the compaction notice', () => {
  it('ends the view right after a compaction, after any tool results, and only then', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o', compactionNotice: true });
    await ctx.addMessage({ role: 'system', content: 'sys' });
    for (let t = 0; t < 20; t++) {
      await ctx.addMessage({ role: 'user', content: `q${t} ${filler(80, t)}` });
      await ctx.addMessage(call(`c${t}`, 'lookup'));
      await ctx.addMessage({ role: 'tool', tool_call_id: `c${t}`, content: filler(80, t) });
    }
    const view = await ctx.getMessagesForRequest({ tokenBudget: 3000 });
    expect(view.at(-1)!.role).toBe('system');
    expect(String(view.at(-1)!.content)).toMatch(/to fit the context window/);
    expect(view.at(-2)!.role).toBe('tool');
    expect(validateRequest(view, 'openai').valid).toBe(true);
    expect(ctx.usage().tokens).toBeLessThanOrEqual(3000);
    const next = await ctx.getMessagesForRequest({ tokenBudget: 3000 });
    expect(next.at(-1)!.role).toBe('tool');
    expect(next).toEqual(view.slice(0, -1));
  });
});

describe('facts block across plans', () => {
  it('keeps the facts it holds when a later plan finds new ones of the same rank', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o', strategy: 'truncate' });
    const receipts: CompactionReceipt[] = [];
    ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
    await ctx.addMessage({ role: 'system', content: 'You are a support agent.' });
    const turn = async (t: number) => {
      await ctx.addMessage({
        role: 'user',
        content: `Please look up order ORD-${10_000 + t} for customer CUST-${20_000 + t}. ${filler(40, t)}`,
      });
      await ctx.addMessage({
        role: 'assistant',
        content: `Order ORD-${10_000 + t} is on its way. ${filler(30, t)}`,
      });
    };
    for (let t = 0; t < 120; t++) await turn(t);
    await ctx.getMessagesForRequest({ tokenBudget: 3_000 });
    const first = receipts.at(-1)!;
    expect(first.facts.kept).toBeGreaterThan(0);
    expect(first.facts.omitted).toBeGreaterThan(0);
    for (let t = 120; t < 240; t++) {
      await turn(t);
      await ctx.getMessagesForRequest({ tokenBudget: 3_000 });
    }
    expect(receipts.length).toBeGreaterThan(1);
    const last = receipts.at(-1)!;
    // Same rank (stated ids), earlier source: the facts found first stay in the block.
    for (const value of first.facts.values) expect(last.facts.values).toContain(value);
  });
});

describe('a receipt says why no summary was written (issue 23, item 10)', () => {
  it('names the reason when the summarize strategy dropped messages without one', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    const receipts: CompactionReceipt[] = [];
    ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
    for (let i = 0; i < 30; i++) {
      await ctx.addMessage({ role: i % 2 ? 'assistant' : 'user', content: `Turn ${i}: order W${100 + i}.` });
    }
    await ctx.getMessagesForRequest({ tokenBudget: 240 });
    const receipt = receipts.at(-1)!;
    expect(receipt.dropped.length).toBeGreaterThan(0);
    expect(receipt.summarized).toEqual([]);
    expect(receipt.noSummary).toMatch(/^no room for a summary: .* below the 64 a useful one needs$/);
  });

  it('summarizes an agent run at a tight budget where the memory share leaves room, keeping its facts', async () => {
    // Like a tau-bench run: a long system prompt, one task, then tool calls whose results carry ids.
    const agentRun = (): Message[] => {
      const out: Message[] = [
        {
          role: 'system',
          content: `You are an airline agent. ${'Follow the booking policy exactly. '.repeat(120)}`,
        },
        { role: 'user', content: 'Change reservation R0001 for user mia_li_3668 to a later flight.' },
      ];
      for (let i = 0; i < 14; i++) {
        const id = `call_${i}`;
        out.push({
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id,
              type: 'function',
              function: { name: 'get_flight', arguments: `{"flight":"HAT${100 + i}"}` },
            },
          ],
        });
        out.push({
          role: 'tool',
          tool_call_id: id,
          content: `{"flight":"HAT${100 + i}","date":"2024-05-${10 + i}","seats":${i + 3},"price":${200 + i * 7},"note":"${'available '.repeat(12)}"}`,
        });
      }
      out.push({ role: 'assistant', content: 'Which of these flights would you like?' });
      out.push({ role: 'user', content: 'The cheapest one after May 20, please.' });
      return out;
    };
    const ctx = new ContextManager({ model: 'gpt-4o' });
    const receipts: CompactionReceipt[] = [];
    ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
    for (const m of agentRun()) await ctx.addMessage(m);
    const view = await ctx.getMessagesForRequest({ tokenBudget: 1_500 });
    expect(validateRequest(view, 'openai').valid).toBe(true);
    const receipt = receipts.at(-1)!;
    expect(receipt.summarized.length).toBeGreaterThan(0);
    expect(receipt.noSummary).toBeUndefined();
    // The summary takes only the room the facts block and the kept conversation leave.
    expect(receipt.facts.kept).toBeGreaterThan(0);
    expect(receipt.tokensAfter).toBeLessThanOrEqual(receipt.trigger);
  });

  it('says nothing of the kind when a summary was written', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    const receipts: CompactionReceipt[] = [];
    ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
    for (const m of longSessionMessages(120, 'openai', 3)) await ctx.addMessage(m);
    await ctx.getMessagesForRequest({ tokenBudget: 3000 });
    expect(receipts.at(-1)!.summarized.length).toBeGreaterThan(0);
    expect(receipts.at(-1)!.noSummary).toBeUndefined();
  });
});
