/**
 * A writer that truly cannot append (issue 13): the store is down or locked past its timeout.
 * `addMessage` rejects with a typed `StoreError`, the message is in neither the history nor the
 * store (nothing half-written), and the manager carries on once the store is back.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { ContextManager } from '../../src/manager.js';
import { openStore } from '../../src/stores/resolve.js';
import { openSqliteStore } from '../../src/stores/sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'ck-down-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a store that cannot take the append', () => {
  it('SQLite locked by another process past busyTimeoutMs: StoreError, nothing half-written, then it works', async () => {
    const path = join(dir, 'locked.db');
    const store = await openSqliteStore(path, { busyTimeoutMs: 100 });
    const ctx = new ContextManager({ store, conversationId: 'c' });
    await ctx.addMessage({ role: 'user', content: 'before' });
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    try {
      const error = await ctx.addMessage({ role: 'user', content: 'blocked' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toMatchObject({ code: 'busy' });
      expect((await ctx.getMessages()).map((m) => m.content)).toEqual(['before']);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect((await store.read('c')).map((e) => e.message.content)).toEqual(['before']);
    await ctx.addMessage({ role: 'user', content: 'after' });
    expect((await store.read('c')).map((e) => e.message.content)).toEqual(['before', 'after']);
    expect((await ctx.getMessages()).map((m) => m.content)).toEqual(['before', 'after']);
    await ctx.close();
  });

  it('a Redis URL nobody answers, given to the constructor: the error openStore gives, on each call', async () => {
    const url = 'redis://:s3cret@127.0.0.1:1';
    const direct = await openStore(url).catch((e: unknown) => e);
    expect(direct).toBeInstanceOf(StoreError);
    const ctx = new ContextManager({ store: url, conversationId: 'c' });
    const first = await ctx.addMessage({ role: 'user', content: 'lost?' }).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(StoreError);
    expect((first as Error).message).toBe((direct as Error).message);
    expect((first as Error).message).not.toContain('s3cret');
    await expect(ctx.getMessages()).rejects.toBeInstanceOf(StoreError);
    await ctx.close();
  });
});
