/**
 * The memory tool under many workers: 8 processes edit one agent's memory directory at once on
 * each shared driver, each creating files of its own and inserting lines into one shared file.
 * Every write the tool acknowledged must be in the directory at the end: no file missing, no
 * line of the shared file lost or doubled.
 */

import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryDirectoryId, memoryTool } from '../../src/memory/memory-tool.js';
import { skipFor } from '../support/requirements.js';
import { sharedDrivers } from './fixtures/drivers.js';
import { openSpec } from './fixtures/open-store.js';
import { startWriterProcess } from './fixtures/writer-process.js';

const WRITERS = 8;
const PER_WRITER = Number(process.env.MEMORY_EDITS ?? 15);
const FIXTURE = join(import.meta.dirname, 'fixtures', 'memory-editor.ts');
const SCOPE = { agent: 'shared-agent' };

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe(`memory tool: ${WRITERS} processes edit one memory directory`, () => {
  for (const driver of sharedDrivers(cleanups, [memoryDirectoryId(SCOPE)])) {
    it(`${driver.name}: loses no acknowledged write`, {
      ...skipFor(driver.missing),
      timeout: 300_000,
    }, async () => {
      const spec = await driver.spec();
      const setup = await openSpec(spec);
      await memoryTool({ store: setup, scope: SCOPE }).run({
        command: 'create',
        path: '/memories/shared.md',
        file_text: '',
      });
      await setup.close();

      const writers = Array.from({ length: WRITERS }, (_, w) =>
        startWriterProcess(FIXTURE, [JSON.stringify(spec), String(w), String(PER_WRITER)], w),
      );
      await Promise.all(writers.map((w) => w.ready));
      for (const w of writers) w.child.stdin?.end('go\n');
      const reports = await Promise.all(writers.map((w) => w.done));
      for (const report of reports) {
        expect(report.counts).toEqual({ acked: 2 * PER_WRITER, refused: 0 });
      }

      const store = await openSpec(spec);
      try {
        const files = await memoryTool({ store, scope: SCOPE }).files();
        const lines = (files['/memories/shared.md'] ?? '').split('\n').filter((l) => l !== '');
        const expected: string[] = [];
        for (let w = 0; w < WRITERS; w++) {
          for (let i = 0; i < PER_WRITER; i++) {
            expect(files[`/memories/w${w}/note-${i}.md`]).toBe(`w${w} note ${i}\n`);
            expected.push(`w${w}-${i}`);
          }
        }
        expect(lines.sort()).toEqual(expected.sort());
        expect(Object.keys(files)).toHaveLength(WRITERS * PER_WRITER + 1);
      } finally {
        await store.close();
      }
    });
  }
});
