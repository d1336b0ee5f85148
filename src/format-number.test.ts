import { describe, expect, it } from 'vitest';
import { formatInt } from './format-number.js';

describe('formatInt', () => {
  it.each([
    [0, '0'],
    [999, '999'],
    [1000, '1,000'],
    [1234567, '1,234,567'],
    [-4500.4, '-4,500'],
    [12.6, '13'],
  ])('%d → %s', (n, out) => expect(formatInt(n)).toBe(out));
});
