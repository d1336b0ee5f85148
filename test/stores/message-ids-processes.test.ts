/**
 * Identified messages across processes (issue 33 item 1): several processes add the same
 * identified messages at once, and writers are SIGKILLed at random moments (between a commit and
 * its acknowledgement among them) and started again, replaying from the first step as a durable
 * engine does. On every shared store: each message stored exactly once, none lost.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { skipFor } from '../support/requirements.js';
import { sharedDrivers } from './fixtures/drivers.js';
import { openSpec, type StoreSpec } from './fixtures/open-store.js';

const CONVERSATION = 'identified processes';
const WRITER = join(import.meta.dirname, 'fixtures', 'identified-writer.ts');
const STEPS = 40;
const PROCESSES = 3;
const KILLS = 4;

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Runs a writer; resolves with its exit code and signal. `kill` SIGKILLs it after that many acks. */
function runWriter(
  spec: StoreSpec,
  killAfter: number | null,
): Promise<{ code: number | null; acks: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(
      process.execPath,
      ['--import', 'tsx', WRITER, JSON.stringify(spec), CONVERSATION, String(STEPS)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let acks = 0;
    let stderr = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      acks += chunk.split('\n').filter((line) => line.startsWith('ack ')).length;
      // Killed as soon as it reports this many: its next add is then in flight, committed or not.
      if (killAfter !== null && acks >= killAfter) child.kill('SIGKILL');
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, acks, stderr }));
  });
}

for (const driver of sharedDrivers(cleanups, [CONVERSATION])) {
  describe(driver.name, skipFor(driver.missing), () => {
    it(`${PROCESSES} processes add the same ${STEPS} identified messages, ${KILLS} of them killed and restarted: each stored once`, async () => {
      const spec = await driver.spec();
      let kills = 0;
      // Each process is killed at a different point, then replays from the start; the last run of each finishes.
      const writer = async (p: number) => {
        for (let run = 0; ; run++) {
          const killAfter = kills < KILLS && run < 2 ? 3 + ((p * 7 + run * 13) % (STEPS - 6)) : null;
          if (killAfter !== null) kills++;
          const result = await runWriter(spec, killAfter);
          if (killAfter === null) {
            expect(result.stderr).toBe('');
            expect(result.code).toBe(0);
            expect(result.acks).toBe(STEPS);
            return;
          }
        }
      };
      await Promise.all(Array.from({ length: PROCESSES }, (_, p) => writer(p)));
      const store = await openSpec(spec);
      try {
        const entries = await store.read(CONVERSATION);
        const ids = entries.map((e) => e.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids.sort()).toEqual(Array.from({ length: STEPS }, (_, i) => `step-${i}`).sort());
        for (const e of entries) expect(e.message.content).toBe(`step ${e.id?.slice(5)}`);
        expect(kills).toBe(KILLS);
      } finally {
        await store.close();
      }
    }, 240_000);
  });
}
