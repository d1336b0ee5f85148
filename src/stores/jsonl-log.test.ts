import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { useSliceClock } from '../slices.js';
import { formatBatch, indexLog, indexLogInSlices, parseEntries } from './jsonl-log.js';

const where = { conversationId: 'c', file: '/tmp/c.jsonl' };

function serialize(text: string) {
  return {
    metadata: JSON.stringify({ timestamp: 't' }),
    message: JSON.stringify({ role: 'user', content: text }),
  };
}

/** A log of batches (sizes given), with each batch's byte range. */
function build(sizes: number[], text: (seq: number) => string = (seq) => `m${seq}\n"é🚀`) {
  const parts: Buffer[] = [];
  const ends: Array<{ end: number; count: number }> = [];
  let seq = 0;
  let bytes = 0;
  for (const size of sizes) {
    const data = formatBatch(
      seq,
      Array.from({ length: size }, (_, i) => serialize(text(seq + i))),
    );
    parts.push(data);
    seq += size;
    bytes += data.length;
    ends.push({ end: bytes, count: seq });
  }
  return { buf: Buffer.concat(parts), ends };
}

describe('the JSONL log format', () => {
  it('indexes and parses what it formats', () => {
    const { buf } = build([1, 3, 2]);
    const index = indexLog(buf, 0, 0, where);
    expect(index.torn).toBeUndefined();
    expect(index.offsets).toHaveLength(6);
    expect(index.validEnd).toBe(buf.length);
    const entries = parseEntries(buf, 0, where);
    expect(entries.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(entries[4]?.message).toEqual({ role: 'user', content: 'm4\n"é🚀' });
    const tail = parseEntries(buf.subarray(index.offsets.get(4)), 4, where);
    expect(tail.map((e) => e.seq)).toEqual([4, 5]);
  });

  it('continues from a batch boundary with a base offset and sequence number', () => {
    const { buf, ends } = build([2, 2]);
    const first = ends[0] as { end: number };
    const index = indexLog(buf.subarray(first.end), first.end, 2, where);
    expect(index.offsets.toArray()).toEqual(indexLog(buf, 0, 0, where).offsets.toArray().slice(2));
  });

  it('cut at any byte, keeps exactly the whole batches before the cut and never throws', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 6 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (sizes, at) => {
          const { buf, ends } = build(sizes);
          const cut = Math.floor(at * buf.length);
          const index = indexLog(buf.subarray(0, cut), 0, 0, where);
          const whole = ends.filter((e) => e.end <= cut);
          const expected =
            whole.length > 0
              ? (whole[whole.length - 1] as { end: number; count: number })
              : { end: 0, count: 0 };
          expect(index.offsets).toHaveLength(expected.count);
          expect(index.validEnd).toBe(expected.end);
          if (cut > expected.end) expect(index.torn?.bytes).toBe(cut - expected.end);
          else expect(index.torn).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('indexes in slices (pausing between any two steps) exactly as in place, torn and corrupt logs too', async () => {
    let t = 0;
    const restore = useSliceClock({ now: () => (t += 1_000) });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 5 }),
          fc.double({ min: 0, max: 1, noNaN: true }),
          fc.constantFrom('cut', 'garbage', 'whole'),
          async (sizes, at, damage) => {
            const { buf } = build(sizes, (seq) => `m${seq}`);
            const cut = Math.floor(at * buf.length);
            const log =
              damage === 'cut'
                ? buf.subarray(0, cut)
                : damage === 'garbage'
                  ? Buffer.concat([buf.subarray(0, cut), Buffer.from('zz\n'), build([1]).buf])
                  : buf;
            let inPlace: unknown;
            try {
              inPlace = indexLog(log, 0, 0, where);
            } catch (err) {
              inPlace = err;
            }
            let sliced: unknown;
            try {
              sliced = await indexLogInSlices(log, 0, 0, where);
            } catch (err) {
              sliced = err;
            }
            expect(sliced).toEqual(inPlace);
          },
        ),
        { numRuns: 100 },
      );
    } finally {
      restore();
    }
  });

  it('treats trailing garbage as torn but garbage followed by entries as corrupt', () => {
    const { buf } = build([1, 1]);
    const torn = indexLog(Buffer.concat([buf, Buffer.from('\0\0\0\0\n')]), 0, 0, where);
    expect(torn.offsets).toHaveLength(2);
    expect(torn.torn).toMatchObject({ line: 3, bytes: 5 });
    const after = build([1]).buf;
    const middle = Buffer.concat([
      buf.subarray(0, indexLog(buf, 0, 0, where).offsets.get(1)),
      Buffer.from('zz\n'),
      after,
    ]);
    expect(() => indexLog(middle, 0, 0, where)).toThrow(StoreError);
    expect(() => indexLog(middle, 0, 0, where)).toThrow(/c\.jsonl line 2: found "zz", which is not JSON/);
  });

  it('refuses a batch that starts before the previous one ended', () => {
    const a = formatBatch(0, [serialize('a'), serialize('b'), serialize('c')]);
    const lines = a.toString().split('\n');
    const b = formatBatch(1, [serialize('x'), serialize('y')]);
    const bad = Buffer.concat([Buffer.from(`${lines[0]}\n`), b, formatBatch(3, [serialize('z')])]);
    expect(() => indexLog(bad, 0, 0, where)).toThrow(/line 2: found a new batch while 2 line\(s\)/);
  });

  it('accepts hand-written lines with other key orders', () => {
    const buf = Buffer.from('{"message":{"role":"user","content":"x"},"metadata":{},"seq":0}\n');
    expect(indexLog(buf, 0, 0, where).offsets.toArray()).toEqual([0]);
    expect(parseEntries(buf, 0, where)[0]?.message).toEqual({ role: 'user', content: 'x' });
  });
});
