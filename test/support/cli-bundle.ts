/**
 * Vitest global setup: the CLI the tests spawn, bundled once per run from the sources (no stale
 * `dist/`), so each spawn loads one file instead of transforming every source module through tsx
 * (about 0.25 s a run instead of 1.3 s; the CLI tests spawn it a few hundred times). The bundle sits
 * in a directory of its own per run, two levels below the repository (as `dist/cli/main.js` does:
 * the CLI finds package.json there), and is removed after the run. `runCli` falls back to tsx on
 * the sources when there is none (a test file run outside this setup).
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'tsup';
import { REPO_ROOT } from './run-cli.js';

export default async function setup(): Promise<() => Promise<void>> {
  const dir = join(REPO_ROOT, `.test-cli-${process.pid}`);
  await build({
    // The drivers a store URL loads on demand (`importDriver` tries `./sqlite.js` beside the code that
    // asks, which bundles into cli/run.js), built into the same bundle so they share its modules
    // (the error classes the CLI words by `instanceof`).
    entry: {
      'cli/run': join(REPO_ROOT, 'src/cli/run.ts'),
      ...Object.fromEntries(
        ['sqlite', 'redis', 'postgres'].map((driver) => [
          `cli/${driver}`,
          join(REPO_ROOT, `src/stores/${driver}.ts`),
        ]),
      ),
    },
    outDir: dir,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    splitting: true,
    dts: false,
    sourcemap: false,
    clean: true,
    silent: true,
    config: false,
  });
  process.env.CONTEXTKIT_TEST_CLI = join(dir, 'cli/run.js');
  return async () => {
    await rm(dir, { recursive: true, force: true });
  };
}
