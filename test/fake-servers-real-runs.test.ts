/**
 * Issue 11 on the shared data: the real tau-bench runs, as Anthropic messages, as Responses API
 * items and as Gemini contents (the OpenAI runs converted, which is lossless for them), compacted
 * at several budgets;
 * every view is accepted by the fake API of its format.
 */
import { describe, expect, it } from 'vitest';
import { ContextOverflowError } from '../src/errors.js';
import type { GeminiMessage } from '../src/formats/gemini/parts.js';
import { toGeminiRequest } from '../src/formats/gemini/request.js';
import { ContextManager } from '../src/manager.js';
import { convertMessages } from '../src/messages/convert.js';
import type { Message } from '../src/messages/types.js';
import { getModelInfo } from '../src/tokens/catalog.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { anthropicRequestProblems, messagesBody } from './support/fake-anthropic-server.js';
import { geminiRequestProblems } from './support/fake-gemini-server.js';
import { responsesRequestProblems } from './support/fake-responses-server.js';
import { missingData, skipFor } from './support/requirements.js';
import { loadTauBench, TAU_BENCH_PATH } from './support/tau-bench.js';

const SHARES = [0.2, 0.4, 0.6, 0.9];
const RUNS = 60;

describe(
  'the real tau-bench runs through the fake provider APIs',
  skipFor(missingData(TAU_BENCH_PATH)),
  () => {
    it.each([
      ['anthropic', 'claude-sonnet-4-5'],
      ['openai-responses', 'gpt-4o'],
      ['gemini', 'gemini-2.5-flash'],
    ] as const)(
      '%s: every view at 20 to 90 percent of the run is accepted',
      async (format, model) => {
        const runs = loadTauBench().slice(0, RUNS);
        const counter = createTokenCounter(getModelInfo(model)!);
        let views = 0;
        for (const run of runs) {
          const messages: Message[] =
            format === 'anthropic' ? run.anthropic : convertMessages(run.openai, format);
          const full = await counter.measure(messages, { format });
          for (const share of SHARES) {
            const ctx = new ContextManager({ model });
            for (const m of messages) await ctx.addMessage(m);
            let view: Message[];
            try {
              view = await ctx.getMessagesForRequest({ tokenBudget: Math.floor(full * share) });
            } catch (err) {
              expect(err).toBeInstanceOf(ContextOverflowError);
              continue;
            }
            const problems =
              format === 'anthropic'
                ? anthropicRequestProblems(messagesBody(view))
                : format === 'gemini'
                  ? geminiRequestProblems({ ...toGeminiRequest(view as GeminiMessage[]) })
                  : responsesRequestProblems({ input: view });
            expect(problems).toEqual([]);
            views++;
          }
        }
        expect(views).toBeGreaterThan(RUNS);
      },
      300_000,
    );
  },
);
