/**
 * `npm run bench [NAME] [options]`: runs one benchmark (default `core`). Each benchmark is one
 * module, loaded only when asked for, so a new one is one entry in `BENCHMARKS`.
 */
import { ensurePeersInstalled } from './peers-install.js';
import { UsageError } from './usage-error.js';

/** The peers benchmark, in its own package (see `ensurePeersInstalled`), loaded by a computed path. */
async function runPeers(args: readonly string[]): Promise<void> {
  ensurePeersInstalled('peers');
  const entry = './peers/run.js';
  const module = (await import(entry)) as { runPeersBenchmark(args: readonly string[]): Promise<void> };
  await module.runPeersBenchmark(args);
}

interface Benchmark {
  /** One line for the list printed on a bad name. */
  summary: string;
  run(args: readonly string[]): Promise<void>;
}

const BENCHMARKS: Record<string, Benchmark> = {
  core: {
    summary: 'agent loop over 1k/10k/100k messages vs recounting trimmers; counting throughput; memory',
    run: async (args) => (await import('./core.js')).runCoreBenchmark(args),
  },
  compaction: {
    summary: 'planning a compaction of 10k messages, truncate vs summarize; per-turn cost between plans',
    run: async (args) => (await import('./compaction.js')).runCompactionBenchmark(args),
  },
  stores: {
    summary: 'appends/s and resume time of 10k/100k messages for every store driver vs the seed JSON file',
    run: async (args) => (await import('./stores.js')).runStoresBenchmark(args),
  },
  waits: {
    summary:
      'counting any text vs gpt-tokenizer; the longest timer wait of a cold first request at 100k messages; resume',
    run: async (args) => (await import('./waits.js')).runWaitsBenchmark(args),
  },
  cold: {
    summary:
      'cold first request and resume at 100k messages with counts kept in the store; round trips per steady turn on Redis/Postgres; SQLite appends with recall',
    run: async (args) => (await import('./cold.js')).runColdBenchmark(args),
  },
  peers: {
    summary:
      'contextkit vs LangChain trimMessages, Mastra TokenLimiter, AI SDK pruneMessages, seed baselines',
    run: runPeers,
  },
  agent: {
    summary:
      'a deterministic agent acting on the views: tasks finished, repeated reads and side effects, constraints lost, injection, billed input',
    run: async (args) => {
      // Mastra's TokenLimiter is one of the contenders; without its package the rest still run.
      try {
        ensurePeersInstalled('agent');
      } catch (err) {
        process.stderr.write(
          `bench agent: ${err instanceof Error ? err.message : String(err)}; Mastra is left out\n`,
        );
      }
      await (await import('./agent/run.js')).runAgentBenchmark(args);
    },
  },
  stateless: {
    summary:
      "a worker's first turn of a stored conversation it never saw (2k/20k/100k, every store) vs reading the view's rows, Mastra and LangChain; heap held",
    run: async (args) => (await import('./stateless.js')).runStatelessBenchmark(args),
  },
  'ahead-workers': {
    summary:
      'summaries prepared ahead on a new manager per turn (loaded, served from the record) vs one long-lived manager: views agreeing, model summaries used',
    run: async (args) => (await import('./ahead-workers.js')).runAheadWorkersBenchmark(args),
  },
  cost: {
    summary:
      'billed input of a long session vs a sliding window and no compaction; the cache-expiry policy on/off',
    run: async (args) => (await import('./cost.js')).runCostBenchmark(args),
  },
  recall: {
    summary:
      'recall latency at 10k/100k messages, index memory vs history, steady turn, answers reachable on the chat set',
    run: async (args) => (await import('./recall.js')).runRecallBenchmark(args),
  },
  formats: {
    summary: 'the steady turn in every wire format, this tree against an earlier revision (--against REV)',
    run: async (args) => (await import('./formats.js')).runFormatsBenchmark(args),
  },
  'recall-libraries': {
    summary:
      'MiniSearch vs FlexSearch vs Orama as the in-process recall index: build, memory, latency, answers',
    run: async (args) => (await import('./recall-libraries.js')).runRecallLibrariesBenchmark(args),
  },
};

const DEFAULT_BENCHMARK = 'core';

function usage(problem: string): never {
  const names = Object.entries(BENCHMARKS).map(([name, b]) => `  ${name.padEnd(12)} ${b.summary}`);
  process.stderr.write(
    `bench: ${problem}\nusage: npm run bench [-- NAME [options]]\nbenchmarks:\n${names.join('\n')}\n`,
  );
  process.exit(2);
}

async function main(argv: readonly string[]): Promise<void> {
  const [first, ...rest] = argv;
  const named = first !== undefined && !first.startsWith('-');
  const name = named ? first : DEFAULT_BENCHMARK;
  const args = named ? rest : argv;
  const benchmark = Object.hasOwn(BENCHMARKS, name) ? BENCHMARKS[name] : undefined;
  if (!benchmark) usage(`unknown benchmark ${JSON.stringify(name)}`);
  try {
    await benchmark.run(args);
  } catch (err) {
    if (err instanceof UsageError) usage(err.message);
    throw err;
  }
}

await main(process.argv.slice(2));
