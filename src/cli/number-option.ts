import { InvalidArgumentError } from 'commander';
import { ECONOMY_PRESETS, type Economy, type EconomyPreset } from '../options.js';

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

/**
 * Parses `--economy`: a preset (`rich`, `balanced`, `lean`, `minimal`) or the share of the budget
 * views aim at, in (0, 1) (`0.3` or `30%`), as the `economy` option takes.
 */
export function economyArgument(value: string): Economy {
  const text = value.trim().toLowerCase();
  if ((ECONOMY_PRESETS as readonly string[]).includes(text)) return text as EconomyPreset;
  const percent = text.endsWith('%');
  const n = Number(percent ? text.slice(0, -1) : text) / (percent ? 100 : 1);
  if (text === '' || !Number.isFinite(n) || n <= 0 || n >= 1) {
    throw new InvalidArgumentError(
      `expected ${ECONOMY_PRESETS.join(', ')}, or the share of the budget views aim at, between 0 and 1 (e.g. 0.3 or 30%)`,
    );
  }
  return n;
}
