import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { skipFor } from '../../test/support/requirements.js';
import { StoreError } from '../errors.js';
import { FileStore } from './file.js';
import { LazyStore } from './lazy.js';
import { MemoryStore } from './memory.js';
import { importDriver, openStore, resolveStore } from './resolve.js';
import type { ConversationStore } from './types.js';

describe('resolveStore', () => {
  it('defaults to a fresh in-memory store', () => {
    const a = resolveStore(undefined);
    expect(a).toBeInstanceOf(MemoryStore);
    expect(resolveStore(undefined)).not.toBe(a);
    expect(resolveStore('memory:')).toBeInstanceOf(MemoryStore);
    expect(resolveStore('MEMORY:')).toBeInstanceOf(MemoryStore);
  });

  it('returns a store object as it is', () => {
    const store = new MemoryStore();
    expect(resolveStore(store)).toBe(store);
  });

  it('opens file: directories, relative, absolute or as file:// URLs', () => {
    const relative = resolveStore('file:./.contextkit');
    expect(relative).toBeInstanceOf(FileStore);
    expect((relative as FileStore).dir).toBe(resolve('.contextkit'));
    expect((resolveStore('file:/var/data/ck') as FileStore).dir).toBe('/var/data/ck');
    expect((resolveStore('file:///tmp/with%20space') as FileStore).dir).toBe('/tmp/with space');
  });

  it('passes onWarning to the file store it makes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'contextkit-resolve-'));
    try {
      const warnings: string[] = [];
      const store = resolveStore(`file:${dir}`, { onWarning: (m) => warnings.push(m) });
      await writeFile(join(dir, 'Stray.jsonl'), '');
      await store.list();
      expect(warnings).toHaveLength(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('gives the async drivers as stores that connect on first use, failing as openStore fails', async () => {
    for (const url of [
      'sqlite:./h.db',
      'redis://localhost:6379',
      'rediss://h',
      'postgres://u@h/db',
      'postgresql://h/db',
    ]) {
      const store = resolveStore(url);
      expect(store, url).toBeInstanceOf(LazyStore);
      await store.close();
    }
    const dir = mkdtempSync(join(tmpdir(), 'ck-lazy-'));
    try {
      const path = join(dir, 'missing', 'h.db');
      const lazy = resolveStore(`sqlite:${path}`, { mustExist: true });
      const direct = await openStore(`sqlite:${path}`, { mustExist: true }).catch((e: unknown) => e);
      const first = await lazy.head('c').catch((e: unknown) => e);
      expect(first).toBeInstanceOf(StoreError);
      expect((first as StoreError).message).toBe((direct as StoreError).message);
      expect((first as StoreError).code).toBe('not_found');
      // Tried again on the next call, and nothing was created meanwhile.
      await expect(lazy.read('c')).rejects.toThrow((direct as StoreError).message);
      expect(existsSync(path)).toBe(false);
      await lazy.close();
      const opened = resolveStore(`sqlite:${join(dir, 'h.db')}`);
      expect(opened.search).toBeDefined();
      expect(
        await opened.append('c', [
          { message: { role: 'user', content: 'hi' }, metadata: { timestamp: 't' } },
        ]),
      ).toBe(0);
      expect(await opened.head('c')).toBe(1);
      await opened.close();
      await expect(opened.head('c')).rejects.toThrow(/closed/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('suggests sqlite: for a bare database path (issue 23, item 8)', () => {
    expect(() => resolveStore('./agents.db')).toThrow(/for a SQLite database, write sqlite:\.\/agents\.db/);
    expect(() => resolveStore('data/run.sqlite')).toThrow(/write sqlite:data\/run\.sqlite/);
  });

  it('refuses what it does not know, listing what it accepts', () => {
    expect(() => resolveStore('mongodb://h')).toThrow(
      /store: unknown store "mongodb:\/\/h"; accepted: memory:, file:DIR, sqlite:PATH/,
    );
    expect(() => resolveStore('./data')).toThrow(/for a directory, write file:\.\/data/);
    expect(() => resolveStore('file:')).toThrow(/needs a directory/);
    expect(() => resolveStore('sqlite:')).toThrow(/needs a database path/);
    expect(() => resolveStore('memory:x')).toThrow(/takes no path/);
    expect(() => resolveStore({ append: () => 0 } as never)).toThrow(
      /a ConversationStore object, got object without epoch, read, head,/,
    );
  });
});

/** `openStore(url, { mustExist: true })` rejects with a `not_found` StoreError saying `message`. */
async function expectNotFound(url: string, message: string | RegExp): Promise<void> {
  const error = await openStore(url, { mustExist: true }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(StoreError);
  expect((error as StoreError).code).toBe('not_found');
  expect((error as Error).message).toMatch(message);
}

describe('openStore', () => {
  it('opens memory and file stores itself', async () => {
    expect(await openStore('memory:')).toBeInstanceOf(MemoryStore);
    expect(await openStore(undefined)).toBeInstanceOf(MemoryStore);
    expect(await openStore('file:./x')).toBeInstanceOf(FileStore);
  });

  it('says which driver is missing from the build', async () => {
    const error = await importDriver(
      'sqlite',
      ['./no-such-driver.js', 'contextkit-no-such/stores/x'],
      'better-sqlite3',
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).code).toBe('missing_driver');
    expect((error as Error).message).toMatch(/not available in this build .*no-such-driver\.js/);
  });

  it('says which peer dependency to install', async () => {
    const peer = 'contextkit-test-peer-that-is-not-installed';
    const error = await importDriver('redis', ['./no-such-driver.js', peer], peer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).code).toBe('missing_dependency');
    expect((error as Error).message).toContain(`npm install ${peer}`);
  });

  it('takes the first module that exists', async () => {
    const loaded = (await importDriver('x', ['./no-such-driver.js', 'node:path'], 'none')) as {
      sep?: string;
    };
    expect(typeof loaded.sep).toBe('string');
  });

  it('with mustExist, refuses a missing file: directory and creates nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'contextkit-resolve-'));
    try {
      const missing = join(dir, 'typo');
      await expectNotFound(`file:${missing}`, `the directory ${missing} does not exist`);
      expect(existsSync(missing)).toBe(false);
      await writeFile(join(dir, 'a-file'), 'x');
      await expect(openStore(`file:${join(dir, 'a-file')}`, { mustExist: true })).rejects.toThrow(
        /is a file, not a directory/,
      );
      const store = await openStore(`file:${dir}`, { mustExist: true });
      expect(store).toBeInstanceOf(FileStore);
      await store.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  const sqliteDriver = join(import.meta.dirname, 'sqlite.ts');
  const noSqliteDriver = existsSync(sqliteDriver) ? undefined : `${sqliteDriver} is not in this tree`;
  it(
    'with mustExist, opens only a SQLite file holding a contextkit store, changing nothing else',
    skipFor(noSqliteDriver),
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'contextkit-resolve-'));
      try {
        const missing = join(dir, 'agnets.db');
        await expectNotFound(
          `sqlite:${missing}`,
          /no SQLite store at .*agnets\.db: the file .* does not exist/,
        );
        expect(existsSync(missing)).toBe(false);

        // A SQLite database of something else: refused, and left as it was (no WAL switch).
        const foreign = join(dir, 'other.db');
        const Database = (await import('better-sqlite3')).default;
        const db = new Database(foreign);
        db.exec('CREATE TABLE notes (body TEXT)');
        db.close();
        const before = await readFile(foreign);
        await expect(openStore(`sqlite:${foreign}`, { mustExist: true })).rejects.toThrow(
          /holds no contextkit tables/,
        );
        expect((await readFile(foreign)).equals(before)).toBe(true);
        expect(existsSync(`${foreign}-wal`)).toBe(false);

        const path = join(dir, 'agents.db');
        const writer = await openStore(`sqlite:${path}`);
        await writer.append('c', [
          { message: { role: 'user', content: 'hi' }, metadata: { timestamp: '2025-01-01T00:00:00.000Z' } },
        ]);
        await writer.close();
        const reader = await openStore(`sqlite:${path}`, { mustExist: true });
        expect(await reader.head('c')).toBe(1);
        await reader.close();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
  it('loads the SQLite driver beside it for sqlite: URLs', skipFor(noSqliteDriver), async () => {
    const dir = await mkdtemp(join(tmpdir(), 'contextkit-resolve-'));
    try {
      const store = await openStore(`sqlite:${join(dir, 'h.db')}`);
      expect(store.kind).toBe('sqlite');
      await store.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('LazyStore search', () => {
  it("passes a recall filter (`within`) to the driver's index", async () => {
    const calls: unknown[][] = [];
    const inner: ConversationStore = new MemoryStore();
    const search = {
      find: async (...args: unknown[]) => {
        calls.push(args);
        return { hits: [], indexed: 0, head: 0 };
      },
      catchUp: async () => 0,
      rebuild: async () => 0,
    };
    Object.defineProperty(inner, 'search', { value: search });
    const lazy = new LazyStore('sqlite', async () => inner, true);
    const within = { fromSeq: 2, toSeq: 9, seqs: [3, 5] };
    await lazy.search!.find('c', ['word'], 4, within);
    expect(calls).toEqual([['c', ['word'], 4, within]]);
  });
});
