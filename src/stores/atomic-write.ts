/**
 * Whole-file writes that a crash cannot leave half done: the seed's file persistence wrote in
 * place, so a crash mid-write left a truncated file. Here the data goes to a temp file in the
 * same directory, is flushed, and replaces the target with one atomic `rename`.
 */

import { randomBytes } from 'node:crypto';
import { type FileHandle, mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Flushes a directory's entries (a new, renamed or removed file) to disk. Not every platform
 * can open a directory for syncing (Windows cannot); there the rename is as durable as the
 * file system makes it, and the error is ignored.
 */
export async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Best effort: see above.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** Writes every byte of `data` through `handle`, however many calls the OS needs. */
export async function writeAll(handle: FileHandle, data: Buffer): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await handle.write(data, offset, data.length - offset);
    offset += bytesWritten;
  }
}

/**
 * Replaces `path` with `data` (text, bytes, or bytes in parts written in order) atomically and durably: after it resolves a crash leaves the new
 * content, before it the old one, never a mix. The temp file starts with `.` and ends in
 * `.tmp`, so listings that skip dot files never see it; it is removed on failure.
 * `durable: false` (a cache, which a crash may lose) keeps the atomic swap without syncing: a
 * reader still sees the old content or the new, whole.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Buffer | readonly Buffer[],
  options?: { durable?: boolean },
): Promise<void> {
  const durable = options?.durable !== false;
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx');
  try {
    try {
      if (typeof data === 'string') await writeAll(handle, Buffer.from(data, 'utf8'));
      else if (Buffer.isBuffer(data)) await writeAll(handle, data);
      // In parts (a long history made ready in slices): each written before the next.
      else for (const part of data) await writeAll(handle, part);
      if (durable) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  if (durable) await syncDirectory(dir);
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

/**
 * Creates `dir` and its missing parents, trying each level at most twice. Node's own
 * `mkdir(dir, { recursive: true })` loops forever where a parent exists but refuses children
 * with ENOENT (`/proc`, `/sys`); here that is an error naming the directory that cannot be made.
 */
export async function makeDirectory(dir: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await mkdir(dir);
      return;
    } catch (error) {
      const code = errorCode(error);
      if (code === 'EEXIST') {
        if ((await stat(dir)).isDirectory()) return;
        throw error;
      }
      const parent = dirname(dir);
      if (code !== 'ENOENT' || attempt > 0 || parent === dir) throw error;
      await makeDirectory(parent);
    }
  }
}
