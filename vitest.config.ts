import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // `gc()` for the stretch checks (test/support/cpu-time.ts): the heap a test built to feed the
    // code is collected before what the code does is measured.
    execArgv: ['--expose-gc'],
    // Redis and PostgreSQL on their default local addresses, when they answer and the
    // environment names none: their tests then run without REDIS_URL / DATABASE_URL.
    // And the CLI the tests spawn, bundled once from the sources (test/support/cli-bundle.ts).
    globalSetup: ['./test/support/local-services.ts', './test/support/cli-bundle.ts'],
    // `PROPERTY_SEED` replays a property test's failure (see the file).
    setupFiles: ['./test/support/property-seed.ts'],
    reporters: ['default', './test/reporters/closing-line.ts'],
  },
});
