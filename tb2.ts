import { evaluateRuns } from './src/eval/tau-bench-eval.js';
import { readTauBenchFile } from './src/eval/tau-bench-file.js';
const runs = await readTauBenchFile('/work/shared/data/tau-bench/airline-gpt4o.json');
const r = await evaluateRuns(runs, { budgetRatio: 0.3, format: 'openai', manager: JSON.parse(process.env.M ?? '{}') } as any);
for (const x of r.runs) if (!x.overflow) console.log(x.index, x.budget, x.keptOfLost.length, x.lostByTruncation.length, x.contextkit?.tokens, x.contextkit?.messages, x.compaction ? `drop${x.compaction.dropped} sum${x.compaction.summarized} facts${x.compaction.factsKept}/${x.compaction.factsOmitted}` : '');
