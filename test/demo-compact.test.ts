/**
 * The demo's log after two runs (1,212 messages of a coding-agent session), compacted at a 16k
 * budget: what leaves the view is summarized, not only dropped, and the memory fills its room
 * within `summaryShare` of the budget.
 */
import { describe, expect, it } from 'vitest';
import { demoMessages } from '../src/cli/demo-session.js';
import { memoryRoom } from '../src/compaction/summary-message.js';
import { ContextManager } from '../src/manager.js';
import { getModelInfo } from '../src/tokens/catalog.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { FACTS_OPEN } from '../src/tools/facts-block.js';
import { messageText } from '../src/wire/content.js';

describe("compacting the demo's 1,212-message log at 16k", () => {
  it('summarizes what leaves the view, and the memory stays within its share', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    for (const m of demoMessages('openai', 1_212)) await ctx.addMessage(m);
    const receipt = await ctx.compact({ force: true, tokenBudget: 16_000 });
    expect(receipt).toBeDefined();
    expect(receipt!.summarized.length).toBeGreaterThan(1_000);
    // Whatever left the view without a summary is a small part of what left.
    expect(receipt!.dropped.length).toBeLessThan(receipt!.summarized.length / 10);
    const view = await ctx.getMessagesForRequest({ tokenBudget: 16_000 });
    const counter = createTokenCounter(getModelInfo('gpt-4o')!);
    const memory = view
      .filter((m) => messageText(m).startsWith('[contextkit: summary') || messageText(m).includes(FACTS_OPEN))
      .reduce((n, m) => n + counter.countMessage(m, 'openai'), 0);
    expect(memory).toBeGreaterThan(0);
    expect(memory).toBeLessThanOrEqual(memoryRoom(16_000));
    expect(await counter.measure(view, { format: 'openai' })).toBeLessThanOrEqual(16_000);
  }, 60_000);
});
