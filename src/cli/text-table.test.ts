import { describe, expect, it } from 'vitest';
import { formatInt } from '../format-number.js';
import { textTable } from './text-table.js';

describe('textTable', () => {
  it('aligns numbers right and words left, without trailing spaces on the last column', () => {
    expect(
      textTable(
        [
          ['tool', '22,015', 'a long preview'],
          ['assistant', '165', 'short'],
        ],
        ['left', 'right', 'left'],
      ),
    ).toEqual(['  tool       22,015  a long preview', '  assistant     165  short']);
  });
});

describe('formatInt', () => {
  it('groups thousands and rounds', () => {
    expect(formatInt(1234567)).toBe('1,234,567');
    expect(formatInt(999.6)).toBe('1,000');
    expect(formatInt(0)).toBe('0');
  });
});
