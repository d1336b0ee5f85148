/**
 * Concurrency: 8 processes append 1,000 messages each, one message per append, to one
 * conversation on each shared driver, with `expectedSeq` and a retry (re-reading the head)
 * on every `ConflictError`. Exactly 8,000 must be stored, none twice, each writer's own in
 * its order, and every read any process made (during and after) must be a prefix of one
 * and the same order.
 */

import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StoredEntry } from '../../src/stores/types.js';
import { skipFor } from '../support/requirements.js';
import { sharedDrivers } from './fixtures/drivers.js';
import { openSpec, type StoreSpec } from './fixtures/open-store.js';
import { startWriterProcess, type WriterProcess } from './fixtures/writer-process.js';

const WRITERS = 8;
const PER_WRITER = 1000;
const TOTAL = WRITERS * PER_WRITER;
const FIXTURE = join(import.meta.dirname, 'fixtures', 'concurrent-writer.ts');
const CONVERSATION = 'shared conversation';

function startWriter(spec: StoreSpec, writer: number): WriterProcess {
  return startWriterProcess(
    FIXTURE,
    [JSON.stringify(spec), CONVERSATION, String(writer), String(PER_WRITER), String(TOTAL)],
    writer,
  );
}

function digest(entries: StoredEntry[]): string {
  const hash = createHash('sha256');
  for (const entry of entries) hash.update(`${entry.seq}:${String(entry.message.content)}\n`);
  return hash.digest('hex');
}

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

const drivers = sharedDrivers(cleanups, [CONVERSATION]);

describe('concurrency: 8 processes × 1,000 single-message appends to one conversation', () => {
  for (const driver of drivers) {
    it(`${driver.name}: stores exactly 8,000, none twice, in one order every reader sees`, {
      ...skipFor(driver.missing),
      timeout: 600_000,
    }, async () => {
      const spec = await driver.spec();
      // Create the store (and its schema) once, so the writers race on appends, not on setup.
      await (await openSpec(spec)).close();
      const started = performance.now();
      const writers = Array.from({ length: WRITERS }, (_, w) => startWriter(spec, w));
      try {
        await Promise.all(writers.map((w) => w.ready));
        const appendStart = performance.now();
        for (const w of writers) w.child.stdin?.end('go\n');
        const reports = await Promise.all(writers.map((w) => w.done));
        const appendSeconds = (performance.now() - appendStart) / 1000;

        const store = await openSpec(spec);
        let entries: StoredEntry[];
        try {
          entries = await store.read(CONVERSATION);
          expect(await store.head(CONVERSATION)).toBe(TOTAL);
        } finally {
          await store.close();
        }
        expect(entries).toHaveLength(TOTAL);
        expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: TOTAL }, (_, i) => i));
        const texts = entries.map((e) => String(e.message.content));
        expect(new Set(texts).size).toBe(TOTAL);
        for (let w = 0; w < WRITERS; w++) {
          const mine = texts.filter((t) => t.startsWith(`w${w}-`));
          expect(mine).toEqual(Array.from({ length: PER_WRITER }, (_, i) => `w${w}-${i}`));
        }

        // One order: each process's reads, during the run and at the end, are prefixes of it.
        const full = digest(entries);
        for (const [w, report] of reports.entries()) {
          expect(report.final, `writer ${w} final read`).toEqual([TOTAL, full]);
          for (const [length, seen] of report.prefixes) {
            expect(seen, `writer ${w} read of ${length} entries`).toBe(digest(entries.slice(0, length)));
          }
        }
        const retries = reports.reduce((sum, r) => sum + (r.counts.retries ?? 0), 0);
        console.log(
          `concurrency ${driver.name}: ${TOTAL} appends in ${appendSeconds.toFixed(1)} s ` +
            `(${Math.round(TOTAL / appendSeconds)}/s, ${retries} conflicts retried; ` +
            `${((performance.now() - started) / 1000).toFixed(1)} s with process start-up)`,
        );
      } finally {
        for (const w of writers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
      }
    });
  }
});
