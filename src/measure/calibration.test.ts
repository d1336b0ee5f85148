import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../errors.js';
import { InvalidUsageError } from '../meter/usage.js';
import { FilePersistence, MemoryPersistence, type Persistence } from '../stores/persistence.js';
import { calibrationKey, createCalibration } from './calibration.js';

const MODEL = 'claude-sonnet-4-5';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function filePersistence(): Promise<FilePersistence> {
  const dir = await mkdtemp(join(tmpdir(), 'contextkit-calibration-'));
  dirs.push(dir);
  return new FilePersistence(dir);
}

/** Ratios as a sample's actual / estimated; mostly plausible, some wild. */
const ratioArb = fc.oneof(
  fc.double({ min: 0.7, max: 1.5, noNaN: true }),
  fc.double({ min: 0, max: 50, noNaN: true }),
);
const sampleArb = fc.record({
  estimated: fc.integer({ min: 1, max: 500_000 }),
  ratio: ratioArb,
  weight: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
});

describe('createCalibration', () => {
  it('is 1 with no confidence for a model it knows nothing about', () => {
    const calibration = createCalibration();
    expect(calibration.correction('gemini-2.5-pro')).toBe(1);
    expect(calibration.confidence('gemini-2.5-pro')).toBe(0);
    expect(calibration.snapshot()).toEqual({});
  });

  it('keeps the correction within the clamp bounds, whatever the samples', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(sampleArb, { minLength: 1, maxLength: 40 }),
        fc.constantFrom<[number, number]>([0.5, 2], [0.8, 1.25], [0.25, 4]),
        async (samples, clamp) => {
          const calibration = createCalibration({ clamp });
          for (const s of samples) {
            await calibration.record({
              model: MODEL,
              estimated: s.estimated,
              actual: s.estimated * s.ratio,
              weight: s.weight,
            });
            const c = calibration.correction(MODEL);
            expect(c).toBeGreaterThanOrEqual(clamp[0] - 1e-12);
            expect(c).toBeLessThanOrEqual(clamp[1] + 1e-12);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('does not let the first sample swing the correction', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.double({ min: 0, max: 1000, noNaN: true }),
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        async (estimated, ratio, alpha) => {
          const calibration = createCalibration({ alpha });
          await calibration.record({ model: MODEL, estimated, actual: estimated * ratio });
          // The prior (4 samples' worth) holds the first step to 1/5 of log 2.
          const c = calibration.correction(MODEL);
          expect(c).toBeGreaterThanOrEqual(2 ** -0.2 - 1e-12);
          expect(c).toBeLessThanOrEqual(2 ** 0.2 + 1e-12);
        },
      ),
    );
  });

  it('converges on a steady ratio, noise and all', async () => {
    const calibration = createCalibration();
    const noise = [1.04, 0.97, 1.02, 0.95, 1.06, 0.99, 1.01, 0.98];
    for (let i = 0; i < 60; i++) {
      const estimated = 1000 + 37 * i;
      await calibration.record({
        model: MODEL,
        estimated,
        actual: estimated * 1.3 * (noise[i % noise.length] ?? 1),
      });
    }
    expect(calibration.correction(MODEL)).toBeGreaterThan(1.25);
    expect(calibration.correction(MODEL)).toBeLessThan(1.35);
    expect(calibration.confidence(MODEL)).toBe(1);
  });

  it('lets an established correction shrug off an outlier', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.double({ min: 0.7, max: 1.4, noNaN: true }),
        fc.oneof(fc.double({ min: 4, max: 100, noNaN: true }), fc.double({ min: 0, max: 0.2, noNaN: true })),
        async (steady, outlier) => {
          const calibration = createCalibration();
          for (let i = 0; i < 30; i++)
            await calibration.record({ model: MODEL, estimated: 1000, actual: 1000 * steady });
          const before = calibration.correction(MODEL);
          await calibration.record({ model: MODEL, estimated: 1000, actual: 1000 * outlier });
          const after = calibration.correction(MODEL);
          expect(Math.abs(Math.log(after / before))).toBeLessThan(Math.log(1.06));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('moves less for a sample the caller marks as less trustworthy', async () => {
    const full = createCalibration();
    const half = createCalibration();
    const none = createCalibration();
    await full.record({ model: MODEL, estimated: 100, actual: 150 });
    await half.record({ model: MODEL, estimated: 100, actual: 150, weight: 0.5 });
    await none.record({ model: MODEL, estimated: 100, actual: 150, weight: 0 });
    expect(full.correction(MODEL)).toBeGreaterThan(half.correction(MODEL));
    expect(half.correction(MODEL)).toBeGreaterThan(1);
    expect(none.correction(MODEL)).toBe(1);
    expect(none.snapshot()[MODEL]?.samples).toBe(1);
  });

  it('reports confidence as samples / minSamples, up to 1', async () => {
    const calibration = createCalibration({ minSamples: 4 });
    for (let i = 1; i <= 6; i++) {
      await calibration.record({ model: MODEL, estimated: 10, actual: 11 });
      expect(calibration.confidence(MODEL)).toBe(Math.min(1, i / 4));
    }
    expect(calibration.snapshot()[MODEL]).toMatchObject({ samples: 6, confidence: 1 });
  });

  it('keeps models apart', async () => {
    const calibration = createCalibration();
    await calibration.record({ model: 'a', estimated: 100, actual: 200 });
    await calibration.record({ model: 'b', estimated: 100, actual: 50 });
    expect(calibration.correction('a')).toBeGreaterThan(1);
    expect(calibration.correction('b')).toBeLessThan(1);
    expect(Object.keys(calibration.snapshot()).sort()).toEqual(['a', 'b']);
  });

  const drivers: Array<[string, () => Promise<Persistence> | Persistence]> = [
    ['in memory', () => new MemoryPersistence()],
    ['in a MemoryPersistence', () => new MemoryPersistence()],
    ['in a FilePersistence', filePersistence],
  ];

  it.each(drivers)('counts every one of many concurrent records (%s)', async (name, make) => {
    const persistence = name === 'in memory' ? undefined : await make();
    const calibration = createCalibration(persistence ? { persistence } : {});
    const n = 25;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        calibration.record({ model: MODEL, estimated: 100 + i, actual: 120 + i }),
      ),
    );
    expect(calibration.snapshot()[MODEL]?.samples).toBe(n);
    expect(calibration.correction(MODEL)).toBeGreaterThan(1);
    if (persistence) {
      const stored = await persistence.get<{ samples: number }>(calibrationKey(MODEL));
      expect(stored?.samples).toBe(n);
    }
  });

  it.each(drivers.slice(1))('persists and reloads (%s)', async (_name, make) => {
    const persistence = await make();
    const first = createCalibration({ persistence });
    for (let i = 0; i < 12; i++) await first.record({ model: MODEL, estimated: 1000, actual: 1180 });
    const learned = first.correction(MODEL);

    const restarted = createCalibration({ persistence });
    expect(restarted.correction(MODEL)).toBe(1);
    await restarted.load(MODEL);
    expect(restarted.correction(MODEL)).toBeCloseTo(learned, 12);
    expect(restarted.snapshot()[MODEL]?.samples).toBe(12);
    await restarted.load('never-seen');
    expect(restarted.correction('never-seen')).toBe(1);
  });

  it('adds up what two writers sharing one store learned', async () => {
    const persistence = new MemoryPersistence();
    const a = createCalibration({ persistence });
    const b = createCalibration({ persistence });
    for (let i = 0; i < 5; i++) await a.record({ model: MODEL, estimated: 100, actual: 110 });
    for (let i = 0; i < 3; i++) await b.record({ model: MODEL, estimated: 100, actual: 110 });
    expect((await persistence.get<{ samples: number }>(calibrationKey(MODEL)))?.samples).toBe(8);
    expect(b.snapshot()[MODEL]?.samples).toBe(8);
  });

  it('applies a sample again when another writer overwrote it unseen', async () => {
    const inner = new MemoryPersistence();
    const stale = createCalibration({ persistence: inner });
    await stale.record({ model: MODEL, estimated: 100, actual: 100 });
    const staleState = await inner.get(calibrationKey(MODEL));

    // Right after the first write of `writer`, another process writes a state built without it.
    let overwrites = 1;
    const racing: Persistence = {
      get: (key) => inner.get(key),
      async set(key, value) {
        await inner.set(key, value);
        if (overwrites-- > 0)
          await inner.set(key, { ...(staleState as object), samples: 5, writes: ['other.0'] });
      },
      delete: (key) => inner.delete(key),
      list: (prefix) => inner.list(prefix),
      has: (key) => inner.has(key),
    };
    const writer = createCalibration({ persistence: racing });
    await writer.record({ model: MODEL, estimated: 100, actual: 130 });
    const stored = await inner.get<{ samples: number; writes: string[] }>(calibrationKey(MODEL));
    expect(stored?.samples).toBe(6);
    expect(stored?.writes).toContain('other.0');
    expect(writer.snapshot()[MODEL]?.samples).toBe(6);
  });

  it('learns in memory and reports the failure when the store cannot be written', async () => {
    const inner = new MemoryPersistence();
    const failing: Persistence = {
      get: (key) => inner.get(key),
      set: () => Promise.reject(new Error('disk full')),
      delete: (key) => inner.delete(key),
      list: (prefix) => inner.list(prefix),
      has: (key) => inner.has(key),
    };
    const calibration = createCalibration({ persistence: failing });
    await expect(calibration.record({ model: MODEL, estimated: 100, actual: 150 })).rejects.toThrow(
      'disk full',
    );
    expect(calibration.correction(MODEL)).toBeGreaterThan(1);
    expect(calibration.snapshot()[MODEL]?.samples).toBe(1);
    await expect(calibration.record({ model: MODEL, estimated: 100, actual: 150 })).rejects.toThrow(
      'disk full',
    );
    expect(calibration.snapshot()[MODEL]?.samples).toBe(2);
  });

  it('ignores a stored value that is not a calibration', async () => {
    const persistence = new MemoryPersistence();
    await persistence.set(calibrationKey(MODEL), { v: 1, logFactor: 'big', samples: -1 });
    const calibration = createCalibration({ persistence });
    await calibration.load(MODEL);
    expect(calibration.correction(MODEL)).toBe(1);
    await calibration.record({ model: MODEL, estimated: 100, actual: 120 });
    expect((await persistence.get<{ samples: number }>(calibrationKey(MODEL)))?.samples).toBe(1);
  });

  it('rejects samples that cannot be counts, naming the field', async () => {
    const calibration = createCalibration();
    const field = (sample: unknown) =>
      calibration.record(sample as never).then(
        () => undefined,
        (e: unknown) => {
          expect(e).toBeInstanceOf(InvalidUsageError);
          return (e as InvalidUsageError).field;
        },
      );
    expect(await field({ model: MODEL, estimated: 0, actual: 10 })).toBe('sample.estimated');
    expect(await field({ model: MODEL, estimated: 10, actual: Number.NaN })).toBe('sample.actual');
    expect(await field({ model: MODEL, estimated: 10, actual: 10, weight: 2 })).toBe('sample.weight');
    expect(await field({ model: '', estimated: 10, actual: 10 })).toBe('model');
    expect(calibration.snapshot()).toEqual({});
  });

  it('refuses options that cannot work', () => {
    expect(() => createCalibration({ alpha: 0 })).toThrow(ConfigurationError);
    expect(() => createCalibration({ clamp: [1.2, 2] })).toThrow(ConfigurationError);
    expect(() => createCalibration({ minSamples: 0 })).toThrow(ConfigurationError);
    expect(() => createCalibration({ outlierRatio: 1 })).toThrow(ConfigurationError);
  });
});

describe('calibration: a tokenizer change (issue 34, item 6)', () => {
  const noise = [1.02, 0.98, 1.01];

  it('is caught within three replies, from nothing known', async () => {
    const calibration = createCalibration();
    for (let i = 0; i < 3; i++) {
      if (i === 2) expect(calibration.correction(MODEL)).toBeLessThan(1.15);
      await calibration.record({ model: MODEL, estimated: 10_000, actual: 10_000 * 1.3 * (noise[i] ?? 1) });
    }
    expect(Math.abs(Math.log(calibration.correction(MODEL) / 1.3))).toBeLessThan(Math.log(1.05));
  });

  it('is caught within three replies after an established correction', async () => {
    const calibration = createCalibration();
    for (let i = 0; i < 30; i++) await calibration.record({ model: MODEL, estimated: 1000, actual: 1000 });
    for (let i = 0; i < 3; i++) {
      await calibration.record({ model: MODEL, estimated: 1000, actual: 1000 * 1.3 * (noise[i] ?? 1) });
    }
    expect(Math.abs(Math.log(calibration.correction(MODEL) / 1.3))).toBeLessThan(Math.log(1.05));
  });

  it('is not set off by samples that disagree with one another, nor by discounted ones', async () => {
    const scattered = createCalibration();
    for (const r of [1.3, 0.9, 1.3])
      await scattered.record({ model: MODEL, estimated: 1000, actual: 1000 * r });
    expect(scattered.correction(MODEL)).toBeLessThan(1.15);
    const discounted = createCalibration();
    for (let i = 0; i < 3; i++) {
      await discounted.record({ model: MODEL, estimated: 1000, actual: 1300, weight: 0.5 });
    }
    expect(discounted.correction(MODEL)).toBeLessThan(1.15);
  });

  it('keeps the run across a restart (persisted with the correction)', async () => {
    const persistence = new MemoryPersistence();
    const first = createCalibration({ persistence });
    for (let i = 0; i < 2; i++) await first.record({ model: MODEL, estimated: 1000, actual: 1300 });
    const second = createCalibration({ persistence });
    await second.load(MODEL);
    await second.record({ model: MODEL, estimated: 1000, actual: 1300 });
    expect(Math.abs(Math.log(second.correction(MODEL) / 1.3))).toBeLessThan(Math.log(1.05));
  });
});
