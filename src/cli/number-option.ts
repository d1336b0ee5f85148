import { InvalidArgumentError } from 'commander';

const NUMBER = /^(\d+(?:\.\d+)?)([km]?)$/i;

/**
 * Parses a count given on the command line: `16000`, `16_000`, `16,000` or `16k` (`m` for
 * millions). Anything else is a usage error (exit 2) that says what was expected.
 */
export function positiveInteger(value: string): number {
  const match = NUMBER.exec(value.trim().replace(/[_,]/g, ''));
  const scale = match?.[2]?.toLowerCase() === 'k' ? 1_000 : match?.[2]?.toLowerCase() === 'm' ? 1_000_000 : 1;
  const n = match ? Number(match[1]) * scale : Number.NaN;
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new InvalidArgumentError('expected a positive whole number (e.g. 16000 or 16k)');
  }
  return n;
}
