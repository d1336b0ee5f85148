/**
 * An agent loop on DBOS, its workers SIGKILLed mid-turn (issue 33 items 2 and 4): the agent of
 * examples/dbos-agent.ts runs its turns in worker processes (test/support/dbos-worker.ts) that are
 * killed after a message's add committed but before DBOS recorded the step's result, before an add,
 * and at moments the worker does not choose; DBOS recovers each pending workflow in the next
 * process, whose steps re-add their messages under the same ids. Every message is stored exactly
 * once, and the stored conversation and the next view are byte for byte those of an
 * uninterrupted run. The same stored state gives the same view bytes in two fresh processes.
 *
 * DBOS, from its documentation ("How Workflows Work", docs.dbos.dev/explanations/how-workflows-work):
 * an interrupted workflow restarts from the beginning with its saved inputs; a step whose output
 * is recorded is not run again, the first step without one is, so a step runs at least once.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUDGET, deterministicReply, TOOLS, withDatabase } from '../examples/dbos-agent.js';
import { ContextManager } from '../src/manager.js';
import { openPostgresStore } from '../src/stores/postgres.js';
import type { WorkerConfig } from './support/dbos-worker.js';
import { type FakeOpenAIServer, startFakeOpenAI } from './support/fake-openai-server.js';
import { DATABASE_URL, missing, skipFor } from './support/requirements.js';

const WORKER = join(import.meta.dirname, 'support', 'dbos-worker.ts');
const QUESTIONS = ['Where is order 1042?', 'Refunds this week?', 'Late shipments?', 'Open disputes?'];
const suffix = randomBytes(4).toString('hex');
const SYSTEM_DB = `contextkit_dbos_${suffix}`;
const SCHEMA = `ckdbos_${suffix}`;

interface WorkerRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  lines: string[];
  stderr: string;
}

/** Runs a worker; `killAfterAdds`: the parent SIGKILLs it once it reported that many stored adds. */
function runWorker(config: WorkerConfig, killAfterAdds?: number): Promise<WorkerRun> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(config)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let partial = '';
    let stderr = '';
    let adds = 0;
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        if (line.startsWith('event after-add') && line.endsWith(' false')) adds++;
        // Killed while it goes on: the kill lands wherever the worker is by then.
        if (killAfterAdds !== undefined && adds >= killAfterAdds) child.kill('SIGKILL');
      }
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, lines, stderr }));
  });
}

/** stderr without the pg driver's deprecation notice, which DBOS's own pool raises. */
function realErrors(stderr: string): string {
  return stderr
    .split('\n')
    .filter((l) => l !== '' && !/DeprecationWarning: Calling client\.query\(\)|--trace-deprecation/.test(l))
    .join('\n');
}

/** The conversation's stored entries (message and the id's step part) and its next view, from a fresh manager. */
async function storedState(
  conversationId: string,
): Promise<{ entries: string[]; ids: string[]; view: string }> {
  const store = await openPostgresStore(DATABASE_URL as string, { schema: SCHEMA });
  const manager = new ContextManager({ store, conversationId, model: 'gpt-4o' });
  try {
    const all = await manager.getEntries();
    const ids = all.map((e) => e.id ?? '');
    const entries = all.map((e) =>
      JSON.stringify({ message: e.message, step: (e.id ?? '').slice(conversationId.length) }),
    );
    const view = JSON.stringify(await manager.getMessagesForRequest({ tokenBudget: BUDGET, tools: TOOLS }));
    return { entries, ids, view };
  } finally {
    await manager.close();
  }
}

describe('an agent loop on DBOS, workers SIGKILLed mid-turn', skipFor(missing.postgres), () => {
  let admin: pg.Client;
  let server: FakeOpenAIServer;
  const config = (conversationId: string, extra: Partial<WorkerConfig> = {}): WorkerConfig => ({
    mode: 'run',
    databaseUrl: DATABASE_URL as string,
    systemDatabaseUrl: withDatabase(DATABASE_URL as string, SYSTEM_DB),
    schema: SCHEMA,
    conversationId,
    baseURL: server.baseURL,
    questions: QUESTIONS,
    ...extra,
  });

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${SYSTEM_DB}`);
    server = await startFakeOpenAI({ reply: deterministicReply() });
  });
  afterAll(async () => {
    await server?.close();
    if (!admin) return;
    await admin.query(`DROP DATABASE IF EXISTS ${SYSTEM_DB} WITH (FORCE)`);
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await admin.end();
  });

  it('examples/dbos-agent.ts runs its turns and reports what it stored', async () => {
    const { code, stdout, stderr } = await new Promise<{
      code: number | null;
      stdout: string;
      stderr: string;
    }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', join(import.meta.dirname, '..', 'examples', 'dbos-agent.ts')],
        { timeout: 120_000, env: { ...process.env, NO_COLOR: '1' } },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
    expect(realErrors(stderr)).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/18 messages stored \(18 ids\), next view \d+ messages, 9 model calls, 0 refused/);
  }, 150_000);

  it('every message is stored once and the next view is the uninterrupted run’s, byte for byte', async () => {
    // The uninterrupted run.
    const clean = await runWorker(config('clean'));
    expect(realErrors(clean.stderr)).toBe('');
    expect(clean.code).toBe(0);
    expect(clean.lines).toContain('done');
    const cleanCalls = server.requests.length;

    // The same turns, the worker killed at chosen points (its own SIGKILL) and at moments it does not choose.
    const c = 'crashed';
    const crashes: Array<WorkerConfig['crash'] | { killAfterAdds: number }> = [
      { idPrefix: `${c}/turn-0/user`, phase: 'after-add' },
      { idPrefix: `${c}/turn-0/model-0`, phase: 'after-add' },
      { idPrefix: `${c}/turn-0/tool-0-`, phase: 'after-add' },
      { idPrefix: `${c}/turn-1/model-1`, phase: 'before-add' },
      { idPrefix: `${c}/turn-1/model-2`, phase: 'after-add' },
      { killAfterAdds: 2 },
      { idPrefix: `${c}/turn-3/model-2`, phase: 'after-add' },
    ];
    let kills = 0;
    let recoveries = 0;
    let duplicateAdds = 0;
    const runs: WorkerRun[] = [];
    for (const crash of [...crashes, undefined]) {
      const run =
        crash !== undefined && 'killAfterAdds' in crash
          ? await runWorker(config(c), crash.killAfterAdds)
          : await runWorker(config(c, crash ? { crash } : {}));
      runs.push(run);
      expect(realErrors(run.stderr)).toBe('');
      recoveries += run.lines.filter((l) => l.startsWith('recovering ')).length;
      duplicateAdds += run.lines.filter(
        (l) => (l.startsWith('event after-add') && l.endsWith(' true')) || l.startsWith('event found'),
      ).length;
      if (crash === undefined) {
        expect(run.code).toBe(0);
        expect(run.lines).toContain('done');
      } else {
        // Killed where it was told to, before the conversation was done.
        expect(run.signal).toBe('SIGKILL');
        expect(run.lines).not.toContain('done');
        kills++;
      }
    }
    const crashedCalls = server.requests.length - cleanCalls;

    const want = await storedState('clean');
    const got = await storedState(c);
    // A message stored twice: the same id, or the same message (every message of a run differs).
    const messages = got.entries.map((e) => JSON.stringify((JSON.parse(e) as { message: unknown }).message));
    const duplicates = Math.max(
      got.ids.length - new Set(got.ids).size,
      messages.length - new Set(messages).size,
    );
    console.log(
      `DBOS crash test: ${QUESTIONS.length} turns, ${kills} crashes (SIGKILL), ${recoveries} workflows recovered by DBOS, ` +
        `${duplicateAdds} steps run again found their message stored, ${duplicates} duplicates stored, ` +
        `${got.entries.length} messages (uninterrupted: ${want.entries.length}), model calls ${crashedCalls} (uninterrupted: ${cleanCalls})`,
    );
    expect(kills).toBe(crashes.length);
    // A kill the worker does not choose may land between two turns, with no workflow pending.
    expect(recoveries).toBeGreaterThanOrEqual(crashes.filter((k) => k && !('killAfterAdds' in k)).length);
    expect(duplicates).toBe(0);
    expect(server.requests.filter((r) => r.problems.length > 0)).toEqual([]);
    expect(got.entries).toEqual(want.entries);
    expect(got.view).toBe(want.view);

    // Item 4: the same stored state gives the same view bytes in a fresh process.
    const viewed = await runWorker(config(c, { mode: 'view' }));
    expect(realErrors(viewed.stderr)).toBe('');
    expect(viewed.lines[0]).toBe(got.view);
  }, 240_000);
});
