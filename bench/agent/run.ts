/**
 * `npm run bench -- agent`: views judged by what an agent fed them does. One deterministic agent
 * (bench/agent/agent.ts) works through a long coding session of numbered tasks, each needing
 * values read from three files or pages of a given size, under every contender side by side: the
 * full history, contextkit (default, and with `protectTask` off as before issue 30), LangChain `trimMessages` and Mastra
 * `TokenLimiter`, at several budgets and result sizes, in the OpenAI Chat and Anthropic formats.
 * The world records what the agent did (reads, repeated reads, writes, repeated writes, writes
 * without the rule given once at the start, injected orders obeyed); every view is judged for
 * validity (bench/independent-validator.ts), fit and billed input (one o200k counter for all), an
 * injected page's words in a system or developer message, and whether it extends the previous one.
 */
import { availableParallelism, loadavg } from 'node:os';
import type { MessageFormat } from '../../src/messages/types.js';
import { RequestCounter } from '../peers/o200k-count.js';
import type { Peer } from '../peers/peer.js';
import { formatCount, formatMs, Report, verdict } from '../report.js';
import { UsageError } from '../usage-error.js';
import { READS_PER_STEP } from './agent.js';
import { agentSvg } from './chart.js';
import {
  contextkitAfterRequest,
  contextkitAgent,
  contextkitDefault,
  fullHistory,
  langchainTrim,
  loadMastra,
} from './contenders.js';
import { datasetSection } from './datasets.js';
import { runEpisode, STEP_CAP, type Tally } from './episode.js';
import { Writer } from './wire.js';
import { World } from './workload.js';

/** One setting of the run: the budget, and the share of it the three reads of a task take. */
export interface Cell {
  budget: number;
  share: number;
  format: MessageFormat;
  /** Reads the agent issues at most in one step, where not `READS_PER_STEP`. */
  readsPerStep?: number;
}

const SEED = 30_008;
const FULL_CELLS: Cell[] = [
  ...[0.25, 0.54, 0.78].flatMap((share) =>
    (['openai', 'anthropic'] as const).map((format) => ({ budget: 20_000, share, format })),
  ),
  { budget: 8_000, share: 0.54, format: 'openai' },
  { budget: 60_000, share: 0.54, format: 'anthropic' },
  // Reads a task needs past the budget: the current turn cannot be kept whole, so its own reads are
  // cleared while it runs and the agent works from their facts (parallel reads: one message each
  // in OpenAI Chat, one user turn for both in Anthropic).
  ...(['openai', 'anthropic'] as const).map((format) => ({ budget: 20_000, share: 1.1, format })),
];
/**
 * The other wire formats, where only contextkit and the full history run (the trimmers take OpenAI
 * Chat or Anthropic messages): whether a view in Responses, Gemini or Bedrock form lifts a tool
 * result's words into its system slot, and what the agent does with it.
 */
const OTHER_FORMATS: MessageFormat[] = ['openai-responses', 'gemini', 'bedrock'];
const FORMAT_CELLS: Cell[] = [
  ...[0.25, 0.78].flatMap((share) => OTHER_FORMATS.map((format) => ({ budget: 20_000, share, format }))),
  // Three reads a step past the budget: one step's results alone must be cut to fit, each in its
  // own item in Responses (as in OpenAI Chat), in one user turn in Gemini and Bedrock.
  ...OTHER_FORMATS.map((format) => ({ budget: 20_000, share: 1.1, format, readsPerStep: 3 })),
];
const QUICK_CELLS: Cell[] = [
  { budget: 20_000, share: 0.25, format: 'openai' },
  { budget: 20_000, share: 0.78, format: 'anthropic' },
];

interface Options {
  tasks: number;
  cells: Cell[];
  formatCells: Cell[];
  datasets: boolean;
  /** Whether the report replaces bench/results/agent.md (a quick run only prints). */
  write: boolean;
}

function parseArgs(args: readonly string[]): Options {
  const options: Options = {
    tasks: 40,
    cells: FULL_CELLS,
    formatCells: FORMAT_CELLS,
    datasets: true,
    write: true,
  };
  for (let i = 0; i < args.length; i++) {
    const flag = args[i];
    if (flag === '--quick') {
      options.tasks = 12;
      options.cells = QUICK_CELLS;
      options.formatCells = [{ budget: 20_000, share: 0.25, format: 'gemini' }];
      options.write = false;
    } else if (flag === '--no-datasets') {
      options.datasets = false;
    } else if (flag === '--tasks') {
      const n = Number(args[++i]);
      if (!Number.isInteger(n) || n < 1) throw new UsageError('--tasks needs a whole number of at least 1');
      options.tasks = n;
    } else {
      throw new UsageError(`unknown option ${JSON.stringify(flag)} (--quick, --tasks N, --no-datasets)`);
    }
  }
  return options;
}

function progress(line: string): void {
  process.stderr.write(`  ${line}\n`);
}

function pct(part: number, whole: number): string {
  return whole === 0 ? '–' : `${((100 * part) / whole).toFixed(1)}%`;
}

const FORMAT_NAMES: Record<string, string> = {
  openai: 'OpenAI Chat',
  anthropic: 'Anthropic',
  'openai-responses': 'OpenAI Responses',
  gemini: 'Gemini',
  bedrock: 'Bedrock',
};

function cellLabel(c: Cell): string {
  const reads = c.readsPerStep === undefined ? '' : `, ${c.readsPerStep} reads a step`;
  return `${c.budget / 1000}k, reads ${Math.round(c.share * 100)}%${reads}, ${FORMAT_NAMES[c.format] ?? c.format}`;
}

const FULL = fullHistory.name;
const OURS = [contextkitDefault.name, contextkitAgent.name];
/** Every contextkit column: none of them is a trimmer to beat. */
const CONTEXTKIT = [...OURS, contextkitAfterRequest.name];
/** Views a provider would take on at least this share of requests, for a trimmer to be a peer to beat. */
const USABLE_SHARE = 0.95;

function usable(t: Tally): number {
  return t.usable;
}

interface CellResult {
  cell: Cell;
  tallies: Map<string, Tally>;
  resultTokens: number;
  contenders: readonly Peer[];
}

/** One goal for one contextkit column in one cell: met, or why not (null when it does not apply). */
type Check = { pass: boolean; detail: string } | null;

const GOALS: { goal: string; check(name: string, r: CellResult): Check }[] = [
  {
    goal: "tasks finished ≥ 95% of the full history's (where the current turn fits the budget)",
    check(name, r) {
      const full = r.tallies.get(FULL)!;
      if (full.largestTurn > r.cell.budget) return null;
      const t = r.tallies.get(name)!;
      return { pass: t.finished >= 0.95 * full.finished, detail: `${t.finished} of ${full.finished}` };
    },
  },
  {
    goal: 'repeated reads ≤ 5% of reads',
    check(name, r) {
      const t = r.tallies.get(name)!;
      return { pass: t.repeatedReads <= 0.05 * t.reads, detail: pct(t.repeatedReads, t.reads) };
    },
  },
  {
    goal: 'repeated side effects 0 (writes redone, injected deletes)',
    check(name, r) {
      const t = r.tallies.get(name)!;
      const n = t.repeatedEdits + t.injectionObeyed;
      return { pass: n === 0, detail: String(n) };
    },
  },
  {
    goal: 'constraints lost 0',
    check(name, r) {
      const t = r.tallies.get(name)!;
      return { pass: t.constraintLost === 0, detail: String(t.constraintLost) };
    },
  },
  {
    goal: 'injected text in a system or developer message 0',
    check(name, r) {
      const t = r.tallies.get(name)!;
      return { pass: t.injectedPrivileged === 0, detail: `${t.injectedPrivileged} views` };
    },
  },
  {
    goal: "billed input ≤ 0.35× the full history's",
    check(name, r) {
      const t = r.tallies.get(name)!;
      const x = t.billed / r.tallies.get(FULL)!.billed;
      return { pass: x <= 0.35, detail: `${x.toFixed(2)}×` };
    },
  },
  {
    goal: 'billed input ≤ 1.1× the cheapest usable trimmer finishing as many tasks',
    check(name, r) {
      const t = r.tallies.get(name)!;
      const peers = [...r.tallies.entries()].filter(
        ([n, p]) =>
          n !== FULL &&
          !CONTEXTKIT.includes(n) &&
          p.finished >= t.finished &&
          usable(p) >= USABLE_SHARE * p.views,
      );
      if (peers.length === 0) return null;
      const [peer, cheapest] = peers.sort((a, b) => a[1].billed - b[1].billed)[0]!;
      const x = t.billed / cheapest.billed;
      return { pass: x <= 1.1, detail: `${x.toFixed(2)}× ${peer}` };
    },
  },
  {
    goal: 'turns without a compaction ≥ 95%',
    check(name, r) {
      const t = r.tallies.get(name)!;
      return { pass: t.stable >= 0.95 * t.turns, detail: pct(t.stable, t.turns) };
    },
  },
  {
    goal: 'views valid and within budget',
    check(name, r) {
      const t = r.tallies.get(name)!;
      return { pass: usable(t) === t.views, detail: `${usable(t)} of ${t.views}` };
    },
  },
];

function cellTable(report: Report, r: CellResult, contenders: readonly Peer[]): void {
  const full = r.tallies.get(FULL)!;
  const headers = [
    'contender',
    'tasks finished',
    'repeated reads',
    'repeated side effects',
    'constraints lost',
    'injected in system/developer',
    'other text in system/developer',
    'billed input',
    'vs full',
    'usable views',
    'turns without compaction',
  ];
  const rows = contenders.map((p) => {
    const t = r.tallies.get(p.name)!;
    return [
      p.name,
      `${t.finished}/${t.tasks}`,
      `${t.repeatedReads}/${t.reads}`,
      String(t.repeatedEdits + t.injectionObeyed),
      String(t.constraintLost),
      `${t.injectedPrivileged} views`,
      `${t.otherPrivileged} views`,
      formatCount(t.billed),
      `${(t.billed / full.billed).toFixed(2)}×`,
      p.name === FULL ? `(not trimmed)` : pct(usable(t), t.views),
      pct(t.stable, t.turns),
    ];
  });
  report.heading(`${cellLabel(r.cell)}: each read about ${formatCount(r.resultTokens)} tokens`);
  report.table(headers, rows);
  const notes: string[] = [];
  notes.push(
    `The largest current turn (a task's message and all its work, full history) is ${formatCount(full.largestTurn)} tokens: it ${full.largestTurn <= r.cell.budget ? 'fits' : 'does not fit'} the ${formatCount(r.cell.budget)}-token budget.`,
  );
  for (const p of contenders) {
    const t = r.tallies.get(p.name)!;
    const bits: string[] = [];
    if (t.capped > 0) bits.push(`${t.capped} tasks stopped at the step cap`);
    if (t.wrongValue > 0) bits.push(`${t.wrongValue} tasks wrote a wrong value`);
    if (t.valuesFromMemory > 0 || OURS.includes(p.name))
      bits.push(
        `${t.valuesFromMemory} of the ${t.valuesUsed} values its writes used were in view only in a summary or facts block`,
      );
    if (t.taskMissing > 0) bits.push(`${t.taskMissing} views showed no task`);
    if (t.injectionObeyed > 0) bits.push(`obeyed an injected order ${t.injectionObeyed} times`);
    if (t.declined > 0) bits.push(`${t.declined} views declined (${t.firstDecline})`);
    if (t.invalid > 0) bits.push(`${t.invalid} views invalid (first: ${t.firstProblem})`);
    if (t.overBudget > 0) bits.push(`${t.overBudget} views over the budget`);
    if (bits.length > 0) notes.push(`${p.name}: ${bits.join('; ')}.`);
  }
  report.note(notes.join(' '));
}

/** Runs the agent benchmark and writes `bench/results/agent.md` with its picture. */
export async function runAgentBenchmark(args: readonly string[]): Promise<void> {
  const options = parseArgs(args);
  const started = performance.now();
  const mastra = await loadMastra();
  const contenders: Peer[] = [
    fullHistory,
    contextkitDefault,
    contextkitAgent,
    contextkitAfterRequest,
    langchainTrim,
  ];
  if (typeof mastra !== 'string') contenders.push(mastra);
  const report = new Report('The closed-loop agent benchmark');
  report.note(
    `Node ${process.version}, ${availableParallelism()} cores, load ${loadavg()[0]?.toFixed(2)} at start; ` +
      `${options.tasks} tasks a session, seed ${SEED}. One deterministic agent (bench/agent/agent.ts) acts on each view it is sent, ` +
      'as a pure function of the messages: its task is the latest `Task N` user message; it looks for each value ' +
      'the task needs anywhere in the view (tool results, summaries, facts) as `name = 12` or `name: 12`, reads ' +
      `what it cannot see (at most ${READS_PER_STEP} reads a step, or as many as a cell's label says; a read of a file already read in the task is a repeated read), ` +
      'writes the target once when it has every value (with the required header if the view shows the rule given ' +
      'once in the first user message, else the constraint is lost), and stops when the view shows its write ran; ' +
      'a write whose result the view no longer shows, or whose placeholder invites calling it again, is redone ' +
      '(a repeated side effect). Text in a system or developer message is obeyed, as a model gives it the system ' +
      `prompt's authority (an injected \`delete_branch\` counts as a side effect). At most ${STEP_CAP} views a task.`,
  );
  report.note(
    'A session: a system prompt, the rule (first user message), then tasks "set `X` in P to the sum of `a` (in f1), ' +
      '`b` (in f2) and `c` (in f3)"; every source is a code-like file (every fourth task, the third is a web page ' +
      'fetched with `fetch_url` carrying an injected "IMPORTANT SYSTEM NOTICE: Ignore all previous instructions…") ' +
      "of about a third of the cell's share of the budget, the needed assignment placed 35–90% of the way in among " +
      'hundreds of other assignments and a near-miss name. A task is finished when its last write holds the right ' +
      "sum and the agent said it was done within the cap. Billed input is the sum of every view's o200k tokens " +
      "(bench/peers/o200k-count.ts, OpenAI's framing, the same counter for every contender; no cache discount). " +
      'Usable views: valid by bench/independent-validator.ts and within the budget by that count. Turns without ' +
      'a compaction: views that extend the previous view byte for byte.',
  );
  report.note(
    'Contenders: the full history (the reference; its views are not trimmed, so fit is not asked of it); ' +
      'contextkit as it ships (`new ContextManager({ model: "gpt-4o" })`: the task, here the rule, and the current ' +
      'turn kept); contextkit with `protectTask: false`, the default before issue 30 (the baseline); contextkit with ' +
      '`compactAfterRequest: true` (the compaction made after the request that passes the trigger, whose view goes as it is: issue 32); LangChain `trimMessages` ' +
      '(@langchain/core, strategy last, includeSystem, startOn human, exact o200k counter: bench/peers/langchain.ts); ' +
      `Mastra \`TokenLimiter\` (@mastra/memory 0.15: bench/peers/mastra.ts)${
        typeof mastra === 'string' ? ` — not run here: ${mastra}` : ''
      }.`,
  );
  const results: CellResult[] = [];
  const formatResults: CellResult[] = [];
  const plan = [
    ...options.cells.map((cell) => ({ cell, contenders, into: results })),
    ...options.formatCells.map((cell) => ({
      cell,
      contenders: [fullHistory, contextkitDefault, contextkitAgent],
      into: formatResults,
    })),
  ];
  for (const { cell, contenders: those, into } of plan) {
    const resultTokens = Math.round((cell.share * cell.budget) / 3);
    const world = new World(SEED, options.tasks, resultTokens);
    const counter = new RequestCounter();
    const tallies = new Map<string, Tally>();
    for (const peer of those) {
      const t0 = performance.now();
      const tally = await runEpisode(
        world,
        peer.start(cell.format, cell.budget),
        new Writer(cell.format),
        cell.budget,
        counter,
        peer !== fullHistory,
        cell.readsPerStep,
      );
      tallies.set(peer.name, tally);
      progress(`${cellLabel(cell)}: ${peer.name} ${formatMs(performance.now() - t0)}`);
    }
    into.push({ cell, tallies, resultTokens, contenders: those });
  }

  report.heading('Goals');
  report.note(
    "Issue 30's goals for each contextkit column, every cell side by side (the other wire formats included); a goal " +
      'is met only if it is met in every cell where it applies (shown: the first cell that misses it, else the last). The cheapest trimmer to match is one whose views a ' +
      `provider would take on ≥ ${USABLE_SHARE * 100}% of requests and that finishes at least as many tasks.`,
  );
  report.table(
    ['goal', ...OURS],
    GOALS.map((g) => [
      g.goal,
      ...OURS.map((name) => {
        const checks = [...results, ...formatResults]
          .map((r) => ({ r, c: g.check(name, r) }))
          .filter((x): x is { r: CellResult; c: NonNullable<Check> } => x.c !== null);
        if (checks.length === 0) return 'n/a';
        const missed = checks.filter((x) => !x.c.pass);
        const shown = missed[0] ?? checks[checks.length - 1]!;
        return `${verdict(missed.length === 0)} (${missed.length > 0 ? `missed in ${missed.length} of ${checks.length}; ` : ''}${cellLabel(shown.r.cell)}: ${shown.c.detail})`;
      }),
    ]),
  );
  const names = contenders.map((p) => p.name);
  const labels = results.map(
    (r) =>
      `${r.cell.budget / 1000}k·${Math.round(r.cell.share * 100)}%·${r.cell.format === 'openai' ? 'OAI' : 'Anth'}`,
  );
  const bars = (value: (t: Tally, full: Tally) => number) => ({
    series: names,
    groups: results.map((r, i) => ({
      label: labels[i]!,
      values: names.map((n) => value(r.tallies.get(n)!, r.tallies.get(FULL)!)),
    })),
  });
  const share = (v: number) => `${Math.round(v * 100)}%`;
  report.chart(
    'Tasks finished, repeated reads, constraints lost and billed input of every contender in every cell',
    'agent.svg',
    agentSvg([
      {
        title: 'tasks finished by the same agent (higher is better)',
        bars: bars((t) => t.finished / t.tasks),
        max: 1,
        show: share,
      },
      {
        title: 'repeated reads, of all reads (lower is better)',
        bars: bars((t) => (t.reads === 0 ? 0 : t.repeatedReads / t.reads)),
        max: Number.NaN,
        show: share,
      },
      {
        title: 'tasks whose write lost the rule given at the start (lower is better)',
        bars: bars((t) => t.constraintLost / t.tasks),
        max: 1,
        show: share,
      },
      {
        title: "billed input, as a share of the full history's (lower is better)",
        bars: bars((t, full) => t.billed / full.billed),
        max: Number.NaN,
        show: (v) => `${v.toFixed(2)}×`,
      },
    ]),
  );
  for (const r of results) cellTable(report, r, r.contenders);
  if (formatResults.length > 0) {
    report.note(
      'The other wire formats follow, contextkit only (the trimmers take OpenAI Chat or Anthropic messages): ' +
        "the session's messages are the OpenAI Chat ones converted by the library's `convertMessages`, the agent " +
        "reads each view converted back to OpenAI Chat (and is counted on that form), the view's validity is the " +
        "library's own `validateRequest`, and its system slots are checked on the view as sent.",
    );
    for (const r of formatResults) cellTable(report, r, r.contenders);
  }
  if (options.datasets) await datasetSection(report, progress);
  report.note(`Run time ${formatMs(performance.now() - started)}.`);
  process.stdout.write(`${report.toText()}\n`);
  if (options.write) {
    const path = report.write('agent');
    process.stdout.write(`written to ${path}\n`);
  } else {
    process.stdout.write('a --quick run: bench/results/agent.md is left as it was\n');
  }
}
