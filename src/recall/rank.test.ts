import { describe, expect, it } from 'vitest';
import { readQuery } from './query.js';
import { rankGroups, type TurnFacts } from './rank.js';

const DAY = Date.UTC(2023, 4, 8) / 86_400_000;

function rank(
  query: string,
  scored: Array<[number, number]>,
  facts: Record<number, TurnFacts> = {},
  count = 100,
  limit = 5,
) {
  return rankGroups({
    scored: scored.map(([seq, score]) => ({ seq, score })),
    count,
    query: readQuery(query),
    facts: (seq) => facts[seq] ?? {},
    *seqsBetween(first, last) {
      for (const [seq, f] of Object.entries(facts))
        if (f.day !== undefined && f.day >= first && f.day <= last) yield Number(seq);
    },
    limit,
  });
}

describe('rankGroups', () => {
  it('orders by score and keeps far-apart turns as separate groups', () => {
    const groups = rank('paint', [
      [10, 1],
      [50, 3],
      [90, 2],
    ]);
    expect(groups.map((g) => g.centers[0])).toEqual([50, 90, 10]);
  });

  it('merges turns close to each other into one group: no turn shown twice', () => {
    const groups = rank('paint', [
      [10, 3],
      [11, 2],
      [13, 1],
      [40, 1],
    ]);
    expect(groups).toHaveLength(2);
    expect(groups[0]?.centers.sort((a, b) => a - b)).toEqual(expect.arrayContaining([10, 11]));
    expect(groups[1]?.centers).toContain(40);
  });

  it('lets a neighbour of a strong turn rank above a lone turn of equal score', () => {
    const groups = rank('paint', [
      [10, 1],
      [11, 1],
      [60, 1.2],
    ]);
    expect(groups[0]?.centers).toEqual(expect.arrayContaining([10, 11]));
  });

  it('favours turns by the person the query names', () => {
    const facts = { 10: { speaker: 'melanie' }, 60: { speaker: 'caroline' } };
    const groups = rank(
      'What did Caroline paint?',
      [
        [10, 1],
        [60, 0.9],
      ],
      facts,
    );
    expect(groups[0]?.centers[0]).toBe(60);
  });

  it('favours turns said on or just after the date the query names, even with no word matching', () => {
    const facts: Record<number, TurnFacts> = {
      10: { day: DAY - 300 },
      60: { day: DAY + 1 },
      70: { day: DAY },
    };
    const groups = rank(
      'What did Joanna watch on 8 May, 2023?',
      [
        [10, 1],
        [60, 0.7],
      ],
      facts,
    );
    expect(groups[0]?.centers[0]).toBe(60);
    expect(groups.flatMap((g) => g.centers)).toContain(70);
  });

  it('returns nothing for nothing found, and at most `limit` groups', () => {
    expect(rank('paint', [])).toEqual([]);
    const many = Array.from({ length: 30 }, (_, i): [number, number] => [i * 10, 1 + i]);
    expect(rank('paint', many, {}, 400, 3)).toHaveLength(3);
  });
});
