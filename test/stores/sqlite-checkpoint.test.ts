/**
 * Issue 32: a large replace on SQLite commits without running the WAL checkpoint on the event loop
 * (src/stores/sqlite-checkpoint.ts). The WAL it wrote is still checkpointed into the database file
 * right after, with no other call on the store; closing the store closes the worker's connection
 * too (the store's is then the file's last, which removes the WAL); an in-memory database (no WAL)
 * replaces as before.
 */

import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { WRITE_CHUNK_BYTES } from '../../src/stores/replace-rows.js';
import { SqliteStore } from '../../src/stores/sqlite.js';
import type { NewEntry } from '../../src/stores/types.js';

/** Entries of about 2 KB, several write chunks in all (a replace in slices). */
function entries(n: number, tag: string): NewEntry[] {
  return Array.from({ length: n }, (_, i) => ({
    message: { role: 'user', content: `${tag} ${i} ${'word '.repeat(400)}` },
    metadata: { timestamp: '2026-01-01T00:00:00.000Z' },
    counts: { o200k_base: i + 1 },
  }));
}

const ENTRIES = Math.ceil((3 * WRITE_CHUNK_BYTES) / 2_000);

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function dbPath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'contextkit-checkpoint-'));
  dirs.push(dir);
  return join(dir, 'store.db');
}

async function until(condition: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('SQLite: the WAL after a large replace', () => {
  it('is checkpointed into the database file with no further call, and the store goes on', async () => {
    const path = await dbPath();
    const store = new SqliteStore(path);
    const written = entries(ENTRIES, 'new');
    await store.replace('c', written);
    // Committed to the WAL; the database file takes the pages once the checkpoint ran.
    await until(() => statSync(path).size > WRITE_CHUNK_BYTES * 2);
    // Every frame of the WAL is in the database file (nothing is left for a checkpoint to copy).
    const other = new Database(path);
    const [report] = other.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>;
    other.close();
    expect(report!.checkpointed).toBe(report!.log);
    // Automatic checkpoints are on again: appends and another large replace work as before.
    expect(await store.append('c', entries(2, 'more'))).toBe(ENTRIES);
    await store.replace('c', entries(ENTRIES, 'again'));
    const read = await store.read('c');
    expect(read).toHaveLength(ENTRIES);
    expect(read[5]!.message).toEqual(entries(ENTRIES, 'again')[5]!.message);
    expect(read[5]!.counts).toEqual({ o200k_base: 6 });
    await store.close();
  });

  it("close() closes the worker's connection too: the store's is the last, and the WAL goes", async () => {
    const path = await dbPath();
    const store = new SqliteStore(path);
    await store.replace('c', entries(ENTRIES, 'new'));
    expect(existsSync(`${path}-wal`)).toBe(true);
    await store.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    const reopened = new SqliteStore(path);
    expect(await reopened.read('c')).toHaveLength(ENTRIES);
    await reopened.close();
  });

  it('keeps what a replace committed when the store closes before the checkpoint ran', async () => {
    const path = await dbPath();
    const store = new SqliteStore(path, { synchronous: 'normal' });
    await store.replace('c', entries(ENTRIES, 'new'));
    await store.close();
    const reopened = new SqliteStore(path);
    const read = await reopened.read('c');
    expect(read).toHaveLength(ENTRIES);
    expect(read.at(-1)!.message).toEqual(entries(ENTRIES, 'new').at(-1)!.message);
    await reopened.close();
  });

  it('an in-memory database (no WAL) replaces in slices as before', async () => {
    const store = new SqliteStore(':memory:');
    await store.replace('c', entries(10, 'old'));
    await store.replace('c', entries(ENTRIES, 'new'));
    expect(await store.read('c')).toHaveLength(ENTRIES);
    await store.close();
  });
});
