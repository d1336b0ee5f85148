import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { positiveInteger } from './number-option.js';

describe('positiveInteger', () => {
  it('reads plain, grouped and suffixed counts', () => {
    expect(positiveInteger('16000')).toBe(16_000);
    expect(positiveInteger('16_000')).toBe(16_000);
    expect(positiveInteger('16,000')).toBe(16_000);
    expect(positiveInteger('16k')).toBe(16_000);
    expect(positiveInteger('1.5K')).toBe(1_500);
    expect(positiveInteger('2m')).toBe(2_000_000);
  });

  it('refuses zero, negatives, fractions and words as usage errors', () => {
    for (const bad of ['0', '-5', '1.5', 'abc', '', '12x', '0.0001k']) {
      expect(() => positiveInteger(bad)).toThrow(InvalidArgumentError);
    }
  });
});
