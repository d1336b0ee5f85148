/**
 * Stores given as URLs (`store: 'file:./.contextkit'`), so configuration files and the CLI can
 * name a store with a string.
 */

import { fileURLToPath } from 'node:url';
import { ConfigurationError, StoreError } from '../errors.js';
import { redactUrl } from '../redact-url.js';
import { FileStore } from './file.js';
import { LazyStore } from './lazy.js';
import { MemoryStore } from './memory.js';
import type { ConversationStore } from './types.js';

const ACCEPTED = 'memory:, file:DIR, sqlite:PATH, redis://…, rediss://…, postgres://…, postgresql://…';

/** A driver that lives in its own module with its client as an optional peer dependency. */
interface AsyncDriver {
  name: string;
  /** Beside this file in the source tree and in an unbundled build. */
  module: string;
  /** The package's own subpath export, for the bundled build. */
  subpath: string;
  exportName: string;
  peer: string;
  /** Whether the driver's options take `mustExist` (a Redis server has nothing to create). */
  creates: boolean;
  /** Whether its stores keep a full-text index (`search`). */
  searches: boolean;
}

const SQLITE: AsyncDriver = {
  name: 'sqlite',
  module: './sqlite.js',
  subpath: 'contextkit/stores/sqlite',
  exportName: 'openSqliteStore',
  peer: 'better-sqlite3',
  creates: true,
  searches: true,
};
const REDIS: AsyncDriver = {
  name: 'redis',
  module: './redis.js',
  subpath: 'contextkit/stores/redis',
  exportName: 'openRedisStore',
  peer: 'redis',
  creates: false,
  searches: false,
};
const POSTGRES: AsyncDriver = {
  name: 'postgres',
  module: './postgres.js',
  subpath: 'contextkit/stores/postgres',
  exportName: 'openPostgresStore',
  peer: 'pg',
  creates: true,
  searches: true,
};

const STORE_METHODS = [
  'append',
  'epoch',
  'read',
  'head',
  'replace',
  'getMeta',
  'setMeta',
  'list',
  'delete',
  'close',
] as const;

/** What a bare path was most likely meant as: a database file for SQLite, else a directory. */
function bareStoreHint(path: string): string {
  return /\.(?:db|sqlite3?|db3)$/i.test(path)
    ? `for a SQLite database, write sqlite:${path}`
    : `for a directory, write file:${path}`;
}

function isStore(value: unknown): value is ConversationStore {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return STORE_METHODS.every((method) => typeof record[method] === 'function');
}

type Parsed =
  | { kind: 'store'; store: ConversationStore }
  | { kind: 'async'; driver: AsyncDriver; argument: string; scheme: string };

/** For an object that is not a store: which of the store's methods it lacks. */
function lacking(value: unknown): string {
  if (typeof value !== 'object' || value === null) return '';
  const record = value as Record<string, unknown>;
  const missing = STORE_METHODS.filter((method) => typeof record[method] !== 'function');
  return ` without ${missing.join(', ')}`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  return typeof value;
}

/** Options for the stores {@link resolveStore} and {@link openStore} construct themselves. */
export interface ResolveStoreOptions {
  /** Passed to a `FileStore` (torn writes found and repaired, stray files). */
  onWarning?: (message: string) => void;
  /**
   * Open only a store that already exists, creating nothing: a missing `file:` directory or
   * `sqlite:` file, or a Postgres database without contextkit's tables, is a `StoreError` with
   * code `not_found`. A Redis server has nothing to create, so a reachable one always opens.
   * For tools that only read (listing, showing, exporting), where a mistyped path must not look
   * like an empty store.
   */
  mustExist?: boolean;
}

function parse(spec: string | ConversationStore | undefined, options: ResolveStoreOptions): Parsed {
  if (spec === undefined) return { kind: 'store', store: new MemoryStore() };
  if (typeof spec !== 'string') {
    if (isStore(spec)) return { kind: 'store', store: spec };
    throw new ConfigurationError(
      'store',
      `expected a store URL (${ACCEPTED}) or a ConversationStore object, got ${describe(spec)}${lacking(spec)}`,
    );
  }
  const colon = spec.indexOf(':');
  const scheme = colon > 0 ? spec.slice(0, colon + 1).toLowerCase() : '';
  const rest = spec.slice(colon + 1);
  switch (scheme) {
    case 'memory:':
      if (rest !== '' && rest !== '//') {
        throw new ConfigurationError(
          'store',
          `"memory:" takes no path, got ${JSON.stringify(redactUrl(spec))}`,
        );
      }
      return { kind: 'store', store: new MemoryStore() };
    case 'file:': {
      let dir: string;
      try {
        dir = rest.startsWith('//') ? fileURLToPath(spec) : rest;
      } catch (error) {
        throw new ConfigurationError(
          'store',
          `${JSON.stringify(redactUrl(spec))} is not a usable file URL: ${(error as Error).message}`,
        );
      }
      if (dir === '')
        throw new ConfigurationError('store', '"file:" needs a directory, as in file:./.contextkit');
      return {
        kind: 'store',
        store: new FileStore(dir, {
          ...(options.onWarning ? { onWarning: options.onWarning } : {}),
          ...(options.mustExist ? { mustExist: true } : {}),
        }),
      };
    }
    case 'sqlite:': {
      const path = rest.startsWith('//') ? rest.slice(2) : rest;
      if (path === '')
        throw new ConfigurationError('store', '"sqlite:" needs a database path, as in sqlite:./history.db');
      return { kind: 'async', driver: SQLITE, argument: path, scheme };
    }
    case 'redis:':
    case 'rediss:':
      return { kind: 'async', driver: REDIS, argument: spec, scheme: `${scheme}//` };
    case 'postgres:':
    case 'postgresql:':
      return { kind: 'async', driver: POSTGRES, argument: spec, scheme: `${scheme}//` };
    default:
      throw new ConfigurationError(
        'store',
        `unknown store ${JSON.stringify(redactUrl(spec))}; accepted: ${ACCEPTED}` +
          (scheme === '' && !spec.includes('@') ? ` (${bareStoreHint(spec)})` : ''),
      );
  }
}

/**
 * The store a `store` option names, synchronously: `undefined` (the in-memory default),
 * a `ConversationStore` (returned as is), `memory:`, `file:DIR` (relative to the current
 * directory, or a `file://` URL), and `sqlite:PATH`, `redis://…` and `postgres://…`, which
 * connect on first use (a {@link LazyStore}): a store that cannot be opened rejects that first
 * call with the error {@link openStore} gives, and is tried again on the next. A URL that names
 * no store throws a `ConfigurationError` at once.
 */
export function resolveStore(
  spec: string | ConversationStore | undefined,
  options: ResolveStoreOptions = {},
): ConversationStore {
  const parsed = parse(spec, options);
  if (parsed.kind === 'store') return parsed.store;
  return new LazyStore(parsed.driver.name, () => openParsed(parsed, options), parsed.driver.searches);
}

function isModuleNotFound(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = 'code' in error ? String(error.code) : '';
  const message = error instanceof Error ? error.message : '';
  return (
    code === 'ERR_MODULE_NOT_FOUND' ||
    code === 'MODULE_NOT_FOUND' ||
    code === 'ERR_LOAD_URL' ||
    /Cannot find (module|package)|Failed to load url/.test(message)
  );
}

/**
 * Imports the first of `specifiers` that exists. A missing `peer` package (the driver's
 * client) becomes a `StoreError` saying what to install; a driver module missing from every
 * place becomes one saying the driver is not in this build.
 */
export async function importDriver(
  name: string,
  specifiers: readonly string[],
  peer: string,
): Promise<unknown> {
  const peerPattern = new RegExp(`['"\`]${peer.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(['"\`/])`);
  const tried: string[] = [];
  for (const specifier of specifiers) {
    try {
      return await import(specifier);
    } catch (error) {
      if (!isModuleNotFound(error)) {
        throw new StoreError(
          undefined,
          `the ${name} store driver failed to load: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
      if (peerPattern.test((error as Error).message)) {
        throw new StoreError(
          undefined,
          `the ${name} store needs the optional dependency "${peer}", which is not installed; run \`npm install ${peer}\``,
          { cause: error, code: 'missing_dependency' },
        );
      }
      tried.push(specifier);
    }
  }
  throw new StoreError(
    undefined,
    `the ${name} store driver is not available in this build of contextkit (looked for ${tried.join(', ')})`,
    { code: 'missing_driver' },
  );
}

/**
 * Opens the store a `store` option names, including those that must connect first: everything
 * {@link resolveStore} takes, plus `sqlite:PATH` (`better-sqlite3`), `redis://…`/`rediss://…`
 * (`redis`) and `postgres://…`/`postgresql://…` (`pg`). Each of those drivers is loaded only
 * when asked for, so their clients stay optional. With `mustExist`, a store that does not exist
 * yet is refused rather than created (see {@link ResolveStoreOptions.mustExist}).
 */
export async function openStore(
  spec: string | ConversationStore | undefined,
  options: ResolveStoreOptions = {},
): Promise<ConversationStore> {
  const parsed = parse(spec, options);
  if (parsed.kind === 'store') return parsed.store;
  return openParsed(parsed, options);
}

async function openParsed(
  parsed: Extract<Parsed, { kind: 'async' }>,
  options: ResolveStoreOptions,
): Promise<ConversationStore> {
  const { driver, argument } = parsed;
  const loaded = await importDriver(driver.name, [driver.module, driver.subpath], driver.peer);
  const open = (loaded as Record<string, unknown>)[driver.exportName];
  if (typeof open !== 'function') {
    throw new StoreError(
      undefined,
      `the ${driver.name} store driver does not export ${driver.exportName}()`,
      {
        code: 'missing_driver',
      },
    );
  }
  const driverOptions = options.mustExist && driver.creates ? { mustExist: true } : undefined;
  const store: unknown = await (open as (argument: string, options?: object) => unknown)(
    argument,
    driverOptions,
  );
  if (!isStore(store)) {
    throw new StoreError(undefined, `${driver.exportName}() did not return a ConversationStore`, {
      code: 'missing_driver',
    });
  }
  return store;
}
