import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliRun, expectOneLineError, REPO_ROOT, runCli } from '../../../test/support/run-cli.js';
import { hasTauBench, TAU_BENCH_PATH } from '../../../test/support/tau-bench.js';
import type { ChatEvalResult } from '../../eval/chat-eval.js';
import { type EvalResult, evaluateRuns } from '../../eval/tau-bench-eval.js';
import { readTauBenchFile } from '../../eval/tau-bench-file.js';

const FIXTURE = join(REPO_ROOT, 'test/fixtures/eval/three-runs.json');

type Run = CliRun;

const cli = (args: string[]): Promise<Run> => runCli(args);

/** A usage error: one line on stderr (see `expectOneLineError`), nothing on stdout. */
function expectUsageError(run: Run, code: number, pattern: RegExp): void {
  expectOneLineError(run, code, pattern);
  expect(run.stdout).toBe('');
}

if (!hasTauBench()) console.log(`contextkit eval on the real runs skipped: ${TAU_BENCH_PATH} is absent`);

describe('contextkit eval', () => {
  it('reports both views side by side and the overflows apart, with no verdict, with progress on stderr', async () => {
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
    expect(out).not.toMatch(/PASS|MISS|goal|issue/);
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
      await cli(['eval', join(REPO_ROOT, 'nope.json'), '-r', '0.3']),
      1,
      /nope\.json: no such file$/,
    );
    // Neither runs nor a conversation: the error says where, and what eval reads (issue 23, item 13).
    const dir = await mkdtemp(join(tmpdir(), 'ck-eval-odd-'));
    try {
      const odd = join(dir, 'odd.json');
      await writeFile(odd, JSON.stringify([{ id: 1 }]));
      expectUsageError(
        await cli(['eval', odd, '-r', '0.3']),
        1,
        /odd\.json: \[0\]\.task_id: expected a number; eval reads tau-bench runs .* or any conversation/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // An ordinary agent run is not refused: it is measured (see below).
    const conversation = join(REPO_ROOT, 'test/fixtures/cli/openai-session.json');
    const measured = await cli(['eval', conversation, '-r', '0.5']);
    expect(measured.stderr).not.toMatch(/task_id/);
  });

  it('exits 1 with one line when no run can be compared, instead of a report', async () => {
    const run = await cli(['eval', FIXTURE, '-r', '0.001']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.trimEnd().split('\n').at(-1)).toMatch(
      /^contextkit: eval: nothing could be compared: all 3 runs of .*three-runs\.json overflow at a budget of 0\.001/,
    );
  });
});

describe('contextkit eval on chats', () => {
  /** A small synthetic chat: early facts, then enough small talk to push them out at R = 0.3. */
  function syntheticChat(): object {
    const messages: Array<{ role: 'user' | 'assistant'; content: string }> = [
      {
        role: 'user',
        content:
          '[9:00 am on 3 March, 2024] Ana: I adopted a grey cat named Pixel from the shelter last week.',
      },
      {
        role: 'assistant',
        content:
          '[9:01 am on 3 March, 2024] Ben: Nice! I am moving to Lisbon in June for a job at the aquarium.',
      },
    ];
    for (let i = 0; i < 60; i++) {
      messages.push({
        role: 'user',
        content: `[10:00 am on ${i + 4} March, 2024] Ana: Round ${i}, how was your day? Mine was fine, nothing new.`,
      });
      messages.push({
        role: 'assistant',
        content: `[10:01 am on ${i + 4} March, 2024] Ben: Round ${i} here, fine as well, thanks for asking.`,
      });
    }
    return {
      messages,
      qa: [
        { question: 'What is the name of the cat Ana adopted?', answer: 'Pixel', evidence: [0] },
        { question: 'Where is Ben moving in June?', answer: 'Lisbon', evidence: [1] },
      ],
    };
  }

  it('reports answers in the view and through recall, beside truncation, for a folder or one file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ck-chat-eval-'));
    try {
      await writeFile(join(dir, '00.json'), JSON.stringify(syntheticChat()));
      for (const path of [dir, join(dir, '00.json')]) {
        const run = await cli(['eval', path, '-r', '0.3']);
        expect(run.code).toBe(0);
        expect(run.stdout).toMatch(/^eval: 1 chat \(122 messages, 2 questions\) from /);
        expect(run.stdout).toContain('compared: 1 chat, 2 questions whose answer the chat states');
        expect(run.stdout).toMatch(/answers in the view\s+\d\/2 \(\d+\.\d%\)\s+0\/2 \(0\.0%\)/);
        expect(run.stdout).toMatch(
          /answers reached by recall \(top 5, ≤ 1,000 tokens\)\s+2\/2 \(100\.0%\)\s+– \(no lookup\)/,
        );
        expect(run.stdout).toMatch(/within budget\s+1\/1\s+1\/1/);
        expect(run.stdout).not.toMatch(/PASS|MISS/);
      }
      const json = await cli(['eval', dir, '-r', '0.3', '--json']);
      const result = JSON.parse(json.stdout) as ChatEvalResult;
      expect(result.summary.questions).toBe(2);
      expect(result.chats[0]!.truncation.inView).toEqual([]);
      expect(result.chats[0]!.contextkit!.recalled).toEqual([0, 1]);
      const none = await cli(['eval', dir, '-r', '0.001']);
      expect(none.code).toBe(1);
      expect(none.stderr).toMatch(/nothing could be compared/);
      expect(none.stdout).toBe('');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!hasTauBench())('contextkit eval on the real tau-bench runs', () => {
  it('gives at R = 0.3 the figures evaluateRuns gives, and no verdict', async () => {
    const [json, text] = await Promise.all([
      cli(['eval', TAU_BENCH_PATH, '--budget-ratio', '0.3', '--json']),
      cli(['eval', TAU_BENCH_PATH, '--budget-ratio', '0.3']),
    ]);
    expect(json.code).toBe(0);
    const printed = JSON.parse(json.stdout) as EvalResult;
    const expected = await evaluateRuns(await readTauBenchFile(TAU_BENCH_PATH), { budgetRatio: 0.3 });
    expect(printed.summary).toEqual(JSON.parse(JSON.stringify(expected.summary)));
    expect(text.code).toBe(0);
    expect(text.stdout).not.toMatch(/PASS|MISS/);
  }, 60_000);
});

describe('eval on what it was not written for (issue 23, item 13)', () => {
  const session = Array.from({ length: 40 }, (_, i) =>
    i % 2
      ? {
          role: 'assistant',
          content: `Done: order W${4000 + i} moved to /srv/app/releases/r${i}.tar.gz for ana_${i}.`,
        }
      : { role: 'user', content: `Step ${i}: please move order W${4000 + i} to the release folder.` },
  );

  it('measures any conversation: facts of the part truncation drops, found in the view', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ck-eval-run-'));
    try {
      const file = join(dir, 'run.json');
      await writeFile(file, JSON.stringify(session));
      const run = await cli(['eval', file, '--budget-ratio', '0.4', '--json']);
      expect(run.code).toBe(0);
      const result = JSON.parse(run.stdout) as EvalResult;
      expect(result.runs).toHaveLength(1);
      expect(result.runs[0]!.presentFacts.length).toBeGreaterThan(20);
      expect(result.runs[0]!.lostByTruncation.length).toBeGreaterThan(0);
      expect(Array.isArray(result.runs[0]!.keptOfLost)).toBe(true);
      const text = await cli(['eval', file, '--budget-ratio', '0.4']);
      expect(text.stdout).toMatch(/^of the \d+ present facts truncation loses, contextkit keeps \d+/m);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('evaluates a folder of runs, and refuses a folder that mixes chats and runs (issue 34, item 3)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ck-eval-dir-'));
    try {
      await writeFile(join(dir, 'a.json'), JSON.stringify({ messages: session }));
      await writeFile(join(dir, 'b.json'), JSON.stringify(sweAgentRun(30)));
      const run = await cli(['eval', dir, '--budget-ratio', '0.4', '--json']);
      expect(run.code).toBe(0);
      const result = JSON.parse(run.stdout) as EvalResult;
      expect(result.runs).toHaveLength(2);
      expect(result.summary.compared).toBe(2);
      await writeFile(join(dir, 'c.json'), JSON.stringify({ messages: session.slice(0, 2), qa: [] }));
      const mixed = await cli(['eval', dir, '--budget-ratio', '0.4']);
      expect(mixed.code).toBe(1);
      expect(mixed.stderr).toMatch(/holds chats or runs, not both .*c\.json is a chat/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('evaluates an agent run that is one long turn (a SWE-agent trajectory) below its whole size', async () => {
    // Before: every ratio below 1 answered "system prompt and latest request alone exceed it".
    const dir = await mkdtemp(join(tmpdir(), 'ck-eval-swe-'));
    try {
      const file = join(dir, 'swe.json');
      await writeFile(file, JSON.stringify(sweAgentRun(40)));
      for (const ratio of ['0.3', '0.6']) {
        const run = await cli(['eval', file, '--budget-ratio', ratio, '--json']);
        expect(run.code).toBe(0);
        const result = JSON.parse(run.stdout) as EvalResult;
        expect(result.summary.compared).toBe(1);
        expect(result.runs[0]!.contextkit!.valid).toBe(true);
        expect(result.runs[0]!.contextkit!.withinBudget).toBe(true);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * A SWE-agent-shaped trajectory as messages: a system prompt, one task, then only the agent's
 * commands (as tool calls) and their observations, each a file listing or a test log.
 */
function sweAgentRun(steps: number): unknown[] {
  const messages: unknown[] = [
    {
      role: 'system',
      content: 'You are an autonomous programmer working in a repository. Use one command per step.',
    },
    {
      role: 'user',
      content: 'Fix the failing test tests/test_dates.py::test_parse_iso in the astropy repository.',
    },
  ];
  for (let i = 0; i < steps; i++) {
    const id = `call_${i}`;
    const command =
      i % 3 === 0
        ? `open astropy/time/formats.py ${100 + i * 20}`
        : `python -m pytest tests/test_dates.py -k iso_${i}`;
    messages.push({
      role: 'assistant',
      content: `Step ${i}: let me look at this next.`,
      tool_calls: [
        { id, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } },
      ],
    });
    const lines = Array.from({ length: 40 }, (_, k) =>
      i % 3 === 0
        ? `${100 + i * 20 + k}:    value_${i}_${k} = parse_field(raw[${k}], fmt="iso_${k}")`
        : `tests/test_dates.py::test_case_${i}_${k} ${k === 7 ? 'FAILED AssertionError: expected 2024-03-0' + (i % 9) : 'PASSED'}`,
    );
    messages.push({ role: 'tool', tool_call_id: id, content: lines.join('\n') });
  }
  return messages;
}
