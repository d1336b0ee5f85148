import { defineConfig } from 'tsup';

// One entry per public subpath in package.json "exports"; drivers stay separate so the core
// never pulls in an optional peer dependency.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'stores/memory': 'src/stores/memory.ts',
    'stores/file': 'src/stores/file.ts',
    'stores/sqlite': 'src/stores/sqlite.ts',
    'stores/redis': 'src/stores/redis.ts',
    'stores/postgres': 'src/stores/postgres.ts',
    'cli/main': 'src/cli/main.ts',
  },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  // Optional peer dependencies: imported by the driver entries only, never bundled.
  external: ['better-sqlite3', 'redis', 'pg'],
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: true,
  treeshake: true,
});
