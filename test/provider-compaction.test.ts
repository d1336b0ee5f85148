/**
 * Anthropic's server-side compaction and context editing, against the fake Messages API that
 * follows the compaction and context-editing pages (test/support/fake-anthropic-server.ts): a
 * session with contextkit driving the server's compaction, what is counted and metered beside
 * what the server reports, and what the fake refuses as the API does.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContextOverflowError } from '../src/errors.js';
import { toAnthropicRequest } from '../src/formats/anthropic/request.js';
import { addAnthropicResponse } from '../src/integrations/providers.js';
import { ContextManager } from '../src/manager.js';
import type { Message } from '../src/messages/types.js';
import type { ContextManagerOptions } from '../src/options.js';
import { renderReportHtml } from '../src/report/html.js';
import { replayConversation } from '../src/report/replay.js';
import { MemoryStore } from '../src/stores/memory.js';
import { getModelInfo } from '../src/tokens/catalog.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { conversationArb, seededRandom } from './support/arbitraries.js';
import { drivenSession, MODEL, postMessages, userText } from './support/driven-session.js';
import {
  anthropicRequestProblems,
  type FakeAnthropicServer,
  messagesBody,
  signThinking,
  startFakeAnthropic,
} from './support/fake-anthropic-server.js';
import { answersReachable, LOCOMO_DIR, loadChats } from './support/locomo.js';

let server: FakeAnthropicServer;
beforeAll(async () => {
  server = await startFakeAnthropic();
});
afterAll(() => server.close());

/** The fake counts raw cl100k tokens; count the same so the figures compare (as cost-meter.test does). */
const EXACT: ContextManagerOptions['models'] = {
  [MODEL]: { tokenizer: { kind: 'exact', encoding: 'cl100k_base' } },
};

const post = (body: Record<string, unknown>, betas: readonly string[] = []) =>
  postMessages(server.url, body, betas);

describe('Anthropic server compaction driven by contextkit', () => {
  it('every reply added, every view accepted, counts within 2% and the meter within 1% of the billing', async () => {
    const ctx = new ContextManager({
      model: MODEL,
      models: EXACT,
      compactThreshold: 0.9,
      targetUsage: 0.5,
      providerCompaction: true,
    });
    const figures = await drivenSession(server.url, 260, ctx, 60_000);
    expect(figures.refused).toBe(0);
    expect(figures.stored).toBe(figures.added);
    expect(figures.serverCompactions).toBeGreaterThanOrEqual(2);
    expect(figures.ownCompactions).toBe(0);
    expect(figures.worstCountError).toBeLessThan(0.02);
    expect(Math.abs(figures.meterInput - figures.billedInput) / figures.billedInput).toBeLessThan(0.01);
    expect(ctx.usage().cost?.totals.serverCompactions?.count).toBe(figures.serverCompactions);
  }, 120_000);
});

/** A long Anthropic conversation the server compacted: 64 long turns, the reply with the block, a new question. */
function compactedConversation(): unknown[] {
  const r = seededRandom(5);
  const messages: unknown[] = [{ role: 'system', content: 'You are a careful support agent.' }];
  for (let i = 0; i < 32; i++) {
    messages.push({ role: 'user', content: userText(i, r) });
    messages.push({ role: 'assistant', content: `Noted turn ${i}.` });
  }
  messages.push({ role: 'user', content: 'Where were we?' });
  messages.push({
    role: 'assistant',
    content: [
      {
        type: 'compaction',
        content: 'Summary: 32 turns of code words zq0x to zq31x; the user asked where we were.',
      },
      { type: 'text', text: 'We were going through the code words.' },
    ],
  });
  messages.push({ role: 'user', content: 'What is the code word of turn 3?' });
  return messages;
}

describe('a stored compaction block (regressions)', () => {
  it('counts what the API reads: the system prompt and what follows the last compaction block', async () => {
    const ctx = new ContextManager({ model: MODEL, models: EXACT });
    for (const m of compactedConversation()) await ctx.addMessage(m);
    const whole = await ctx.getTokenCount();
    const body = toAnthropicRequest(await ctx.getMessagesForRequest({ tokenBudget: 100_000 }));
    const res = await post({ model: MODEL, max_tokens: 1024, ...body });
    expect(res.status).toBe(200);
    const reported = (res.json.usage as { input_tokens: number }).input_tokens;
    const counted = ctx.usage().tokens;
    expect(whole).toBeGreaterThan(10 * reported);
    expect(Math.abs(counted - reported) / reported).toBeLessThan(0.05);
    // The stored history stays whole.
    expect(await ctx.getMessages()).toHaveLength(compactedConversation().length);
  });

  it('does not compact again what the server already dropped', async () => {
    const ctx = new ContextManager({ model: MODEL, models: EXACT });
    const compactions: unknown[] = [];
    ctx.on('context:post_compact', (e) => compactions.push(e));
    for (const m of compactedConversation()) await ctx.addMessage(m);
    // The whole history is ~20k tokens; what the API reads is a few hundred.
    const view = await ctx.getMessagesForRequest({ tokenBudget: 5_000 });
    expect(compactions).toHaveLength(0);
    expect(view.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'compaction'))).toBe(
      true,
    );
    // The plan leaves nothing out: it only carries the facts of what the server covered.
    const plan = ctx.currentPlan();
    expect(plan).toMatchObject({ dropped: [], cleared: [], truncated: [] });
    expect(plan?.summary).toBeUndefined();
    expect(plan?.facts?.map((f) => f.value)).toContain('zq0x');
  });

  it('stores a compaction block without an unknown_block warning', async () => {
    const ctx = new ContextManager({ model: MODEL });
    const warnings: string[] = [];
    ctx.on('context:warn', (w) => warnings.push(w.code));
    for (const m of compactedConversation()) await ctx.addMessage(m);
    expect(warnings).not.toContain('unknown_block');
  });

  it('meters the compaction step of usage.iterations, and calibrates against the input that was sent', async () => {
    const ctx = new ContextManager({ model: MODEL, models: EXACT });
    for (const m of compactedConversation().slice(0, 66)) await ctx.addMessage(m);
    await ctx.getMessagesForRequest({ tokenBudget: 100_000 });
    const sent = ctx.usage();
    const before = sent.cost!.totals.inputTokens;
    const events: unknown[] = [];
    ctx.on('context:provider_context', (e) => events.push(e));
    await ctx.recordUsage({
      model: MODEL,
      usage: {
        input_tokens: 900,
        output_tokens: 50,
        iterations: [
          { type: 'compaction', input_tokens: sent.tokens, output_tokens: 700 },
          { type: 'message', input_tokens: 900, output_tokens: 50 },
        ],
      },
    });
    const totals = ctx.usage().cost!.totals;
    expect(totals.inputTokens).toBe(before + 900);
    expect(totals.serverCompactions).toEqual({ count: 1, outputTokens: 700 });
    expect(events).toHaveLength(1);
    // The correction learned from the compaction step's input (what was sent), not the 900 after it.
    await ctx.getMessagesForRequest({ tokenBudget: 100_000 });
    expect(ctx.usage().tokens).toBeGreaterThan(0.9 * sent.tokens);
  });

  it('recordUsage takes the iterations in contextkit names and meters them', async () => {
    const ctx = new ContextManager({ model: MODEL, models: EXACT });
    for (const m of compactedConversation().slice(0, 10)) await ctx.addMessage(m);
    await ctx.getMessagesForRequest();
    const before = ctx.usage().cost!.totals.inputTokens;
    await ctx.recordUsage({
      model: MODEL,
      inputTokens: 300,
      iterations: [
        { type: 'compaction', inputTokens: before, outputTokens: 200 },
        { type: 'message', inputTokens: 300, outputTokens: 20 },
      ],
    });
    expect(ctx.usage().cost!.totals.inputTokens).toBe(before + 300);
    expect(ctx.usage().cost!.totals.serverCompactions?.count).toBe(1);
  });

  it('reads context_management.applied_edits into context:provider_context', async () => {
    const ctx = new ContextManager({ model: MODEL });
    await ctx.addMessage({ role: 'user', content: 'hi' });
    await ctx.getMessagesForRequest();
    const events: Array<{ appliedEdits?: unknown }> = [];
    ctx.on('context:provider_context', (e) => events.push(e));
    await ctx.recordUsage({
      model: MODEL,
      usage: { input_tokens: 10, output_tokens: 1 },
      context_management: {
        applied_edits: [
          { type: 'clear_tool_uses_20250919', cleared_tool_uses: 4, cleared_input_tokens: 5200 },
        ],
      },
    });
    expect(events[0]?.appliedEdits).toEqual([
      { type: 'clear_tool_uses_20250919', clearedInputTokens: 5200, clearedToolUses: 4 },
    ]);
  });
});

describe('providerCompaction: the request and the fallbacks', () => {
  it('sets the trigger from the budget and threshold, never under the 50,000 minimum, with the beta', async () => {
    const ctx = new ContextManager({ model: MODEL, providerCompaction: { clearToolUses: { keep: 2 } } });
    await ctx.addMessage({ role: 'user', content: 'hi' });
    const big = await ctx.getAnthropicRequest({ tokenBudget: 100_000 });
    expect(big.betas).toEqual(['compact-2026-01-12', 'context-management-2025-06-27']);
    expect(big.context_management?.edits).toEqual([
      { type: 'clear_tool_uses_20250919', keep: { type: 'tool_uses', value: 2 } },
      { type: 'compact_20260112', trigger: { type: 'input_tokens', value: 92_000 } },
    ]);
    const small = await ctx.getAnthropicRequest({ tokenBudget: 20_000 });
    expect(small.context_management?.edits.at(-1)).toMatchObject({ trigger: { value: 50_000 } });
    const res = await post({ model: MODEL, max_tokens: 10, ...small }, small.betas);
    expect(res.status).toBe(200);
  });

  it('compacts itself with a warning where the view is under the minimum or the model has none', async () => {
    for (const [model, code] of [
      [MODEL, 'provider_compaction_unavailable'],
      ['claude-sonnet-4-5', 'provider_compaction_unavailable'],
    ] as const) {
      const ctx = new ContextManager({ model, providerCompaction: true });
      const warnings: string[] = [];
      let compactions = 0;
      ctx.on('context:warn', (w) => warnings.push(w.code));
      ctx.on('context:post_compact', () => compactions++);
      for (const m of compactedConversation().slice(0, 60)) await ctx.addMessage(m);
      const body = await ctx.getAnthropicRequest({ tokenBudget: 12_000 });
      expect(warnings).toContain(code);
      expect(compactions).toBe(1);
      if (model !== MODEL) expect(body.context_management).toBeUndefined();
    }
  });

  it('falls back to its own compaction when two replies in a row come without the block', async () => {
    const ctx = new ContextManager({ model: MODEL, models: EXACT, providerCompaction: true });
    const warnings: string[] = [];
    let compactions = 0;
    ctx.on('context:warn', (w) => warnings.push(w.code));
    ctx.on('context:post_compact', () => compactions++);
    const r = seededRandom(9);
    // Just past the 55,200-token trigger of a 60,000 budget, under the budget.
    for (let i = 0; (await ctx.getTokenCount()) < 55_500; i++)
      await ctx.addMessage({ role: i % 2 ? 'assistant' : 'user', content: userText(i, r) });
    await ctx.addMessage({ role: 'user', content: 'next' });
    for (let k = 0; k < 3 && compactions === 0; k++) {
      await ctx.getAnthropicRequest({ tokenBudget: 60_000 });
      // A reply without a compaction block, as from a proxy that dropped the edits.
      await ctx.addMessage({ role: 'assistant', content: `reply ${k}` });
      await ctx.addMessage({ role: 'user', content: `question ${k}` });
    }
    expect(warnings).toContain('provider_compaction_failed');
    expect(compactions).toBe(1);
  });

  it('refuses what the fake API refuses: a trigger under 50,000, no beta header, a model without compaction', async () => {
    const messages = [{ role: 'user', content: 'hi' }];
    const edit = (value: number) => ({
      context_management: { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value } }] },
    });
    const low = await post({ model: MODEL, max_tokens: 10, messages, ...edit(40_000) }, [
      'compact-2026-01-12',
    ]);
    expect(low.status).toBe(400);
    const noBeta = await post({ model: MODEL, max_tokens: 10, messages, ...edit(60_000) });
    expect(noBeta.status).toBe(400);
    const old = await post({ model: 'claude-sonnet-4-5', max_tokens: 10, messages, ...edit(60_000) }, [
      'compact-2026-01-12',
    ]);
    expect(old.status).toBe(400);
    const clear = await post(
      {
        model: MODEL,
        max_tokens: 10,
        messages,
        context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      },
      ['compact-2026-01-12'],
    );
    expect(clear.status).toBe(400);
  });

  it('the fake clears old tool results past the trigger and reports applied_edits, which contextkit records', async () => {
    const ctx = new ContextManager({
      model: MODEL,
      providerCompaction: { clearToolUses: { trigger: 1_000, keep: 1 } },
    });
    for (let i = 0; i < 4; i++) {
      await ctx.addMessage({ role: 'user', content: `look up ${i}` });
      await ctx.addMessage({
        role: 'assistant',
        content: [{ type: 'tool_use', id: `c${i}`, name: 'lookup', input: { i } }],
      });
      await ctx.addMessage({
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: `c${i}`, content: `result ${i} ${'data '.repeat(400)}` },
        ],
      });
    }
    const edits: unknown[] = [];
    ctx.on('context:provider_context', (e) => edits.push(...(e.appliedEdits ?? [])));
    const { betas, ...body } = await ctx.getAnthropicRequest();
    const res = await post({ model: MODEL, max_tokens: 10, ...body }, betas);
    expect(res.status).toBe(200);
    await addAnthropicResponse(ctx, res.json);
    expect(edits).toMatchObject([{ type: 'clear_tool_uses_20250919', clearedToolUses: 3 }]);
    expect(await ctx.getMessages()).toHaveLength(13);
  });
});

const chats = loadChats();
if (!chats) console.warn(`skipping the LoCoMo recall test: ${LOCOMO_DIR} is absent`);

describe.skipIf(!chats)('recall after a server compaction, on the LoCoMo chats', () => {
  it('finds everything stored before the compaction as it did without it', async () => {
    const counter = createTokenCounter(getModelInfo(MODEL)!);
    const run = (compacted: boolean) =>
      answersReachable(
        chats ?? [],
        (chat) => {
          const ctx = new ContextManager({ model: MODEL });
          const ready = (async () => {
            for (const e of chat.entries) await ctx.addMessage(e.message, { metadata: e.metadata });
            if (!compacted) return;
            await ctx.addMessage({ role: 'user', content: 'Let us go on.' });
            await ctx.addMessage({
              role: 'assistant',
              content: [
                { type: 'compaction', content: 'Summary: a long chat between two friends.' },
                { type: 'text', text: 'Sure.' },
              ],
            });
            // The view now starts at the block: the chat's turns are no longer sent, the task (kept
            // in every view since issue 30, re-sent after the block) aside.
            const view = await ctx.getMessagesForRequest();
            expect(view.length).toBeLessThanOrEqual(4);
          })();
          return async (q) => {
            await ready;
            return (await ctx.recall(q)).map((h) => h.text);
          };
        },
        (text) => counter.countText(text),
      );
    const plain = await run(false);
    const compacted = await run(true);
    expect(compacted.total).toBe(154);
    expect(compacted.found).toBe(plain.found);
    expect(compacted.found / compacted.total).toBeGreaterThanOrEqual(0.85);
  });
});

describe('replay report', () => {
  it('shows the server compactions beside its own, and the view they start is no cache break', async () => {
    const messages = [...compactedConversation(), { role: 'assistant', content: 'Turn 3 was zq3x.' }];
    const report = await replayConversation(messages as Message[], { model: MODEL, maxTokens: 100_000 });
    expect(report.serverCompactions).toEqual([
      { provider: 'anthropic', seq: 66, turn: expect.any(Number), summaryChars: 76 },
    ]);
    expect(report.totals.cacheBreaks).toBe(0);
    // Beside contextkit's own, in the totals card and in the list.
    expect(report.totals.serverCompactions).toBe(1);
    const html = renderReportHtml(report);
    expect(html).toContain("1 by the provider's server");
    expect(html).toContain('The provider compacted on its server 1 time');
    expect(html).toContain('a 76-character summary');
  });
});

describe('property: a server compaction anywhere in a generated Anthropic conversation', () => {
  it('each view starts at the last compaction block, is accepted, fits, and the history is unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb({ format: 'anthropic', images: false }),
        fc.nat(),
        fc.integer({ min: 2_000, max: 40_000 }),
        async (conv, pick, budget) => {
          // Where a reply can stand: before a user turn that returns no tool results, after no open call.
          const sites = conv.messages
            .map((_m, i) => i)
            .filter((i) => {
              const m = conv.messages[i]!;
              const prev = conv.messages[i - 1];
              const results = Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result');
              const calls =
                prev && Array.isArray(prev.content) && prev.content.some((b) => b.type === 'tool_use');
              return i > 0 && m.role === 'user' && !results && !calls;
            });
          fc.pre(sites.length > 0);
          const at = sites[pick % sites.length]!;
          const reply = {
            role: 'assistant',
            content: [
              { type: 'compaction', content: `Summary of the ${at} messages before.` },
              { type: 'text', text: 'Go on.' },
            ],
          } as Message;
          const messages = [...conv.messages.slice(0, at), reply, ...conv.messages.slice(at)];
          const ctx = new ContextManager({ model: MODEL });
          for (const m of messages) await ctx.addMessage(m);
          let view: Message[];
          try {
            view = await ctx.getMessagesForRequest({ tokenBudget: budget });
          } catch (error) {
            // What must be kept (the turn in progress) may not fit a small budget: said, not sent.
            expect(error).toBeInstanceOf(ContextOverflowError);
            return;
          }
          expect(ctx.usage().tokens).toBeLessThanOrEqual(budget);
          // Nothing the API would drop is sent: no message stored before the block, the system prompt
          // and the task aside (kept in every view, issue 30: re-sent after the block).
          const task = messages.find(
            (m) =>
              m.role === 'user' &&
              (typeof m.content === 'string' || !(m.content ?? []).some((b) => b.type === 'tool_result')),
          );
          const dropped = new Set(
            messages
              .slice(0, at)
              // (a later message word for word the task's is indistinguishable from it: left out too)
              .filter((m) => m.role !== 'system' && JSON.stringify(m) !== JSON.stringify(task))
              .map((m) => JSON.stringify(m)),
          );
          const live = new Set(messages.slice(at).map((m) => JSON.stringify(m)));
          const sent = view.map((m) => JSON.stringify(m));
          expect(sent.filter((j) => dropped.has(j) && !live.has(j))).toEqual([]);
          // The block leaves the view only with what contextkit compacts of the live part itself.
          const blocks = view.filter(
            (m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'compaction'),
          );
          // It carries everything before it: contextkit's own compaction keeps it verbatim.
          expect(blocks).toEqual([reply]);
          expect(anthropicRequestProblems(messagesBody(view), { signatures: false })).toEqual([]);
          expect(await ctx.getMessages()).toEqual(messages);
        },
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 40) },
    );
  });
});

describe("contextkit's own compaction after a server compaction", () => {
  it('plans over what follows the block, keeps the block verbatim, and the fake accepts the view', async () => {
    const ctx = new ContextManager({ model: MODEL, models: EXACT });
    await ctx.addMessage({ role: 'system', content: 'You track parcels.' });
    const r = seededRandom(11);
    for (let i = 0; i < 20; i++) {
      await ctx.addMessage({ role: 'user', content: `parcel PX-${1000 + i}: ${userText(i, r)}` });
      await ctx.addMessage({ role: 'assistant', content: `Noted parcel PX-${1000 + i}.` });
    }
    await ctx.addMessage({ role: 'user', content: 'Where were we?' });
    const block = { type: 'compaction', content: 'Summary: twenty parcels PX-1000 to PX-1019 were noted.' };
    await ctx.addMessage({ role: 'assistant', content: [block, { type: 'text', text: 'At the parcels.' }] });
    for (let i = 0; i < 20; i++) {
      await ctx.addMessage({ role: 'user', content: `ticket TK-${2000 + i}: ${userText(100 + i, r)}` });
      await ctx.addMessage({ role: 'assistant', content: `Noted ticket TK-${2000 + i}.` });
    }
    await ctx.addMessage({ role: 'user', content: 'And now?' });
    const body = await ctx.getAnthropicRequest({ tokenBudget: 6_000 });
    expect(ctx.currentPlan()).not.toBeNull();
    expect(ctx.usage().tokens).toBeLessThanOrEqual(6_000);
    const messages = body.messages as Array<{ content: unknown }>;
    expect(messages.filter((m) => JSON.stringify(m.content).includes('"type":"compaction"'))).toHaveLength(1);
    const res = await post({ model: MODEL, max_tokens: 10, ...body });
    expect(res.status).toBe(200);
  });
});

describe('a stored server compaction across a restart', () => {
  it('a manager that loads the history views and counts from the last block, its old plan dropped', async () => {
    const store = new MemoryStore();
    const first = new ContextManager({ model: MODEL, models: EXACT, store, conversationId: 'c' });
    const all = compactedConversation();
    // contextkit compacts the history first (a plan is kept in the store), then the server's block arrives.
    for (const m of all.slice(0, 66)) await first.addMessage(m);
    await first.getMessagesForRequest({ tokenBudget: 8_000 });
    expect(first.currentPlan()).not.toBeNull();
    for (const m of all.slice(66)) await first.addMessage(m);
    const view = await first.getMessagesForRequest({ tokenBudget: 8_000 });
    const second = new ContextManager({ model: MODEL, models: EXACT, store, conversationId: 'c' });
    expect(await second.getMessagesForRequest({ tokenBudget: 8_000 })).toEqual(view);
    // The old plan's drops are gone; what is kept is the facts block of what the server covered.
    expect(second.currentPlan()).toMatchObject({ dropped: [], cleared: [], truncated: [] });
    expect(second.currentPlan()).toEqual(first.currentPlan());
    expect(await second.getMessages()).toHaveLength(all.length);
  });
});

describe('providerCompaction: thinking clearing (clear_thinking_20251015)', () => {
  /** A user question, a reply that thought first (signed as the fake signs), `turns` times. */
  async function thinkingConversation(ctx: ContextManager, turns: number): Promise<void> {
    for (let i = 0; i < turns; i++) {
      await ctx.addMessage({ role: 'user', content: `question ${i}` });
      const thought = `thinking about question ${i}: ${'because '.repeat(60)}`;
      await ctx.addMessage({
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: thought, signature: signThinking(thought) },
          { type: 'text', text: `answer ${i}` },
        ],
      });
    }
    await ctx.addMessage({ role: 'user', content: 'and the last question?' });
  }

  it('goes first in the edits, with its keep and the context-editing beta, and the fake accepts it', async () => {
    const ctx = new ContextManager({
      model: MODEL,
      providerCompaction: { clearThinking: { keep: 2 }, clearToolUses: true },
    });
    await ctx.addMessage({ role: 'user', content: 'hi' });
    const body = await ctx.getAnthropicRequest({ tokenBudget: 100_000 });
    expect(body.betas).toEqual(['compact-2026-01-12', 'context-management-2025-06-27']);
    expect(body.context_management?.edits.map((e) => e.type)).toEqual([
      'clear_thinking_20251015',
      'clear_tool_uses_20250919',
      'compact_20260112',
    ]);
    expect(body.context_management?.edits[0]).toEqual({
      type: 'clear_thinking_20251015',
      keep: { type: 'thinking_turns', value: 2 },
    });
    const { betas, ...rest } = body;
    expect((await post({ model: MODEL, max_tokens: 10, ...rest }, betas)).status).toBe(200);
    const all = new ContextManager({ model: MODEL, providerCompaction: { clearThinking: { keep: 'all' } } });
    await all.addMessage({ role: 'user', content: 'hi' });
    const kept = await all.getAnthropicRequest({ tokenBudget: 100_000 });
    expect(kept.context_management?.edits[0]).toEqual({ type: 'clear_thinking_20251015', keep: 'all' });
    expect(kept.betas).toContain('context-management-2025-06-27');
  });

  it('refuses a keep the API refuses, naming the option', () => {
    for (const keep of [0, -1, 1.5, 'some']) {
      expect(
        () => new ContextManager({ model: MODEL, providerCompaction: { clearThinking: { keep } as never } }),
      ).toThrow(/providerCompaction\.clearThinking\.keep/);
    }
  });

  it('the fake refuses what the API refuses: not listed first, a keep of 0, no beta', async () => {
    const messages = [{ role: 'user', content: 'hi' }];
    const betas = ['context-management-2025-06-27'];
    const second = await post(
      {
        model: MODEL,
        max_tokens: 10,
        messages,
        context_management: {
          edits: [{ type: 'clear_tool_uses_20250919' }, { type: 'clear_thinking_20251015' }],
        },
      },
      betas,
    );
    expect(second.status).toBe(400);
    expect(JSON.stringify(second.json)).toMatch(/must be listed first/);
    const zero = await post(
      {
        model: MODEL,
        max_tokens: 10,
        messages,
        context_management: {
          edits: [{ type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 0 } }],
        },
      },
      betas,
    );
    expect(zero.status).toBe(400);
    const noBeta = await post({
      model: MODEL,
      max_tokens: 10,
      messages,
      context_management: { edits: [{ type: 'clear_thinking_20251015' }] },
    });
    expect(noBeta.status).toBe(400);
  });

  it('the fake clears the thinking of older turns and reports it; contextkit records it and keeps the history', async () => {
    const ctx = new ContextManager({
      model: MODEL,
      providerCompaction: { clearThinking: { keep: 1 } },
    });
    await thinkingConversation(ctx, 4);
    const events: unknown[] = [];
    ctx.on('context:provider_context', (e) => events.push(...(e.appliedEdits ?? [])));
    const { betas, ...body } = await ctx.getAnthropicRequest({ tokenBudget: 100_000 });
    const res = await post({ model: MODEL, max_tokens: 10, ...body }, betas);
    expect(res.status).toBe(200);
    await addAnthropicResponse(ctx, res.json);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'clear_thinking_20251015', clearedThinkingTurns: 3 });
    expect((events[0] as { clearedInputTokens: number }).clearedInputTokens).toBeGreaterThan(200);
    // The server's edit is the server's: the stored history keeps every thinking block.
    const thinking = (await ctx.getMessages()).filter(
      (m) => Array.isArray(m.content) && (m.content as { type: string }[]).some((b) => b.type === 'thinking'),
    );
    expect(thinking).toHaveLength(4);
  });
});
