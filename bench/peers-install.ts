/**
 * The peers benchmark is its own package (bench/peers/package.json): Mastra's line pins peers
 * (zod 3, ai 4) that conflict with the library's, so it is installed there, on first use, and the
 * root `npm install` stays quiet. Its modules are loaded by a computed path, so the root typecheck
 * does not need Mastra (`npm run typecheck --prefix bench/peers` checks them).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Installs bench/peers' own dependencies when they are not there yet. */
export function ensurePeersInstalled(who: string): void {
  const dir = join(dirname(fileURLToPath(import.meta.url)), 'peers');
  if (existsSync(join(dir, 'node_modules', '@mastra', 'memory'))) return;
  process.stderr.write(`bench ${who}: installing the peers' own dependencies in bench/peers (once)\n`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const done = spawnSync(npm, ['install', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
  if (done.status !== 0) throw new Error(`npm install in ${dir} failed (exit ${done.status})`);
}
