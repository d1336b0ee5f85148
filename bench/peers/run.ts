/**
 * `npm run bench -- peers`: contextkit beside the tools users pick today (LangChain's
 * `trimMessages`, Mastra's `TokenLimiter`, the AI SDK's `pruneMessages`, the seeds' reference
 * behaviours), each fed the same conversations and budgets, each judged by the same independent
 * checks: validity (bench/independent-validator.ts), fit (bench/peers/o200k-count.ts), facts kept,
 * prefix stability over a turn-by-turn replay, per-turn time and peak heap.
 */
import { availableParallelism, loadavg } from 'node:os';
import type { Message, MessageFormat } from '../../src/messages/types.js';
import { longSessionMessages } from '../../test/support/arbitraries.js';
import { loadChats, normalizeAnswer } from '../../test/support/locomo.js';
import { hasTauBench, loadTauBench, TAU_BENCH_PATH } from '../../test/support/tau-bench.js';
import { requestProblems } from '../independent-validator.js';
import { formatBytes, formatMs, formatRatio, Report, verdict } from '../report.js';
import { collectGarbage, summarize } from '../stats.js';
import { UsageError } from '../usage-error.js';
import { aiSdkPrune } from './ai-sdk.js';
import { BillTally, PRICED_MODELS, SessionBilling, TURN_SECONDS } from './billing.js';
import { contextkitDefault, contextkitTaskNotKept, contextkitTruncate } from './contextkit.js';
import { langchainTrimApprox, langchainTrimExact } from './langchain.js';
import { mastraTokenLimiter } from './mastra.js';
import { RequestCounter } from './o200k-count.js';
import type { Peer, PeerSession } from './peer.js';
import { contextSimple, seedCharsTruncation } from './seed-baselines.js';

const PEERS: readonly Peer[] = [
  contextkitDefault,
  contextkitTaskNotKept,
  contextkitTruncate,
  langchainTrimExact,
  langchainTrimApprox,
  mastraTokenLimiter,
  aiSdkPrune,
  contextSimple,
  seedCharsTruncation,
];
/** The column the goals are about; the others are the peers it is compared with. */
const OURS = contextkitDefault.name;
const OURS_TOO = new Set([contextkitDefault.name, contextkitTaskNotKept.name, contextkitTruncate.name]);
/** The trimmers that fill the budget, the billing goal's yardstick. */
const TRIMMERS = new Set([langchainTrimExact.name, langchainTrimApprox.name, mastraTokenLimiter.name]);
/** The chat set's budget, as a share of each chat's size. */
const CHAT_BUDGET = 0.4;

const FORMATS: readonly ('openai' | 'anthropic')[] = ['openai', 'anthropic'];
const BUDGET_FRACTIONS = [0.2, 0.4, 0.6, 0.8] as const;
const SEED = 20_240_601;
/** The generated sessions' budget: a 128k window less output and margin, or half the session. */
const SESSION_BUDGET = 100_000;

interface Options {
  runs: number;
  /** Runs replayed turn by turn (a view before every model call); the rest give one final view. */
  replayRuns: number;
  turns1k: number;
  turns10k: number;
}

const DEFAULTS: Options = { runs: 200, replayRuns: 25, turns1k: 1000, turns10k: 24 };

function parseArgs(args: readonly string[]): Options {
  const options = { ...DEFAULTS };
  for (let i = 0; i < args.length; i++) {
    const flag = args[i];
    const value = Number(args[i + 1]);
    const key =
      flag === '--runs'
        ? 'runs'
        : flag === '--replay-runs'
          ? 'replayRuns'
          : flag === '--turns-1k'
            ? 'turns1k'
            : flag === '--turns-10k'
              ? 'turns10k'
              : undefined;
    if (key === undefined)
      throw new UsageError(
        `unknown option ${JSON.stringify(flag)} (--runs N, --replay-runs N, --turns-1k N, --turns-10k N)`,
      );
    if (!Number.isInteger(value) || value < (key === 'replayRuns' ? 0 : 1))
      throw new UsageError(`${flag} needs a whole number (at least 1; 0 allowed for --replay-runs)`);
    options[key] = value;
    i++;
  }
  return options;
}

/** What one peer scored on one workload; shares are counts over totals. */
class Tally {
  views = 0;
  declined = 0;
  valid = 0;
  fit = 0;
  /** Valid and within budget: a request the provider would take. */
  usable = 0;
  turns = 0;
  stable = 0;
  factsPresent = new Map<number, number>();
  factsKept = new Map<number, number>();
  timesMs: number[] = [];
  peakHeap = 0;
  /** Final tau-bench views declined, by budget fraction, and those whose system prompt alone is over it. */
  finalDeclined = new Map<number, { declined: number; systemOver: number; runs: number }>();
  firstProblem: string | undefined;
  firstDecline: string | undefined;
  /** Input billed for the usable views sent, at each priced model. */
  bills = new BillTally();
}

function extendsPrevious(previous: readonly string[] | undefined, current: readonly string[]): boolean {
  if (previous === undefined || previous.length > current.length) return false;
  for (let i = 0; i < previous.length; i++) if (previous[i] !== current[i]) return false;
  return true;
}

/** Asks for one view (timed), judges it, and returns its serialized messages for the next turn. */
async function judgedView(
  session: PeerSession,
  tally: Tally,
  format: 'openai' | 'anthropic',
  budget: number,
  counter: RequestCounter,
  previous: string[] | undefined,
  addMs: number,
  judge = true,
  billing?: SessionBilling,
): Promise<{ serialized: string[] | undefined; messages: Message[] | undefined; usable: boolean }> {
  const t0 = performance.now();
  const view = await session.view();
  tally.timesMs.push(addMs + performance.now() - t0);
  if (!judge) return { serialized: previous, messages: undefined, usable: false };
  tally.views++;
  if (previous !== undefined) tally.turns++;
  if (!view.ok) {
    tally.declined++;
    tally.firstDecline ??= view.error.slice(0, 200);
    return { serialized: undefined, messages: undefined, usable: false };
  }
  const messages = view.messages();
  const problems = requestProblems(messages, format);
  if (problems.length === 0) tally.valid++;
  else tally.firstProblem ??= problems[0];
  const fits = counter.count(messages) <= budget;
  if (fits) tally.fit++;
  const usable = fits && problems.length === 0;
  if (usable) tally.usable++;
  const serialized = messages.map((m) => JSON.stringify(m));
  if (extendsPrevious(previous, serialized)) tally.stable++;
  // Only a request the provider takes is billed.
  if (usable && billing) {
    billing.bill(
      serialized,
      messages.map((m, i) => counter.countOne(m, serialized[i]!)),
    );
  }
  return { serialized, messages, usable };
}

/** Where the run is, on stderr, so a long run shows it is moving and the report stays clean. */
function progress(line: string): void {
  process.stderr.write(`  ${line}\n`);
}

// ---------------------------------------------------------------- tau-bench

async function tauBenchWorkload(
  format: 'openai' | 'anthropic',
  runs: number,
  replayRuns: number,
): Promise<Map<string, Tally>> {
  const data = loadTauBench().slice(0, runs);
  const counter = new RequestCounter();
  const sizes = data.map((run) => counter.count(run[format]));
  const tallies = new Map<string, Tally>();
  for (const peer of PEERS) {
    const tally = new Tally();
    tallies.set(peer.name, tally);
    const t0 = performance.now();
    for (const fraction of BUDGET_FRACTIONS) {
      for (let r = 0; r < data.length; r++) {
        const run = data[r]!;
        const budget = Math.floor(sizes[r]! * fraction);
        const session = peer.start(format, budget);
        const billing = r < replayRuns ? new SessionBilling(tally.bills) : undefined;
        const messages = run[format];
        let previous: string[] | undefined;
        let last: Message[] | undefined;
        let lastUsable = false;
        for (let i = 0; i < messages.length; i++) {
          const message = messages[i]!;
          // The agent asks for a view each time the model is about to answer.
          if (r < replayRuns && message.role === 'assistant' && i > 0) {
            ({ serialized: previous, messages: last } = await judgedView(
              session,
              tally,
              format,
              budget,
              counter,
              previous,
              0,
              true,
              billing,
            ));
          }
          await session.add(message);
        }
        ({ messages: last, usable: lastUsable } = await judgedView(
          session,
          tally,
          format,
          budget,
          counter,
          previous,
          0,
          true,
          billing,
        ));
        const d = tally.finalDeclined.get(fraction) ?? { declined: 0, systemOver: 0, runs: 0 };
        d.runs++;
        if (last === undefined) {
          d.declined++;
          if (counter.count(messages.filter((m) => m.role === 'system')) > budget) d.systemOver++;
        }
        tally.finalDeclined.set(fraction, d);
        // A view the provider would refuse (invalid, or over the budget) gets nothing to the model.
        const json = last === undefined || !lastUsable ? '' : JSON.stringify(last);
        const kept = run.presentFacts.filter((fact) => json.includes(fact)).length;
        tally.factsPresent.set(fraction, (tally.factsPresent.get(fraction) ?? 0) + run.presentFacts.length);
        tally.factsKept.set(fraction, (tally.factsKept.get(fraction) ?? 0) + kept);
      }
    }
    progress(`tau-bench ${format}: ${peer.name} ${formatMs(performance.now() - t0)}`);
  }
  return tallies;
}

// ---------------------------------------------------------------- generated sessions

async function sessionWorkload(
  n: number,
  format: 'openai' | 'anthropic',
  turns: number,
): Promise<{ tallies: Map<string, Tally>; budget: number; size: number }> {
  const history = longSessionMessages(n, format, SEED);
  const counter = new RequestCounter();
  const size = counter.count(history);
  counter.clear();
  const budget = Math.min(SESSION_BUDGET, Math.floor(size / 2));
  const prefill = history.length - turns;
  const tallies = new Map<string, Tally>();
  for (const peer of PEERS) {
    const tally = new Tally();
    tallies.set(peer.name, tally);
    const t0 = performance.now();
    collectGarbage();
    const heapBefore = process.memoryUsage().heapUsed;
    const session = peer.start(format, budget);
    const billing = new SessionBilling(tally.bills);
    for (let i = 0; i < prefill; i++) await session.add(history[i]!);
    let previous: string[] | undefined;
    for (let i = prefill; i < history.length; i++) {
      const t0 = performance.now();
      await session.add(history[i]!);
      const addMs = performance.now() - t0;
      // Judged only where the agent would call the model (next comes the model's answer, or the end):
      // a view asked mid tool exchange is timed, but never sent, so it is not graded.
      const atCall = i === history.length - 1 || history[i + 1]?.role === 'assistant';
      ({ serialized: previous } = await judgedView(
        session,
        tally,
        format,
        budget,
        counter,
        previous,
        addMs,
        atCall,
        billing,
      ));
      tally.peakHeap = Math.max(tally.peakHeap, process.memoryUsage().heapUsed - heapBefore);
    }
    counter.clear();
    progress(`${n} ${format}: ${peer.name} ${formatMs(performance.now() - t0)}`);
  }
  return { tallies, budget, size };
}

// ---------------------------------------------------------------- the chat set

async function chatWorkload(chats: ReturnType<typeof loadChats> & object): Promise<Map<string, Tally>> {
  const format: MessageFormat = 'openai';
  const counter = new RequestCounter();
  const tallies = new Map<string, Tally>();
  for (const peer of PEERS) {
    const tally = new Tally();
    tallies.set(peer.name, tally);
    const t0 = performance.now();
    for (const chat of chats) {
      const messages = chat.entries.map((e) => e.message);
      const budget = Math.floor(counter.count(messages) * CHAT_BUDGET);
      const session = peer.start(format, budget);
      const billing = new SessionBilling(tally.bills);
      let previous: string[] | undefined;
      for (let i = 0; i < messages.length; i++) {
        if (messages[i]!.role === 'assistant' && i > 0) {
          ({ serialized: previous } = await judgedView(
            session,
            tally,
            format,
            budget,
            counter,
            previous,
            0,
            true,
            billing,
          ));
        }
        await session.add(messages[i]!);
      }
      const { messages: last, usable } = await judgedView(
        session,
        tally,
        format,
        budget,
        counter,
        previous,
        0,
        true,
        billing,
      );
      const whole = normalizeAnswer(JSON.stringify(messages.map((m) => m.content)));
      const answers = chat.questions.map((q) => q.answer).filter((a) => a.length > 0 && whole.includes(a));
      const seen = last && usable ? normalizeAnswer(JSON.stringify(last.map((m) => m.content))) : '';
      tally.factsPresent.set(CHAT_BUDGET, (tally.factsPresent.get(CHAT_BUDGET) ?? 0) + answers.length);
      tally.factsKept.set(
        CHAT_BUDGET,
        (tally.factsKept.get(CHAT_BUDGET) ?? 0) + answers.filter((a) => seen.includes(a)).length,
      );
    }
    counter.clear();
    progress(`locomo-dev: ${peer.name} ${formatMs(performance.now() - t0)}`);
  }
  return tallies;
}

// ---------------------------------------------------------------- the report

function pct(part: number, whole: number): string {
  return whole === 0 ? '–' : `${((100 * part) / whole).toFixed(1)}%`;
}

function share(part: number, whole: number): number {
  return whole === 0 ? Number.NaN : part / whole;
}

interface Row {
  label: string;
  value(t: Tally): number;
  show(t: Tally): string;
  higherIsBetter: boolean;
}

function shareRow(label: string, part: (t: Tally) => number, whole: (t: Tally) => number): Row {
  return {
    label,
    value: (t) => share(part(t), whole(t)),
    show: (t) => pct(part(t), whole(t)),
    higherIsBetter: true,
  };
}

const COMMON_ROWS: Row[] = [
  shareRow(
    'validity (of views returned)',
    (t) => t.valid,
    (t) => t.views - t.declined,
  ),
  shareRow(
    'fit (≤ budget, o200k, of views returned)',
    (t) => t.fit,
    (t) => t.views - t.declined,
  ),
  shareRow(
    'usable (valid and within budget, of all requests)',
    (t) => t.usable,
    (t) => t.views,
  ),
  shareRow(
    'declined (overflow error)',
    (t) => t.declined,
    (t) => t.views,
  ),
  shareRow(
    'stability (extends previous)',
    (t) => t.stable,
    (t) => t.turns,
  ),
];

const TIME_ROW: Row = {
  label: 'per-turn time (median)',
  value: (t) => summarize(t.timesMs).median,
  show: (t) => formatMs(summarize(t.timesMs).median),
  higherIsBetter: false,
};

const HEAP_ROW: Row = {
  label: 'peak heap over baseline',
  value: (t) => t.peakHeap,
  show: (t) => formatBytes(t.peakHeap),
  higherIsBetter: false,
};

function usd(n: number): string {
  return Number.isFinite(n) ? `$${n < 0.1 ? n.toFixed(4) : n.toFixed(3)}` : '–';
}

const perRequest = (t: Tally, model: (typeof PRICED_MODELS)[number]): number =>
  t.bills.requests === 0 ? Number.NaN : t.bills.price[model] / t.bills.requests;

/** Billed input per request at each priced model, the session's total, and the share read from cache. */
const BILL_ROWS: Row[] = [
  ...PRICED_MODELS.map(
    (model): Row => ({
      label: `billed input per request, ${model}`,
      value: (t) => perRequest(t, model),
      show: (t) => usd(perRequest(t, model)),
      higherIsBetter: false,
    }),
  ),
  {
    label: 'billed input, all requests, claude-sonnet-4-5',
    value: (t) => t.bills.price['claude-sonnet-4-5'],
    show: (t) => usd(t.bills.price['claude-sonnet-4-5']),
    higherIsBetter: false,
  },
  shareRow(
    'input read from cache (claude-sonnet-4-5)',
    (t) => t.bills.cachedTokens['claude-sonnet-4-5'],
    (t) => t.bills.inputTokens,
  ),
];

function factRow(fraction: number): Row {
  return shareRow(
    `facts kept @ ${fraction * 100}% budget`,
    (t) => t.factsKept.get(fraction) ?? 0,
    (t) => t.factsPresent.get(fraction) ?? 0,
  );
}

/** The best figure among the peers (contextkit's own columns left out). */
function bestPeer(row: Row, tallies: Map<string, Tally>): number {
  const values = [...tallies].filter(([name]) => !OURS_TOO.has(name)).map(([, t]) => row.value(t));
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return Number.NaN;
  return row.higherIsBetter ? Math.max(...finite) : Math.min(...finite);
}

function table(report: Report, rows: Row[], tallies: Map<string, Tally>): void {
  const names = [...tallies.keys()];
  const ours = tallies.get(OURS)!;
  report.table(
    ['', ...names, 'ours ÷ best peer'],
    rows.map((row) => {
      const best = bestPeer(row, tallies);
      const mine = row.value(ours);
      const ratio = best === 0 ? (mine === 0 ? 1 : Number.POSITIVE_INFINITY) : mine / best;
      return [row.label, ...names.map((name) => row.show(tallies.get(name)!)), formatRatio(ratio)];
    }),
  );
}

function problemNotes(report: Report, tallies: Map<string, Tally>): void {
  for (const [name, t] of tallies) {
    if (t.firstProblem) report.note(`- ${name}, first rule broken: ${t.firstProblem}`);
    if (t.firstDecline) report.note(`- ${name}, first decline: ${t.firstDecline}`);
  }
}

interface Goals {
  validFit: Array<{ workload: string; pass: boolean; detail: string }>;
  billed: Array<{ workload: string; pass: boolean; detail: string }>;
  facts: Array<{ workload: string; fraction: number; pass: boolean; detail: string }>;
  speed: Array<{ workload: string; pass: boolean; detail: string }>;
}

/**
 * A trimmer is held to the same budget when at least this share of its requests were usable
 * (valid and within the budget): one that goes over the budget or breaks the API's rules more
 * often is billed only for the few early, small views the provider would take, and would look
 * cheap for sending little.
 */
const SAME_BUDGET_USABLE = 0.95;

/** Billed input per request at claude-sonnet-4-5 prices: ours ≤ 0.15× the cheapest budget-filling trimmer's. */
function checkBilled(goals: Goals, workload: string, tallies: Map<string, Tally>): void {
  const model = 'claude-sonnet-4-5';
  const mine = perRequest(tallies.get(OURS)!, model);
  const trimmers = [...tallies].filter(
    ([name, t]) => TRIMMERS.has(name) && t.views > 0 && t.usable / t.views >= SAME_BUDGET_USABLE,
  );
  const [bestName, best] = trimmers
    .map(([name, t]) => [name, perRequest(t, model)] as const)
    .filter(([, v]) => Number.isFinite(v))
    .reduce((a, b) => (b[1] < a[1] ? b : a), ['–', Number.POSITIVE_INFINITY] as const);
  if (!Number.isFinite(best)) {
    goals.billed.push({
      workload,
      pass: false,
      detail: `no trimmer sent usable views (valid, within the budget) for ${SAME_BUDGET_USABLE * 100}% of its requests: nothing to compare`,
    });
    return;
  }
  const ratio = mine / best;
  goals.billed.push({
    workload,
    pass: ratio <= 0.15,
    detail: `${usd(mine)} vs ${bestName} ${usd(best)} per request: ${ratio.toFixed(3)}×`,
  });
}

function checkValidFit(goals: Goals, workload: string, tallies: Map<string, Tally>): void {
  const t = tallies.get(OURS)!;
  const returned = t.views - t.declined;
  const pass = t.valid === returned && t.fit === returned;
  goals.validFit.push({
    workload,
    pass,
    detail: `valid ${pct(t.valid, returned)}, fit ${pct(t.fit, returned)} of the views returned; ${t.declined} requests declined`,
  });
}

/** Runs the peers benchmark and writes `bench/results/peers.md`. */
export async function runPeersBenchmark(args: readonly string[]): Promise<void> {
  const options = parseArgs(args);
  const started = performance.now();
  const report = new Report('contextkit beside its peers');
  report.note(
    `Node ${process.version}, ${availableParallelism()} cores, load ${loadavg()[0]?.toFixed(2)} at start. ` +
      'Every peer gets the same messages and budget and returns the view it would send; the view is judged ' +
      "here: validity by bench/independent-validator.ts (its own implementation of the providers' rules), " +
      "fit by an exact o200k_base count with OpenAI's per-message framing (bench/peers/o200k-count.ts), " +
      "facts kept as the share of each tau-bench run's ground-truth argument values still in the view's JSON " +
      '(pooled over runs), stability as the share of turns whose view starts with the previous view byte for byte.',
  );
  report.note(
    'Peers: LangChain.js `trimMessages` (@langchain/core 1.4; strategy last, includeSystem, startOn human) with a ' +
      "gpt-tokenizer o200k counter and with a chars/4 approximate counter (LangChain's `countTokensApproximately` " +
      'rule, written here: it ships in the `langchain` package, not installed); Mastra `TokenLimiter` ' +
      '(@mastra/memory 0.15 for @mastra/core 0.24, the Node 20 line: one mode only, contiguous from the newest; ' +
      'best-fit is not in this version); AI SDK `pruneMessages` (ai 6; prunes reasoning and tool calls before the ' +
      "last messages, counts no tokens, so gets no budget); the seeds' context-simple (system + last 10, pairs " +
      "kept, dedupe, 92% chars/4 trigger) and the seed example's chars/4 truncation (90% trigger, down to 70%), " +
      'written here; contextkit (gpt-4o, default strategy `summarize` with the offline tools, the same with `protectTask: false` (task not kept), and `truncate`). ' +
      "LangChain's `summarizationMiddleware` is left out: it calls a chat model to summarize, and this benchmark " +
      "runs offline. Counters given to LangChain remember each message's count, which only makes it faster.",
  );
  report.note(
    'Billed input: every view a provider would take (valid and within budget) is billed by the cost meter ' +
      '(src/guard/cost-meter.ts) at gpt-4o and claude-sonnet-4-5 prices (src/tokens/pricing.ts, read 2026-11-24), ' +
      "with each provider's documented caching (OpenAI: automatic, 1,024-token minimum, 128-token steps, cached " +
      'input at half price; Anthropic: a breakpoint on the last block, reads at 0.1×, writes at 1.25×, 20-block ' +
      `lookback, 1,024-token minimum), counted with the benchmark's own o200k counts, one model call every ${TURN_SECONDS} s. ` +
      'In tau-bench only the replayed runs are billed. Per request is the fair column: a peer that declines or ' +
      'sends invalid views is billed for fewer requests.',
  );
  const goals: Goals = { validFit: [], billed: [], facts: [], speed: [] };

  if (!hasTauBench()) {
    report.note(`tau-bench data not found at ${TAU_BENCH_PATH}: its workloads are skipped.`);
  } else {
    for (const format of FORMATS) {
      const t0 = performance.now();
      const tallies = await tauBenchWorkload(format, options.runs, options.replayRuns);
      const workload = `tau-bench (${format})`;
      report.heading(`${workload}: ${options.runs} runs × budgets of 20/40/60/80% of each run's size`);
      report.note(
        `The first ${Math.min(options.replayRuns, options.runs)} runs are replayed turn by turn (a view before each ` +
          'assistant message, the model call, and one at the end); the others give one view of the whole run ' +
          '(bounded to keep the run short). Validity and fit are over the views a peer returned; a request it declined ' +
          '(contextkit\'s ContextOverflowError, when what must be kept is over the budget) is counted apart, and "usable" ' +
          'is the share of all requests that got a view the provider would take (valid and within budget). Facts are ' +
          'over the last view of each run and count only from a usable view: a refused or over-budget request shows ' +
          'the model nothing. Stability is over the replayed turns. ' +
          `Workload time ${formatMs(performance.now() - t0)}.`,
      );
      table(report, [...COMMON_ROWS, ...BUDGET_FRACTIONS.map(factRow), ...BILL_ROWS, TIME_ROW], tallies);
      problemNotes(report, tallies);
      checkValidFit(goals, workload, tallies);
      const declines = [...tallies.get(OURS)!.finalDeclined]
        .map(
          ([f, d]) =>
            `${f * 100}%: ${d.declined}/${d.runs} (system prompt alone over the budget in ${d.systemOver})`,
        )
        .join('; ');
      report.note(`- ${OURS} declined final views by budget: ${declines}.`);
      for (const fraction of BUDGET_FRACTIONS) {
        const row = factRow(fraction);
        const mine = row.value(tallies.get(OURS)!);
        const others = [...tallies].filter(([name]) => !OURS_TOO.has(name));
        const beaten = others.filter(([, t]) => !(mine > row.value(t))).map(([name]) => name);
        goals.facts.push({
          workload,
          fraction,
          pass: beaten.length === 0,
          detail:
            beaten.length === 0
              ? `${(100 * mine).toFixed(1)}% vs best peer ${(100 * bestPeer(row, tallies)).toFixed(1)}%`
              : `${(100 * mine).toFixed(1)}%, not above ${beaten.join(', ')}`,
        });
      }
    }
  }

  for (const [n, turns] of [
    [1_000, options.turns1k],
    [10_000, options.turns10k],
  ] as const) {
    for (const format of FORMATS) {
      const t0 = performance.now();
      const { tallies, budget, size } = await sessionWorkload(n, format, turns);
      const workload = `generated ${n.toLocaleString('en-US')} messages (${format})`;
      report.heading(workload);
      report.note(
        `Session of ${size.toLocaleString('en-US')} o200k tokens, budget ${budget.toLocaleString('en-US')}. ` +
          `The first ${n - turns} messages are added without asking; then ${turns} turns of the agent loop ` +
          '(add one message, ask for the view), bounded to keep the run short. Time and heap are over all of those ' +
          'turns; validity, fit and stability over the views taken where the agent would call the model (the next ' +
          'message is the answer, or the session ends), since a view asked mid tool exchange is never sent. ' +
          `Peak heap is heapUsed (sampled after each turn) over the heap after a full collection before the session. ` +
          `Workload time ${formatMs(performance.now() - t0)}.`,
      );
      table(report, [...COMMON_ROWS, ...BILL_ROWS, TIME_ROW, HEAP_ROW], tallies);
      problemNotes(report, tallies);
      checkValidFit(goals, workload, tallies);
      checkBilled(goals, workload, tallies);
      if (n === 10_000) {
        const mine = TIME_ROW.value(tallies.get(OURS)!);
        const best = bestPeer(TIME_ROW, tallies);
        const fastest = [...tallies]
          .filter(([name]) => !OURS_TOO.has(name))
          .find(([, t]) => TIME_ROW.value(t) === best)?.[0];
        goals.speed.push({
          workload,
          pass: mine < best,
          detail: `${formatMs(mine)} vs ${fastest} ${formatMs(best)}`,
        });
      }
    }
  }

  const chats = loadChats();
  if (!chats) {
    report.note('locomo-dev chats not found beside the repository: the chat workload is skipped.');
  } else {
    const t0 = performance.now();
    const tallies = await chatWorkload(chats);
    const workload = `locomo-dev chats (${chats.length})`;
    report.heading(`${workload}: budget ${CHAT_BUDGET * 100}% of each chat's size`);
    report.note(
      "Each chat replayed turn by turn (a view before each of the second speaker's messages, and one at the end). " +
        "Facts kept: the share of the chat's question answers (normalized, and present in the chat at all) still " +
        `in the last view. Workload time ${formatMs(performance.now() - t0)}.`,
    );
    table(report, [...COMMON_ROWS, factRow(CHAT_BUDGET), ...BILL_ROWS, TIME_ROW], tallies);
    problemNotes(report, tallies);
    checkValidFit(goals, workload, tallies);
    checkBilled(goals, workload, tallies);
  }

  report.heading('Goals');
  report.table(
    ['goal', 'workload', 'result', 'verdict'],
    [
      ...goals.validFit.map((g) => [
        '100% validity and fit (contextkit)',
        g.workload,
        g.detail,
        verdict(g.pass),
      ]),
      ...goals.billed.map((g) => [
        'billed input ≤ 0.15× the best trimmer held to the budget (≥ 95% usable; claude-sonnet-4-5)',
        g.workload,
        g.detail,
        verdict(g.pass),
      ]),
      ...goals.facts.map((g) => [
        `more facts kept than every peer @ ${g.fraction * 100}%`,
        g.workload,
        g.detail,
        verdict(g.pass),
      ]),
      ...goals.speed.map((g) => ['fastest per-turn time at 10k', g.workload, g.detail, verdict(g.pass)]),
    ],
  );
  report.note(`Whole run: ${formatMs(performance.now() - started)}.`);
  process.stdout.write(report.toText());
  const path = report.write('peers');
  process.stdout.write(`\nwritten to ${path}\n`);
}
