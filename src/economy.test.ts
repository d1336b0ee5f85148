import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { economyAt } from './economy.js';
import { DEFAULTS, ECONOMY, ECONOMY_PRESETS, economyFor } from './options.js';

const PRESETS = ECONOMY_PRESETS.map((name) => ECONOMY[name]);

describe('economyAt: a number between the presets', () => {
  it('is each preset at its own target', () => {
    for (const name of ECONOMY_PRESETS) {
      expect(economyFor(ECONOMY[name].targetUsage)).toEqual(ECONOMY[name]);
      expect(economyFor(name)).toEqual(ECONOMY[name]);
    }
  });

  it('aims at the number, keeps trigger and memory in order, and moves them with it', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.001, max: 0.998, noNaN: true }),
        fc.double({ min: 0.0005, max: 0.2, noNaN: true }),
        (x, step) => {
          const s = economyFor(x);
          expect(s.targetUsage).toBe(x);
          expect(s.compactThreshold).toBeGreaterThanOrEqual(x);
          expect(s.compactThreshold).toBeLessThanOrEqual(1);
          expect(s.memoryShare).toBeGreaterThan(0);
          expect(s.memoryShare).toBeLessThanOrEqual(x);
          expect(s.keepToolResults).toBeGreaterThanOrEqual(ECONOMY.minimal.keepToolResults);
          expect(s.keepToolResults).toBeLessThanOrEqual(ECONOMY.rich.keepToolResults);
          // Below the default's target the views lean on recall.
          expect(s.recall).toBe(x < DEFAULTS.targetUsage);
          const t = economyFor(Math.min(0.999, x + step));
          // Rounded to 0.001: a larger number never triggers or remembers less.
          expect(t.compactThreshold).toBeGreaterThanOrEqual(s.compactThreshold - 0.001);
          expect(t.memoryShare).toBeGreaterThanOrEqual(s.memoryShare - 0.001);
          expect(t.keepToolResults).toBeGreaterThanOrEqual(s.keepToolResults);
        },
      ),
    );
  });

  it('below the leanest preset shrinks the gap as the square root of the target', () => {
    const minimal = ECONOMY.minimal;
    const gap = minimal.compactThreshold - minimal.targetUsage;
    // A quarter of minimal's target: half its gap.
    expect(economyAt(PRESETS, 0.045)).toEqual({
      compactThreshold: Math.round((0.045 + gap / 2) * 1000) / 1000,
      targetUsage: 0.045,
      memoryShare: 0.025,
      keepToolResults: 1,
      recall: true,
    });
  });

  it('above the richest keeps its gap, the trigger at most the whole budget', () => {
    expect(economyAt(PRESETS, 0.8)).toMatchObject({
      compactThreshold: 1,
      targetUsage: 0.8,
      keepToolResults: 5,
    });
    expect(economyAt(PRESETS, 0.78).compactThreshold).toBe(0.98);
  });
});
