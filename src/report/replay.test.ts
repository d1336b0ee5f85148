import { describe, expect, it } from 'vitest';
import { longSessionMessages } from '../../test/support/arbitraries.js';
import { callingMessage, functionCall } from '../../test/support/openai-calls.js';
import type { Message } from '../messages/types.js';
import { getModelInfo } from '../tokens/catalog.js';
import { createTokenCounter } from '../tokens/counter.js';
import type { ModelInfo } from '../tokens/types.js';
import { type ReplayReport, replayConversation } from './replay.js';

const SHORT: Message[] = [
  { role: 'system', content: 'You are a careful agent.' },
  { role: 'user', content: 'Fix src/date.ts please.' },
  callingMessage(functionCall('call_1', 'read_file', '{"path":"src/date.ts"}')),
  { role: 'tool', tool_call_id: 'call_1', content: 'export const x = 1;\n'.repeat(20) },
  { role: 'assistant', content: 'The file exports x. What next?' },
  { role: 'user', content: 'Run the tests.' },
];

/** The figures of a replay that do not depend on the clock. */
function figures(report: ReplayReport): unknown {
  return {
    turns: report.turns.map(({ durationMs: _, ...t }) => t),
    compactions: report.compactions.map((c) => ({
      turn: c.turn,
      dropped: c.receipt.dropped,
      cleared: c.receipt.cleared,
    })),
  };
}

describe('replayConversation', () => {
  it('calls the model before each assistant message and after a trailing user message', async () => {
    const report = await replayConversation(SHORT, { model: 'gpt-4o' });
    expect(report.turns.map((t) => t.beforeSeq)).toEqual([2, 4, 6]);
    expect(report.turns.map((t) => t.storedMessages)).toEqual([2, 4, 6]);
    expect(report.turns.map((t) => t.turn)).toEqual([1, 2, 3]);
    expect(report.totals.turns).toBe(3);
    expect(report.format).toBe('openai');
    expect(report.model).toBe('gpt-4o');
    expect(report.counter).toMatchObject({ exact: true });
  });

  it('sends the whole history while it fits, and every view extends the previous one', async () => {
    const messages = longSessionMessages(200, 'openai', 3);
    const report = await replayConversation(messages, { model: 'gpt-4o' });
    expect(report.compactions).toEqual([]);
    for (const t of report.turns) {
      expect(t.sentTokens).toBe(t.storedTokens);
      expect(t.sentMessages).toBe(t.storedMessages);
      expect(t.compactions).toEqual([]);
    }
    expect(report.turns[0]?.prefix.state).toBe('none');
    expect(report.turns.slice(1).every((t) => t.prefix.state === 'kept')).toBe(true);
    // Each view is the previous one plus what came since: the common prefix is the whole previous view.
    for (let i = 1; i < report.turns.length; i++) {
      const prev = report.turns[i - 1]!;
      expect(report.turns[i]!.prefix.messages).toBe(prev.sentMessages);
    }
    expect(report.totals.cacheStableShare).toBe(1);
    expect(report.totals.savedShare).toBe(0);
    expect(report.budget).toEqual({ tokens: report.turns[0]!.budget, source: 'model' });
  });

  it('counts the stored history as the manager does: every message once, plus the request overhead', async () => {
    const messages = longSessionMessages(150, 'anthropic', 5);
    const report = await replayConversation(messages, { model: 'claude-sonnet-4-5', maxTokens: 6_000 });
    const counter = createTokenCounter(getModelInfo('claude-sonnet-4-5') as ModelInfo);
    const byHand = messages.reduce(
      (n, m) => n + counter.countMessage(m, 'anthropic'),
      counter.requestOverhead,
    );
    expect(report.totals.finalStoredTokens).toBe(byHand);
    const last = report.turns.at(-1)!;
    const before = messages.slice(0, last.beforeSeq);
    expect(last.storedTokens).toBe(
      before.reduce((n, m) => n + counter.countMessage(m, 'anthropic'), counter.requestOverhead),
    );
    expect(report.messages).toHaveLength(messages.length);
    expect(report.messages.reduce((n, p) => n + p.tokens, 0)).toBe(byHand - counter.requestOverhead);
  });

  it('under a small budget compacts a few times, stays within the budget, and keeps the cache prefix between compactions', async () => {
    const messages = longSessionMessages(400, 'openai', 7);
    const report = await replayConversation(messages, { maxTokens: 8_000 });
    const { totals } = report;
    expect(totals.compactions).toBeGreaterThanOrEqual(3);
    expect(totals.overflows).toBe(0);
    for (const t of report.turns) {
      expect(t.sentTokens).not.toBeNull();
      expect(t.sentTokens!).toBeLessThanOrEqual(t.budget);
      expect(t.budget).toBe(8_000);
      expect(t.trigger).toBeLessThan(t.budget);
      expect(t.target).toBeLessThan(t.trigger);
    }
    // Invariant 7: a view changes its start only when a compaction ran on that call.
    expect(totals.cacheBreaks).toBe(0);
    for (const t of report.turns.slice(1)) {
      expect(t.prefix.state).toBe(t.compactions.length > 0 ? 'compacted' : 'kept');
    }
    // Compactions and turns point at each other.
    report.compactions.forEach((c, k) => {
      expect(c.number).toBe(k + 1);
      expect(report.turns[c.turn - 1]?.compactions).toContain(k);
      expect(c.receipt.tokensAfter).toBeLessThan(c.receipt.tokensBefore);
    });
    // Totals add up.
    const sent = report.turns.reduce((n, t) => n + (t.sentTokens ?? 0), 0);
    const stored = report.turns.reduce((n, t) => n + t.storedTokens, 0);
    expect(totals.sentTokens).toBe(sent);
    expect(totals.storedTokens).toBe(stored);
    expect(totals.savedShare).toBeCloseTo(1 - sent / stored, 10);
    expect(totals.averageSent).toBeCloseTo(sent / report.turns.length, 10);
    expect(totals.cacheStableTurns + totals.compactions).toBe(report.turns.length - 1);
    expect(totals.cachedPrefixTokens).toBe(report.turns.reduce((n, t) => n + t.prefix.tokens, 0));
    expect(totals.cachedPrefixShare).toBeGreaterThan(0.5);
    expect(totals.savedShare).toBeGreaterThan(0.3);
    expect(totals.peakUsage).toBeLessThanOrEqual(1);
    expect(report.budget).toEqual({ tokens: 8_000, source: 'option' });
  });

  it('gives the same figures on the same input', async () => {
    const messages = longSessionMessages(200, 'anthropic', 11);
    const a = await replayConversation(messages, { maxTokens: 5_000, strategy: 'truncate' });
    const b = await replayConversation(messages, { maxTokens: 5_000, strategy: 'truncate' });
    expect(a.strategy).toBe('truncate');
    expect(figures(a)).toEqual(figures(b));
  });

  it('records a request that cannot fit on its turn and goes on', async () => {
    const messages: Message[] = [
      { role: 'system', content: 'Rules. '.repeat(200) },
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi' },
      { role: 'user', content: 'again' },
      { role: 'assistant', content: 'yes' },
    ];
    const report = await replayConversation(messages, { maxTokens: 100 });
    expect(report.turns).toHaveLength(2);
    for (const t of report.turns) {
      expect(t.sentTokens).toBeNull();
      expect(t.overflow).toMatch(/budget is 100/);
      expect(t.prefix.state).toBe('none');
      expect(t.budget).toBe(100);
    }
    expect(report.totals.overflows).toBe(2);
    expect(report.totals.averageSent).toBe(0);
  });

  it('reports progress after every message, ending at the total', async () => {
    const seen: Array<[number, number]> = [];
    await replayConversation(SHORT, {}, (done, total) => seen.push([done, total]));
    expect(seen).toEqual(SHORT.map((_, i) => [i + 1, SHORT.length]));
  });

  it('keeps short previews of each message, or none when asked', async () => {
    const long: Message[] = [
      ...SHORT.slice(0, 5),
      { role: 'user', content: `word ${'x'.repeat(500)}\n\n  end` },
    ];
    const report = await replayConversation(long, { source: 'run.json' });
    expect(report.source).toBe('run.json');
    const call = report.messages[2]!;
    expect(call).toMatchObject({ seq: 2, role: 'assistant', tools: ['read_file'] });
    const last = report.messages[5]!;
    expect(last.text.length).toBe(140);
    expect(last.text.startsWith('word x')).toBe(true);
    expect(last.text.endsWith('…')).toBe(true);
    const bare = await replayConversation(long, { previews: false });
    expect(bare.messages.every((m) => m.text === '')).toBe(true);
    expect(bare.messages[2]?.tools).toEqual(['read_file']);
  });

  it('notes an unknown model once and counts with the default', async () => {
    const report = await replayConversation(SHORT, { model: 'no-such-model' });
    expect(report.model).toBe('gpt-4o');
    expect(report.warnings).toEqual([expect.stringMatching(/no-such-model/)]);
  });

  it('has no model call to report for a conversation without a turn', async () => {
    const report = await replayConversation([{ role: 'system', content: 'only rules' }]);
    expect(report.turns).toEqual([]);
    expect(report.totals).toMatchObject({ turns: 0, compactions: 0, sentTokens: 0, cacheStableShare: 1 });
  });
});
