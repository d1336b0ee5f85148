/**
 * `summaryInstructions`: the application tells the summarizer what to favour. The LLM tools put
 * it in the summary prompt; the offline summarizer keeps the sentences holding its words first.
 */
import { describe, expect, it, vi } from 'vitest';
import { startFakeLLMServer } from '../test/support/fake-llm-server.js';
import { focusRecorder } from '../test/support/focus-recorder.js';
import { ConfigurationError } from './errors.js';
import { ContextManager } from './manager.js';

const filler = (n: number, seed = 0) =>
  Array.from({ length: n }, (_, i) => `item${(i + seed) % 41} ok`).join(' ');

async function session(ctx: ContextManager): Promise<void> {
  await ctx.addMessage({ role: 'system', content: 'sys' });
  for (let t = 0; t < 25; t++) {
    await ctx.addMessage({ role: 'user', content: `Please update src/mod${t}.ts. ${filler(60, t)}` });
    const aside = t === 7 ? ' The refund for order W-4471 was 212.50 dollars.' : '';
    await ctx.addMessage({ role: 'assistant', content: `Updated src/mod${t}.ts.${aside} ${filler(30, t)}` });
  }
}

async function summaryOf(ctx: ContextManager): Promise<string> {
  const view = await ctx.getMessagesForRequest({ tokenBudget: 2500 });
  const summary = view.find(
    (m) => typeof m.content === 'string' && m.content.includes('[contextkit: summary'),
  );
  return String(summary?.content ?? '');
}

describe('summaryInstructions', () => {
  it('reach the offline summarizer as its focus (its ranking favours their words)', async () => {
    const { tools, focuses } = focusRecorder();
    const ctx = new ContextManager({
      model: 'gpt-4o',
      tools,
      summaryInstructions: 'refund amounts and order numbers',
    });
    await session(ctx);
    expect(await summaryOf(ctx)).toContain('[contextkit: summary');
    expect(focuses.length).toBeGreaterThan(0);
    expect(focuses.every((f) => f === 'refund amounts and order numbers')).toBe(true);
  });

  it.each([
    ['asked at the compaction', false],
    ['prepared ahead', true],
  ] as const)('the LLM summarizer is told them in its prompt (%s)', async (_, ahead) => {
    const server = await startFakeLLMServer({
      provider: 'openai',
      apiKey: 'sk-test',
      reply: (prompt) => (/json/i.test(prompt.system + prompt.user) ? '[]' : 'The user had files updated.'),
    });
    try {
      const ctx = new ContextManager({
        model: 'gpt-4o',
        summaryInstructions: 'Keep every refund amount and order number.',
        llm: {
          provider: 'openai',
          baseURL: server.baseURL,
          apiKey: 'sk-test',
          model: 'small',
          timeoutMs: 20_000,
        },
        summaryAhead: ahead,
      });
      await session(ctx);
      await ctx.getMessagesForRequest({ tokenBudget: 2500 });
      const told = () =>
        server.requests.some((r) =>
          JSON.stringify(r.body).includes('Focus on: Keep every refund amount and order number.'),
        );
      // Asked at the compaction, the request waited for it; prepared ahead, it is asked after.
      if (ahead) await vi.waitFor(() => expect(told()).toBe(true), { timeout: 10_000 });
      expect(told()).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('is checked as an option', () => {
    expect(
      () => new ContextManager({ model: 'gpt-4o', summaryInstructions: 3 as unknown as string }),
    ).toThrow(ConfigurationError);
  });
});
