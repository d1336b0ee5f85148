import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineStarts, PAGE_STARTS, type StartsSource, StartsUnreadable } from './line-starts.js';

type Op =
  | { kind: 'push'; value: number }
  | { kind: 'append'; values: number[] }
  | { kind: 'fill'; count: number; from: number }
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
  // Runs long enough to cross pages.
  {
    weight: 1,
    arbitrary: fc
      .record({ count: fc.integer({ min: 1, max: 5000 }), from: offset })
      .map((r) => ({ kind: 'fill' as const, ...r })),
  },
  { weight: 1, arbitrary: fc.nat(9000).map((length) => ({ kind: 'truncate' as const, length })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'trim' as const }) },
);

describe('LineStarts', () => {
  it('holds exactly what an array of the same pushes, appends and cuts holds, past 4 GiB too', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const starts = new LineStarts();
        const model: number[] = [];
        for (const o of ops) {
          if (o.kind === 'push') {
            starts.push(o.value);
            model.push(o.value);
          } else if (o.kind === 'append') {
            starts.append(LineStarts.of(o.values));
            model.push(...o.values);
          } else if (o.kind === 'fill') {
            for (let k = 0; k < o.count; k++) {
              starts.push(o.from + k);
              model.push(o.from + k);
            }
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

  it('takes 4 bytes an entry while the log is under 4 GiB, 8 in the page of a start past it', () => {
    const starts = new LineStarts();
    for (let i = 0; i < 100_000; i++) starts.push(i * 500);
    // Pages past the first are made whole: at most one page of room more than it holds.
    expect(starts.byteLength).toBeLessThanOrEqual(4 * (100_000 + PAGE_STARTS));
    expect(starts.trim().byteLength).toBe(400_000);
    starts.push(2 ** 33);
    // Only the last page holds 64-bit starts.
    expect(starts.byteLength).toBeGreaterThan(400_000);
    expect(starts.byteLength).toBeLessThanOrEqual(400_000 + 8 * PAGE_STARTS);
    expect(starts.last()).toBe(2 ** 33);
    expect(starts.get(99_999)).toBe(99_999 * 500);
  });

  /** A source over `all` that records the pages it is asked for. */
  const sourceOf = (all: readonly number[], asked: number[]): StartsSource => {
    return async (from, count) => {
      asked.push(from / PAGE_STARTS);
      return Float64Array.from(all.slice(from, from + count));
    };
  };

  it('read page by page: only the pages asked for (and the last) are read, and they hold what the source holds', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Up to three pages and more (the gaps between starts cycle through a short list).
        fc.integer({ min: 1, max: 3 * PAGE_STARTS + 50 }),
        fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 20 }),
        fc.array(fc.tuple(fc.nat(), fc.nat(300)), { maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 100 }), { maxLength: 20 }),
        async (length, gaps, ranges, pushed) => {
          const all: number[] = [0];
          for (let i = 1; i < length; i++)
            all.push((all.at(-1) as number) + (gaps[i % gaps.length] as number));
          const end = (all.at(-1) as number) + 1;
          const asked: number[] = [];
          const starts = (await LineStarts.paged(all.length, end, sourceOf(all, asked))) as LineStarts;
          const lastPage = Math.floor((all.length - 1) / PAGE_STARTS);
          expect(asked).toEqual([lastPage]);
          expect(starts.last()).toBe(all.at(-1));
          const loaded = new Set(asked);
          for (const [at, span] of ranges) {
            const from = at % all.length;
            const to = Math.min(all.length - 1, from + span);
            await starts.load(from, to);
            for (let p = Math.floor(from / PAGE_STARTS); p <= Math.floor(to / PAGE_STARTS); p++)
              loaded.add(p);
            for (let i = from; i <= to; i++) expect(starts.get(i)).toBe(all[i]);
          }
          // Each page read once, and only those asked for.
          expect(asked.length).toBe(loaded.size);
          for (let p = 0; p <= lastPage; p++)
            expect(starts.loaded(p * PAGE_STARTS, p * PAGE_STARTS)).toBe(loaded.has(p));
          // Appends go on from the last page.
          let next = end;
          for (const gap of pushed) {
            starts.push(next);
            all.push(next);
            next += gap;
          }
          await starts.load(0, all.length - 1);
          expect(starts.toArray()).toEqual(all);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('refuses a page that does not hold together: not rising, past the log, out of order with its neighbours, not from 0', async () => {
    const all = Array.from({ length: 3 * PAGE_STARTS }, (_, i) => i * 10);
    const end = 3 * PAGE_STARTS * 10;
    const spoilt = async (spoil: (copy: number[]) => void, page: number) => {
      const copy = all.slice();
      spoil(copy);
      const starts = await LineStarts.paged(copy.length, end, sourceOf(copy, []));
      if (!starts) return 'at open';
      await starts.load(0, 0);
      if (page !== 0) await starts.load(page * PAGE_STARTS, page * PAGE_STARTS);
      return 'loaded';
    };
    const unreadable = (p: Promise<string>) => expect(p).rejects.toBeInstanceOf(StartsUnreadable);
    // Not rising inside a middle page.
    await unreadable(
      spoilt((c) => {
        c[PAGE_STARTS + 5] = c[PAGE_STARTS + 4] as number;
      }, 1),
    );
    // Past the log's end.
    await unreadable(
      spoilt((c) => {
        c[PAGE_STARTS + 5] = end;
      }, 1),
    );
    // A middle page below its neighbour before, and above its neighbour after.
    await unreadable(spoilt((c) => void c.fill(1, PAGE_STARTS, 2 * PAGE_STARTS), 1));
    await unreadable(
      spoilt((c) => {
        for (let i = PAGE_STARTS; i < 2 * PAGE_STARTS; i++) c[i] = 3 * PAGE_STARTS * 9 + i;
      }, 1),
    );
    // The first start not 0; the last page spoilt is refused at open.
    await unreadable(
      spoilt((c) => {
        c[0] = 1;
      }, 0),
    );
    expect(
      await spoilt((c) => {
        c[3 * PAGE_STARTS - 1] = 0.5;
      }, 2),
    ).toBe('at open');
    // A source that cannot read the page.
    const starts = (await LineStarts.paged(all.length, end, async (from, count) =>
      from === 0 ? undefined : Float64Array.from(all.slice(from, from + count)),
    )) as LineStarts;
    await expect(starts.load(0, 0)).rejects.toBeInstanceOf(StartsUnreadable);
    expect(() => starts.get(0)).toThrow(/before its page was loaded/);
  });
});
