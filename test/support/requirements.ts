/**
 * What a test needs that a machine may not have (a Redis or PostgreSQL server, Chromium, the
 * shared data), and the options that skip a test without it while recording why, so that
 * `npm test` ends by listing every skip with its reason (test/reporters/closing-line.ts).
 *
 *     describe('redis', skipFor(missing.redis), () => { … });
 */
import { existsSync } from 'node:fs';
import { inject, type TestOptions } from 'vitest';
import type { LocalServices } from './local-services.js';

declare module 'vitest' {
  export interface TaskMeta {
    /** Why the test was skipped, for the closing report. */
    skipReason?: string;
  }
}

/** What the global setup found; a run without it (another config) sees only the environment. */
const services: Partial<LocalServices> = inject('services') ?? {};

/** The Redis server to test against: `REDIS_URL`, or the local default the global setup found. */
export const REDIS_URL: string | undefined = process.env.REDIS_URL || undefined;

/** The PostgreSQL database to test against: `DATABASE_URL`, or the local default found. */
export const DATABASE_URL: string | undefined = process.env.DATABASE_URL || undefined;

/** Headless Chromium for the browser test: `CHROMIUM_PATH`, or Debian's package. */
export const CHROMIUM: string = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Why each optional service's tests cannot run here (undefined when they can). */
export const missing: { redis?: string; postgres?: string; chromium?: string } = {
  redis: REDIS_URL
    ? undefined
    : `no Redis: ${services.redis?.missing ?? 'REDIS_URL is not set'}; start redis-server or set REDIS_URL`,
  postgres: DATABASE_URL
    ? undefined
    : `no PostgreSQL: ${services.postgres?.missing ?? 'DATABASE_URL is not set'}; start it (database "test", trust) or set DATABASE_URL`,
  chromium: existsSync(CHROMIUM)
    ? undefined
    : `no Chromium at ${CHROMIUM}; apt-get install -y chromium, or set CHROMIUM_PATH`,
};

/**
 * Options for `describe` or `it`: none when `reason` is undefined (what it needs is here);
 * otherwise it is skipped, with `reason` recorded for the closing report.
 */
export function skipFor(reason: string | undefined): TestOptions {
  return reason === undefined ? {} : { skip: true, meta: { skipReason: reason } };
}

/** Why the tests on `path` (data from `../shared`) cannot run, or undefined when it is there. */
export function missingData(path: string): string | undefined {
  return existsSync(path) ? undefined : `no data at ${path} (the shared data beside the repository)`;
}
