import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineStarts } from './line-starts.js';

type Op =
  | { kind: 'push'; value: number }
  | { kind: 'append'; values: number[] }
  | { kind: 'truncate'; length: number }
  | { kind: 'trim' };

// Offsets below and past 4 GiB (where 32 bits no longer hold them), up to the largest safe integer.
const offset = fc.oneof(
  fc.integer({ min: 0, max: 0xffff_ffff }),
  fc.integer({ min: 0xffff_ffff, max: Number.MAX_SAFE_INTEGER }),
);

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: offset.map((value) => ({ kind: 'push' as const, value })) },
  {
    weight: 1,
    arbitrary: fc.array(offset, { maxLength: 40 }).map((values) => ({ kind: 'append' as const, values })),
  },
  { weight: 1, arbitrary: fc.nat(80).map((length) => ({ kind: 'truncate' as const, length })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'trim' as const }) },
);

describe('LineStarts', () => {
  it('holds exactly what an array of the same pushes, appends and cuts holds, past 4 GiB too', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), (ops) => {
        const starts = new LineStarts();
        const model: number[] = [];
        for (const o of ops) {
          if (o.kind === 'push') {
            starts.push(o.value);
            model.push(o.value);
          } else if (o.kind === 'append') {
            starts.append(LineStarts.of(o.values));
            model.push(...o.values);
          } else if (o.kind === 'truncate') {
            starts.truncate(o.length);
            model.length = Math.min(model.length, o.length);
          } else starts.trim();
        }
        expect(starts.length).toBe(model.length);
        expect(starts.toArray()).toEqual(model);
        expect(starts.last()).toBe(model.at(-1));
        expect(starts.get(model.length)).toBeUndefined();
        expect(starts.get(-1)).toBeUndefined();
        for (const [i, v] of model.entries()) expect(starts.get(i)).toBe(v);
        const from = Math.floor(model.length / 2);
        const bytes = starts.doublesFrom(from);
        expect(bytes.length).toBe(8 * (model.length - from));
        for (let i = from; i < model.length; i++) expect(bytes.readDoubleLE(8 * (i - from))).toBe(model[i]);
      }),
    );
  });

  it('takes 4 bytes an entry while the log is under 4 GiB, 8 past it', () => {
    const starts = new LineStarts();
    for (let i = 0; i < 100_000; i++) starts.push(i * 500);
    // Grown by half again each time it fills: at most half as much room again as it holds.
    expect(starts.byteLength).toBeLessThanOrEqual(4 * 150_000 + 64);
    expect(starts.trim().byteLength).toBe(400_000);
    starts.push(2 ** 33);
    expect(starts.byteLength).toBeGreaterThanOrEqual(8 * 100_001);
    expect(starts.last()).toBe(2 ** 33);
    expect(starts.get(99_999)).toBe(99_999 * 500);
  });
});
