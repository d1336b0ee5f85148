/**
 * Issue 21 on the shared data: 60 real tau-bench runs converted to AWS Bedrock Converse
 * (`convertMessages(run, 'bedrock')`), compacted through the manager at 10, 40, 70 and 100
 * percent of each run's size; every view, sent as a Converse request over HTTP, is accepted by the
 * fake Converse API, and the stored history is never changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContextOverflowError } from '../../src/errors.js';
import { toBedrockRequest } from '../../src/formats/bedrock/request.js';
import { ContextManager } from '../../src/manager.js';
import type { Message } from '../../src/messages/types.js';
import { getModelInfo } from '../../src/tokens/catalog.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { convertMessages } from '../../src/wire/convert.js';
import { type FakeBedrockServer, startFakeBedrock } from '../support/fake-bedrock-server.js';
import { missingData, skipFor } from '../support/requirements.js';
import { loadTauBench, TAU_BENCH_PATH } from '../support/tau-bench.js';

const SHARES = [0.1, 0.4, 0.7, 1];
const RUNS = 60;
const MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';

describe('the real tau-bench runs as Bedrock Converse', skipFor(missingData(TAU_BENCH_PATH)), () => {
  let server: FakeBedrockServer;
  beforeAll(async () => {
    server = await startFakeBedrock();
  });
  afterAll(() => server.close());

  it('every view at 10 to 100 percent of the run is accepted by the fake Converse API', async () => {
    const runs = loadTauBench().slice(0, RUNS);
    const counter = createTokenCounter(getModelInfo(MODEL)!);
    let views = 0;
    let overflows = 0;
    for (const run of runs) {
      const messages = convertMessages(run.openai, 'bedrock') as Message[];
      const full = await counter.measure(messages, { format: 'bedrock' });
      for (const share of SHARES) {
        const ctx = new ContextManager({ model: MODEL });
        for (const m of messages) await ctx.addMessage(m);
        let view: Message[];
        try {
          view = await ctx.getMessagesForRequest({ tokenBudget: Math.floor(full * share) });
        } catch (err) {
          expect(err).toBeInstanceOf(ContextOverflowError);
          overflows++;
          continue;
        }
        expect(ctx.messageFormat).toBe('bedrock');
        const res = await fetch(`${server.url}/model/${encodeURIComponent(MODEL)}/converse`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(toBedrockRequest(view)),
        });
        expect({ status: res.status, body: res.status === 200 ? '' : await res.text() }).toEqual({
          status: 200,
          body: '',
        });
        expect(JSON.stringify(await ctx.getMessages())).toBe(JSON.stringify(messages));
        views++;
      }
    }
    // Each run fits whole; the tighter budgets compact it (or refuse with the breakdown).
    expect(views).toBeGreaterThanOrEqual(RUNS * 2);
    expect(views + overflows).toBe(RUNS * SHARES.length);
  }, 300_000);
});
