/**
 * A store driver's options are checked by name: a typo (`prefix` for `keyPrefix`) was dropped
 * without a word, and the store opened with the default. Nothing is opened or created.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { FileStore } from './file.js';
import { openPostgresStore } from './postgres.js';
import { openRedisStore } from './redis.js';
import { openSqliteStore } from './sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'ck-option-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('store options by name', () => {
  it('each driver refuses a name it does not read, naming it and the nearest one, before connecting', async () => {
    // Unreachable addresses: the names are checked before any connection is tried.
    const cases: Array<[Promise<unknown>, RegExp]> = [
      [
        openRedisStore('redis://127.0.0.1:1', { prefix: 'x:' } as never),
        /Redis store option "prefix" is not an option; the options are keyPrefix/,
      ],
      [
        openPostgresStore('postgres://127.0.0.1:1/db', { shema: 'x' } as never),
        /Postgres store option "shema" is not an option; did you mean schema\?/,
      ],
      [
        openSqliteStore(join(dir, 'a.db'), { synchronus: 'normal' } as never),
        /SQLite store option "synchronus" is not an option; did you mean synchronous\?/,
      ],
      [
        Promise.resolve().then(() => new FileStore(join(dir, 'files'), { lockTimeout: 5 } as never)),
        /File store option "lockTimeout" is not an option; did you mean lockTimeoutMs\?/,
      ],
    ];
    for (const [opening, message] of cases) {
      const error = await opening.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).code).toBe('invalid_argument');
      expect((error as Error).message).toMatch(message);
    }
    expect(existsSync(join(dir, 'a.db'))).toBe(false);
    expect(existsSync(join(dir, 'files'))).toBe(false);
  });

  it('refuses options that are not an object', async () => {
    await expect(openSqliteStore(join(dir, 'b.db'), 'full' as never)).rejects.toThrow(
      /SQLite store options must be an object, got string/,
    );
  });
});
