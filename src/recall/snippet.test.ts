import { describe, expect, it } from 'vitest';
import { getModelInfo } from '../tokens/catalog.js';
import { createTokenCounter } from '../tokens/counter.js';
import { snippet } from './snippet.js';
import { searchTerms } from './terms.js';

const counter = createTokenCounter(getModelInfo('gpt-4o')!);
const count = (t: string) => counter.countText(t);

describe('snippet', () => {
  it('returns a text that fits as it is', () => {
    expect(snippet('short text', new Set(['text']), 50, count)).toBe('short text');
  });

  it('shows the part of a long text where the query matches, within the budget', () => {
    const filler = 'lorem ipsum dolor sit amet '.repeat(2_000);
    const text = `${filler} the refund for order W123 was approved by Dana ${filler}`;
    const terms = new Set(searchTerms('refund W123 approved'));
    const cut = snippet(text, terms, 60, count);
    expect(count(cut)).toBeLessThanOrEqual(60);
    expect(cut).toContain('refund for order W123 was approved');
    expect(cut.startsWith('…')).toBe(true);
    expect(cut.endsWith('…')).toBe(true);
  });

  it('shows the start when nothing matches, and nothing when no room', () => {
    const text = 'alpha beta gamma '.repeat(500);
    const cut = snippet(text, new Set(['zeta']), 20, count);
    expect(cut.startsWith('alpha beta')).toBe(true);
    expect(count(cut)).toBeLessThanOrEqual(20);
    expect(snippet(text, new Set(), 0, count)).toBe('');
  });
});
