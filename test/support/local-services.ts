/**
 * Vitest global setup: finds Redis and PostgreSQL on their default local addresses, so
 * `npm test` runs the tests that need them whenever they answer, without the user setting
 * `REDIS_URL` or `DATABASE_URL`. A URL the user set is kept as it is (and not probed: a wrong one
 * should fail the tests that use it, not skip them). What was found is handed to the test files
 * (`inject('services')`, read through `test/support/requirements.ts`), whose skip reasons the
 * closing reporter lists.
 */
import { connect } from 'node:net';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

/** The addresses `npm test` looks at when the variables are not set. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** How long a probe waits: a service that is there answers a local connection at once. */
const PROBE_MS = 2_000;

/** One optional service: the URL tests use, or why there is none. */
export interface ServiceStatus {
  url?: string;
  /** Set when `url` is not: what the probe found, and how to make the tests run. */
  missing?: string;
}

/** What the global setup provides to every test file. */
export interface LocalServices {
  redis: ServiceStatus;
  postgres: ServiceStatus;
}

declare module 'vitest' {
  export interface ProvidedContext {
    services: LocalServices;
  }
}

/** Undefined when a Redis server answers `PING` at the URL's host and port without a password, else why not. */
export function pingRedis(url: string): Promise<string | undefined> {
  const { hostname, port } = new URL(url);
  return new Promise((done) => {
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    let reply = '';
    const finish = (problem: string | undefined) => {
      socket.destroy();
      done(problem);
    };
    socket.setTimeout(PROBE_MS, () => finish(`no answer within ${PROBE_MS} ms`));
    socket.on('error', (error: NodeJS.ErrnoException) => finish(error.code ?? error.message));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (!reply.includes('\r\n')) return;
      if (reply.startsWith('+PONG')) finish(undefined);
      else finish(`it answered ${JSON.stringify(reply.trim().slice(0, 80))}`);
    });
  });
}

/** Undefined when PostgreSQL accepts a connection and a query at `url`, else why not. */
export async function queryPostgres(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_MS });
  // A server that drops the connection later must not end the test run.
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return (error as Error).message || String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

async function find(
  variable: 'REDIS_URL' | 'DATABASE_URL',
  fallback: string,
  probe: (url: string) => Promise<string | undefined>,
): Promise<ServiceStatus> {
  const given = process.env[variable];
  if (given) return { url: given };
  const problem = await probe(fallback);
  if (problem === undefined) {
    // Test files run in child processes, which inherit this environment.
    process.env[variable] = fallback;
    return { url: fallback };
  }
  return { missing: `${variable} is not set and ${fallback} did not answer (${problem})` };
}

/** Probes both services at once and provides what it found. */
export default async function setup(project: TestProject): Promise<void> {
  const [redis, postgres] = await Promise.all([
    find('REDIS_URL', DEFAULT_REDIS_URL, pingRedis),
    find('DATABASE_URL', DEFAULT_DATABASE_URL, queryPostgres),
  ]);
  project.provide('services', { redis, postgres });
}
