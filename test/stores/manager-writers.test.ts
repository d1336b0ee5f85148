/**
 * Many writers through `ContextManager` (issue 13): several processes, each a manager on one
 * shared conversation, add messages one at a time. The store numbers the appends, so no writer
 * loses a race: exactly WRITERS × PER_WRITER are stored, none twice, each writer's in its order,
 * every history any manager held (during and at the end) is a prefix of the store's one order,
 * and no writer sees an error. CI runs 4 × 200; `CK_MANY_WRITERS=8x1000` runs the size.
 */

import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StoredEntry } from '../../src/stores/types.js';
import { skipFor } from '../support/requirements.js';
import { sharedDrivers } from './fixtures/drivers.js';
import { openSpec, type StoreSpec } from './fixtures/open-store.js';
import { startWriterProcess, type WriterProcess } from './fixtures/writer-process.js';

const [WRITERS, PER_WRITER] = (process.env.CK_MANY_WRITERS ?? '4x200').split('x').map(Number) as [
  number,
  number,
];
const TOTAL = WRITERS * PER_WRITER;
const FIXTURE = join(import.meta.dirname, 'fixtures', 'manager-writer.ts');
const CONVERSATION = 'many writers';

function startWriter(spec: StoreSpec, writer: number): WriterProcess {
  return startWriterProcess(
    FIXTURE,
    [JSON.stringify(spec), CONVERSATION, String(writer), String(PER_WRITER), String(TOTAL)],
    writer,
  );
}

function digest(entries: readonly StoredEntry[]): string {
  const hash = createHash('sha256');
  for (const [i, e] of entries.entries()) hash.update(`${i}:${String(e.message.content)}\n`);
  return hash.digest('hex');
}

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

describe(`many writers through ContextManager: ${WRITERS} processes × ${PER_WRITER} addMessage`, () => {
  for (const driver of sharedDrivers(cleanups, [CONVERSATION])) {
    it(`${driver.name}: stores exactly ${TOTAL}, none twice, one order for every reader, no writer error`, {
      ...skipFor(driver.missing),
      timeout: 900_000,
    }, async () => {
      const spec = await driver.spec();
      // Create the store (and its schema) once, so the writers race on appends, not on setup.
      await (await openSpec(spec)).close();
      const writers = Array.from({ length: WRITERS }, (_, w) => startWriter(spec, w));
      try {
        await Promise.all(writers.map((w) => w.ready));
        const started = performance.now();
        for (const w of writers) w.child.stdin?.end('go\n');
        const reports = await Promise.all(writers.map((w) => w.done));
        const seconds = (performance.now() - started) / 1000;

        const store = await openSpec(spec);
        let entries: StoredEntry[];
        try {
          entries = await store.read(CONVERSATION);
        } finally {
          await store.close();
        }
        expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: TOTAL }, (_, i) => i));
        const texts = entries.map((e) => String(e.message.content));
        expect(new Set(texts).size).toBe(TOTAL);
        for (let w = 0; w < WRITERS; w++) {
          const mine = texts.filter((t) => t.startsWith(`w${w}-`));
          expect(mine).toEqual(Array.from({ length: PER_WRITER }, (_, i) => `w${w}-${i}`));
        }
        const full = digest(entries);
        for (const [w, report] of reports.entries()) {
          expect(report.final, `writer ${w} final history`).toEqual([TOTAL, full]);
          expect(report.prefixes.length).toBeGreaterThan(0);
          for (const [length, seen] of report.prefixes) {
            expect(seen, `writer ${w} history of ${length}`).toBe(digest(entries.slice(0, length)));
          }
        }
        console.log(
          `many writers ${driver.name}: ${WRITERS} x ${PER_WRITER} addMessage, ${TOTAL} stored in ${seconds.toFixed(1)} s (${Math.round(TOTAL / seconds)}/s)`,
        );
      } finally {
        for (const w of writers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
      }
    });
  }
});
