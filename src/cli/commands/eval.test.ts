import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type CliRun, runCli } from '../../../test/support/run-cli.js';
import { hasTauBench, TAU_BENCH_PATH } from '../../../test/support/tau-bench.js';
import { type EvalResult, evaluateRuns } from '../../eval/tau-bench-eval.js';
import { readTauBenchFile } from '../../eval/tau-bench-file.js';

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const _RUN = join(ROOT, 'src/cli/run.ts');
const _TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const FIXTURE = join(ROOT, 'test/fixtures/eval/three-runs.json');

type Run = CliRun;

const cli = (args: string[]): Promise<Run> => runCli(args);

function expectUsageError(run: Run, code: number, pattern: RegExp): void {
  expect(run.code).toBe(code);
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^contextkit: /);
  expect(lines[0]).toMatch(pattern);
  expect(run.stdout).toBe('');
}

if (!hasTauBench()) console.log(`contextkit eval on the real runs skipped: ${TAU_BENCH_PATH} is absent`);

describe('contextkit eval', () => {
  it('reports both views side by side, the overflows apart, and the goal, with progress on stderr', async () => {
    const run = await cli(['eval', FIXTURE, '--budget-ratio', '0.3']);
    expect(run.code).toBe(0);
    const out = run.stdout;
    expect(out).toMatch(
      /^eval: 3 runs from .*three-runs\.json; budget 30% of each run \(exact \(o200k_base\) for gpt-4o\)/,
    );
    expect(out).toContain(
      'compared: 2 runs; overflow: 1 run whose system prompt and latest request alone exceed',
    );
    expect(out).toMatch(/valid \(validateRequest\)\s+2\/2\s+2\/2/);
    expect(out).toMatch(/within budget\s+2\/2\s+2\/2/);
    expect(out).toMatch(/of the \d+ present facts truncation loses, contextkit keeps \d+ \(\d+\.\d%\)/);
    expect(out).toMatch(/contextkit compacted \d+ runs?: /);
    expect(out.trimEnd().split('\n').at(-1)).toMatch(
      /^goal at R = 0\.3, offline: every view valid \(yes\) and within budget \(yes\), ≥ 60% of what truncation loses kept \(\d+\.\d%\): (PASS|MISS)$/,
    );
    expect(run.stderr).toContain('eval: 3/3 runs (100%)');
    expect(run.stderr).not.toMatch(/contextkit:/);
  });

  it('prints with --json exactly what evaluateRuns gives, in the format and strategy asked for', async () => {
    const run = await cli([
      'eval',
      FIXTURE,
      '-r',
      '40%',
      '--format',
      'anthropic',
      '--strategy',
      'truncate',
      '--json',
    ]);
    expect(run.code).toBe(0);
    const printed = JSON.parse(run.stdout) as EvalResult;
    const expected = await evaluateRuns(await readTauBenchFile(FIXTURE), {
      budgetRatio: 0.4,
      format: 'anthropic',
      strategy: 'truncate',
    });
    expect(printed.runs).toHaveLength(3);
    expect(printed.summary).toMatchObject({
      budgetRatio: 0.4,
      format: 'anthropic',
      model: 'claude-sonnet-4-5',
      strategy: 'truncate',
    });
    // Everything but the timing of each compaction is deterministic.
    const untimed = (r: EvalResult) => ({
      summary: r.summary,
      runs: r.runs.map((x) => ({ ...x, compaction: x.compaction && { ...x.compaction, durationMs: 0 } })),
    });
    expect(untimed(printed)).toEqual(JSON.parse(JSON.stringify(untimed(expected))));
  });

  it('counts with the model asked for, and warns when it is not in the catalog', async () => {
    const known = await cli(['eval', FIXTURE, '-r', '0.5', '--model', 'gpt-4o-mini', '--json']);
    expect(known.code).toBe(0);
    expect((JSON.parse(known.stdout) as EvalResult).summary.model).toBe('gpt-4o-mini');
    const unknown = await cli(['eval', FIXTURE, '-r', '0.5', '--model', 'my-model', '--json']);
    expect(unknown.code).toBe(0);
    expect(unknown.stderr).toContain(`contextkit: warning: model "my-model" is not in the catalog`);
    expect((JSON.parse(unknown.stdout) as EvalResult).summary.model).toBe('gpt-4o');
  });

  it('refuses a bad command line with one line and exit code 2', async () => {
    expectUsageError(
      await cli(['eval', FIXTURE]),
      2,
      /required option '-r, --budget-ratio <r>' not specified/,
    );
    for (const ratio of ['0', '1.5', 'abc']) {
      expectUsageError(
        await cli(['eval', FIXTURE, '--budget-ratio', ratio]),
        2,
        /expected a share of each run above 0 and at most 1 \(e\.g\. 0\.3 or 30%\)/,
      );
    }
    expectUsageError(await cli(['eval', FIXTURE, '-r', '0.3', '--format', 'gemini']), 2, /gemini/);
    expectUsageError(await cli(['eval', FIXTURE, '-r', '0.3', '--strategy', 'drop']), 2, /drop/);
  });

  it('refuses input that is not a tau-bench file with one line naming the file and exit code 1', async () => {
    expectUsageError(
      await cli(['eval', join(ROOT, 'nope.json'), '-r', '0.3']),
      1,
      /nope\.json: no such file$/,
    );
    const conversation = join(ROOT, 'test/fixtures/cli/openai-session.json');
    expectUsageError(
      await cli(['eval', conversation, '-r', '0.3']),
      1,
      /openai-session\.json: \[0\]\.task_id: expected a number/,
    );
  });
});

describe.skipIf(!hasTauBench())('contextkit eval on the real tau-bench runs', () => {
  it('gives at R = 0.3 the figures evaluateRuns gives, and the same verdict', async () => {
    const [json, text] = await Promise.all([
      cli(['eval', TAU_BENCH_PATH, '--budget-ratio', '0.3', '--json']),
      cli(['eval', TAU_BENCH_PATH, '--budget-ratio', '0.3']),
    ]);
    expect(json.code).toBe(0);
    const printed = JSON.parse(json.stdout) as EvalResult;
    const expected = await evaluateRuns(await readTauBenchFile(TAU_BENCH_PATH), { budgetRatio: 0.3 });
    expect(printed.summary).toEqual(JSON.parse(JSON.stringify(expected.summary)));
    expect(text.code).toBe(0);
    expect(text.stdout.trimEnd().split('\n').at(-1)).toMatch(
      expected.summary.goal.met ? /: PASS$/ : /: MISS$/,
    );
  }, 60_000);
});
