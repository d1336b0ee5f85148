import { defineConfig } from 'tsup';

// One entry per public subpath in package.json "exports"; drivers stay separate so the core
// never pulls in an optional peer dependency.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'stores/memory': 'src/stores/memory.ts',
    'stores/file': 'src/stores/file.ts',
    'cli/main': 'src/cli/main.ts',
  },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: true,
  treeshake: true,
});
