/**
 * Loading one side's build in `bench formats`. Both builds must run as ES modules: a bundle in a
 * folder outside any package is taken for CommonJS, the side process's loader (tsx) rewrites it
 * to CommonJS, and every call between its chunks then goes through an export getter. That alone
 * made one side 7–24% slower than the same code loaded as ES modules (the bias the `--against
 * HEAD` control used to show).
 */
import { realpathSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FormatsBuild } from './formats-session.js';

/** Declares the bundle folder `outDir` ES modules (a package.json of its own). */
export function declareModules(outDir: string): void {
  writeFileSync(join(outDir, 'package.json'), `${JSON.stringify({ type: 'module' })}\n`);
}

/** Imports the build at `entry`, refusing it if it was loaded as CommonJS (see above). */
export async function importBuild(entry: string): Promise<FormatsBuild> {
  const build = (await import(pathToFileURL(entry).href)) as FormatsBuild;
  if (createRequire(import.meta.url).cache[realpathSync(entry)] !== undefined) {
    throw new Error(
      `bench formats: ${entry} was loaded as CommonJS; its folder must declare "type": "module"`,
    );
  }
  return build;
}
