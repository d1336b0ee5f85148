import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_UNIT_CHARS, splitLong, splitSentences, textUnits } from './sentences.js';

describe('splitSentences', () => {
  it('splits at sentence ends but not inside paths, numbers or abbreviations', () => {
    expect(splitSentences('Fix src/x.ts now. Version 1.5 ships e.g. Friday. Dr. Lima agreed! Done?')).toEqual(
      ['Fix src/x.ts now.', 'Version 1.5 ships e.g. Friday.', 'Dr. Lima agreed!', 'Done?'],
    );
  });

  it('does not split before a lowercase word', () => {
    expect(splitSentences('See the docs. then retry.')).toEqual(['See the docs. then retry.']);
  });
});

describe('splitLong', () => {
  it('cuts long text at commas and spaces into verbatim pieces', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z0-9/._-]{1,30}$/), { maxLength: 80 }),
        fc.constantFrom(' ', ', '),
        (words, sep) => {
          const text = words.join(sep);
          const pieces = splitLong(text);
          for (const piece of pieces) {
            expect(piece.length).toBeLessThanOrEqual(MAX_UNIT_CHARS);
            expect(text).toContain(piece);
          }
          const tokens = new Set(words);
          for (const piece of pieces)
            for (const token of piece.split(/,? /))
              if (token !== '') expect(tokens).toContain(token.replace(/,$/, ''));
        },
      ),
    );
  });

  it('drops a blob with no separator', () => {
    expect(splitLong(`start ${'A'.repeat(1000)} end`)).toEqual(['start', 'end']);
  });
});

describe('textUnits', () => {
  it('reads prose by sentences and tool output by lines, with line and place', () => {
    expect(textUnits('One. Two.\nThree', true)).toEqual([
      { text: 'One.', line: 0, place: 0 },
      { text: 'Two.', line: 0, place: 1 },
      { text: 'Three', line: 1, place: 2 },
    ]);
    expect(textUnits('a. B.\n\nc', false)).toEqual([
      { text: 'a. B.', line: 0, place: 0 },
      { text: 'c', line: 2, place: 1 },
    ]);
  });
});
