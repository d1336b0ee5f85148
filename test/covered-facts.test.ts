/**
 * Issue 22: the facts of what a provider's compaction covered. The messages before Anthropic's last
 * `compaction` block, or before OpenAI's latest `compaction` item, leave the view without a plan of
 * contextkit's taking them out; their ids, paths and numbers still reach the view's facts block,
 * and the views stay what the fake APIs accept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContextManager } from '../src/manager.js';
import type { Message } from '../src/messages/types.js';
import { MemoryStore } from '../src/stores/memory.js';
import { MODEL, postMessages } from './support/driven-session.js';
import {
  anthropicRequestProblems,
  type FakeAnthropicServer,
  messagesBody,
  startFakeAnthropic,
} from './support/fake-anthropic-server.js';
import { responsesRequestProblems, sealCompaction } from './support/fake-responses-server.js';
import { hasTauBench, loadTauBench, TAU_BENCH_PATH } from './support/tau-bench.js';

let server: FakeAnthropicServer;
beforeAll(async () => {
  server = await startFakeAnthropic();
});
afterAll(() => server.close());

const FILLER = 'and then the agent checked the records again '.repeat(12);

/** The facts block of a view, or '' when it has none. */
function factsBlock(view: readonly Message[]): string {
  const block = view.find((m) => typeof m.content === 'string' && m.content.includes('contextkit:facts'));
  return (block?.content as string | undefined) ?? '';
}

/** A user turn, the reply whose `compaction` block holds `summary`, then the user's `next` question. */
async function serverCompacts(ctx: ContextManager, summary: string, next: string): Promise<void> {
  await ctx.addMessage({ role: 'user', content: 'Where were we?' });
  await ctx.addMessage({
    role: 'assistant',
    content: [
      { type: 'compaction', content: summary },
      { type: 'text', text: 'Going on.' },
    ],
  });
  await ctx.addMessage({ role: 'user', content: next });
}

describe('facts of what an Anthropic server compaction covered', () => {
  async function compacted(ctx: ContextManager): Promise<void> {
    await ctx.addMessage({ role: 'system', content: 'You track orders.' });
    for (let i = 0; i < 12; i++) {
      await ctx.addMessage({
        role: 'user',
        content: `Order ORD-${5100 + i} ships to /srv/out/batch${i}.csv. ${FILLER}`,
      });
      await ctx.addMessage({ role: 'assistant', content: `Noted ORD-${5100 + i}.` });
    }
    await serverCompacts(
      ctx,
      'Summary: twelve orders were noted.',
      'Which batch file had the seventh order?',
    );
  }

  it('reach the facts block of the view that starts at the block, which the fake accepts', async () => {
    const ctx = new ContextManager({ model: MODEL });
    await compacted(ctx);
    const body = await ctx.getAnthropicRequest({ tokenBudget: 20_000 });
    const view = await ctx.getMessagesForRequest({ tokenBudget: 20_000 });
    const facts = factsBlock(view);
    for (let i = 0; i < 12; i++) {
      expect(facts).toContain(`ORD-${5100 + i}`);
      expect(facts).toContain(`/srv/out/batch${i}.csv`);
    }
    // Only the block and what follows are sent of the conversation; the facts go in a user turn
    // after the block (issue 30: never in the system prompt; before the block the API drops them).
    // Of what the block covered, only the task is re-sent after it (kept in every view, issue 30).
    expect(JSON.stringify(body.messages).match(/ships to/g)).toEqual(['ships to']);
    expect(JSON.stringify(body.messages)).toContain('ORD-5100 ships to');
    expect(JSON.stringify(body.system)).not.toContain('ORD-5106');
    const block = body.messages.findIndex((m) => JSON.stringify(m.content).includes('"compaction"'));
    expect(JSON.stringify(body.messages.slice(block + 1))).toContain('ORD-5106');
    const res = await postMessages(server.url, { model: MODEL, max_tokens: 10, ...body });
    expect(res.status).toBe(200);
    expect(ctx.usage().tokens).toBeLessThanOrEqual(20_000);
    // The stored history is unchanged.
    expect(await ctx.getMessages()).toHaveLength(28);
  });

  it("keep the facts of contextkit's own plan from before the block, and hold across a restart", async () => {
    const store = new MemoryStore();
    const ctx = new ContextManager({ model: MODEL, store, conversationId: 'orders' });
    await ctx.addMessage({ role: 'system', content: 'You track orders.' });
    for (let i = 0; i < 30; i++) {
      await ctx.addMessage({ role: 'user', content: `Invoice INV-${7700 + i} is due. ${FILLER}` });
      await ctx.addMessage({ role: 'assistant', content: `Noted INV-${7700 + i}.` });
    }
    // contextkit compacts first: the oldest invoices leave the view and their facts enter the block.
    await ctx.getMessagesForRequest({ tokenBudget: 2_500 });
    expect(factsBlock(await ctx.getMessagesForRequest({ tokenBudget: 2_500 }))).toContain('INV-7700');
    await serverCompacts(ctx, 'Summary: invoices.', 'Go on.');
    const view = await ctx.getMessagesForRequest({ tokenBudget: 20_000 });
    const facts = factsBlock(view);
    expect(facts).toContain('INV-7700');
    expect(facts).toContain('INV-7729');
    const again = new ContextManager({ model: MODEL, store, conversationId: 'orders' });
    expect(factsBlock(await again.getMessagesForRequest({ tokenBudget: 20_000 }))).toContain('INV-7729');
  });
});

describe('facts of what an OpenAI compaction item covered', () => {
  it('reach the facts block of the view that starts at the item, which the fake accepts', async () => {
    const ctx = new ContextManager({ model: 'gpt-5' });
    await ctx.addMessage({ role: 'developer', content: 'You track orders.' });
    for (let i = 0; i < 12; i++) {
      await ctx.addMessage({
        type: 'message',
        role: 'user',
        content: `Order ORD-${5100 + i} ships to /srv/out/batch${i}.csv. ${FILLER}`,
      });
      await ctx.addMessage({
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: `Noted ORD-${5100 + i}.` }],
      });
    }
    await ctx.addMessage({ type: 'message', role: 'user', content: 'Where were we?' });
    await ctx.addMessage({ type: 'compaction', encrypted_content: sealCompaction(120, 'covered-facts') });
    await ctx.addMessage({ type: 'message', role: 'user', content: 'Which batch had the seventh order?' });
    const view = await ctx.getMessagesForRequest({ provider: 'openai-responses', tokenBudget: 20_000 });
    const facts = factsBlock(view);
    for (let i = 0; i < 12; i++) expect(facts).toContain(`ORD-${5100 + i}`);
    // Of what the item covered, only the task is re-sent after it (kept in every view, issue 30).
    expect(JSON.stringify(view).match(/ships to/g)).toEqual(['ships to']);
    expect(JSON.stringify(view)).toContain('ORD-5100 ships to');
    expect(responsesRequestProblems({ model: 'gpt-5', input: view })).toEqual([]);
  });
});

if (!hasTauBench()) console.warn(`skipping the tau-bench covered-facts test: ${TAU_BENCH_PATH} is absent`);

describe.skipIf(!hasTauBench())('facts of what a server compaction covered, on the tau-bench runs', () => {
  it('the facts stated before the block reach the view; every view is accepted', async () => {
    let before = 0;
    let shown = 0;
    let runs = 0;
    for (const run of loadTauBench().slice(0, 40)) {
      const messages = run.anthropic as Message[];
      // The block goes in a reply to a user turn that returns no tool results, half-way or later.
      const at = messages.findIndex(
        (m, i) =>
          i >= messages.length / 2 &&
          m.role === 'user' &&
          typeof m.content === 'string' &&
          messages[i - 1]?.role === 'assistant' &&
          !JSON.stringify(messages[i - 1]!.content).includes('"tool_use"'),
      );
      if (at < 0) continue;
      const reply = {
        role: 'assistant',
        content: [
          { type: 'compaction', content: 'Summary: the earlier part of the call.' },
          { type: 'text', text: 'Go on.' },
        ],
      } as Message;
      const ctx = new ContextManager({ model: MODEL });
      for (const m of [...messages.slice(0, at + 1), reply, ...messages.slice(at + 1)])
        await ctx.addMessage(m);
      const view = await ctx.getMessagesForRequest({ tokenBudget: 30_000 });
      expect(anthropicRequestProblems(messagesBody(view), { signatures: false })).toEqual([]);
      const earlier = JSON.stringify(messages.slice(1, at + 1));
      const later = JSON.stringify(messages.slice(at + 1));
      const sent = JSON.stringify(view);
      for (const fact of run.presentFacts) {
        if (!earlier.includes(fact) || later.includes(fact)) continue;
        before++;
        if (sent.includes(fact)) shown++;
      }
      runs++;
    }
    console.log(
      `tau-bench: ${runs} runs, ${shown} of ${before} facts stated only before the block reach the view`,
    );
    expect(runs).toBeGreaterThan(10);
    expect(before).toBeGreaterThan(20);
    expect(shown / before).toBeGreaterThan(0.5);
  }, 120_000);
});
