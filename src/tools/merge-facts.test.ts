import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeFacts } from './merge-facts.js';
import { type ExtractedFact, FACT_CATEGORIES } from './types.js';

const factArb: fc.Arbitrary<ExtractedFact> = fc.record({
  key: fc.constantFrom('a', 'b'),
  value: fc.constantFrom('x', 'y', 'z', 'src/a.ts'),
  category: fc.constantFrom(...FACT_CATEGORIES.slice(0, 3)),
  seq: fc.nat(20),
});

describe('mergeFacts', () => {
  it('keeps one fact per (category, value), the earliest, ordered by seq, losing none of the kept', () => {
    fc.assert(
      fc.property(
        fc.array(factArb, { maxLength: 15 }),
        fc.array(factArb, { maxLength: 15 }),
        (kept, added) => {
          const merged = mergeFacts(kept, added);
          const all = [...kept, ...added];
          const ids = merged.map((f) => `${f.category}|${f.value}`);
          expect(new Set(ids).size).toBe(ids.length);
          for (const fact of all) {
            const winner = merged.find((m) => m.category === fact.category && m.value === fact.value);
            expect(winner).toBeDefined();
            expect(winner?.seq).toBeLessThanOrEqual(fact.seq);
          }
          for (let i = 1; i < merged.length; i += 1) {
            expect((merged[i] as ExtractedFact).seq).toBeGreaterThanOrEqual(
              (merged[i - 1] as ExtractedFact).seq,
            );
          }
        },
      ),
    );
  });

  it('prefers the kept fact on a tie and keeps the order within a seq', () => {
    const kept: ExtractedFact[] = [
      { key: 'k2', value: 'b', category: 'other', seq: 1 },
      { key: 'k1', value: 'a', category: 'other', seq: 1 },
    ];
    const added: ExtractedFact[] = [
      { key: 'new', value: 'a', category: 'other', seq: 1 },
      { key: 'n0', value: 'c', category: 'other', seq: 0 },
    ];
    expect(mergeFacts(kept, added).map((f) => f.key)).toEqual(['n0', 'k2', 'k1']);
  });
});
