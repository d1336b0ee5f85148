import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Redis and PostgreSQL on their default local addresses, when they answer and the
    // environment names none: their tests then run without REDIS_URL / DATABASE_URL.
    globalSetup: ['./test/support/local-services.ts'],
    reporters: ['default', './test/reporters/closing-line.ts'],
  },
});
