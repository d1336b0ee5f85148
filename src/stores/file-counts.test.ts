import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { useSliceClock } from '../slices.js';
import { countsLine, parseCountsFile, parseCountsFileInSlices } from './file-counts.js';

describe('the file store counts file', () => {
  it('is parsed in slices (pausing between any two lines) exactly as in place, torn and foreign lines too', async () => {
    let t = 0;
    const restore = useSliceClock({ now: () => (t += 1_000) });
    try {
      const lineArb = fc.oneof(
        fc
          .tuple(fc.nat(50), fc.string({ maxLength: 20 }), fc.nat(10_000))
          .map(([seq, body, tokens]) =>
            countsLine(seq, Buffer.from(`{"seq":${seq},${body}`), { 'openai:o200k_base#1': tokens }),
          ),
        fc.string({ maxLength: 30 }).map((s) => `${s}\n`),
        fc.constant('{"seq":3,"d":"x"}\n'),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.array(lineArb, { maxLength: 40 }),
          fc.nat(60),
          fc.nat(60),
          async (lines, a, b) => {
            const text = lines.join('');
            const [from, to] = a <= b ? [a, b] : [b, a];
            expect(await parseCountsFileInSlices(text, from, to)).toEqual(parseCountsFile(text, from, to));
          },
        ),
        { numRuns: 200 },
      );
    } finally {
      restore();
    }
  });
});
