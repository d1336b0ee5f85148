/**
 * The seed's TTL cache (004) over any `Persistence`, used for summaries and exact token
 * counts that are costly to recompute.
 */

import { ConfigurationError, StoreError } from '../errors.js';
import type { Persistence } from './persistence.js';

/** Five minutes, the seed's default. */
export const DEFAULT_TTL_MS = 5 * 60 * 1000;

const PREFIX = 'cache:';

/**
 * What the cache stores under `cache:{cacheName}:{key}`. An entry that never expires has
 * `ttlMs` and `expiresAt` of `null` (JSON has no `Infinity`, so file-backed entries would
 * otherwise come back as expiring at once).
 */
export interface CacheEntry<T = unknown> {
  body: T;
  storedAt: number;
  ttlMs: number | null;
  expiresAt: number | null;
  cacheName: string;
}

/** Options of {@link Cache}. */
export interface CacheOptions {
  /** Default time to live in milliseconds; `Infinity` for never. Default 5 minutes. */
  ttlMs?: number;
  /** The clock, in milliseconds since the epoch; injectable for tests. */
  now?: () => number;
}

/** Which entries {@link Cache.invalidate} removes: all, one cache's, and/or keys under a prefix. */
export interface InvalidateScope {
  cacheName?: string;
  keyPrefix?: string;
}

function checkTtl(option: string, ttlMs: unknown): number {
  if (typeof ttlMs !== 'number' || Number.isNaN(ttlMs) || ttlMs <= 0) {
    throw new ConfigurationError(
      option,
      `must be a positive number of milliseconds or Infinity, got ${String(ttlMs)}`,
    );
  }
  return ttlMs;
}

function checkName(cacheName: unknown): asserts cacheName is string {
  if (typeof cacheName !== 'string' || cacheName.length === 0 || cacheName.includes(':')) {
    throw new StoreError(
      undefined,
      `cache name must be a non-empty string without ":", got ${JSON.stringify(cacheName)}`,
      {
        code: 'invalid_argument',
      },
    );
  }
}

function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new StoreError(undefined, `cache key must be a non-empty string, got ${JSON.stringify(key)}`, {
      code: 'invalid_argument',
    });
  }
}

function isEntry(value: unknown): value is CacheEntry {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as Record<string, unknown>;
  return (
    'body' in entry &&
    typeof entry.storedAt === 'number' &&
    typeof entry.cacheName === 'string' &&
    (entry.expiresAt === null || typeof entry.expiresAt === 'number')
  );
}

/** Splits `cache:{name}:{key}` at the second colon (names hold no colon; keys may). */
function parseStorageKey(storageKey: string): { cacheName: string; key: string } | undefined {
  if (!storageKey.startsWith(PREFIX)) return undefined;
  const rest = storageKey.slice(PREFIX.length);
  const colon = rest.indexOf(':');
  if (colon <= 0) return undefined;
  return { cacheName: rest.slice(0, colon), key: rest.slice(colon + 1) };
}

/**
 * Values with a time to live, kept in a `Persistence` under `cache:{cacheName}:{key}`.
 * Expiry is lazy (an expired entry is deleted when read) plus an explicit {@link prune},
 * since nothing sweeps in the background. The cache does not compute keys: callers hash
 * what identifies a value (model, text) into `key`.
 */
export class Cache {
  readonly #persistence: Persistence;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(persistence: Persistence, options: CacheOptions = {}) {
    this.#persistence = persistence;
    this.#ttlMs = options.ttlMs === undefined ? DEFAULT_TTL_MS : checkTtl('ttlMs', options.ttlMs);
    this.#now = options.now ?? Date.now;
  }

  /** The `Persistence` key an entry is stored under. */
  static storageKey(cacheName: string, key: string): string {
    checkName(cacheName);
    checkKey(key);
    return `${PREFIX}${cacheName}:${key}`;
  }

  #expired(entry: CacheEntry): boolean {
    return entry.expiresAt !== null && this.#now() >= entry.expiresAt;
  }

  /** The live entry, deleting it when expired or unreadable. */
  async #entry<T>(storageKey: string): Promise<CacheEntry<T> | undefined> {
    const stored = await this.#persistence.get<unknown>(storageKey);
    if (stored === null) return undefined;
    if (!isEntry(stored) || this.#expired(stored)) {
      await this.#persistence.delete(storageKey);
      return undefined;
    }
    return stored as CacheEntry<T>;
  }

  /** The cached value, or `null` when absent or expired (an expired entry is removed). */
  async get<T>(cacheName: string, key: string): Promise<T | null> {
    const entry = await this.#entry<T>(Cache.storageKey(cacheName, key));
    return entry ? entry.body : null;
  }

  /** Whether a live entry exists (also for a cached `null`). */
  async has(cacheName: string, key: string): Promise<boolean> {
    return (await this.#entry(Cache.storageKey(cacheName, key))) !== undefined;
  }

  /** Stores `value` for `ttlMs` (default: the cache's), `Infinity` for never expiring. */
  async set<T>(cacheName: string, key: string, value: T, options: { ttlMs?: number } = {}): Promise<void> {
    const storageKey = Cache.storageKey(cacheName, key);
    const ttlMs = options.ttlMs === undefined ? this.#ttlMs : checkTtl('ttlMs', options.ttlMs);
    const storedAt = this.#now();
    const finite = Number.isFinite(ttlMs);
    const entry: CacheEntry<T> = {
      body: value,
      storedAt,
      ttlMs: finite ? ttlMs : null,
      expiresAt: finite ? storedAt + ttlMs : null,
      cacheName,
    };
    await this.#persistence.set(storageKey, entry);
  }

  /**
   * The cached value, or else `compute()`'s result, stored before it is returned. A cached
   * `null` counts as a hit.
   */
  async getOrSet<T>(
    cacheName: string,
    key: string,
    compute: () => T | Promise<T>,
    options: { ttlMs?: number } = {},
  ): Promise<T> {
    const entry = await this.#entry<T>(Cache.storageKey(cacheName, key));
    if (entry) return entry.body;
    const value = await compute();
    await this.set(cacheName, key, value, options);
    return value;
  }

  async delete(cacheName: string, key: string): Promise<void> {
    await this.#persistence.delete(Cache.storageKey(cacheName, key));
  }

  /** Deletes every expired entry of every cache; resolves with how many. */
  async prune(): Promise<number> {
    let removed = 0;
    for (const storageKey of await this.#persistence.list(PREFIX)) {
      if (!parseStorageKey(storageKey)) continue;
      const stored = await this.#persistence.get<unknown>(storageKey);
      if (stored !== null && (!isEntry(stored) || this.#expired(stored))) {
        await this.#persistence.delete(storageKey);
        removed++;
      }
    }
    return removed;
  }

  /**
   * Deletes every entry the cache holds, live, expired or unreadable, in every cache name.
   * Unlike the seed's `clear()`, keys outside `cache:` in a shared `Persistence` (a calibration,
   * a plan) are kept: clearing a cache never costs what it does not hold. Resolves with how many
   * were deleted.
   */
  async clear(): Promise<number> {
    let removed = 0;
    for (const storageKey of await this.#persistence.list(PREFIX)) {
      await this.#persistence.delete(storageKey);
      removed++;
    }
    return removed;
  }

  /**
   * Deletes the entries in scope, live or not: all cache entries when the scope is empty, one
   * cache's with `cacheName`, those whose key starts with `keyPrefix` (in every cache, or in
   * `cacheName`'s). Keys outside `cache:` in a shared `Persistence` are never touched.
   * Resolves with how many were deleted.
   */
  async invalidate(scope: InvalidateScope = {}): Promise<number> {
    const { cacheName, keyPrefix = '' } = scope;
    if (cacheName !== undefined) checkName(cacheName);
    const listPrefix = cacheName === undefined ? PREFIX : `${PREFIX}${cacheName}:${keyPrefix}`;
    let removed = 0;
    for (const storageKey of await this.#persistence.list(listPrefix)) {
      const parsed = parseStorageKey(storageKey);
      if (!parsed?.key.startsWith(keyPrefix)) continue;
      await this.#persistence.delete(storageKey);
      removed++;
    }
    return removed;
  }
}
