import { describe, expect, it } from 'vitest';
import { dayOfTimestamp, spansIn } from './day-spans.js';

const day = (y: number, m: number, d: number) => Date.UTC(y, m - 1, d) / 86_400_000;

describe('spansIn', () => {
  it('reads days written the usual ways', () => {
    for (const text of [
      'on 8 May, 2023',
      'May 8, 2023',
      'May 8th 2023',
      '2023-05-08',
      'the 8th of May 2023',
    ]) {
      expect(spansIn(text), text).toEqual([{ first: day(2023, 5, 8), last: day(2023, 5, 8) }]);
    }
  });

  it('reads a month and a year as spans of days', () => {
    expect(spansIn('in December 2023')).toEqual([{ first: day(2023, 12, 1), last: day(2023, 12, 31) }]);
    expect(spansIn('back in 2022')).toEqual([{ first: day(2022, 1, 1), last: day(2022, 12, 31) }]);
    expect(spansIn('Feb 2024')[0]?.last).toBe(day(2024, 2, 29));
  });

  it('gives a day without a year the year of another date in the text', () => {
    expect(spansIn('between August 11 and August 15 2023')).toEqual([
      { first: day(2023, 8, 11), last: day(2023, 8, 11) },
      { first: day(2023, 8, 15), last: day(2023, 8, 15) },
    ]);
    expect(spansIn('see you May 8')).toEqual([]);
  });

  it('refuses what is not a date', () => {
    expect(spansIn('31 April 2023 and 3 years and 1:56 pm')).toEqual([]);
    expect(spansIn('no digits here')).toEqual([]);
  });
});

describe('dayOfTimestamp', () => {
  it('reads an ISO timestamp, and nothing else', () => {
    expect(dayOfTimestamp('2023-05-08T23:59:59.000Z')).toBe(day(2023, 5, 8));
    expect(dayOfTimestamp('not a time')).toBeUndefined();
  });
});
