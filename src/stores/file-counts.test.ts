import { statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useSliceClock } from '../slices.js';
import type { CountsRecord } from './entry-counts.js';
import { FileStore } from './file.js';
import { countsLine, parseCountsFile, readCountsRange } from './file-counts.js';

const KEY = 'openai:o200k_base#1';

/** A counts line of `seq` (its digest made of `body`). */
const recordLine = (seq: number, body: string, tokens: number) =>
  countsLine(seq, Buffer.from(`{"seq":${seq},${body}`), { [KEY]: tokens });

/** Any line a counts file may hold: a record, a foreign line, a record missing its counts, a torn one. */
const lineArb = fc.oneof(
  fc
    .tuple(fc.nat(50), fc.string({ maxLength: 20 }), fc.nat(10_000))
    .map(([seq, body, tokens]) => recordLine(seq, body, tokens)),
  fc.string({ maxLength: 30 }).map((s) => `${s}\n`),
  fc.constant('{"seq":3,"d":"x"}\n'),
  fc.nat(50).map((seq) => `{"seq":${seq},"d":"tor`),
);

/** A range `[from, to)` of seqs. */
const rangeArb = fc
  .tuple(fc.nat(60), fc.nat(60))
  .map(([a, b]): [number, number] => (a <= b ? [a, b] : [b, a]));

describe('the file store counts file, read from its end', () => {
  let dir: string;
  let n = 0;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'contextkit-counts-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  /** `text` written to a new file of the temp dir; its path. */
  const fileOf = async (text: string) => {
    const path = join(dir, `c${n++}.counts`);
    await writeFile(path, text);
    return path;
  };
  /** `readCountsRange` pausing at every clock read, with chunks of `chunk` bytes. */
  const read = async (path: string, from: number, to: number, chunk: number) => {
    let t = 0;
    const restore = useSliceClock({ now: () => (t += 1_000) });
    try {
      return await readCountsRange(path, from, to, undefined, chunk);
    } finally {
      restore();
    }
  };

  it('reads from seq 0 exactly what parsing the whole file reads, in any chunks, torn and foreign lines too', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(lineArb, { maxLength: 40 }),
        fc.nat(60),
        fc.integer({ min: 1, max: 64 }),
        async (lines, to, chunk) => {
          const text = lines.join('');
          const path = await fileOf(text);
          expect((await read(path, 0, to, chunk)).bySeq).toEqual(parseCountsFile(text, 0, to));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('never finds a record parsing the whole file does not: of each seq in range, the last ones in file order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(lineArb, { maxLength: 40 }),
        rangeArb,
        fc.integer({ min: 1, max: 64 }),
        async (lines, [from, to], chunk) => {
          const text = lines.join('');
          const whole = parseCountsFile(text, from, to);
          const found = (await read(await fileOf(text), from, to, chunk)).bySeq;
          for (const [seq, records] of found) {
            const all = whole.get(seq) as CountsRecord[];
            expect(all, `seq ${seq}`).toBeDefined();
            expect(records).toEqual(all.slice(all.length - records.length));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('finds every record of the range in a file written as the store writes it (in seq order, a seq counted again later)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.boolean(), fc.nat(10_000)), { maxLength: 40 }),
        rangeArb,
        fc.integer({ min: 1, max: 200 }),
        async (steps, [from, to], chunk) => {
          // Each step appends the next seq's record, or counts the last entry again.
          const lines: string[] = [];
          let seq = 0;
          for (const [again, tokens] of steps) {
            if (again && seq > 0) lines.push(recordLine(seq - 1, 'x', tokens));
            else lines.push(recordLine(seq++, 'x', tokens));
          }
          const text = lines.join('');
          expect((await read(await fileOf(text), from, to, chunk)).bySeq).toEqual(
            parseCountsFile(text, from, to),
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it("reads the end of a long conversation's counts for its last rows, not the whole file", async () => {
    const storeDir = await mkdtemp(join(tmpdir(), 'contextkit-counts-store-'));
    try {
      const store = new FileStore(storeDir);
      const entries = Array.from({ length: 3_000 }, (_, i) => ({
        message: { role: 'user' as const, content: `message ${i} ${'x'.repeat(i % 50)}` },
        metadata: { timestamp: '2026-11-30T00:00:00.000Z' },
        counts: { [KEY]: 10 + (i % 7) },
      }));
      await store.append('c', entries);
      const whole = await store.read('c');
      const last = await store.read('c', { fromSeq: 2_980 });
      expect(last.map((e) => e.counts)).toEqual(whole.slice(2_980).map((e) => e.counts));
      expect(last.every((e) => e.counts?.[KEY] !== undefined)).toBe(true);
      const range = await readCountsRange(join(storeDir, 'c.counts'), 2_980, 3_000);
      const size = statSync(join(storeDir, 'c.counts')).size;
      expect(range.bySeq.size).toBe(20);
      expect(range.bytesRead).toBeLessThan(size / 2);
      await store.close();
    } finally {
      await rm(storeDir, { recursive: true, force: true });
    }
  });
});
