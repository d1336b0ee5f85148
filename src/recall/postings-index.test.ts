import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_POSTINGS_PER_QUERY, PostingsIndex } from './postings-index.js';
import { searchTerms } from './terms.js';

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa'];

/** BM25 (k1 1.2, b 0.75) computed directly from the texts, for comparison. */
function bm25(texts: readonly string[], terms: readonly string[]): Map<number, number> {
  const docs = texts.map((t) => searchTerms(t));
  const n = docs.length;
  const avg = docs.reduce((s, d) => s + d.length, 0) / n || 1;
  const out = new Map<number, number>();
  for (const term of new Set(terms)) {
    const df = docs.filter((d) => d.includes(term)).length;
    if (df === 0) continue;
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
    docs.forEach((d, seq) => {
      const tf = d.filter((t) => t === term).length;
      if (tf === 0) return;
      const gain = (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * d.length) / avg));
      out.set(seq, (out.get(seq) ?? 0) + gain);
    });
  }
  return out;
}

describe('PostingsIndex', () => {
  it('scores exactly BM25, best first, at most `limit`', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.constantFrom(...WORDS), { maxLength: 12 }), { minLength: 1, maxLength: 300 }),
        fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 40 }),
        (docs, query, limit) => {
          const texts = docs.map((d) => d.join(' '));
          const index = new PostingsIndex();
          texts.forEach((t, seq) => {
            index.add(seq, t);
          });
          const terms = query.map((w) => searchTerms(w)[0] as string);
          const got = index.search(terms, limit);
          const want = bm25(texts, terms);
          expect(got.length).toBe(Math.min(limit, want.size));
          for (const hit of got) expect(hit.score).toBeCloseTo(want.get(hit.seq) as number, 9);
          for (let i = 1; i < got.length; i++)
            expect(got[i - 1]!.score).toBeGreaterThanOrEqual(got[i]!.score);
          const cutoff = got[got.length - 1]?.score ?? Number.POSITIVE_INFINITY;
          const better = [...want.values()].filter((s) => s > cutoff + 1e-9).length;
          expect(better).toBeLessThan(got.length + 1);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('keeps thousands of terms apart through table growth', () => {
    const index = new PostingsIndex();
    for (let seq = 0; seq < 20_000; seq++) index.add(seq, `token${seq} shared`);
    expect(index.size).toBe(20_000);
    for (const seq of [0, 1, 4_095, 4_096, 12_345, 19_999]) {
      expect(index.search([`token${seq}`], 3)).toEqual([{ seq, score: expect.any(Number) }]);
    }
    expect(index.search(['missing'], 3)).toEqual([]);
  });

  it('reads a bounded number of postings: a word in every message is left out once a rarer one is read', () => {
    const index = new PostingsIndex();
    const n = MAX_POSTINGS_PER_QUERY + 10;
    for (let seq = 0; seq < n; seq++) index.add(seq, seq === 77 ? 'common rare' : 'common');
    const hits = index.search(['common', 'rare'], 5);
    expect(hits[0]?.seq).toBe(77);
    expect(hits).toHaveLength(1);
    expect(index.search(['common'], 5)).toHaveLength(5);
  });
});
