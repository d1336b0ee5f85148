import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { hasTauBench, TAU_BENCH_PATH } from '../../test/support/tau-bench.js';
import { ConfigurationError } from '../errors.js';
import { getModelInfo } from '../tokens/catalog.js';
import { createTokenCounter } from '../tokens/counter.js';
import type { ModelInfo } from '../tokens/types.js';
import { convertMessages } from '../wire/convert.js';
import { type EvalResult, evaluateRuns, GOAL_BUDGET_RATIO, GOAL_KEPT_SHARE } from './tau-bench-eval.js';
import { readTauBenchFile, type TauBenchRun } from './tau-bench-file.js';

const FIXTURE = fileURLToPath(new URL('../../test/fixtures/eval/three-runs.json', import.meta.url));
const FORMATS = ['openai', 'anthropic'] as const;

if (!hasTauBench()) console.log(`the goal on the real runs is not checked: ${TAU_BENCH_PATH} is absent`);

/** What every evaluation must satisfy whatever its figures: sets nested, totals adding up. */
function expectConsistent(result: EvalResult): void {
  const { summary, runs } = result;
  let lost = 0;
  let kept = 0;
  for (const r of runs) {
    expect(r.budget).toBe(Math.floor(summary.budgetRatio * r.tokens));
    expect(r.overflow).toBe(r.floorTokens > r.budget);
    if (r.overflow) {
      expect(r.contextkit).toBeNull();
      expect(r.truncation).toBeNull();
      continue;
    }
    const present = new Set(r.presentFacts);
    const truncationHeld = new Set(r.truncation!.factsHeld);
    for (const fact of r.lostByTruncation) {
      expect(present.has(fact)).toBe(true);
      expect(truncationHeld.has(fact)).toBe(false);
    }
    for (const fact of r.keptOfLost) {
      expect(r.lostByTruncation).toContain(fact);
      expect(r.contextkit!.factsHeld).toContain(fact);
    }
    lost += r.lostByTruncation.length;
    kept += r.keptOfLost.length;
  }
  expect(summary.runs).toBe(runs.length);
  expect(summary.overflows).toBe(runs.filter((r) => r.overflow).length);
  expect(summary.compared + summary.overflows).toBe(summary.runs);
  expect([summary.lostByTruncation, summary.keptOfLost]).toEqual([lost, kept]);
  expect(summary.keptShare).toBe(lost === 0 ? null : kept / lost);
}

describe('evaluateRuns on the synthetic runs', () => {
  it.each(FORMATS)(
    'in %s format at R = 0.3: the overflowing run apart, both views valid and within budget',
    async (format) => {
      const runs = await readTauBenchFile(FIXTURE);
      const done: number[] = [];
      const result = await evaluateRuns(runs, { budgetRatio: 0.3, format, onRun: (n) => done.push(n) });
      expectConsistent(result);
      expect(done).toEqual([1, 2, 3]);
      const { summary } = result;
      // Run 2 has a long system prompt: at 30% it alone is over the budget.
      expect(result.runs.map((r) => r.overflow)).toEqual([false, true, false]);
      expect(summary).toMatchObject({ compared: 2, overflows: 1, format, strategy: 'summarize' });
      expect(summary.model).toBe(format === 'openai' ? 'gpt-4o' : 'claude-sonnet-4-5');
      expect(summary.contextkit).toMatchObject({ views: 2, valid: 2, withinBudget: 2, failures: 0 });
      expect(summary.truncation).toMatchObject({ views: 2, valid: 2, withinBudget: 2 });
      expect(summary.goal.allValid && summary.goal.allWithinBudget).toBe(true);

      // Run 1 acted on its arguments early and then talked of other things: truncation loses them.
      // contextkit keeps the task (the first user message, which states them all) in every view,
      // so all four are still there, where the user said them; the facts block does not repeat them.
      const first = result.runs[0]!;
      const stated = ['QX7Z2A', 'HAT512', '2024-06-11', 'noah_berg_1234'];
      expect(first.lostByTruncation).toEqual(expect.arrayContaining(stated));
      expect(first.keptOfLost).toEqual(expect.arrayContaining(stated));
      for (const value of stated) expect(first.compaction?.factValues).not.toContain(value);

      // Run 3 ends inside the booking call, which holds every argument: the floor keeps them all.
      const third = result.runs[2]!;
      expect(third.lostByTruncation).toEqual([]);
      expect(third.contextkit!.factsHeld).toEqual(third.presentFacts);
    },
  );

  it('counts tokens with the counter of the model asked for, in the format asked for', async () => {
    const runs = await readTauBenchFile(FIXTURE);
    const { runs: results } = await evaluateRuns(runs.slice(0, 1), {
      budgetRatio: 0.5,
      format: 'anthropic',
      model: 'gpt-4o',
    });
    const counter = createTokenCounter(getModelInfo('gpt-4o') as ModelInfo);
    const messages = convertMessages(runs[0]!.messages, 'anthropic');
    expect(results[0]!.tokens).toBe(await counter.measure(messages, { format: 'anthropic' }));
    expect(results[0]!.messages).toBe(messages.length);
  });

  it('with nothing to lose (the whole run fits), the share is null and the goal holds vacuously', async () => {
    const runs = await readTauBenchFile(FIXTURE);
    const result = await evaluateRuns(runs, { budgetRatio: 1 });
    expectConsistent(result);
    expect(result.summary).toMatchObject({ overflows: 0, lostByTruncation: 0, keptShare: null });
    expect(result.summary.truncation.factsHeld).toBe(result.summary.presentFacts);
    expect(result.summary.goal.met).toBe(true);
  });

  it('runs the truncating strategy when asked, which summarizes nothing', async () => {
    const runs = await readTauBenchFile(FIXTURE);
    const result = await evaluateRuns(runs, { budgetRatio: 0.3, strategy: 'truncate' });
    expectConsistent(result);
    expect(result.summary.strategy).toBe('truncate');
    for (const r of result.runs) if (r.compaction) expect(r.compaction.summarized).toBe(0);
  });

  it('refuses a ratio outside (0, 1] and a model not in the catalog', async () => {
    const runs: TauBenchRun[] = await readTauBenchFile(FIXTURE);
    for (const budgetRatio of [0, -0.1, 1.5, Number.NaN]) {
      await expect(evaluateRuns(runs, { budgetRatio })).rejects.toThrow(ConfigurationError);
    }
    await expect(evaluateRuns(runs, { budgetRatio: 0.3, model: 'no-such-model' })).rejects.toThrow(
      /model: "no-such-model" is not in the model catalog/,
    );
  });
});

describe.skipIf(!hasTauBench())(`issue 4's goal on the 200 real runs at R = ${GOAL_BUDGET_RATIO}`, () => {
  const results = new Map<string, Promise<EvalResult>>();
  const evaluate = (format: (typeof FORMATS)[number]) => {
    let result = results.get(format);
    if (!result) {
      result = readTauBenchFile(TAU_BENCH_PATH).then((runs) =>
        evaluateRuns(runs, { budgetRatio: GOAL_BUDGET_RATIO, format }),
      );
      results.set(format, result);
    }
    return result;
  };

  it.each(FORMATS)('%s: every contextkit view is valid and within its budget', async (format) => {
    const result = await evaluate(format);
    expectConsistent(result);
    const { summary } = result;
    console.info(
      `tau-bench ${format} R=${GOAL_BUDGET_RATIO}: ${summary.compared} compared, ${summary.overflows} overflow; ` +
        `truncation loses ${summary.lostByTruncation} present facts, contextkit keeps ${summary.keptOfLost}`,
    );
    expect(summary.compared).toBeGreaterThan(0);
    expect(summary.contextkit.failures).toBe(0);
    expect(summary.contextkit.valid).toBe(summary.compared);
    expect(summary.contextkit.withinBudget).toBe(summary.compared);
  });

  // Issue 4's goal was set on views that dropped the task; issue 30 keeps the task (and the current
  // turn) in every default view, an agent's need a facts figure may not outvote. So the goal is
  // checked with the task left to compaction, as it was set, and the default's price for the task
  // is bounded: on these runs the task's tokens are the facts block's room at 30% budgets.
  const DEFAULT_PRICE = 0.03;
  const withoutTask = new Map<string, Promise<EvalResult>>();
  const evaluateWithoutTask = (format: (typeof FORMATS)[number]) => {
    let result = withoutTask.get(format);
    if (!result) {
      result = readTauBenchFile(TAU_BENCH_PATH).then((runs) =>
        evaluateRuns(runs, { budgetRatio: GOAL_BUDGET_RATIO, format, manager: { protectTask: false } }),
      );
      withoutTask.set(format, result);
    }
    return result;
  };

  it.each(FORMATS)(
    `%s: at least ${GOAL_KEPT_SHARE * 100}% of the present facts truncation loses are still in the view (protectTask off, as the goal was set)`,
    async (format) => {
      const result = await evaluateWithoutTask(format);
      expectConsistent(result);
      const { summary } = result;
      expect(summary.lostByTruncation).toBeGreaterThan(0);
      const c = summary.compactions;
      expect(
        summary.keptShare,
        `kept ${summary.keptOfLost} of the ${summary.lostByTruncation} facts truncation loses; facts blocks hold ` +
          `${c.factsKept} facts over ${c.runs} compactions, ${c.factsOmitted} left out for room (in ${c.cappedRuns} runs)`,
      ).toBeGreaterThanOrEqual(GOAL_KEPT_SHARE);
    },
  );

  it.each(FORMATS)(
    `%s: the default keeps the task in every view and gives at most ${DEFAULT_PRICE * 100} points of that share for it`,
    async (format) => {
      const [byDefault, without] = await Promise.all([evaluate(format), evaluateWithoutTask(format)]);
      const runs = await readTauBenchFile(TAU_BENCH_PATH);
      const { summary } = byDefault;
      console.info(
        `tau-bench ${format} R=${GOAL_BUDGET_RATIO}: facts kept by default ${summary.keptOfLost}/${summary.lostByTruncation}, ` +
          `with protectTask off ${without.summary.keptOfLost}/${without.summary.lostByTruncation}`,
      );
      for (const r of byDefault.runs) {
        if (r.overflow || r.contextkit === null) continue;
        // The task's facts are in the view whenever the run's task holds them.
        const task = convertMessages(runs[r.index]!.messages, format).find(
          (m) => m.role === 'user' && typeof m.content === 'string',
        );
        if (task === undefined) continue;
        for (const fact of r.presentFacts) {
          if (String(task.content).includes(fact)) expect(r.contextkit.factsHeld).toContain(fact);
        }
      }
      expect(summary.keptShare!).toBeGreaterThanOrEqual(without.summary.keptShare! - DEFAULT_PRICE);
    },
  );
});
