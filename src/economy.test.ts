import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { economyAt } from './economy.js';
import { ContextManager } from './manager.js';
import { checkOptions, DEFAULTS, ECONOMY, ECONOMY_PRESETS, economyFor, economySettings } from './options.js';

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
          expect(s.summaryShare).toBeGreaterThan(0);
          expect(s.summaryShare).toBeLessThanOrEqual(x);
          expect(s.keepToolResults).toBeGreaterThanOrEqual(ECONOMY.minimal.keepToolResults);
          expect(s.keepToolResults).toBeLessThanOrEqual(ECONOMY.rich.keepToolResults);
          // Below the default's target the views lean on recall.
          expect(s.recall).toBe(x < DEFAULTS.targetUsage);
          const t = economyFor(Math.min(0.999, x + step));
          // Rounded to 0.001: a larger number never triggers or remembers less.
          expect(t.compactThreshold).toBeGreaterThanOrEqual(s.compactThreshold - 0.001);
          expect(t.summaryShare).toBeGreaterThanOrEqual(s.summaryShare - 0.001);
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
      summaryShare: 0.025,
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

describe('economy: every number in the documented range (0, 1) gives valid options', () => {
  // Issue 31, item 12: `economy: 1e-9` was refused with an error about a targetUsage and a
  // compactThreshold of 0 the caller never set (the trigger was rounded to 0.001 below the target).
  const anyShare = fc.oneof(
    fc.double({ min: Number.MIN_VALUE, max: 1, maxExcluded: true, noNaN: true }),
    fc.double({ min: Number.MIN_VALUE, max: 1e-3, noNaN: true }),
    fc.constantFrom(Number.MIN_VALUE, 1e-300, 1e-9, 1e-4, 0.0005, 0.999, 1 - Number.EPSILON / 2),
  );

  it('is accepted by the option checks, with the trigger above the target and the memory inside it', () => {
    fc.assert(
      fc.property(anyShare, fc.boolean(), (x, ahead) => {
        const options = { model: 'gpt-4o', economy: x, ...(ahead ? { summaryAhead: true } : {}) };
        expect(() => checkOptions(options)).not.toThrow();
        const s = economySettings(options);
        expect(s.targetUsage).toBe(x);
        expect(s.compactThreshold).toBeGreaterThan(s.targetUsage);
        expect(s.compactThreshold).toBeLessThanOrEqual(1);
        expect(s.summaryShare).toBeGreaterThan(0);
        expect(s.summaryShare).toBeLessThanOrEqual(s.targetUsage);
      }),
      { numRuns: 2000 },
    );
  });

  it('builds a manager at economy 1e-9', () => {
    expect(() => new ContextManager({ model: 'gpt-4o', economy: 1e-9 })).not.toThrow();
  });
});
