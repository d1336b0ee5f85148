import { describe, expect, it } from 'vitest';
import { startFakeCountServer } from '../test/support/fake-count-server.js';
import { ContextManager } from './manager.js';
import { createCountClient } from './measure/count-endpoints.js';
import { MemoryStore } from './stores/memory.js';
import { validateRequest } from './wire/validate-request.js';

const words = (n: number, seed = 0) =>
  Array.from({ length: n }, (_, i) => `w${(i * 17 + seed) % 89} item-${i % 23}`).join(' ');

/** Long common words: few tokens for many characters, so a chars/4 count is above the BPE one. */
const prose = (n: number, seed = 0) => {
  const vocab = [
    'international',
    'understanding',
    'communication',
    'responsibility',
    'reservation',
    'transportation',
  ];
  return Array.from({ length: n }, (_, i) => vocab[(i + seed) % vocab.length]).join(' ');
};

async function chat(ctx: ContextManager, turns: number, size = 120, text = words): Promise<void> {
  await ctx.addMessage({ role: 'system', content: 'You help with travel bookings.' });
  for (let t = 0; t < turns; t++) {
    await ctx.addMessage({ role: 'user', content: `turn ${t}: ${text(size, t)}` });
    await ctx.addMessage({
      role: 'assistant',
      content: [{ type: 'text', text: `reply ${t}: ${text(size / 2, t)}` }],
    });
  }
}

describe('learning from reported usage', () => {
  it('moves the fast estimate toward what the provider billed, a little at first', async () => {
    const ctx = new ContextManager({ model: 'claude-sonnet-4-5' });
    await chat(ctx, 3);
    await ctx.getMessagesForRequest({ tokenBudget: 100_000 });
    const before = ctx.usage().tokens;
    await ctx.recordUsage({ inputTokens: Math.round(before * 1.3) });
    await ctx.getMessagesForRequest({ tokenBudget: 100_000 });
    const once = ctx.usage().tokens;
    expect(once).toBeGreaterThan(before);
    expect(once).toBeLessThan(before * 1.2); // the first sample does not swing the estimate
    for (let i = 0; i < 20; i++) {
      await ctx.getMessagesForRequest({ tokenBudget: 100_000 });
      await ctx.recordUsage({ inputTokens: Math.round(before * 1.3) });
    }
    await ctx.getMessagesForRequest({ tokenBudget: 100_000 });
    expect(ctx.usage().tokens / before).toBeGreaterThan(1.2);
  });

  it('takes Anthropic and OpenAI responses, and keeps the correction in the store', async () => {
    const store = new MemoryStore();
    const a = new ContextManager({ model: 'claude-sonnet-4-5', store, conversationId: 'cal' });
    await chat(a, 2);
    await a.getMessagesForRequest({ tokenBudget: 50_000 });
    const est = a.usage().tokens;
    for (let i = 0; i < 10; i++) {
      await a.recordUsage({
        model: 'claude-sonnet-4-5-20250929',
        usage: {
          input_tokens: Math.round(est * 0.5),
          cache_read_input_tokens: Math.round(est * 0.3),
          cache_creation_input_tokens: 0,
          output_tokens: 5,
        },
      });
    }
    await a.getMessagesForRequest({ tokenBudget: 50_000 });
    const learned = a.usage().tokens;
    expect(learned).toBeLessThan(est);
    const b = new ContextManager({ model: 'claude-sonnet-4-5', store, conversationId: 'cal' });
    await b.getMessagesForRequest({ tokenBudget: 50_000 });
    expect(b.usage().tokens).toBe(learned);
    const o = new ContextManager({ model: 'gpt-4o' });
    await o.addMessage({ role: 'user', content: 'hi' });
    await o.getMessagesForRequest();
    await expect(
      o.recordUsage({ model: 'gpt-4o', usage: { prompt_tokens: 9, completion_tokens: 1 } }),
    ).resolves.toBeUndefined();
    await expect(o.recordUsage({ inputTokens: -1 })).rejects.toThrow(/inputTokens/);
  });
});

describe('recoverFromOverflow', () => {
  it('tightens the budget from the numbers in the error and returns a smaller valid view, once', async () => {
    const ctx = new ContextManager({ model: 'claude-sonnet-4-5' });
    await chat(ctx, 30, 200);
    const first = await ctx.getMessagesForRequest({ tokenBudget: 20_000 });
    const sent = ctx.usage().tokens;
    const err = Object.assign(
      new Error(`prompt is too long: ${Math.round(sent * 1.25)} tokens > ${sent} maximum`),
      {
        status: 400,
        error: {
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message: `prompt is too long: ${Math.round(sent * 1.25)} tokens > ${sent} maximum`,
          },
        },
      },
    );
    const smaller = await ctx.recoverFromOverflow(err);
    expect(JSON.stringify(smaller).length).toBeLessThan(JSON.stringify(first).length);
    expect(ctx.usage().tokens * 1.25).toBeLessThanOrEqual(sent * 1.05);
    expect(validateRequest(smaller, 'anthropic').valid).toBe(true);
    await expect(ctx.recoverFromOverflow(err)).rejects.toBe(err);
    const other = new Error('rate limited');
    await expect(ctx.recoverFromOverflow(other)).rejects.toBe(other);
  });
});

describe('recoverFromOverflow before any request', () => {
  it('fits the stored history within the limit the error gives (or 15% under the budget), once', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o', maxTokens: 50_000 });
    await chat(ctx, 40, 200);
    const warnings: string[] = [];
    ctx.on('context:warn', (w) => warnings.push(w.message));
    const limit = Math.floor((await ctx.getTokenCount()) / 3);
    const err = Object.assign(new Error(`This model's maximum context length is ${limit} tokens.`), {
      status: 400,
      code: 'context_length_exceeded',
    });
    // A resumed process gets the provider's refusal of a request it did not make itself.
    const resumed = new ContextManager({ model: 'gpt-4o' });
    await resumed.setMessages(await ctx.getMessages());
    const view = await resumed.recoverFromOverflow(err);
    expect(resumed.usage().tokens).toBeLessThanOrEqual(limit);
    expect(validateRequest(view, 'openai').valid).toBe(true);
    await expect(resumed.recoverFromOverflow(err)).rejects.toBe(err);
    const bare = new ContextManager({ model: 'gpt-4o' });
    await bare.setMessages(await ctx.getMessages());
    bare.on('context:warn', (w) => warnings.push(w.message));
    await bare.recoverFromOverflow(Object.assign(new Error('prompt is too long'), { status: 400 }));
    expect(bare.usage().budget).toBe(Math.floor(bare.usage().budget));
    expect(bare.usage().budget).toBeLessThanOrEqual(Math.floor((128_000 - 16_384 - 1_000) * 0.85));
    expect(warnings.some((w) => /did not make; fitting the stored history within/.test(w))).toBe(true);
  });
});

describe('exact counts near the limit', () => {
  it('asks the provider when an estimate is near the budget, and compacts further when it is over', async () => {
    const server = await startFakeCountServer({ apiKey: 'k-test' });
    try {
      const countClient = createCountClient({ provider: 'anthropic', baseURL: server.url, apiKey: 'k-test' });
      const ctx = new ContextManager({ model: 'claude-sonnet-4-5', countClient });
      await chat(ctx, 40, 150, prose);
      const probe = new ContextManager({ model: 'claude-sonnet-4-5' });
      await chat(probe, 40, 150, prose);
      await probe.getMessagesForRequest({ tokenBudget: 1_000_000 });
      // Under the trigger (0.92) but past the exact-count line (0.9).
      const budget = Math.floor(probe.usage().tokens / 0.91);
      const view = await ctx.getMessagesForRequest({ tokenBudget: budget });
      expect(server.requests.length).toBeGreaterThan(0);
      expect(server.rejections).toEqual([]);
      // The fake counts more than the estimate: the manager compacted until it fits that count.
      const first = server.requests[0]!;
      expect(server.countOf(first.body)).toBeGreaterThan(budget);
      expect(ctx.usage().tokens).toBeLessThan(probe.usage().tokens);
      expect(validateRequest(view, 'anthropic').valid).toBe(true);
      server.failNext('server-error', 5);
      const warnings: string[] = [];
      ctx.on('context:warn', (w) => warnings.push(w.code));
      await ctx.addMessage({ role: 'user', content: 'one more' });
      await ctx.getMessagesForRequest({ tokenBudget: 10_000_000 });
      const near = Math.floor(ctx.usage().tokens / 0.91);
      await expect(ctx.getMessagesForRequest({ tokenBudget: near })).resolves.toBeDefined();
      expect(warnings).toContain('exact_count');
    } finally {
      await server.close();
    }
  });
});
