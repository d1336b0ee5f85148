import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, StoreError } from '../errors.js';
import { Cache, DEFAULT_TTL_MS } from './cache.js';
import { FilePersistence, MemoryPersistence } from './persistence.js';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('Cache', () => {
  it('stores under cache:{name}:{key} and expires after the default five minutes, lazily', async () => {
    const store = new MemoryPersistence();
    const time = clock();
    const cache = new Cache(store, { now: time.now });
    await cache.set('summaries', 'abc', { text: 'sum' });
    expect(await store.list()).toEqual(['cache:summaries:abc']);
    time.advance(DEFAULT_TTL_MS - 1);
    expect(await cache.get('summaries', 'abc')).toEqual({ text: 'sum' });
    time.advance(1);
    expect(await store.has('cache:summaries:abc')).toBe(true);
    expect(await cache.get('summaries', 'abc')).toBeNull();
    expect(await store.has('cache:summaries:abc')).toBe(false);
  });

  it('honours a per-entry TTL and Infinity, also through a file (JSON has no Infinity)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'contextkit-cache-'));
    try {
      const time = clock();
      const cache = new Cache(new FilePersistence(dir), { now: time.now, ttlMs: 1000 });
      await cache.set('tokens', 'forever', 42, { ttlMs: Number.POSITIVE_INFINITY });
      await cache.set('tokens', 'short', 7, { ttlMs: 10 });
      await cache.set('tokens', 'default', 8);
      time.advance(10);
      expect(await cache.get('tokens', 'short')).toBeNull();
      expect(await cache.get('tokens', 'default')).toBe(8);
      time.advance(10 ** 12);
      expect(await cache.get('tokens', 'default')).toBeNull();
      expect(await new Cache(new FilePersistence(dir), { now: time.now }).get('tokens', 'forever')).toBe(42);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('prune() deletes every expired entry and only those', async () => {
    const store = new MemoryPersistence();
    const time = clock();
    const cache = new Cache(store, { now: time.now, ttlMs: 100 });
    await store.set('other:key', 'not a cache entry');
    await cache.set('a', '1', 1);
    await cache.set('a', '2', 2, { ttlMs: 1000 });
    await cache.set('b', '1', 3);
    await store.set('cache:b:broken', { not: 'an entry' });
    time.advance(100);
    expect(await cache.prune()).toBe(3);
    expect(await store.list()).toEqual(['cache:a:2', 'other:key']);
    expect(await cache.prune()).toBe(0);
  });

  it('invalidate() scopes by cache name and key prefix, never touching other keys', async () => {
    const store = new MemoryPersistence();
    const cache = new Cache(store);
    await store.set('calibration:x', 1);
    for (const [name, key] of [
      ['summaries', 'run-1:a'],
      ['summaries', 'run-1:b'],
      ['summaries', 'run-2:a'],
      ['tokens', 'run-1:a'],
      ['tokens', 'other'],
    ] as const) {
      await cache.set(name, key, key);
    }
    expect(await cache.invalidate({ cacheName: 'summaries', keyPrefix: 'run-1:' })).toBe(2);
    expect(await cache.get('summaries', 'run-2:a')).toBe('run-2:a');
    expect(await cache.invalidate({ keyPrefix: 'run-' })).toBe(2);
    expect(await store.list()).toEqual(['cache:tokens:other', 'calibration:x']);
    expect(await cache.invalidate({ cacheName: 'tokens' })).toBe(1);
    await cache.set('x', 'y', 1);
    expect(await cache.invalidate()).toBe(1);
    expect(await store.list()).toEqual(['calibration:x']);
  });

  it('clear() removes every cache entry, live, expired or broken, and nothing else', async () => {
    const store = new MemoryPersistence();
    const time = clock();
    const cache = new Cache(store, { now: time.now });
    await store.set('calibration:x', 1);
    await cache.set('a', '1', 1, { ttlMs: 10 });
    await cache.set('b', '2', 2);
    await store.set('cache:b:broken', { not: 'an entry' });
    time.advance(100);
    expect(await cache.clear()).toBe(3);
    expect(await store.list()).toEqual(['calibration:x']);
    expect(await cache.get('b', '2')).toBeNull();
    expect(await cache.clear()).toBe(0);
  });

  it('getOrSet() computes once and counts a cached null as a hit', async () => {
    const cache = new Cache(new MemoryPersistence());
    let calls = 0;
    const compute = () => {
      calls++;
      return null;
    };
    expect(await cache.getOrSet('n', 'k', compute)).toBeNull();
    expect(await cache.getOrSet('n', 'k', compute)).toBeNull();
    expect(calls).toBe(1);
    expect(await cache.has('n', 'k')).toBe(true);
    await cache.delete('n', 'k');
    expect(await cache.has('n', 'k')).toBe(false);
  });

  it('keeps keys with colons whole and refuses names with one', async () => {
    const store = new MemoryPersistence();
    const cache = new Cache(store);
    await cache.set('s', 'a:b:c', 1);
    expect(await cache.get('s', 'a:b:c')).toBe(1);
    expect(await cache.invalidate({ keyPrefix: 'a:b' })).toBe(1);
    await expect(cache.set('bad:name', 'k', 1)).rejects.toBeInstanceOf(StoreError);
    await expect(cache.get('s', '')).rejects.toBeInstanceOf(StoreError);
  });

  it('refuses a TTL that is not positive', async () => {
    expect(() => new Cache(new MemoryPersistence(), { ttlMs: 0 })).toThrow(ConfigurationError);
    await expect(new Cache(new MemoryPersistence()).set('a', 'b', 1, { ttlMs: -5 })).rejects.toThrow(
      /ttlMs: must be a positive/,
    );
  });
});
