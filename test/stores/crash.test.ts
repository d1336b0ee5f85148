/**
 * Crash safety: a child appending in a loop is killed with SIGKILL at random moments; after
 * each kill, every append the child saw resolve must read back intact, and the log must hold
 * only whole batches. The next child continues on the same log, so recovery after a kill
 * (a torn tail, a lock left behind, a WAL to replay) is exercised as well.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { crashEntryProblem } from './fixtures/crash-entry.js';
import { openSpec, type StoreSpec } from './fixtures/open-store.js';

const KILLS_PER_DRIVER = 25;
const FIXTURE = join(import.meta.dirname, 'fixtures', 'append-loop.ts');
const CONVERSATION = 'crash/ünïcödé';

interface ChildRun {
  /** Batches the child reported as resolved: [first seq, size]. */
  resolved: Array<[number, number]>;
  stderr: string;
  signal: NodeJS.Signals | null;
}

/** Spawns the appending child, kills it `delayMs` after it reports ready, collects its reports. */
function runUntilKilled(spec: StoreSpec, seed: number, delayMs: number): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(
      process.execPath,
      ['--import', 'tsx', FIXTURE, JSON.stringify(spec), CONVERSATION, String(seed)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    const startupLimit = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stdout?.setEncoding('utf8');
    child.stderr?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      out += chunk;
      if (timer === undefined && out.startsWith('ready\n')) {
        clearTimeout(startupLimit);
        timer = setTimeout(() => child.kill('SIGKILL'), delayMs);
      }
    });
    child.stderr?.on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    // 'close' waits for stdout to be drained, so every report written before the kill is in.
    child.on('close', (_code, signal) => {
      clearTimeout(startupLimit);
      if (timer === undefined) {
        reject(new Error(`the child never became ready (signal ${signal}):\n${stderr}`));
        return;
      }
      const resolved: Array<[number, number]> = [];
      for (const line of out.split('\n')) {
        const match = /^ok (\d+) (\d+)$/.exec(line);
        if (match) resolved.push([Number(match[1]), Number(match[2])]);
      }
      resolve({ resolved, stderr, signal });
    });
  });
}

/** Seeded so that a failing run can be replayed (the seed is in the failure message). */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ck-crash-'));
  dirs.push(dir);
  return dir;
}

const drivers: Array<[string, () => StoreSpec]> = [
  ['file', () => ({ driver: 'file', location: join(tempDir(), 'store') })],
  ['sqlite', () => ({ driver: 'sqlite', location: join(tempDir(), 'store.db') })],
];

// The drivers run side by side: the time goes into starting children, not into CPU.
describe.concurrent.each(drivers)('crash safety: %s', (driver, makeSpec) => {
  it(
    `keeps every resolved append across ${KILLS_PER_DRIVER} SIGKILLs`,
    async () => {
      const spec = makeSpec();
      const seed = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
      const next = random(seed);
      let everResolved = 0;
      let unreported = 0;
      for (let kill = 0; kill < KILLS_PER_DRIVER; kill++) {
        const delayMs = 20 + Math.floor(next() * 131);
        const run = await runUntilKilled(spec, seed + kill, delayMs);
        const context = `${driver}, seed ${seed}, kill ${kill} after ${delayMs} ms`;
        expect(run.signal, `${context}: the child exited on its own:\n${run.stderr}`).toBe('SIGKILL');

        const store = await openSpec(spec);
        try {
          const entries = await store.read(CONVERSATION);
          expect(await store.head(CONVERSATION), context).toBe(entries.length);
          entries.forEach((entry, seq) => {
            expect(crashEntryProblem(entry, seq), context).toBeUndefined();
          });
          // Whole batches only: the last stored entry ends its batch.
          const last = entries[entries.length - 1];
          if (last) {
            const { size, index } = last.metadata as unknown as { size: number; index: number };
            expect(index, `${context}: a partial batch is stored`).toBe(size - 1);
          }
          for (const [first, size] of run.resolved) {
            expect(first + size, `${context}: a resolved append is missing`).toBeLessThanOrEqual(
              entries.length,
            );
          }
          const reported = run.resolved.at(-1);
          if (reported && reported[0] + reported[1] < entries.length) unreported++;
          everResolved += run.resolved.length;
        } finally {
          await store.close();
        }
      }
      // The kills must have happened while appending, not before the first append.
      expect(everResolved).toBeGreaterThan(KILLS_PER_DRIVER);
      console.log(
        `crash ${driver}: ${KILLS_PER_DRIVER} kills, ${everResolved} resolved appends checked, ` +
          `${unreported} kills after a commit but before its report (seed ${seed})`,
      );
    },
    KILLS_PER_DRIVER * 20_000,
  );
});
