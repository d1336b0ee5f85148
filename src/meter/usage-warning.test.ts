import { describe, expect, it } from 'vitest';
import { nextUsageWarning, resetUsageWarning, type UsageWarningState } from './usage-warning.js';

/** Feeds requests in order; returns the indexes of those that warned. */
function warnings(requests: Array<{ usage: number; budget?: number; compacted?: boolean }>): number[] {
  let state: UsageWarningState = resetUsageWarning();
  const out: number[] = [];
  requests.forEach((r, i) => {
    const next = nextUsageWarning(state, {
      usage: r.usage,
      warnAt: 0.8,
      budget: r.budget ?? 16_000,
      compacted: r.compacted ?? false,
    });
    if (next.warn) out.push(i);
    state = next.state;
  });
  return out;
}

/** A session that compacts: climbs from the target (0.6) past the line to the trigger, again and again. */
function sawtooth(cycles: number): Array<{ usage: number; compacted?: boolean }> {
  const requests: Array<{ usage: number; compacted?: boolean }> = [];
  for (let c = 0; c < cycles; c++) {
    for (const usage of [0.62, 0.7, 0.78, 0.84, 0.9]) requests.push({ usage });
    requests.push({ usage: 0.6, compacted: true });
  }
  return requests;
}

describe('the usage warning', () => {
  it('fires once when the view first passes the line, not again while it stays above', () => {
    expect(warnings([{ usage: 0.5 }, { usage: 0.81 }, { usage: 0.85 }, { usage: 0.9 }])).toEqual([1]);
  });

  it('fires once in a session that compacts every few turns, not once per compaction', () => {
    expect(warnings(sawtooth(24))).toEqual([3]);
  });

  it('fires again after usage fell back for another reason: a larger budget, or a cleared history', () => {
    expect(
      warnings([
        { usage: 0.85 },
        { usage: 0.08, budget: 160_000 },
        { usage: 0.85 },
        { usage: 0.6, compacted: true },
        { usage: 0.05, budget: 300_000 },
        { usage: 0.82 },
      ]),
    ).toEqual([0, 2, 5]);
    // clear() or setMessages(…, { replace: true }) start from resetUsageWarning().
    expect(
      nextUsageWarning(resetUsageWarning(), { usage: 0.9, warnAt: 0.8, budget: 1, compacted: false }).warn,
    ).toBe(true);
  });

  it('fires when a compaction could not bring the view under the line, if it had not yet', () => {
    expect(warnings([{ usage: 0.7 }, { usage: 0.85, compacted: true }, { usage: 0.86 }])).toEqual([1]);
  });
});
