/**
 * Anthropic's server-side compaction and context editing, against the fake Messages API that
 * follows the compaction and context-editing pages (test/support/fake-anthropic-server.ts): a
 * session with contextkit driving the server's compaction, what is counted and metered beside
 * what the server reports, and what the fake refuses as the API does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContextManager } from '../src/manager.js';
import type { ContextManagerOptions } from '../src/options.js';
import { drivenSession, MODEL, postMessages } from './support/driven-session.js';
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
