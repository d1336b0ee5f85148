import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'vitest';

/** The repository root (tests spawn the CLI from its sources, so no build is needed: see cli-bundle.ts). */
export const REPO_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

const RUN = join(REPO_ROOT, 'src/cli/run.ts');
const TSX = pathToFileURL(join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

/** What a `contextkit` run printed and how it exited. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `contextkit ARGS` as a child process with `input` on stdin. The environment is the test's,
 * without stack traces or colour, unless `env` is given, which replaces it whole. With
 * `timeoutMs`, a run still going then is killed (its `code` is null): a hang fails, not stalls.
 */
export function runCli(
  args: readonly string[],
  options: {
    input?: string;
    cwd?: string;
    env?: Record<string, string | undefined>;
    timeoutMs?: number;
  } = {},
): Promise<CliRun> {
  return new Promise((done, fail) => {
    // The CLI bundled from the sources for this run (test/support/cli-bundle.ts), else the sources through tsx.
    const bundle = process.env.CONTEXTKIT_TEST_CLI;
    const command = bundle && existsSync(bundle) ? [bundle] : ['--import', TSX, RUN];
    const child = spawn(process.execPath, [...command, ...args], {
      cwd: options.cwd ?? REPO_ROOT,
      env: options.env ?? { ...process.env, CONTEXTKIT_DEBUG: '', NO_COLOR: '1' },
      ...(options.timeoutMs !== undefined
        ? { timeout: options.timeoutMs, killSignal: 'SIGKILL' as const }
        : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** Expects a run that failed with `code` and said why in one line, `contextkit: …` matching `pattern`, never a stack trace. */
export function expectOneLineError(run: CliRun, code: number, pattern: RegExp): void {
  expect(run.code).toBe(code);
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^contextkit: /);
  expect(lines[0]).toMatch(pattern);
  expect(run.stderr).not.toMatch(/\n\s+at /);
}
