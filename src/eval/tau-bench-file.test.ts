import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { hasTauBench, loadTauBench, TAU_BENCH_PATH } from '../../test/support/tau-bench.js';
import { parseTauBench, readTauBenchFile, TauBenchFileError } from './tau-bench-file.js';

const FIXTURE = fileURLToPath(new URL('../../test/fixtures/eval/three-runs.json', import.meta.url));

if (!hasTauBench()) console.log(`real tau-bench file checks skipped: ${TAU_BENCH_PATH} is absent`);

const run = (traj: unknown, actions: unknown = []) => ({ task_id: 7, traj, info: { task: { actions } } });

describe('readTauBenchFile', () => {
  it('reads the runs with their messages and the ground-truth facts present in them', async () => {
    const runs = await readTauBenchFile(FIXTURE);
    expect(runs.map((r) => [r.taskId, r.trial, r.reward])).toEqual([
      [1, 0, 1],
      [2, 1, 1],
      [3, 0, 0],
    ]);
    const first = runs[0]!;
    expect(first.messages[0]).toMatchObject({ role: 'system' });
    // The certificate of 150 was never reached in the run: a fact, but not a present one.
    expect(first.facts).toEqual([
      'QX7Z2A',
      'HAT512',
      '2024-06-11',
      'credit_card_5550123',
      'noah_berg_1234',
      '150',
    ]);
    expect(first.presentFacts).toEqual(first.facts.slice(0, 5));
  });

  it('names the file when it is missing', async () => {
    await expect(readTauBenchFile('/nonexistent/runs.json')).rejects.toThrow(
      /^\/nonexistent\/runs\.json: no such file$/,
    );
  });
});

describe('parseTauBench', () => {
  it('says where a run is malformed, with the source name', () => {
    const bad = (value: unknown) => () => parseTauBench(JSON.stringify(value), 'runs.json');
    expect(bad({ runs: [] })).toThrow('runs.json: the top level: expected an array');
    expect(bad([{ traj: [] }])).toThrow('runs.json: [0].task_id: expected a number');
    expect(bad([run([{ role: 'user', content: 'hi' }], [{ name: 'x' }])])).toThrow(
      'runs.json: [0].info.task.actions[0].kwargs: expected an object',
    );
    expect(bad([run([])])).toThrow('runs.json: [0].traj: expected at least one message');
    expect(
      bad([
        run([
          { role: 'user', content: 'hi' },
          { role: 'wizard', content: 'x' },
        ]),
      ]),
    ).toThrow(/^runs\.json: \[0\]\.traj\[1\]\.role: /);
    expect(() => parseTauBench('[{', 'runs.json')).toThrow(/^runs\.json: invalid JSON/);
    expect(bad({})).toThrow(TauBenchFileError);
  });

  it('accepts a run without trial and reward, and one whose task needs no action', () => {
    const [parsed] = parseTauBench(JSON.stringify([run([{ role: 'user', content: 'hi' }])]), 'x');
    expect(parsed).toMatchObject({ taskId: 7, trial: 0, reward: 0, facts: [], presentFacts: [] });
  });
});

describe.skipIf(!hasTauBench())('the real tau-bench file', () => {
  it('gives the same 200 runs and facts as the independent reader of test/support', async () => {
    const ours = await readTauBenchFile(TAU_BENCH_PATH);
    const reference = loadTauBench();
    expect(ours).toHaveLength(200);
    ours.forEach((r, i) => {
      const ref = reference[i]!;
      expect([r.taskId, r.trial, r.reward]).toEqual([ref.taskId, ref.trial, ref.reward]);
      expect(r.messages).toEqual(ref.openai);
      expect(r.facts).toEqual(ref.facts);
      expect(r.presentFacts).toEqual(ref.presentFacts);
    });
  });
});
