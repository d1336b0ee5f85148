import { describe, expect, it } from 'vitest';
import { startFakeLLMServer } from '../test/support/fake-llm-server.js';
import type { CompactionReceipt } from './events.js';
import { ContextManager } from './manager.js';

const filler = (n: number, seed = 0) =>
  Array.from({ length: n }, (_, i) => `item${(i + seed) % 41} ok`).join(' ');

async function session(ctx: ContextManager) {
  await ctx.addMessage({ role: 'system', content: 'sys' });
  for (let t = 0; t < 25; t++) {
    await ctx.addMessage({
      role: 'user',
      content: `Please update src/mod${t}.ts for ticket T-${100 + t}. ${filler(60, t)}`,
    });
    await ctx.addMessage({ role: 'assistant', content: `Updated src/mod${t}.ts. ${filler(30, t)}` });
  }
}

describe.each(['openai', 'anthropic'] as const)('a manager with an LLM (%s) configured', (provider) => {
  it('summarizes with the model, and falls back offline with a warning when it fails', async () => {
    const server = await startFakeLLMServer({
      provider,
      apiKey: 'sk-test',
      // Facts are asked for as JSON; summaries as prose.
      reply: (prompt) =>
        /json/i.test(prompt.system + prompt.user)
          ? JSON.stringify([{ key: 'ticket', value: 'T-100', category: 'identifier', seq: 1 }])
          : 'The user asked for updates to src/mod0.ts (ticket T-100) and later files; all were done.',
    });
    try {
      const ctx = new ContextManager({
        model: 'gpt-4o',
        llm: { provider, baseURL: server.baseURL, apiKey: 'sk-test', model: 'small-model', timeoutMs: 2000 },
        // The model asked at the compaction, as the request waits (see manager-summary-ahead.test.ts).
        summaryAhead: false,
      });
      const receipts: CompactionReceipt[] = [];
      const okWarnings: string[] = [];
      ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
      ctx.on('context:warn', (w) => okWarnings.push(w.code));
      await session(ctx);
      const view = await ctx.getMessagesForRequest({ tokenBudget: 3000 });
      expect(server.requests.length).toBeGreaterThan(0);
      expect(receipts[0]!.summary?.tools).toBe(provider);
      expect(JSON.stringify(view)).toContain('ticket T-100) and later files');
      expect(okWarnings).not.toContain('llm_fallback');
      expect(server.requests.every((r) => r.problems.length === 0)).toBe(true);

      const failing = new ContextManager({
        model: 'gpt-4o',
        llm: { provider, baseURL: server.baseURL, apiKey: 'sk-test', model: 'small-model', timeoutMs: 2000 },
        // The model asked at the compaction, as the request waits (see manager-summary-ahead.test.ts).
        summaryAhead: false,
      });
      const warnings: string[] = [];
      failing.on('context:warn', (w) => warnings.push(w.code));
      server.setMode('error500');
      await session(failing);
      const fallback = await failing.getMessagesForRequest({ tokenBudget: 3000 });
      expect(warnings).toContain('llm_fallback');
      expect(JSON.stringify(fallback)).toContain('summary of earlier messages');
      expect(failing.usage().tokens).toBeLessThanOrEqual(3000);
    } finally {
      await server.close();
    }
  });
});
