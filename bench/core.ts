/**
 * The core benchmark (`npm run bench`): the agent loop (add one message, ask for the view) over
 * long histories, against two recounting trimmers in the same run; the counter's throughput
 * against gpt-tokenizer called directly; and what the stored history costs in memory.
 */
import { createRequire } from 'node:module';
import { availableParallelism, loadavg } from 'node:os';
import type * as O200k from 'gpt-tokenizer/encoding/o200k_base';
import { ContextManager } from '../src/manager.js';
import type { Message, MessageFormat } from '../src/messages/types.js';
import { getModelInfo } from '../src/tokens/catalog.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { convertMessages } from '../src/wire/convert.js';
import { longSessionMessages } from '../test/support/arbitraries.js';
import { charsPer4Rule, exactRecountRule, type RecountRule, RecountTrimmer } from './baselines.js';
import { formatBytes, formatCount, formatMs, formatRatio, Report, verdict } from './report.js';
import { liveHeapBytes, type Summary, summarize } from './stats.js';
import { UsageError } from './usage-error.js';

const MODEL = 'gpt-4o';
const SEED = 20_240_601;
const DEFAULT_SIZES = [1_000, 10_000, 100_000];
/** The size the goals are stated at. */
const GOAL_SIZE = 10_000;
/** Histories measured for memory: small ones are too close to the heap's noise. */
const MEMORY_MIN_SIZE = 10_000;

/** A fixed budget well under every history but the smallest, so the loop compacts as it goes. */
const COMPACTING_BUDGET = 100_000;
/** A budget no history here reaches (100k messages are about 12M tokens): nothing is compacted. */
const UNBOUNDED_BUDGET = 1_000_000_000;

const BUDGETS = [
  { label: '100k tokens', budget: COMPACTING_BUDGET },
  { label: 'unbounded', budget: UNBOUNDED_BUDGET },
] as const;

/**
 * How many turns each loop may run, and for how long. The baselines recount the whole history
 * every turn (about 1.5 s a turn at 100k messages for the exact one), so they stop at a time cap,
 * with at least `minTurns`; the report prints how many turns each figure is from.
 */
const LIMITS = {
  ours: { maxTurns: 1_000, capMs: 15_000, minTurns: 50 },
  exact: { maxTurns: 200, capMs: 5_000, minTurns: 3 },
  chars: { maxTurns: 500, capMs: 2_500, minTurns: 3 },
} as const;

type Limit = (typeof LIMITS)[keyof typeof LIMITS];

const GOALS = {
  /** Our steady-state turn against the exact recount: at least this many times faster. */
  vsExact: 100,
  /** Against chars/4: no slower. */
  vsChars: 1,
  /** Absolute steady-state turn, ms. */
  turnMs: 1,
  /** Our counter's time over gpt-tokenizer's on the same texts: at most this. */
  counting: 1.5,
  /** Stored-history heap over its JSON size: under this. */
  memory: 3,
  /** What the cost meter adds to the steady turn: under this share. */
  metering: 0.05,
};

interface LoopResult {
  turns: Summary;
  /** Turns in which a compaction ran (excluded from `turns`). */
  compactionTurns: Summary;
  /** Planning time each compaction reported in its receipt. */
  planMs: number[];
  /** Messages and tokens of the last view. */
  lastView: { messages: number; tokens: number };
}

interface OursResult extends LoopResult {
  prefillMs: number;
  firstRequestMs: number;
  firstRequestCompacted: boolean;
  /** Heap the manager holds after the prefill and its first request, when measured. */
  heapBytes?: number;
}

interface Scenario {
  size: number;
  budgetLabel: string;
  budget: number;
  ours: OursResult;
  exact: LoopResult;
  chars: LoopResult;
  jsonBytes: number;
}

interface CountingResult {
  messages: number;
  tokens: number;
  oursMs: Summary;
  directMs: Summary;
}

const requireFromHere = createRequire(import.meta.url);
/**
 * The same module instance the library counts with (it loads gpt-tokenizer's CommonJS build), so
 * both sides of the throughput comparison share one rank table and one merge cache.
 */
const gptTokenizer: typeof O200k = requireFromHere('gpt-tokenizer/encoding/o200k_base');

function progress(text: string): void {
  process.stderr.write(`[bench core] ${text}\n`);
}

/** Whether the loop should run another turn, given its limits. */
function keepGoing(limit: Limit, done: number, available: number, elapsedMs: number): boolean {
  if (done >= available || done >= limit.maxTurns) return false;
  return done < limit.minTurns || elapsedMs < limit.capMs;
}

async function runOurs(
  history: readonly Message[],
  next: readonly Message[],
  budget: number,
  measureMemory: boolean,
  model: string = MODEL,
): Promise<OursResult> {
  let heapBefore = 0;
  if (measureMemory) {
    gptTokenizer.clearMergeCache();
    heapBefore = liveHeapBytes();
  }
  const manager = new ContextManager({ model });
  let compacted = false;
  const planMs: number[] = [];
  manager.on('context:post_compact', ({ receipt }) => {
    compacted = true;
    planMs.push(receipt.durationMs);
  });

  let started = performance.now();
  for (const message of history) await manager.addMessage(message);
  const prefillMs = performance.now() - started;
  started = performance.now();
  await manager.getMessagesForRequest({ tokenBudget: budget });
  const firstRequestMs = performance.now() - started;
  const firstRequestCompacted = compacted;
  planMs.length = 0;

  let heapBytes: number | undefined;
  if (measureMemory) {
    // The merge cache is gpt-tokenizer's, bounded and shared by every manager: not the history's.
    gptTokenizer.clearMergeCache();
    heapBytes = liveHeapBytes() - heapBefore;
  }

  const steady: number[] = [];
  const compacting: number[] = [];
  let lastView = { messages: 0, tokens: 0 };
  const loopStart = performance.now();
  for (let i = 0; keepGoing(LIMITS.ours, i, next.length, performance.now() - loopStart); i++) {
    compacted = false;
    const t0 = performance.now();
    await manager.addMessage(next[i]!);
    const view = await manager.getMessagesForRequest({ tokenBudget: budget });
    const ms = performance.now() - t0;
    (compacted ? compacting : steady).push(ms);
    lastView = { messages: view.length, tokens: manager.usage().tokens };
  }
  return {
    turns: summarize(steady),
    compactionTurns: summarize(compacting),
    planMs,
    lastView,
    prefillMs,
    firstRequestMs,
    firstRequestCompacted,
    ...(heapBytes !== undefined ? { heapBytes } : {}),
  };
}

function runBaseline(
  rule: RecountRule,
  history: readonly Message[],
  next: readonly Message[],
  budget: number,
  limit: Limit,
): LoopResult {
  const trimmer = new RecountTrimmer(rule);
  for (const message of history) trimmer.addMessage(message);
  // One untimed request, as ours has its first request: JIT and the tokenizer's cache warm up.
  trimmer.getMessagesForRequest(budget);
  const turns: number[] = [];
  let lastView = { messages: 0, tokens: 0 };
  const loopStart = performance.now();
  for (let i = 0; keepGoing(limit, i, next.length, performance.now() - loopStart); i++) {
    const t0 = performance.now();
    trimmer.addMessage(next[i]!);
    const view = trimmer.getMessagesForRequest(budget);
    turns.push(performance.now() - t0);
    lastView = { messages: view.messages.length, tokens: Math.round(view.tokens) };
  }
  return { turns: summarize(turns), compactionTurns: summarize([]), planMs: [], lastView };
}

/** The strings the counter tokenizes in one message, for calling gpt-tokenizer on them directly. */
function messageTexts(message: Message, out: string[]): void {
  out.push(message.role ?? '');
  if ('name' in message && typeof message.name === 'string' && message.name !== '') out.push(message.name);
  const content: unknown = message.content;
  if (typeof content === 'string') out.push(content);
  else if (Array.isArray(content)) {
    for (const part of content as Array<Record<string, unknown>>) {
      if (typeof part.text === 'string') out.push(part.text);
      else if (typeof part.refusal === 'string') out.push(part.refusal);
    }
  }
  if (message.role === 'assistant' && 'tool_calls' in message && Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) out.push(call.function.name, call.function.arguments);
  }
}

/**
 * Our counter over fresh copies of the session's messages (nothing memoized: `countMessage` is
 * the bare counter) against gpt-tokenizer's `countTokens` on the same texts. Rounds alternate
 * which side goes first and clear gpt-tokenizer's merge cache before each pass, so neither side
 * profits from the other's warm cache.
 */
function runCounting(sample: readonly Message[], rounds: number): CountingResult {
  const counter = createTokenCounter(getModelInfo(MODEL)!);
  const fresh: Message[] = structuredClone(sample as Message[]);
  const texts: string[] = [];
  for (const m of fresh) messageTexts(m, texts);

  const direct = (): number => {
    let n = 0;
    for (const text of texts) n += gptTokenizer.countTokens(text);
    return n;
  };
  const ours = (): number => {
    let n = 0;
    for (const m of fresh) n += counter.countMessage(m, 'openai');
    return n;
  };
  const timed = (fn: () => number): number => {
    gptTokenizer.clearMergeCache();
    const t0 = performance.now();
    fn();
    return performance.now() - t0;
  };
  const tokens = direct();
  ours();
  const oursMs: number[] = [];
  const directMs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      directMs.push(timed(direct));
      oursMs.push(timed(ours));
    } else {
      oursMs.push(timed(ours));
      directMs.push(timed(direct));
    }
  }
  return { messages: fresh.length, tokens, oursMs: summarize(oursMs), directMs: summarize(directMs) };
}

/** One hostile megabyte: how long counting it takes (the counter is linear, see bounded-count.ts). */
interface HostileRow {
  name: string;
  chars: number;
  tokens: number;
  ms: number;
}

/** Seeded bytes for the random-base64 text, so every run counts the same megabyte. */
function seededBytes(n: number, seed: number): Buffer {
  const out = Buffer.alloc(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1_664_525) + 1_013_904_223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

/** Counts 1 MB texts that are quadratic for a plain BPE counter: runs, base64, minified JSON. */
function runHostileCounting(): HostileRow[] {
  const MB = 1_000_000;
  const json = JSON.stringify(
    Array.from({ length: 40_000 }, (_, i) => ({ id: i, name: `item${i}`, tags: ['x', 'y'], v: i / 7 })),
  ).slice(0, MB);
  const texts: Array<[string, string]> = [
    ["'a' × 1M", 'a'.repeat(MB)],
    ["'-' × 1M", '-'.repeat(MB)],
    ["' ' × 1M", ' '.repeat(MB)],
    ['base64 of zeros', Buffer.alloc((MB * 3) / 4).toString('base64')],
    ['base64 of random bytes', seededBytes((MB * 3) / 4, SEED).toString('base64')],
    ['minified JSON', json],
  ];
  const rows: HostileRow[] = [];
  for (const [name, text] of texts) {
    // A fresh counter each time: nothing cached from the text before.
    const counter = createTokenCounter(getModelInfo(MODEL)!);
    counter.countText('warm up the encoding');
    gptTokenizer.clearMergeCache();
    const t0 = performance.now();
    const tokens = counter.countText(text);
    rows.push({ name, chars: text.length, tokens, ms: performance.now() - t0 });
  }
  return rows;
}

function sizeLabel(n: number): string {
  return n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n);
}

function parseSizes(args: readonly string[]): number[] {
  let sizes = DEFAULT_SIZES;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = arg.startsWith('--sizes=')
      ? arg.slice('--sizes='.length)
      : arg === '--sizes'
        ? args[++i]
        : null;
    if (value === null || value === undefined) {
      throw new UsageError(`unknown option ${JSON.stringify(arg)} (core takes --sizes N,N,…)`);
    }
    sizes = value.split(',').map((s) => {
      const n = Number(s.trim().replace(/k$/i, '000'));
      if (!Number.isInteger(n) || n < 10)
        throw new UsageError(`--sizes: ${JSON.stringify(s)} is not a size ≥ 10`);
      return n;
    });
  }
  return sizes;
}

/** Runs the core benchmark, prints its report and writes `bench/results/core.md`. */
export async function runCoreBenchmark(args: readonly string[]): Promise<void> {
  const sizes = parseSizes(args);
  const wallStart = performance.now();
  const maxSize = Math.max(...sizes);
  const extra = LIMITS.ours.maxTurns;

  progress(`generating a ${formatCount(maxSize + extra)}-message OpenAI session (seed ${SEED})…`);
  let t0 = performance.now();
  const session = longSessionMessages(maxSize + extra, 'openai', SEED);
  progress(`  done in ${formatMs(performance.now() - t0)}`);

  progress('counting throughput…');
  const counting = runCounting(session.slice(0, Math.min(10_000, session.length)), 6);
  progress('counting hostile megabytes…');
  const hostile = runHostileCounting();

  const scenarios: Scenario[] = [];
  for (const size of sizes) {
    const history = session.slice(0, size);
    const next = session.slice(size);
    const jsonBytes = Buffer.byteLength(JSON.stringify(history));
    for (const { label, budget } of BUDGETS) {
      const name = `${sizeLabel(size)} messages, budget ${label}`;
      progress(`${name}: ours…`);
      t0 = performance.now();
      const ours = await runOurs(history, next, budget, size >= MEMORY_MIN_SIZE);
      progress(`  ${formatMs(performance.now() - t0)}; exact recount…`);
      t0 = performance.now();
      const exact = runBaseline(exactRecountRule(), history, next, budget, LIMITS.exact);
      progress(`  ${formatMs(performance.now() - t0)}; chars/4…`);
      t0 = performance.now();
      const chars = runBaseline(charsPer4Rule(), history, next, budget, LIMITS.chars);
      progress(`  ${formatMs(performance.now() - t0)}`);
      scenarios.push({ size, budgetLabel: label, budget, ours, exact, chars, jsonBytes });
    }
  }

  const formats = await runFormats(session, Math.min(GOAL_SIZE, maxSize), extra);
  const metering = await runMetering(Math.min(GOAL_SIZE, maxSize));

  const peakRss = process.resourceUsage().maxRSS * 1024;
  const report = buildReport(scenarios, counting, hostile, peakRss, performance.now() - wallStart);
  reportFormats(report, formats);
  reportMetering(report, metering);
  process.stdout.write(report.toText());
  const path = report.write('core');
  progress(`written to ${path}`);
}

interface FormatRun {
  format: MessageFormat;
  budgetLabel: string;
  turns: Summary;
}

/**
 * The steady turn in every format (issue 11): the same generated session as Anthropic messages
 * (`longSessionMessages(n, 'anthropic')`) and as Responses API items (the OpenAI session
 * converted, which is lossless for it) and as Gemini contents (converted the same way), next to
 * the OpenAI figure of the main table.
 */
async function runFormats(openai: readonly Message[], size: number, extra: number): Promise<FormatRun[]> {
  const runs: FormatRun[] = [];
  const sessions: Array<[MessageFormat, readonly Message[], string]> = [
    ['openai', openai, MODEL],
    ['anthropic', longSessionMessages(size + extra, 'anthropic', SEED), 'claude-sonnet-4-5'],
    ['openai-responses', convertMessages(openai.slice(0, size + extra), 'openai-responses'), MODEL],
    ['gemini', geminiSession(size + extra), 'gemini-2.5-flash'],
  ];
  for (const [format, session, model] of sessions) {
    for (const { label, budget } of BUDGETS) {
      progress(`${sizeLabel(size)} messages, ${format}, budget ${label}…`);
      const ours = await runOurs(session.slice(0, size), session.slice(size), budget, false, model);
      runs.push({ format, budgetLabel: label, turns: ours.turns });
    }
  }
  return runs;
}

/** Turns per block and blocks of the metering comparison (the two managers take turns by block). */
const METERING_BLOCK = 25;
const METERING_BLOCKS = 60;

interface MeteringRun {
  format: MessageFormat;
  model: string;
  on: Summary;
  off: Summary;
}

/**
 * What metering adds to the steady turn (issue 14): two managers over the same session, one
 * billing every view (`costMeter: true`, the default) and one not, taking turns by blocks of
 * ${METERING_BLOCK} turns so that both see the same load. `compactWhenCacheExpired` is off on
 * both, so that they make the same views (a manager without a meter cannot see the cache go cold).
 */
async function runMetering(size: number): Promise<MeteringRun[]> {
  const runs: MeteringRun[] = [];
  const models = [
    ['openai', MODEL],
    ['anthropic', 'claude-sonnet-4-5'],
  ] as const;
  for (const [format, model] of models) {
    progress(`metering: ${sizeLabel(size)} ${format} messages, with and without the cost meter…`);
    const session = longSessionMessages(size + METERING_BLOCK * METERING_BLOCKS, format, SEED);
    const sides = [true, false].map((costMeter) => {
      const manager = new ContextManager({ model, costMeter, compactWhenCacheExpired: false });
      const side = { manager, compacted: false, turns: [] as number[] };
      manager.on('context:post_compact', () => {
        side.compacted = true;
      });
      return side;
    });
    for (const side of sides) {
      for (const message of session.slice(0, size)) await side.manager.addMessage(message);
      await side.manager.getMessagesForRequest({ tokenBudget: COMPACTING_BUDGET });
    }
    for (let block = 0; block < METERING_BLOCKS; block++) {
      const order = block % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        for (let k = 0; k < METERING_BLOCK; k++) {
          const message = session[size + block * METERING_BLOCK + k]!;
          side.compacted = false;
          const t0 = performance.now();
          await side.manager.addMessage(message);
          await side.manager.getMessagesForRequest({ tokenBudget: COMPACTING_BUDGET });
          const ms = performance.now() - t0;
          if (!side.compacted) side.turns.push(ms);
        }
      }
    }
    runs.push({ format, model, on: summarize(sides[0]!.turns), off: summarize(sides[1]!.turns) });
  }
  return runs;
}

function reportMetering(report: Report, runs: readonly MeteringRun[]): void {
  report.heading('What metering adds to the steady turn');
  report.table(
    ['format', 'model', 'metered median', 'unmetered median', 'added', 'turns', 'goal < 5%'],
    runs.map((r) => {
      const added = r.on.median / r.off.median - 1;
      return [
        r.format,
        r.model,
        formatMs(r.on.median),
        formatMs(r.off.median),
        `${formatMs(r.on.median - r.off.median)} (${(100 * added).toFixed(1)}%)`,
        `${r.on.n} / ${r.off.n}`,
        verdict(added < GOALS.metering),
      ];
    }),
  );
  report.note(
    `The session's first ${sizeLabel(GOAL_SIZE)} messages, then ${METERING_BLOCK * METERING_BLOCKS} turns at the ${formatCount(COMPACTING_BUDGET)}-token budget: two managers, \`costMeter\` on and off, taking turns by blocks of ${METERING_BLOCK} turns; turns in which a compaction ran are left out. Metering bills each view by its provider's caching rules (src/meter/cost-meter.ts).`,
  );
}

/**
 * `n` Gemini contents: an OpenAI session converted (parallel tool results become one content, so
 * the session generated is longer than `n`).
 */
function geminiSession(n: number): Message[] {
  for (let m = n; ; m = Math.ceil(m * 1.5)) {
    const contents = convertMessages(longSessionMessages(m, 'openai', SEED), 'gemini');
    if (contents.length >= n) return contents.slice(0, n);
  }
}

function reportFormats(report: Report, runs: readonly FormatRun[]): void {
  report.heading(`Steady turn by format (${sizeLabel(GOAL_SIZE)} messages)`);
  report.table(
    ['format', 'budget', 'median', 'p95', 'turns', 'goal < 1 ms'],
    runs.map((r) => [
      r.format,
      r.budgetLabel,
      formatMs(r.turns.median),
      formatMs(r.turns.p95),
      String(r.turns.n),
      verdict(r.turns.median < 1),
    ]),
  );
  report.note(
    'Anthropic: `longSessionMessages(n, "anthropic")` counted with the Claude estimate; Responses API: the OpenAI session converted to input items, counted with o200k; Gemini: the OpenAI session converted to contents, counted with the Gemini estimate.',
  );
}

function buildReport(
  scenarios: readonly Scenario[],
  counting: CountingResult,
  hostile: readonly HostileRow[],
  peakRss: number,
  wallMs: number,
): Report {
  const report = new Report('contextkit core benchmark');
  report.note(
    [
      `Node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(2)} at the end (other processes share the machine: figures move from run to run); model ${MODEL} (o200k_base, exact counts).`,
      `History: \`longSessionMessages(n, 'openai', ${SEED})\` from test/support/arbitraries.ts (tool calls, parallel calls, large results now and then, images).`,
      `A turn: add the session's next message, then request the view. Budgets: a fixed ${formatCount(COMPACTING_BUDGET)} tokens (the history outgrows it, so the manager compacts now and then), and an unbounded one (${formatCount(UNBOUNDED_BUDGET)}: nothing to compact).`,
      'Ours: `ContextManager` (memoized counts, plan kept between requests). Turns in which a compaction ran are left out of the steady-state figures and reported apart.',
      'Baseline A: recount every message with gpt-tokenizer o200k_base and the same framing, then trim the oldest (keeping tool pairs): one full count a request, which is less work than LangChain `trimMessages` does (it recounts slices while searching for the cut). Baseline B: the same with `JSON.stringify(content).length / 4`. Both see the same messages as ours (bench/baselines.ts).',
      `Turn counts: ours up to ${LIMITS.ours.maxTurns} (or ${LIMITS.ours.capMs / 1000} s); the baselines stop after ${LIMITS.exact.capMs / 1000} s (A) and ${LIMITS.chars.capMs / 1000} s (B), at least ${LIMITS.exact.minTurns} turns, so at 100k messages their figures come from few turns (see the "turns" columns).`,
    ].join('\n'),
  );

  report.heading('Per-turn time, side by side');
  report.table(
    [
      'history',
      'budget',
      'ours median',
      'ours p95',
      'turns',
      'A median',
      'A p95',
      'turns',
      'B median',
      'B p95',
      'turns',
      'A ÷ ours',
      'B ÷ ours',
    ],
    scenarios.map((s) => [
      `${sizeLabel(s.size)} msgs`,
      s.budgetLabel,
      formatMs(s.ours.turns.median),
      formatMs(s.ours.turns.p95),
      String(s.ours.turns.n),
      formatMs(s.exact.turns.median),
      formatMs(s.exact.turns.p95),
      String(s.exact.turns.n),
      formatMs(s.chars.turns.median),
      formatMs(s.chars.turns.p95),
      String(s.chars.turns.n),
      formatRatio(s.exact.turns.median / s.ours.turns.median),
      formatRatio(s.chars.turns.median / s.ours.turns.median),
    ]),
  );

  report.heading('Ours: set-up, compactions, last view');
  report.table(
    [
      'history',
      'budget',
      'prefill (adds)',
      'first request',
      'compactions in loop',
      'their turn (median / max)',
      'planning (median)',
      'last view: msgs / tokens',
      'A view',
      'B view',
    ],
    scenarios.map((s) => [
      `${sizeLabel(s.size)} msgs`,
      s.budgetLabel,
      formatMs(s.ours.prefillMs),
      `${formatMs(s.ours.firstRequestMs)}${s.ours.firstRequestCompacted ? ' (compacts)' : ''}`,
      String(s.ours.compactionTurns.n),
      s.ours.compactionTurns.n > 0
        ? `${formatMs(s.ours.compactionTurns.median)} / ${formatMs(s.ours.compactionTurns.max)}`
        : '–',
      s.ours.planMs.length > 0 ? formatMs(summarize(s.ours.planMs).median) : '–',
      `${formatCount(s.ours.lastView.messages)} / ${formatCount(s.ours.lastView.tokens)}`,
      `${formatCount(s.exact.lastView.messages)} / ${formatCount(s.exact.lastView.tokens)}`,
      `${formatCount(s.chars.lastView.messages)} / ${formatCount(s.chars.lastView.tokens)}*`,
    ]),
  );
  report.note(
    'The first request counts the whole history once (cold) and, under the 100k budget, makes the first plan. ' +
      '"planning" is the compaction time the receipt reports; "their turn" is the whole turn it ran in. ' +
      "* B's view tokens are its own chars/4 estimate, not billed tokens.",
  );

  const countRatio = counting.oursMs.median / counting.directMs.median;
  const rate = (ms: number) => `${formatCount((counting.tokens / ms) * 1000)} tokens/s`;
  report.heading('Counting throughput');
  report.table(
    ['counter', 'median pass', 'throughput'],
    [
      [
        'ours: createTokenCounter(gpt-4o).countMessage',
        formatMs(counting.oursMs.median),
        rate(counting.oursMs.median),
      ],
      [
        'gpt-tokenizer countTokens on the same texts',
        formatMs(counting.directMs.median),
        rate(counting.directMs.median),
      ],
    ],
  );
  report.note(
    `${formatCount(counting.messages)} fresh messages (${formatCount(counting.tokens)} text tokens), ${counting.oursMs.n} passes each, alternating, gpt-tokenizer's merge cache cleared before every pass. Throughput is text tokens per second for both (ours also adds the framing).`,
  );

  report.heading('Counting hostile texts (1 MB each)');
  report.table(
    ['text', 'chars', 'tokens', 'time'],
    hostile.map((h) => [h.name, formatCount(h.chars), formatCount(h.tokens), formatMs(h.ms)]),
  );
  report.note(
    'One `countText` per text with a fresh gpt-4o counter. Before the bounded counter, `a` × 400k alone took 99 s; a pre-token over 512 characters is now counted in pieces (within one token per cut, bounded-count.ts).',
  );

  const memoryRows = scenarios.filter((s) => s.ours.heapBytes !== undefined);
  report.heading('Memory');
  report.table(
    ['history', 'budget', 'history JSON', 'manager heap', 'heap ÷ JSON', `goal < ${GOALS.memory}×`],
    memoryRows.map((s) => {
      const ratio = s.ours.heapBytes! / s.jsonBytes;
      return [
        `${sizeLabel(s.size)} msgs`,
        s.budgetLabel,
        formatBytes(s.jsonBytes),
        formatBytes(s.ours.heapBytes!),
        formatRatio(ratio),
        verdict(ratio < GOALS.memory),
      ];
    }),
  );
  report.note(
    `Manager heap: heap used after a full gc with the manager holding the history (after its prefill and first request, so with its token memo, atoms and view), minus heap used before it was made; gpt-tokenizer's merge cache cleared for both. Peak RSS of the whole run: ${formatBytes(peakRss)} (it includes the generated session and the baselines).`,
  );

  report.heading(`Goals (at ${sizeLabel(GOAL_SIZE)} messages)`);
  const goalRows: string[][] = [];
  for (const s of scenarios.filter((x) => x.size === GOAL_SIZE)) {
    const ours = s.ours.turns.median;
    const vsExact = s.exact.turns.median / ours;
    const vsChars = s.chars.turns.median / ours;
    goalRows.push(
      [
        `turn vs exact recount (${s.budgetLabel})`,
        `≥ ${GOALS.vsExact}× faster`,
        formatRatio(vsExact),
        verdict(vsExact >= GOALS.vsExact),
      ],
      [
        `turn vs chars/4 (${s.budgetLabel})`,
        'no slower (≥ 1×)',
        formatRatio(vsChars),
        verdict(vsChars >= GOALS.vsChars),
      ],
      [
        `turn, median (${s.budgetLabel})`,
        `< ${GOALS.turnMs} ms`,
        formatMs(ours),
        verdict(ours < GOALS.turnMs),
      ],
    );
    if (s.ours.heapBytes !== undefined) {
      const ratio = s.ours.heapBytes / s.jsonBytes;
      goalRows.push([
        `stored-history memory (${s.budgetLabel})`,
        `< ${GOALS.memory}× its JSON`,
        formatRatio(ratio),
        verdict(ratio < GOALS.memory),
      ]);
    }
  }
  goalRows.push([
    'counting throughput vs gpt-tokenizer',
    `within ${GOALS.counting}×`,
    `${formatRatio(countRatio)} the time`,
    verdict(countRatio <= GOALS.counting),
  ]);
  report.table(['goal', 'target', 'measured', 'result'], goalRows);
  report.note(`Whole run: ${formatMs(wallMs)}.`);
  return report;
}
