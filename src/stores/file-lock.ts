/**
 * An advisory lock between processes sharing one directory, built from what Node offers
 * without native modules: creating a file with `O_CREAT | O_EXCL` (`open(path, 'wx')`) is
 * atomic on local file systems, so exactly one process succeeds; the others retry with
 * backoff. The file holds the owner's pid, host and a random token.
 *
 * A lock whose owner died (a crash, SIGKILL) would block everyone forever, so a waiter breaks
 * it when the owner's pid is gone on this host (`process.kill(pid, 0)`), or, for an owner on
 * another host or a reused pid, when the lock is older than `staleMs` (locks are held for one
 * write and flush, never for long). Breaking happens under a second lock file
 * (`<lock>.break`) and only after re-reading that the lock is still the stale one, so two
 * waiters cannot both break it and remove a fresh lock by mistake.
 */

import { randomUUID } from 'node:crypto';
import { readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { StoreError } from '../errors.js';

/** How long to wait for a lock, and when a held lock counts as abandoned. */
export interface FileLockOptions {
  /** Give up (with a `StoreError`) after waiting this long. */
  timeoutMs: number;
  /** A lock older than this is taken to be abandoned even if its pid seems alive. */
  staleMs: number;
}

interface LockOwner {
  pid: number;
  host: string;
  token: string;
  time: number;
}

/** A lock file with no readable owner is being written right now, or its writer died. */
const UNREADABLE_GRACE_MS = 2_000;
const HOST = hostname();

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return errorCode(error) === 'EPERM';
  }
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return undefined;
    const { pid, host, token, time } = value as Record<string, unknown>;
    if (
      typeof pid !== 'number' ||
      typeof host !== 'string' ||
      typeof token !== 'string' ||
      typeof time !== 'number'
    ) {
      return undefined;
    }
    return { pid, host, token, time };
  } catch {
    return undefined;
  }
}

/** The lock's current content and age, or undefined when there is no lock file. */
async function inspect(
  path: string,
): Promise<{ text: string; owner?: LockOwner; ageMs: number } | undefined> {
  try {
    const [text, info] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    const owner = parseOwner(text);
    const ageMs = Date.now() - (owner ? owner.time : info.mtimeMs);
    return owner ? { text, owner, ageMs } : { text, ageMs };
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

function isStale(found: { owner?: LockOwner; ageMs: number }, staleMs: number): boolean {
  if (!found.owner) return found.ageMs > UNREADABLE_GRACE_MS;
  if (found.ageMs > staleMs) return true;
  return found.owner.host === HOST && !isAlive(found.owner.pid);
}

/** Removes the lock at `path` if it is (still) stale; true when the caller should retry now. */
async function breakIfStale(path: string, staleMs: number): Promise<boolean> {
  const found = await inspect(path);
  if (!found) return true;
  if (!isStale(found, staleMs)) return false;
  const breaker = `${path}.break`;
  try {
    await writeFile(breaker, String(process.pid), { flag: 'wx' });
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw error;
    // Someone else is breaking it; a breaker that died mid-way is cleared by age.
    const info = await stat(breaker).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > staleMs) await unlink(breaker).catch(() => undefined);
    return false;
  }
  try {
    const again = await inspect(path);
    if (!again) return true;
    if (again.text !== found.text || !isStale(again, staleMs)) return false;
    await unlink(path).catch((error: unknown) => {
      if (errorCode(error) !== 'ENOENT') throw error;
    });
    return true;
  } finally {
    await unlink(breaker).catch(() => undefined);
  }
}

/**
 * Runs `fn` while holding the lock file at `path`, so no other process (or other store
 * instance in this one) holding the same lock runs at the same time. `conversationId` names
 * the conversation in the error raised when the lock cannot be had in time.
 */
export async function withFileLock<T>(
  path: string,
  conversationId: string | undefined,
  options: FileLockOptions,
  fn: () => Promise<T>,
): Promise<T> {
  const token = randomUUID();
  const content = JSON.stringify({ pid: process.pid, host: HOST, token, time: Date.now() });
  const started = Date.now();
  let delay = 1;
  for (;;) {
    try {
      await writeFile(path, content, { flag: 'wx' });
      break;
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') {
        throw new StoreError(conversationId, `cannot create the lock file ${path}: ${String(error)}`, {
          cause: error,
        });
      }
    }
    if (await breakIfStale(path, options.staleMs)) continue;
    if (Date.now() - started > options.timeoutMs) {
      const found = await inspect(path).catch(() => undefined);
      const owner = found?.owner ? ` (held by pid ${found.owner.pid} on ${found.owner.host})` : '';
      throw new StoreError(
        conversationId,
        `timed out after ${options.timeoutMs} ms waiting for the lock ${path}${owner}; if no process is using this store, delete that file`,
        { code: 'lock_timeout' },
      );
    }
    await sleep(delay + Math.random() * delay);
    delay = Math.min(delay * 2, 25);
  }
  try {
    return await fn();
  } finally {
    // Remove the lock only if it is still ours: had it been broken as stale, the file now
    // belongs to someone else.
    const found = await inspect(path).catch(() => undefined);
    if (found?.owner?.token === token) await unlink(path).catch(() => undefined);
  }
}
