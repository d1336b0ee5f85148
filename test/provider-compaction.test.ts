/**
 * Anthropic's server-side compaction and context editing, against the fake Messages API that
 * follows the compaction and context-editing pages (test/support/fake-anthropic-server.ts): a
 * session with contextkit driving the server's compaction, what is counted and metered beside
 * what the server reports, and what the fake refuses as the API does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContextManager } from '../src/manager.js';
import { toAnthropicRequest } from '../src/messages/split.js';
import type { ContextManagerOptions } from '../src/options.js';
import { seededRandom } from './support/arbitraries.js';
import { drivenSession, MODEL, postMessages, userText } from './support/driven-session.js';
import { type FakeAnthropicServer, startFakeAnthropic } from './support/fake-anthropic-server.js';

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
      { type: 'compaction', content: 'Summary: 32 turns of code words zq0x to zq31x; the user asked where we were.' },
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
    expect(view.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'compaction'))).toBe(true);
    expect(ctx.currentPlan()).toBeNull();
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
    await ctx.recordAnthropicUsage({
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
    await ctx.recordAnthropicUsage({
      model: MODEL,
      usage: { input_tokens: 10, output_tokens: 1 },
      context_management: {
        applied_edits: [{ type: 'clear_tool_uses_20250919', cleared_tool_uses: 4, cleared_input_tokens: 5200 }],
      },
    });
    expect(events[0]?.appliedEdits).toEqual([
      { type: 'clear_tool_uses_20250919', clearedInputTokens: 5200, clearedToolUses: 4 },
    ]);
  });
});
