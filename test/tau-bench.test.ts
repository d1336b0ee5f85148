import { describe, expect, it } from 'vitest';
import { ContextOverflowError } from '../src/errors.js';
import { ContextManager } from '../src/manager.js';
import type { Message, MessageFormat } from '../src/messages/types.js';
import { getModelInfo } from '../src/tokens/catalog.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { validateRequest } from '../src/wire/validate-request.js';
import { referenceProblems } from './support/reference-validator.js';
import { missingData, skipFor } from './support/requirements.js';
import { loadTauBench, TAU_BENCH_PATH } from './support/tau-bench.js';

const MODEL: Record<MessageFormat, string> = {
  openai: 'gpt-4o',
  anthropic: 'claude-sonnet-4-5',
  'openai-responses': 'gpt-4o',
  gemini: 'gemini-2.5-flash',
  bedrock: 'claude-sonnet-4-5',
};
const SHARES = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];

describe('the 200 real tau-bench runs', skipFor(missingData(TAU_BENCH_PATH)), () => {
  it.each(['openai', 'anthropic'] as const)(
    'in %s format at 20 to 90 percent of their size: every view valid, within budget, keeping system, the task and the latest request',
    async (format) => {
      const runs = loadTauBench();
      expect(runs).toHaveLength(200);
      const counter = createTokenCounter(getModelInfo(MODEL[format])!);
      let views = 0;
      let overflows = 0;
      for (const run of runs) {
        const messages: Message[] = run[format];
        const full = await counter.measure(messages, { format });
        const system = messages.filter((m) => m.role === 'system').map((m) => JSON.stringify(m));
        const lastUser = messages.findLast((m) => m.role === 'user' && typeof m.content === 'string');
        // The task (the first user message) is kept like a pinned message (`protectTask`).
        const task = messages.find((m) => m.role === 'user' && typeof m.content === 'string');
        const minimal = [
          ...messages.filter((m) => m.role === 'system'),
          ...(task && task !== lastUser ? [task] : []),
          ...(lastUser ? messages.slice(messages.lastIndexOf(lastUser)) : []),
        ];
        for (const share of SHARES) {
          const budget = Math.floor(full * share);
          const ctx = new ContextManager({ model: MODEL[format], protectTask: true });
          for (const m of messages) await ctx.addMessage(m);
          let view: Message[];
          try {
            view = await ctx.getMessagesForRequest({ tokenBudget: budget });
          } catch (err) {
            expect(err).toBeInstanceOf(ContextOverflowError);
            expect((err as ContextOverflowError).required).toBeGreaterThan(budget);
            // A view of just the system prompt, the latest request and what follows it would fit:
            // then overflowing is a bug.
            expect(await counter.measure(minimal, { format })).toBeGreaterThan(budget);
            overflows++;
            continue;
          }
          views++;
          expect(await counter.measure(view, { format })).toBeLessThanOrEqual(budget);
          expect(validateRequest(view, format).problems).toEqual([]);
          expect(referenceProblems(view, format)).toEqual([]);
          const json = new Set(view.map((m) => JSON.stringify(m)));
          for (const s of system) expect(json.has(s)).toBe(true);
          if (lastUser) expect(json.has(JSON.stringify(lastUser))).toBe(true);
          if (task) expect(json.has(JSON.stringify(task))).toBe(true);
          expect(await ctx.getMessages()).toEqual(messages);
        }
      }
      expect(views).toBeGreaterThan(0);
      console.info(
        `tau-bench ${format}: ${views} views, ${overflows} overflows (protected floor above budget)`,
      );
    },
    // 1,600 managers, each compacting once: seconds alone, much longer on a loaded 2-core machine.
    300_000,
  );
});
