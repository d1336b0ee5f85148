import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FACTS_CLOSE, FACTS_HEADING, FACTS_OPEN, parseFactsBlock, renderFactsBlock } from './facts-block.js';
import { type ExtractedFact, FACT_CATEGORIES } from './types.js';

const factArb: fc.Arbitrary<ExtractedFact> = fc.record({
  key: fc.string({ maxLength: 20 }),
  value: fc.string({ maxLength: 40 }),
  category: fc.constantFrom(...FACT_CATEGORIES),
  seq: fc.integer({ min: -1, max: 100_000 }),
});

describe('renderFactsBlock / parseFactsBlock', () => {
  it('renders the seed format with contextkit markers and the source message', () => {
    const block = renderFactsBlock([
      { key: 'reservation_id', value: 'ZFA04Y', category: 'identifier', seq: 12, span: 'not rendered' },
      { key: 'path', value: 'src/date.ts', category: 'path', seq: 40 },
    ]);
    expect(block).toBe(
      [
        '<!-- contextkit:facts -->',
        '## Key facts (preserved across compaction)',
        '- reservation_id [identifier]: ZFA04Y (msg 12)',
        '- path [path]: src/date.ts (msg 40)',
        '<!-- /contextkit:facts -->',
      ].join('\n'),
    );
  });

  it('renders nothing for no facts', () => {
    expect(renderFactsBlock([])).toBe('');
    expect(parseFactsBlock('')).toEqual([]);
  });

  it('round-trips exactly, whatever the keys and values hold (spans aside)', () => {
    fc.assert(
      fc.property(fc.array(factArb, { maxLength: 12 }), (facts) => {
        expect(parseFactsBlock(renderFactsBlock(facts))).toEqual(facts);
      }),
      { numRuns: 500 },
    );
  });

  it('round-trips tricky values: brackets, "(msg N)" inside, line breaks, backslashes', () => {
    const facts: ExtractedFact[] = [
      { key: 'a [name]: b', value: 'x (msg 3)', category: 'other', seq: 5 },
      { key: 'multi\nline', value: 'C:\\new\\table\r\nnext', category: 'path', seq: 0 },
      { key: '', value: '', category: 'number', seq: 7 },
      { key: 'trailing', value: ' spaced ', category: 'other', seq: 9 },
    ];
    expect(parseFactsBlock(renderFactsBlock(facts))).toEqual(facts);
  });

  it('reads blocks inside a larger prompt and ignores what is outside them', () => {
    const prompt = [
      'You are a careful agent.',
      '- not [other]: a fact (msg 1)',
      renderFactsBlock([{ key: 'email', value: 'ana@example.com', category: 'email', seq: 3 }]),
      'More instructions.',
      renderFactsBlock([{ key: 'date', value: '2024-05-20', category: 'date', seq: 8 }]),
    ].join('\n\n');
    expect(parseFactsBlock(prompt)).toEqual([
      { key: 'email', value: 'ana@example.com', category: 'email', seq: 3 },
      { key: 'date', value: '2024-05-20', category: 'date', seq: 8 },
    ]);
  });

  it("reads the seed's lines without a message number, and unknown categories as other", () => {
    const text = [
      FACTS_OPEN,
      FACTS_HEADING,
      '- user_id [identifier]: usr_8f3a',
      '- mood [feeling]: calm',
      FACTS_CLOSE,
    ].join('\n');
    expect(parseFactsBlock(text)).toEqual([
      { key: 'user_id', value: 'usr_8f3a', category: 'identifier', seq: -1 },
      { key: 'mood', value: 'calm', category: 'other', seq: -1 },
    ]);
  });
});
