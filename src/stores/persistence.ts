/**
 * The seed's key-value `Persistence` (004: get/set/delete/list/has) with its two drivers, for
 * state that is not a conversation log: cached summaries, exact token counts, calibration.
 */

import { readdir, readFile, stat, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { StoreError } from '../errors.js';
import { makeDirectory, writeFileAtomic } from './atomic-write.js';
import { compareIds, decodeId, encodeId, isHashedName, validateConversationId } from './keys.js';

/** A key-value store of JSON-like values. Values are copies both ways: mutating one later changes nothing stored. */
export interface Persistence {
  /** The value under `key`, or `null` when there is none. */
  get<T>(key: string): Promise<T | null>;
  set<T>(key: string, value: T): Promise<void>;
  /** No error when the key is absent. */
  delete(key: string): Promise<void>;
  /** Keys under `prefix` (all when omitted), in code point order. */
  list(prefix?: string): Promise<string[]>;
  has(key: string): Promise<boolean>;
}

function checkKey(key: unknown): asserts key is string {
  validateConversationId(key, 'persistence key');
}

function checkValue(key: string, value: unknown): void {
  if (value === undefined) {
    throw new StoreError(
      undefined,
      `persistence key ${JSON.stringify(key)}: cannot store undefined; delete the key instead`,
      {
        code: 'invalid_argument',
      },
    );
  }
}

function copy<T>(key: string, value: T): T {
  try {
    return structuredClone(value);
  } catch (cause) {
    throw new StoreError(
      undefined,
      `persistence key ${JSON.stringify(key)}: the value cannot be copied: ${String(cause)}`,
      {
        cause,
        code: 'invalid_argument',
      },
    );
  }
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

/** Keys and values in a `Map`, copied with `structuredClone` on the way in and out. */
export class MemoryPersistence implements Persistence {
  readonly #map = new Map<string, unknown>();

  /** How many keys are stored (a test affordance from the seed). */
  get size(): number {
    return this.#map.size;
  }

  async get<T>(key: string): Promise<T | null> {
    checkKey(key);
    return this.#map.has(key) ? copy(key, this.#map.get(key) as T) : null;
  }

  async set<T>(key: string, value: T): Promise<void> {
    checkKey(key);
    checkValue(key, value);
    this.#map.set(key, copy(key, value));
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    this.#map.delete(key);
  }

  async list(prefix = ''): Promise<string[]> {
    return [...this.#map.keys()].filter((key) => key.startsWith(prefix)).sort(compareIds);
  }

  async has(key: string): Promise<boolean> {
    checkKey(key);
    return this.#map.has(key);
  }

  /** Removes every key (a test affordance from the seed). */
  clear(): void {
    this.#map.clear();
  }
}

/**
 * One JSON file per key in a directory, `{"key":…,"value":…}`, named by `encodeId(key)`
 * (so any key is a safe, case-distinct file name, and a hashed long name still knows its
 * key). Unlike the seed's, every write goes through a temp file and an atomic rename, so a
 * crash leaves the old value or the new one, never a torn file. Concurrent writers of one
 * key: the last rename wins.
 */
export class FilePersistence implements Persistence {
  /** The directory, absolute. */
  readonly dir: string;

  constructor(dir: string) {
    if (typeof dir !== 'string' || dir.length === 0) {
      throw new StoreError(undefined, 'the file persistence needs a directory path');
    }
    this.dir = resolve(dir);
  }

  #file(key: string): string {
    return join(this.dir, `${encodeId(key)}.json`);
  }

  async #read(key: string): Promise<{ found: false } | { found: true; value: unknown }> {
    const file = this.#file(key);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return { found: false };
      throw new StoreError(
        undefined,
        `persistence key ${JSON.stringify(key)}: cannot read ${file}: ${String(error)}`,
        {
          cause: error,
        },
      );
    }
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch {
      record = undefined;
    }
    if (typeof record !== 'object' || record === null || !('key' in record) || !('value' in record)) {
      throw new StoreError(
        undefined,
        `persistence key ${JSON.stringify(key)}: ${file} holds ${JSON.stringify(text.slice(0, 60))}, not a stored value; it was not changed`,
        { code: 'corrupt' },
      );
    }
    // A hashed name holds its key: a different one means the file is not this key's.
    if (record.key !== key) return { found: false };
    return { found: true, value: record.value };
  }

  async get<T>(key: string): Promise<T | null> {
    checkKey(key);
    const read = await this.#read(key);
    return read.found ? (read.value as T) : null;
  }

  async set<T>(key: string, value: T): Promise<void> {
    checkKey(key);
    checkValue(key, value);
    let json: string | undefined;
    try {
      json = JSON.stringify({ key, value });
    } catch (cause) {
      throw new StoreError(
        undefined,
        `persistence key ${JSON.stringify(key)}: the value is not JSON: ${(cause as Error).message}`,
        {
          cause,
          code: 'invalid_argument',
        },
      );
    }
    try {
      await makeDirectory(this.dir);
      await writeFileAtomic(this.#file(key), `${json}\n`);
    } catch (error) {
      throw new StoreError(
        undefined,
        `persistence key ${JSON.stringify(key)}: cannot write in ${this.dir}: ${String(error)}`,
        {
          cause: error,
        },
      );
    }
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    const read = await this.#read(key);
    if (!read.found) return;
    try {
      await unlink(this.#file(key));
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
    }
  }

  async list(prefix = ''): Promise<string[]> {
    let files: string[];
    try {
      files = await readdir(this.dir);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return [];
      throw new StoreError(undefined, `cannot list ${this.dir}: ${String(error)}`, { cause: error });
    }
    const keys = await Promise.all(
      files
        .filter((file) => !file.startsWith('.') && file.endsWith('.json'))
        .map(async (file): Promise<string | undefined> => {
          const name = file.slice(0, -'.json'.length);
          try {
            if (!isHashedName(name)) return decodeId(name);
            const record: unknown = JSON.parse(await readFile(join(this.dir, file), 'utf8'));
            const key =
              typeof record === 'object' && record !== null && 'key' in record ? record.key : undefined;
            return typeof key === 'string' && encodeId(key) === name ? key : undefined;
          } catch {
            return undefined;
          }
        }),
    );
    return keys.filter((key): key is string => key?.startsWith(prefix) === true).sort(compareIds);
  }

  async has(key: string): Promise<boolean> {
    checkKey(key);
    if (!isHashedName(encodeId(key))) {
      return stat(this.#file(key)).then(
        () => true,
        () => false,
      );
    }
    return (await this.#read(key)).found;
  }
}
