import { evaluateRuns } from './src/eval/tau-bench-eval.js';
import { readTauBenchFile } from './src/eval/tau-bench-file.js';
const runs = await readTauBenchFile('/work/shared/data/tau-bench/airline-gpt4o.json');
for (const format of ['openai', 'anthropic'] as const) {
  for (const manager of [{}, { protectTask: false }]) {
    const r = await evaluateRuns(runs, { budgetRatio: 0.3, format, manager } as any);
    const s = r.summary;
    console.log(format, JSON.stringify(manager), `kept ${s.keptOfLost}/${s.lostByTruncation}`, 'fail', s.contextkit.failures, 'valid', s.contextkit.valid, 'within', s.contextkit.withinBudget, 'of', s.compared);
  }
}
