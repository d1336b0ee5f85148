import { describe, expect, it } from 'vitest';
import type { HistoryEntry } from '../messages/types.js';
import { getModelInfo } from '../tokens/catalog.js';
import { createTokenCounter } from '../tokens/counter.js';
import { fitHits } from './fit-hits.js';
import { searchTerms } from './terms.js';
import { turnText } from './turn-text.js';

const counter = createTokenCounter(getModelInfo('gpt-4o')!);
const count = (t: string) => counter.countText(t);

function entries(texts: string[]): HistoryEntry[] {
  return texts.map((content, seq) => ({
    seq,
    message: seq % 2 === 0 ? { role: 'user', content } : { role: 'assistant', content },
    metadata: { timestamp: '2025-01-01T00:00:00.000Z' },
  }));
}

function fitAll(list: HistoryEntry[], groups: number[][], maxTokens: number, query = 'paint') {
  return fitHits({
    groups: groups.map((centers, i) => ({ centers, score: 10 - i })),
    count: list.length,
    turn: (seq) => turnText(list[seq] as HistoryEntry),
    countText: count,
    maxTokens,
    terms: new Set(searchTerms(query)),
  });
}

describe('fitHits', () => {
  const chat = entries(
    Array.from(
      { length: 40 },
      (_, i) =>
        `[1:56 pm on ${1 + Math.floor(i / 10)} May, 2023] ${i % 2 ? 'Mel' : 'Caro'}: message number ${i} about things`,
    ),
  );

  it('shows each relevant turn with its neighbours, a stamp only where it changes', () => {
    const [hit] = fitAll(chat, [[5]], 1_000);
    expect(hit?.seqs).toEqual([3, 4, 5, 6, 7]);
    expect(hit?.text.split('\n')).toEqual([
      '[1:56 pm on 1 May, 2023]',
      '#3 Mel: message number 3 about things',
      '#4 Caro: message number 4 about things',
      '#5 Mel: message number 5 about things',
      '#6 Caro: message number 6 about things',
      '#7 Mel: message number 7 about things',
    ]);
  });

  it('keeps every hit together within the budget, relevant turns before neighbours', () => {
    for (const budget of [30, 60, 120, 250]) {
      const hits = fitAll(chat, [[5], [15], [25], [35]], budget);
      const total = hits.reduce((sum, h) => sum + count(h.text), 0);
      expect(total, `budget ${budget}`).toBeLessThanOrEqual(budget);
      const shown = new Set(hits.flatMap((h) => h.seqs));
      if (budget >= 120) for (const c of [5, 15, 25, 35]) expect(shown.has(c)).toBe(true);
    }
  });

  it('never shows a turn twice', () => {
    const hits = fitAll(chat, [[5], [6], [8]], 1_000);
    const seqs = hits.flatMap((h) => h.seqs);
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  it('shows the matching part of a huge tool result, not its whole', () => {
    const huge = `${'row of numbers 1 2 3 4 5 6 7 8 9\n'.repeat(3_000)}refund approved for W123\n${'more rows 9 8 7\n'.repeat(3_000)}`;
    const list: HistoryEntry[] = [
      { seq: 0, message: { role: 'user', content: 'check W123' }, metadata: { timestamp: 't' } },
      {
        seq: 1,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'db', arguments: '{}' } }],
        },
        metadata: { timestamp: 't' },
      },
      { seq: 2, message: { role: 'tool', tool_call_id: 'c', content: huge }, metadata: { timestamp: 't' } },
    ];
    const [hit] = fitAll(list, [[2]], 200, 'refund W123');
    expect(count(hit?.text ?? '')).toBeLessThanOrEqual(200);
    expect(hit?.text).toContain('refund approved for W123');
  });
});
