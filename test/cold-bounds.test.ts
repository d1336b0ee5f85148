/**
 * A cold start of a long history counts the newest messages exactly and bounds the older ones
 * (issue 24: a cold first request under a second): the bound is never under the count, the view
 * is the one counting everything first gives, what it sends is counted exactly, the receipt says
 * its `tokensBefore` is a bound, and the older messages are counted right after the request, in
 * the background, and kept in the store.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CompactionReceipt } from '../src/events.js';
import { ContextManager } from '../src/manager.js';
import { BOUND_AT_LEAST, EXACT_TAIL_BUDGETS } from '../src/measure/measurer.js';
import type { Message, MessageFormat } from '../src/messages/types.js';
import { openSqliteStore } from '../src/stores/sqlite.js';
import { getModelInfo } from '../src/tokens/catalog.js';
import { countKey } from '../src/tokens/count-key.js';
import { createTokenCounter, utf8Bytes } from '../src/tokens/counter.js';
import { conversationArb, hugeText, longSessionMessages } from './support/arbitraries.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 25);
const MODELS: Record<MessageFormat, string> = {
  openai: 'gpt-4o',
  anthropic: 'claude-sonnet-4-5',
  'openai-responses': 'gpt-4o',
  gemini: 'gemini-2.5-pro',
  bedrock: 'claude-sonnet-4-5',
};

describe('TokenCounter.boundMessage', () => {
  it('utf8Bytes is the UTF-8 length of any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        expect(utf8Bytes(text)).toBe(Buffer.byteLength(text, 'utf8'));
      }),
      { numRuns: 500 },
    );
    // Lone surrogates are written as U+FFFD (3 bytes) by Buffer; a pair is 4.
    expect(utf8Bytes('a\u00e9\u4e2d\u{1f600}')).toBe(1 + 2 + 3 + 4);
  });

  it('is never under countMessage, in both formats, with images, huge results and thinking', () => {
    fc.assert(
      fc.property(conversationArb({ maxTurns: 6 }), (conv) => {
        const counter = createTokenCounter(getModelInfo(MODELS[conv.format])!);
        for (const message of conv.messages) {
          const exact = counter.countMessage(message, conv.format);
          const bound = counter.boundMessage!(message, conv.format);
          expect(bound).toBeGreaterThanOrEqual(exact);
          // Bounding leaves nothing behind: the count is the same after it.
          expect(counter.countMessage(message, conv.format)).toBe(exact);
        }
      }),
      { numRuns: RUNS },
    );
  });
});

interface Cold {
  view: Message[];
  receipts: Array<Omit<CompactionReceipt, 'durationMs'>>;
  ctx: ContextManager;
}

/** setMessages and one request; with `countFirst`, the whole history is counted before it. */
async function coldRequest(
  history: readonly Message[],
  tokenBudget: number,
  countFirst: boolean,
  options: { store?: string; conversationId?: string } = {},
): Promise<Cold> {
  const ctx = new ContextManager({ model: 'gpt-4o', ...options });
  const receipts: Cold['receipts'] = [];
  ctx.on('context:post_compact', ({ receipt }) => {
    const { durationMs: _, ...rest } = receipt;
    receipts.push(rest);
  });
  await ctx.setMessages(history, { replace: true });
  if (countFirst) await ctx.getTokenCount();
  const view = await ctx.getMessagesForRequest({ tokenBudget });
  return { view, receipts, ctx };
}

describe('a cold start of a long history bounds what no view can hold', () => {
  // At an 8k budget the exactly counted tail is a few hundred messages: the rest is bounded.
  const BUDGET = 8_000;
  const history = longSessionMessages(BOUND_AT_LEAST + 3_000, 'openai', 31);

  it('gives the view counting everything first gives, counted exactly, with its receipt marked', async () => {
    const bounded = await coldRequest(history, BUDGET, false);
    const exact = await coldRequest(history, BUDGET, true);
    expect(bounded.view).toEqual(exact.view);
    expect(bounded.receipts).toHaveLength(1);
    const [b] = bounded.receipts;
    const [e] = exact.receipts;
    expect(b!.exact).toBe(false);
    expect(e!.exact).toBe(true);
    expect(b!.tokensBefore).toBeGreaterThan(e!.tokensBefore);
    expect({ ...b, tokensBefore: 0, exact: true }).toEqual({ ...e, tokensBefore: 0 });
    // What the view sends is counted exactly: the same total as a fresh count of it.
    const counter = createTokenCounter(getModelInfo('gpt-4o')!);
    const sent = await counter.measure(bounded.view, { format: 'openai' });
    expect(bounded.ctx.usage().tokens).toBe(exact.ctx.usage().tokens);
    expect(sent).toBeLessThanOrEqual(BUDGET);
    // The older messages are counted in the background: the whole count is then exact.
    expect(await bounded.ctx.getTokenCount()).toBe(await exact.ctx.getTokenCount());
    // The next turn extends the same view in both.
    for (const c of [bounded, exact]) await c.ctx.addMessage({ role: 'user', content: 'and now?' });
    expect(await bounded.ctx.getMessagesForRequest({ tokenBudget: BUDGET })).toEqual(
      await exact.ctx.getMessagesForRequest({ tokenBudget: BUDGET }),
    );
    await Promise.all([bounded.ctx.close(), exact.ctx.close()]);
  });

  it('counts exactly what stays in every view wherever it is: system, pinned, the task', async () => {
    const pinned = history.slice();
    pinned.splice(40, 0, {
      role: 'user',
      content: 'Remember: the deploy key lives in /etc/keys/deploy-7731.pem',
    });
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.setMessages(pinned);
    await ctx.addMessage(
      { role: 'user', content: 'PINNED: release train 2026.11 ships on Friday' },
      { pinned: true },
    );
    const exact = new ContextManager({ model: 'gpt-4o' });
    await exact.setMessages(pinned);
    await exact.addMessage(
      { role: 'user', content: 'PINNED: release train 2026.11 ships on Friday' },
      { pinned: true },
    );
    await exact.getTokenCount();
    const a = await ctx.getMessagesForRequest({ tokenBudget: BUDGET });
    const b = await exact.getMessagesForRequest({ tokenBudget: BUDGET });
    expect(a).toEqual(b);
    expect(ctx.usage().tokens).toBe(exact.usage().tokens);
    expect(a[0]).toEqual(history[0]);
    await Promise.all([ctx.close(), exact.close()]);
  });

  it('counts the latest request exactly when a long tool exchange follows it', async () => {
    const long = history.slice();
    long.push({
      role: 'user',
      content: 'Now rebuild the index under /srv/index-42 and report the row count.',
    });
    for (let i = 0; i < 24; i++) {
      long.push({
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: `call_x${i}`, type: 'function', function: { name: 'read_log', arguments: `{"part":${i}}` } },
        ],
      } as Message);
      long.push({ role: 'tool', tool_call_id: `call_x${i}`, content: hugeText(8_000, i) } as Message);
    }
    const bounded = await coldRequest(long, BUDGET, false);
    const exact = await coldRequest(long, BUDGET, true);
    expect(bounded.receipts[0]!.exact).toBe(false);
    expect(bounded.view).toEqual(exact.view);
    expect(bounded.ctx.usage().tokens).toBe(exact.ctx.usage().tokens);
    expect(bounded.view.some((m) => m.role === 'user' && String(m.content).includes('/srv/index-42'))).toBe(
      true,
    );
    await Promise.all([bounded.ctx.close(), exact.ctx.close()]);
  });

  it('a budget that holds the tail counts all of it exactly (nothing bounded)', async () => {
    const short = longSessionMessages(BOUND_AT_LEAST / 2, 'openai', 32);
    const { receipts, ctx } = await coldRequest(short, 20_000, false);
    for (const r of receipts) expect(r.exact).toBe(true);
    await ctx.close();
    expect(EXACT_TAIL_BUDGETS).toBeGreaterThanOrEqual(1);
  });

  it('keeps the counts made in the background in the store, and close stops that counting', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'contextkit-bounds-'));
    try {
      const file = join(dir, 'c.db');
      const store = `sqlite:${file}`;
      // A history stored without counts (as before counts were kept, or by another tool).
      const bare = await openSqliteStore(file);
      const timestamp = new Date().toISOString();
      await bare.replace(
        'c',
        history.map((message) => ({ message, metadata: { timestamp } })),
      );
      await bare.close();
      const key = countKey(createTokenCounter(getModelInfo('gpt-4o')!));
      const counted = async () => {
        const s = await openSqliteStore(file);
        const read = await s.read('c');
        await s.close();
        expect(read).toHaveLength(history.length);
        return read.filter((e) => typeof e.counts?.[key] === 'number').length;
      };
      expect(await counted()).toBe(0);
      const first = new ContextManager({ model: 'gpt-4o', store, conversationId: 'c' });
      const view = await first.getMessagesForRequest({ tokenBudget: BUDGET });
      expect(await first.getTokenCount()).toBeGreaterThan(0);
      await first.close();
      expect(await counted()).toBe(history.length);
      // Reopened, nothing is bounded (the counts are read): the same view.
      const again = new ContextManager({ model: 'gpt-4o', store, conversationId: 'c' });
      const receipts: CompactionReceipt[] = [];
      again.on('context:post_compact', ({ receipt }) => receipts.push(receipt));
      expect(await again.getMessagesForRequest({ tokenBudget: BUDGET })).toEqual(view);
      // The plan kept with the conversation is taken (no compaction), or one made on exact counts.
      expect(receipts.every((r) => r.exact)).toBe(true);
      expect(again.usage().tokens).toBe(first.usage().tokens);
      await again.close();
      // A manager closed while it counts in the background closes cleanly, and stops counting.
      const { ctx } = await coldRequest(history, BUDGET, false);
      await ctx.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
