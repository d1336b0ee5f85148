/**
 * Recall on conversations no generator wrote: the 200 tau-bench agent runs (each fact the run
 * acted on, searched for by itself) and the LoCoMo chats (each question, searched for as asked).
 * Both skip with a message where `../shared/data` is absent.
 */
import { describe, expect, it } from 'vitest';
import { ContextManager } from '../src/manager.js';
import type { MessageFormat } from '../src/messages/types.js';
import { getModelInfo } from '../src/tokens/catalog.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { answersReachable, filteredReach, LOCOMO_DIR, loadChats } from './support/locomo.js';
import { hasTauBench, loadTauBench, TAU_BENCH_PATH } from './support/tau-bench.js';

const MODEL: Record<MessageFormat, string> = {
  openai: 'gpt-4o',
  anthropic: 'claude-sonnet-4-5',
  'openai-responses': 'gpt-4o',
  gemini: 'gemini-2.5-flash',
  bedrock: 'claude-sonnet-4-5',
};

const tau = hasTauBench();
if (!tau) console.warn(`skipping the tau-bench recall tests: ${TAU_BENCH_PATH} is absent`);
const chats = loadChats();
if (!chats) console.warn(`skipping the LoCoMo recall test: ${LOCOMO_DIR} is absent`);

describe.skipIf(!tau)('recall on the 200 tau-bench runs', () => {
  it.each(['openai', 'anthropic'] as const)(
    'in %s format finds the facts each run acted on, within 1,000 tokens, each turn once, nothing stored changed',
    async (format) => {
      const counter = createTokenCounter(getModelInfo(MODEL[format])!);
      let found = 0;
      let asked = 0;
      for (const run of loadTauBench()) {
        const ctx = new ContextManager({ model: MODEL[format] });
        for (const m of run[format]) await ctx.addMessage(m);
        const before = JSON.stringify(await ctx.getMessages());
        for (const fact of run.presentFacts) {
          const hits = await ctx.recall(fact);
          expect(hits.reduce((n, h) => n + counter.countText(h.text), 0)).toBeLessThanOrEqual(1_000);
          const shown = hits.flatMap((h) => [
            ...new Set(Array.from(h.text.matchAll(/^#(\d+) /gm), (m) => m[1])),
          ]);
          expect(new Set(shown).size).toBe(shown.length);
          asked++;
          if (hits.some((h) => h.text.includes(fact))) found++;
        }
        expect(JSON.stringify(await ctx.getMessages())).toBe(before);
      }
      expect(asked).toBeGreaterThan(1_000);
      expect(found / asked).toBeGreaterThanOrEqual(0.97);
    },
  );
});

describe.skipIf(!chats)('recall on the LoCoMo chats', () => {
  it('reaches at least 85% of the answers with its top 5 hits within 1,000 tokens', async () => {
    const counter = createTokenCounter(getModelInfo('gpt-4o')!);
    const reach = await answersReachable(
      chats ?? [],
      (chat) => {
        const ctx = new ContextManager({ model: 'gpt-4o' });
        const ready = (async () => {
          for (const e of chat.entries) await ctx.addMessage(e.message, { metadata: e.metadata });
        })();
        return async (q) => {
          await ready;
          return (await ctx.recall(q)).map((h) => h.text);
        };
      },
      (text) => counter.countText(text),
    );
    expect(reach.total).toBe(154);
    expect(reach.meanTokens).toBeLessThanOrEqual(1_000);
    expect(reach.found / reach.total).toBeGreaterThanOrEqual(0.85);
  });
});

describe.skipIf(!chats)('recall with filters on the LoCoMo chats', () => {
  it('a question restricted to the right speaker and month reaches its answer in the top 5 at least as often as unfiltered', async () => {
    const reach = await filteredReach(chats ?? [], async (chat) => {
      const ctx = new ContextManager({ model: 'gpt-4o' });
      for (const e of chat.entries) await ctx.addMessage(e.message, { metadata: e.metadata });
      return async (q, filters) => (await ctx.recall(q, filters)).map((h) => h.text);
    });
    expect(reach.total).toBeGreaterThanOrEqual(150);
    expect(reach.filtered).toBeGreaterThanOrEqual(reach.unfiltered);
  });
});
