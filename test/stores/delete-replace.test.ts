/**
 * Two processes share one file-store conversation and, 500 rounds each, append to it, delete it
 * or replace it. A process that cached the log's index must not trust it across another's
 * delete or replace (ext4 hands the re-created file the old inode): no acknowledged append may
 * be lost, and no read or append may see corruption or a torn write that is not there.
 */

import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { FileStore } from '../../src/stores/file.js';
import { startWriterProcess } from './fixtures/writer-process.js';

const ROUNDS = 500;
const FIXTURE = join(import.meta.dirname, 'fixtures', 'delete-replace-writer.ts');

it('file store: two processes delete, replace and append 500 rounds each, losing nothing acknowledged', {
  timeout: 120_000,
}, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'contextkit-delete-replace-'));
  try {
    const writers = [
      startWriterProcess(FIXTURE, [dir, 'a', 'b', String(ROUNDS), '7'], 0),
      startWriterProcess(FIXTURE, [dir, 'b', 'a', String(ROUNDS), '11'], 1),
    ];
    await Promise.all(writers.map((w) => w.ready));
    for (const w of writers) w.child.stdin?.end('go\n');
    const reports = await Promise.all(writers.map((w) => w.done));
    for (const { counts } of reports) {
      expect(counts).toMatchObject({ lost: 0, errors: 0, warnings: 0 });
      // The check had windows to look in: appends that no delete or replace could excuse.
      expect(counts.checked).toBeGreaterThan(50);
    }
    expect((await readdir(dir)).filter((f) => f.includes('.torn-'))).toEqual([]);
    const store = new FileStore(dir);
    const entries = await store.read('shared');
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i));
    await store.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
