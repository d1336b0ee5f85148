import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cadenceFactor, economyAt, MIN_CADENCE, REFERENCE_CACHE_RHO } from './economy.js';
import { DEFAULTS, ECONOMY, ECONOMY_PRESETS, economyFor } from './options.js';
import { BUILTIN_PRICING } from './tokens/pricing.js';

const MODELS = Object.keys(BUILTIN_PRICING);

describe('cadenceFactor: how much of the presets gap suits a cache', () => {
  it('is 1 on Anthropic’s cache, √(ρ / 11.5) on OpenAI’s, 1 where nothing is known', () => {
    expect(cadenceFactor(BUILTIN_PRICING['claude-sonnet-4-5'])).toBe(1);
    // gpt-4o: reads at half the input price, no write surcharge: ρ = (1 − 0.5) / 0.5 = 1.
    expect(cadenceFactor(BUILTIN_PRICING['gpt-4o'])).toBeCloseTo(Math.sqrt(1 / REFERENCE_CACHE_RHO), 9);
    // gpt-5.4: reads at a tenth: ρ = 0.9 / 0.1 = 9.
    expect(cadenceFactor(BUILTIN_PRICING['gpt-5.4'])).toBeCloseTo(Math.sqrt(9 / REFERENCE_CACHE_RHO), 9);
    expect(cadenceFactor(undefined)).toBe(1);
    const gpt4o = BUILTIN_PRICING['gpt-4o']!;
    // No discount at all (or no cached price): the presets as given.
    expect(cadenceFactor({ ...gpt4o, cacheRead: gpt4o.input })).toBe(1);
    expect(cadenceFactor({ ...gpt4o, cacheRead: 0 })).toBe(1);
    expect(cadenceFactor({ ...gpt4o, cacheWrite: Number.NaN })).toBe(1);
    // A discount of 1% would compact every turn: the cadence keeps a quarter of the gap.
    expect(cadenceFactor({ ...gpt4o, cacheRead: gpt4o.input * 0.99 })).toBe(MIN_CADENCE);
  });

  it('is within [MIN_CADENCE, 1] and narrows as cached reads cost more', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.01, max: 0.99, noNaN: true }),
        fc.double({ min: 1, max: 2, noNaN: true }),
        (read, write) => {
          const at = (r: number) =>
            cadenceFactor({ ...BUILTIN_PRICING['gpt-4o']!, input: 1, cacheRead: r, cacheWrite: write });
          const f = at(read);
          expect(f).toBeGreaterThanOrEqual(MIN_CADENCE);
          expect(f).toBeLessThanOrEqual(1);
          expect(at(Math.min(0.999, read + 0.005))).toBeLessThanOrEqual(f);
        },
      ),
    );
  });
});

describe('economyFor: the presets at a model’s cadence', () => {
  it('moves only the trigger of the presets that lean on recall, never above the given one', () => {
    for (const model of MODELS) {
      const pricing = BUILTIN_PRICING[model];
      for (const name of ECONOMY_PRESETS) {
        const given = ECONOMY[name];
        const got = economyFor(name, pricing);
        const { compactThreshold, ...rest } = got;
        const { compactThreshold: givenThreshold, ...givenRest } = given;
        expect(rest).toEqual(givenRest);
        if (given.targetUsage >= DEFAULTS.targetUsage) expect(compactThreshold).toBe(givenThreshold);
        expect(compactThreshold).toBeGreaterThan(given.targetUsage);
        expect(compactThreshold).toBeLessThanOrEqual(givenThreshold);
      }
    }
    expect(economyFor('minimal', BUILTIN_PRICING['gpt-4o'])).toEqual({
      ...ECONOMY.minimal,
      compactThreshold: 0.23,
    });
    expect(economyFor('lean', BUILTIN_PRICING['gpt-4o'])).toEqual({
      ...ECONOMY.lean,
      compactThreshold: 0.424,
    });
  });
});

describe('economyAt: a number between the presets', () => {
  const models = fc.constantFrom(undefined, ...MODELS);

  it('is each preset at its own target', () => {
    for (const model of [undefined, ...MODELS]) {
      const pricing = model === undefined ? undefined : BUILTIN_PRICING[model];
      for (const name of ECONOMY_PRESETS) {
        const preset = economyFor(name, pricing);
        expect(economyFor(preset.targetUsage, pricing)).toEqual(preset);
      }
    }
  });

  it('aims at the number, keeps trigger and memory in order, and moves them with it', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.001, max: 0.998, noNaN: true }),
        fc.double({ min: 0.0005, max: 0.2, noNaN: true }),
        models,
        (x, step, model) => {
          const pricing = model === undefined ? undefined : BUILTIN_PRICING[model];
          const s = economyFor(x, pricing);
          expect(s.targetUsage).toBe(x);
          expect(s.compactThreshold).toBeGreaterThanOrEqual(x);
          expect(s.compactThreshold).toBeLessThanOrEqual(1);
          expect(s.memoryShare).toBeGreaterThan(0);
          expect(s.memoryShare).toBeLessThanOrEqual(x);
          expect(s.keepToolResults).toBeGreaterThanOrEqual(ECONOMY.minimal.keepToolResults);
          expect(s.keepToolResults).toBeLessThanOrEqual(ECONOMY.rich.keepToolResults);
          // Below the default's target the views lean on recall.
          expect(s.recall).toBe(x < DEFAULTS.targetUsage);
          const y = Math.min(0.999, x + step);
          const t = economyFor(y, pricing);
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
    expect(
      economyAt(
        ECONOMY_PRESETS.map((n) => ECONOMY[n]),
        0.045,
      ),
    ).toEqual({
      compactThreshold: Math.round((0.045 + gap / 2) * 1000) / 1000,
      targetUsage: 0.045,
      memoryShare: 0.025,
      keepToolResults: 1,
      recall: true,
    });
  });
});
