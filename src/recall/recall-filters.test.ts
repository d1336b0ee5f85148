/**
 * Recall with filters (role, dates from the entries' timestamps, tool name, seq range) and pages
 * (issue 25): every hit passes every filter, pages follow one ranking without repeating a hit,
 * recall's own calls and results are never hits, and bad filters are refused by name.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conversationArb } from '../../test/support/arbitraries.js';
import { callingMessage, functionCall } from '../../test/support/openai-calls.js';
import { InvalidArgumentError } from '../errors.js';
import type { HistoryEntry, Message, MessageFormat } from '../messages/types.js';
import { getModelInfo } from '../tokens/catalog.js';
import { createTokenCounter } from '../tokens/counter.js';
import type { RecallFilters, RecallRole } from './recall-hit.js';
import { RecallIndex } from './recall-index.js';
import { readRecallArguments, recallAnswer } from './recall-tool.js';
import { searchWords } from './terms.js';
import { turnText } from './turn-text.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);
const counter = createTokenCounter(getModelInfo('gpt-4o')!);
const countText = (t: string) => counter.countText(t);

/** Entries one day apart from 2025-01-01 (so date filters cut the history anywhere). */
function entriesOf(messages: readonly Message[]): HistoryEntry[] {
  return messages.map((message, seq) => ({
    seq,
    message,
    metadata: { timestamp: new Date(Date.UTC(2025, 0, 1) + seq * 86_400_000).toISOString() },
  }));
}

function indexOver(entries: readonly HistoryEntry[]): RecallIndex {
  return new RecallIndex({ entries: () => entries, countText });
}

/** Whether entry `seq` passes `f`, read independently of the index (through `turnText`). */
function passes(entries: readonly HistoryEntry[], seq: number, f: RecallFilters): boolean {
  const entry = entries[seq] as HistoryEntry;
  const names = new Map<string, string>();
  for (const e of entries.slice(0, seq + 1)) turnText(e, names);
  const text = turnText(entry, names);
  if (f.fromSeq !== undefined && seq < f.fromSeq) return false;
  if (f.toSeq !== undefined && seq > f.toSeq) return false;
  if (f.role !== undefined) {
    const roles = typeof f.role === 'string' ? [f.role] : f.role;
    if (!roles.includes(text.role as RecallRole)) return false;
  }
  if (f.toolName !== undefined && !text.tools.includes(f.toolName)) return false;
  const day = entry.metadata.timestamp.slice(0, 10);
  if (f.startDate !== undefined && day < f.startDate) return false;
  if (f.endDate !== undefined && day > f.endDate) return false;
  return true;
}

const day = (n: number) => new Date(Date.UTC(2025, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);

/**
 * Filters a turn `target` passes, each given or not by `mask`'s bits, with ranges around it of
 * widths `spread`: so that hits are usual, not rare.
 */
function filtersAround(
  entries: readonly HistoryEntry[],
  target: number,
  mask: number,
  spread: number,
): RecallFilters {
  const names = new Map<string, string>();
  let text = turnText(entries[0] as HistoryEntry, names);
  for (let seq = 1; seq <= target; seq++) text = turnText(entries[seq] as HistoryEntry, names);
  const last = entries.length - 1;
  const f: RecallFilters = {};
  if (mask & 1 && text.role !== undefined) f.role = mask & 64 ? [text.role, 'user'] : text.role;
  if (mask & 2 && text.tools.length > 0) f.toolName = text.tools[spread % text.tools.length] as string;
  if (mask & 4) f.startDate = day(Math.max(0, target - spread));
  if (mask & 8) f.endDate = day(Math.min(last, target + spread));
  if (mask & 16) f.fromSeq = Math.max(0, target - spread);
  if (mask & 32) f.toSeq = target + spread;
  return f;
}

describe('recall filters over generated conversations, in both formats', () => {
  it('every hit passes every filter, and a page is the next slice of one ranking', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb({ maxTurns: 8, images: false }),
        fc.nat(),
        fc.nat(127),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom(0, 0, 1, 2),
        async (conv, pick, mask, limit, offset) => {
          const entries = entriesOf(conv.messages);
          const target = pick % entries.length;
          const filters = filtersAround(entries, target, mask, pick % 3);
          const words = searchWords(JSON.stringify(conv.messages[target]));
          fc.pre(words.length > 0);
          const query = words.slice(pick % words.length, (pick % words.length) + 5).join(' ');
          const before = JSON.stringify(entries);
          const index = indexOver(entries);
          const maxTokens = 100_000;
          const page = await index.recall(query, { ...filters, limit, offset, maxTokens });
          for (const hit of page) expect(passes(entries, hit.seq, filters)).toBe(true);
          const whole = await index.recall(query, { ...filters, limit: offset + limit, maxTokens });
          expect(page.map((h) => h.seq)).toEqual(whole.slice(offset).map((h) => h.seq));
          const first = await index.recall(query, { ...filters, limit: Math.max(1, offset), maxTokens });
          if (offset > 0) for (const hit of page) expect(first.map((h) => h.seq)).not.toContain(hit.seq);
          expect(JSON.stringify(entries)).toBe(before);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('without filters gives the hits it gave before filters existed (an empty filter changes nothing)', async () => {
    await fc.assert(
      fc.asyncProperty(conversationArb({ maxTurns: 6, images: false }), fc.nat(), async (conv, pick) => {
        const entries = entriesOf(conv.messages);
        const words = conv.messages.flatMap((m) => searchWords(JSON.stringify(m)));
        fc.pre(words.length > 0);
        const query = words.slice(pick % words.length, (pick % words.length) + 3).join(' ');
        const index = indexOver(entries);
        const all = entries.length - 1;
        expect(await index.recall(query, { fromSeq: 0, toSeq: all, offset: 0 })).toEqual(
          await index.recall(query),
        );
      }),
      { numRuns: RUNS },
    );
  });
});

describe('recall filters', () => {
  const format: MessageFormat = 'openai';
  const messages: Message[] = [
    { role: 'user', content: 'The spare key is under the blue flowerpot.' },
    { role: 'assistant', content: 'Noted: the spare key, blue flowerpot.' },
    callingMessage(functionCall('c1', 'lookup', '{"q":"spare key"}')),
    { role: 'tool', tool_call_id: 'c1', content: 'spare key: second copy at the neighbour' },
    callingMessage(functionCall('r1', 'recall', '{"query":"spare key"}')),
    {
      role: 'tool',
      tool_call_id: 'r1',
      content:
        '1 result from earlier in this conversation, best first:\n\nResult 1 (around message #0):\n#0 user: The spare key is under the blue flowerpot.',
    },
    { role: 'user', content: 'Where is the spare key again?' },
  ];
  const entries = entriesOf(messages);

  it('filters by role, tool, seq and date, and reads a tool result as the tool role', async () => {
    const index = indexOver(entries);
    expect((await index.recall('spare key', { role: 'user' })).map((h) => h.seq).sort()).toEqual([0, 6]);
    expect((await index.recall('spare key', { role: 'tool' })).map((h) => h.seq)).toEqual([3]);
    // Neighbouring relevant turns make one hit (shown together), led by the best of them.
    const lookup = await index.recall('spare key', { toolName: 'lookup' });
    expect(lookup.map((h) => h.seq)).toEqual([expect.toBeOneOf([2, 3])]);
    expect(lookup[0]!.text).toContain('second copy at the neighbour');
    const range = await index.recall('spare key', { fromSeq: 1, toSeq: 2 });
    expect(range.map((h) => h.seq)).toEqual([expect.toBeOneOf([1, 2])]);
    expect(
      (await index.recall('spare key', { startDate: day(1), endDate: `${day(1)}T23:59:59Z` })).map(
        (h) => h.seq,
      ),
    ).toEqual([1]);
    expect(await index.recall('spare key', { startDate: '2030-01-01' })).toEqual([]);
    expect(format).toBe('openai');
  });

  it("never gives recall's own calls and results as hits, whatever the filters", async () => {
    const index = indexOver(entries);
    for (const options of [{}, { toolName: 'recall' }, { fromSeq: 4, toSeq: 5 }, { role: 'tool' as const }]) {
      const hits = await index.recall('spare key result earlier conversation', { ...options, limit: 10 });
      for (const hit of hits) expect([4, 5]).not.toContain(hit.seq);
    }
    expect(await index.recall('spare key', { toolName: 'recall' })).toEqual([]);
  });

  it('refuses a bad filter or page with InvalidArgumentError naming it', async () => {
    const index = indexOver(entries);
    const bad: Array<[string, object]> = [
      ['role', { role: 'robot' }],
      ['role', { role: [] }],
      ['toolName', { toolName: '' }],
      ['startDate', { startDate: 'yesterday' }],
      ['endDate', { endDate: '2025-13-45x' }],
      ['endDate', { startDate: '2025-02-01', endDate: '2025-01-01' }],
      ['fromSeq', { fromSeq: -1 }],
      ['toSeq', { toSeq: 1.5 }],
      ['toSeq', { fromSeq: 5, toSeq: 2 }],
      ['offset', { offset: -1 }],
      ['offset', { offset: 10_000 }],
    ];
    for (const [name, options] of bad) {
      const error = await index.recall('spare key', options).catch((e: unknown) => e);
      expect(error, name).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe(name);
    }
  });

  it("reads the model's arguments (snake_case, null for absent) and tells it what is wrong by the tool's names", async () => {
    const index = indexOver(entries);
    const search = (q: string, o: object) => index.recall(q, o);
    const args = readRecallArguments({
      query: 'spare key',
      role: 'user',
      tool_name: null,
      offset: 1,
      limit: null,
    });
    expect(args).toEqual({ query: 'spare key', options: { role: 'user', offset: 1 } });
    expect(readRecallArguments({ query: 'x', colour: 'red' })).toEqual({
      error: expect.stringContaining('colour'),
    });
    const page = await recallAnswer(search, readRecallArguments({ query: 'spare key', role: 'user' }), {
      limit: 1,
    });
    expect(page.error).toBe(false);
    expect(page.text).toContain('Result 1 ');
    expect(page.text).toContain('"offset": 1');
    const next = await recallAnswer(
      search,
      readRecallArguments({ query: 'spare key', role: 'user', offset: 1 }),
      {
        limit: 1,
      },
    );
    expect(next.text).toContain('Result 2 ');
    const wrong = await recallAnswer(search, readRecallArguments({ query: 'spare key', start_date: 'soon' }));
    expect(wrong).toEqual({
      error: true,
      text: expect.stringMatching(/^recall: start_date: expected an ISO 8601 date/),
    });
  });
});
