/**
 * The compaction benchmark (`npm run bench -- compaction`): how long planning a compaction of a
 * long history takes offline, with the truncating and the summarizing strategy side by side, and
 * what a turn costs between two compactions (the core benchmark's steady state, now with
 * summaries and a facts block in the plan).
 */
import { availableParallelism, loadavg } from 'node:os';
import type { CompactionReceipt } from '../src/events.js';
import { ContextManager } from '../src/manager.js';
import type { Message } from '../src/messages/types.js';
import { getModelInfo } from '../src/tokens/catalog.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { longSessionMessages } from '../test/support/arbitraries.js';
import { formatCount, formatMs, Report, verdict } from './report.js';
import { type Summary, summarize } from './stats.js';
import { UsageError } from './usage-error.js';

const MODEL = 'gpt-4o';
const SEED = 20_240_601;
const DEFAULT_SIZE = 10_000;
/** Fresh managers per strategy: each gives one cold and one warm plan. */
const DEFAULT_REPEATS = 7;
/** The budget compaction must reach: far under a 10k-message history (about 1.4M tokens). */
const BUDGET = 100_000;
/** Turns measured after the first plan, for the steady state and the re-plans it meets. */
const TURNS = 1_000;
/** A budget nothing reaches: the warm-up request counts the history without compacting it. */
const UNBOUNDED = 1_000_000_000;

const STRATEGIES = ['truncate', 'summarize'] as const;
type Strategy = (typeof STRATEGIES)[number];

const GOALS = {
  /** Planning a compaction of the whole history, receipt time, median. */
  planMs: 50,
  /** A turn between compactions, median (the core issue's goal). */
  turnMs: 1,
};

interface PlanSample {
  receiptMs: number;
  wallMs: number;
  receipt: CompactionReceipt;
}

interface StrategyResult {
  strategy: Strategy;
  /** Planned on a fresh manager whose messages were never counted: the counting is included. */
  cold: PlanSample[];
  /** Planned after one request counted every message: the planning alone. */
  warm: PlanSample[];
  /** As warm, with a forced full GC right before the plan (see the report's note). */
  afterGc: PlanSample[];
  turns: Summary;
  /** Turns in which the growing history crossed the trigger and a new plan was made. */
  replanTurns: Summary;
  replanReceiptMs: number[];
}

function progress(text: string): void {
  process.stderr.write(`[bench compaction] ${text}\n`);
}

function collect(): void {
  // `npm run bench` passes --expose-gc: start every manager on a clean heap, so one manager's
  // garbage is not collected in the middle of the next one's plan (and, for the "after a full
  // GC" column, collect right before a plan).
  if (typeof globalThis.gc === 'function') globalThis.gc();
}

async function filledManager(strategy: Strategy, history: readonly Message[]): Promise<ContextManager> {
  const manager = new ContextManager({ model: MODEL, strategy });
  for (const message of history) await manager.addMessage(message);
  return manager;
}

async function forcedPlan(manager: ContextManager): Promise<PlanSample> {
  const t0 = performance.now();
  const receipt = await manager.compact({ force: true, tokenBudget: BUDGET });
  const wallMs = performance.now() - t0;
  if (!receipt) throw new Error('compact({ force: true }) returned no receipt');
  return { receiptMs: receipt.durationMs, wallMs, receipt };
}

async function runStrategy(
  strategy: Strategy,
  history: readonly Message[],
  next: readonly Message[],
  repeats: number,
): Promise<StrategyResult> {
  const cold: PlanSample[] = [];
  const warm: PlanSample[] = [];
  const afterGc: PlanSample[] = [];
  for (let i = 0; i < repeats; i++) {
    collect();
    const fresh = await filledManager(strategy, history);
    cold.push(await forcedPlan(fresh));
    await fresh.close();

    for (const gcFirst of [false, true]) {
      collect();
      const counted = await filledManager(strategy, history);
      await counted.getMessagesForRequest({ tokenBudget: UNBOUNDED });
      if (gcFirst) collect();
      (gcFirst ? afterGc : warm).push(await forcedPlan(counted));
      await counted.close();
    }
  }

  // The agent loop after the first plan: add a message, ask for the view at the same budget.
  collect();
  const manager = await filledManager(strategy, history);
  await manager.getMessagesForRequest({ tokenBudget: BUDGET });
  let replanned = false;
  const replanReceiptMs: number[] = [];
  manager.on('context:post_compact', ({ receipt }) => {
    replanned = true;
    replanReceiptMs.push(receipt.durationMs);
  });
  const steady: number[] = [];
  const replans: number[] = [];
  for (const message of next) {
    replanned = false;
    const t0 = performance.now();
    await manager.addMessage(message);
    await manager.getMessagesForRequest({ tokenBudget: BUDGET });
    (replanned ? replans : steady).push(performance.now() - t0);
  }
  await manager.close();
  return {
    strategy,
    cold,
    warm,
    afterGc,
    turns: summarize(steady),
    replanTurns: summarize(replans),
    replanReceiptMs,
  };
}

function parseArgs(args: readonly string[]): { size: number; repeats: number } {
  let size = DEFAULT_SIZE;
  let repeats = DEFAULT_REPEATS;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [name, inline] = arg.startsWith('--') && arg.includes('=') ? arg.split('=', 2) : [arg, undefined];
    if (name !== '--size' && name !== '--repeats') {
      throw new UsageError(`unknown option ${JSON.stringify(arg)} (compaction takes --size N, --repeats N)`);
    }
    const value = inline ?? args[++i];
    const n = Number(value?.trim().replace(/k$/i, '000'));
    if (!Number.isInteger(n) || n < (name === '--size' ? 100 : 1)) {
      throw new UsageError(
        `${name}: ${JSON.stringify(value)} is not a whole number ≥ ${name === '--size' ? 100 : 1}`,
      );
    }
    if (name === '--size') size = n;
    else repeats = n;
  }
  return { size, repeats };
}

function sizeLabel(n: number): string {
  return n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : formatCount(n);
}

/** Runs the compaction benchmark, prints its report and writes `bench/results/compaction.md`. */
export async function runCompactionBenchmark(args: readonly string[]): Promise<void> {
  const { size, repeats } = parseArgs(args);
  const wallStart = performance.now();
  progress(`generating a ${formatCount(size + TURNS)}-message OpenAI session (seed ${SEED})…`);
  const session = longSessionMessages(size + TURNS, 'openai', SEED);
  const history = session.slice(0, size);
  const next = session.slice(size);
  const counter = createTokenCounter(getModelInfo(MODEL)!);
  const historyTokens = await counter.measure(history, { format: 'openai' });

  const results: StrategyResult[] = [];
  for (const strategy of STRATEGIES) {
    progress(`${strategy}: ${repeats} fresh managers, then ${TURNS} turns…`);
    const t0 = performance.now();
    results.push(await runStrategy(strategy, history, next, repeats));
    progress(`  done in ${formatMs(performance.now() - t0)}`);
  }
  const report = buildReport(results, {
    size,
    repeats,
    historyTokens,
    wallMs: performance.now() - wallStart,
  });
  process.stdout.write(report.toText());
  progress(`written to ${report.write('compaction')}`);
}

function buildReport(
  results: readonly StrategyResult[],
  run: { size: number; repeats: number; historyTokens: number; wallMs: number },
): Report {
  const label = sizeLabel(run.size);
  const report = new Report('contextkit compaction benchmark');
  report.note(
    [
      `Node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(2)} at the end (other processes share the machine: figures move from run to run); model ${MODEL} (o200k_base, exact counts); offline tools (no network).`,
      `History: \`longSessionMessages(${run.size}, 'openai', ${SEED})\` from test/support/arbitraries.ts, ${formatCount(run.historyTokens)} tokens; budget ${formatCount(BUDGET)} tokens, so a plan has to take out about ${Math.round((1 - (0.6 * BUDGET) / run.historyTokens) * 100)}% of it (the plan aims at 60% of the budget).`,
      `A plan: \`compact({ force: true, tokenBudget: ${formatCount(BUDGET)} })\` on a fresh manager holding the history; "receipt" is the receipt's \`durationMs\` (planning, summary, facts, rendering the view), "wall" the whole call. Cold: the manager never counted its messages, so the plan counts them all first. Warm: one request at an unbounded budget counted them (as any manager that has served a request has), so the plan is the planning alone; the goal is judged on it. After a full GC: as warm, with \`gc()\` forced right before the plan. That collection also throws away much of V8's optimized code for the planning functions (\`--trace-deopt\` shows their code "marked for deoptimization, reason: weak objects", and dozens of functions are optimized again inside the plan), so this column is the plan run largely on unoptimized code: what a process sees when a major GC falls just before a compaction. Median of ${run.repeats} fresh managers per column.`,
      `Per turn: after the first plan, add the session's next message and ask for the view at the same budget, ${TURNS} times; turns in which the history crossed the trigger again and a new plan was made are reported apart.`,
    ].join('\n'),
  );

  report.heading(`Planning a compaction of ${label} messages`);
  report.table(
    [
      'strategy',
      'warm: receipt',
      'warm: wall',
      'after a full GC: receipt',
      'cold: receipt',
      'cold: wall',
      'out of the view',
      'summarized',
      'facts kept / left out',
      'tokens after',
    ],
    results.map((r) => {
      const last = r.warm.at(-1)!.receipt;
      return [
        r.strategy,
        formatMs(summarize(r.warm.map((s) => s.receiptMs)).median),
        formatMs(summarize(r.warm.map((s) => s.wallMs)).median),
        formatMs(summarize(r.afterGc.map((s) => s.receiptMs)).median),
        formatMs(summarize(r.cold.map((s) => s.receiptMs)).median),
        formatMs(summarize(r.cold.map((s) => s.wallMs)).median),
        `${formatCount(last.dropped.length + last.summarized.length)} msgs`,
        `${formatCount(last.summarized.length)} msgs`,
        `${formatCount(last.facts.kept)} / ${formatCount(last.facts.omitted)}`,
        formatCount(last.tokensAfter),
      ];
    }),
  );
  report.note(
    'Ranges (min–max of the receipt times): ' +
      results
        .map((r) => {
          const w = summarize(r.warm.map((s) => s.receiptMs));
          const g = summarize(r.afterGc.map((s) => s.receiptMs));
          const c = summarize(r.cold.map((s) => s.receiptMs));
          return `${r.strategy} warm ${formatMs(w.min)}–${formatMs(w.max)}, after a full GC ${formatMs(g.min)}–${formatMs(g.max)}, cold ${formatMs(c.min)}–${formatMs(c.max)}`;
        })
        .join('; ') +
      '.',
  );

  report.heading(`Per turn between compactions, ${label} messages`);
  report.table(
    ['strategy', 'median', 'p95', 'turns', 're-plans', 're-plan turn (median)', 're-plan receipt (median)'],
    results.map((r) => [
      r.strategy,
      formatMs(r.turns.median),
      formatMs(r.turns.p95),
      String(r.turns.n),
      String(r.replanTurns.n),
      r.replanTurns.n > 0 ? formatMs(r.replanTurns.median) : '–',
      r.replanReceiptMs.length > 0 ? formatMs(summarize(r.replanReceiptMs).median) : '–',
    ]),
  );

  report.heading(`Goals (at ${label} messages)`);
  const rows: string[][] = [];
  for (const r of results) {
    const plan = summarize(r.warm.map((s) => s.receiptMs)).median;
    rows.push(
      [
        `plan a compaction, ${r.strategy} (warm, receipt median)`,
        `< ${GOALS.planMs} ms`,
        formatMs(plan),
        verdict(plan < GOALS.planMs),
      ],
      [
        `turn between compactions, ${r.strategy} (median)`,
        `< ${GOALS.turnMs} ms`,
        formatMs(r.turns.median),
        verdict(r.turns.median < GOALS.turnMs),
      ],
    );
  }
  report.table(['goal', 'target', 'measured', 'result'], rows);
  report.note(`Whole run: ${formatMs(run.wallMs)}.`);
  return report;
}
