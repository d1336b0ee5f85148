/**
 * `bench formats` loads both builds the same way. A bundle in a folder outside any package was
 * taken for CommonJS by the side process's loader (tsx), and that side ran 7–24% slower than the
 * same code as ES modules: the bias its `--against HEAD` control showed. A side now refuses a
 * build loaded as CommonJS, and both bundle folders are declared ES modules.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { declareModules } from '../bench/formats-build.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(join(tmpdir(), 'contextkit-bench-layout-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A one-module "bundle" in ES module syntax at `<dir>/<name>/dist/index.js`. */
function bundleFolder(name: string): string {
  const out = join(dir, name, 'dist');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'index.js'), 'export const answer = 42;\n');
  return out;
}

/** Loads `entry` the way a side process does (tsx's loader, then `importBuild`). */
function loadAsSide(entry: string): { status: number | null; stderr: string } {
  const importer = pathToFileURL(join(ROOT, 'bench', 'formats-build.ts')).href;
  const code = `import { importBuild } from ${JSON.stringify(importer)};
const build = await importBuild(${JSON.stringify(entry)});
if (build.answer !== 42) throw new Error('wrong module');`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return { status: run.status, stderr: run.stderr };
}

describe('bench formats: both builds load as ES modules', () => {
  it('refuses a bundle outside any package, which the loader takes for CommonJS', () => {
    const out = bundleFolder('undeclared');
    const run = loadAsSide(join(out, 'index.js'));
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('was loaded as CommonJS');
  }, 30_000);

  it('loads a bundle whose folder declareModules declared ES modules', () => {
    const out = bundleFolder('declared');
    declareModules(out);
    const run = loadAsSide(join(out, 'index.js'));
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  }, 30_000);
});
