/**
 * `npm run bench -- peers`: contextkit beside the tools users pick today (LangChain's
 * `trimMessages`, Mastra's `TokenLimiter`, the AI SDK's `pruneMessages`, the seeds' reference
 * behaviours), each fed the same conversations and budgets, each judged by the same independent
 * checks: validity (bench/independent-validator.ts), fit (bench/peers/o200k-count.ts), facts kept,
 * prefix stability over a turn-by-turn replay, per-turn time and peak heap.
 */
import { availableParallelism, loadavg } from 'node:os';
import type { Message, MessageFormat } from '../../src/messages/types.js';
import {
  factsOfLeftOut,
  isUserTurn,
  shows,
  USABLE_SHARE,
  unusableReason,
} from '../../src/report/view-keeps.js';
import { longSessionMessages } from '../../test/support/arbitraries.js';
import { loadChats, normalizeAnswer } from '../../test/support/locomo.js';
import { hasTauBench, loadTauBench, TAU_BENCH_PATH } from '../../test/support/tau-bench.js';
import { requestProblems } from '../independent-validator.js';
import { formatBytes, formatMs, formatRatio, Report, verdict } from '../report.js';
import { collectGarbage, summarize } from '../stats.js';
import { UsageError } from '../usage-error.js';
import { aiSdkPrune } from './ai-sdk.js';
import { BillTally, PRICED_MODELS, SessionBilling, TURN_SECONDS } from './billing.js';
import {
  contextkitDefault,
  contextkitEconomies,
  contextkitTaskKept,
  contextkitTruncate,
} from './contextkit.js';
import { checkFrontier, type FrontierPoint, frontierSvg } from './frontier.js';
import { langchainTrimApprox, langchainTrimExact } from './langchain.js';
import { mastraTokenLimiter } from './mastra.js';
import { RequestCounter } from './o200k-count.js';
import type { Peer, PeerSession } from './peer.js';
import { contextSimple, seedCharsTruncation } from './seed-baselines.js';

const PEERS: readonly Peer[] = [
  contextkitDefault,
  contextkitTaskKept,
  contextkitTruncate,
  ...contextkitEconomies,
  langchainTrimExact,
  langchainTrimApprox,
  mastraTokenLimiter,
  aiSdkPrune,
  contextSimple,
  seedCharsTruncation,
];
/** The column the goals are about; the others are the peers it is compared with. */
const OURS = contextkitDefault.name;
const OURS_TOO = new Set(
  [contextkitDefault, contextkitTaskKept, contextkitTruncate, ...contextkitEconomies].map((p) => p.name),
);
/** The settings that move along the frontier: the `economy` presets (`contextkit` is `balanced`). */
const ON_THE_LINE = new Set([contextkitDefault, ...contextkitEconomies].map((p) => p.name));
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
  /** Usable views holding the task (the first user turn) and the latest user turn, verbatim. */
  taskInView = 0;
  latestInView = 0;
  /** Key values said in what usable views left out, and those they still show (generated sessions). */
  saidLeftOut = 0;
  saidKept = 0;
  /** Chat answers in the last view or in what `recall(question)` returns (contextkit only). */
  recalledOrKept: number | undefined;
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
  stored?: { messages: readonly Message[]; upTo: number; said?: boolean },
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
  if (usable && stored) keptInView(tally, stored, messages);
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

/**
 * Whether a usable view holds the task and the latest user turn of what was stored before it
 * (`messages` up to `upTo`), and, where asked, the facts said in what it left out.
 */
function keptInView(
  tally: Tally,
  stored: { messages: readonly Message[]; upTo: number; said?: boolean },
  view: readonly Message[],
): void {
  const { messages, upTo } = stored;
  const task = messages.slice(0, upTo).find(isUserTurn);
  let latest: Message | undefined;
  for (let i = upTo - 1; i >= 0 && latest === undefined; i--)
    if (isUserTurn(messages[i]!)) latest = messages[i];
  if (task === undefined || shows(view, task)) tally.taskInView++;
  if (latest === undefined || shows(view, latest)) tally.latestInView++;
  if (stored.said) {
    const facts = factsOfLeftOut(messages.slice(0, upTo), view);
    tally.saidLeftOut += facts.leftOut;
    tally.saidKept += facts.kept;
  }
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
              { messages, upTo: i },
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
          { messages, upTo: messages.length },
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
        { messages: history, upTo: i + 1, said: true },
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
            { messages, upTo: i },
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
        { messages, upTo: messages.length },
      );
      const whole = normalizeAnswer(JSON.stringify(messages.map((m) => m.content)));
      const asked = chat.questions.filter((q) => q.answer.length > 0 && whole.includes(q.answer));
      const answers = asked.map((q) => q.answer);
      const seen = last && usable ? normalizeAnswer(JSON.stringify(last.map((m) => m.content))) : '';
      // Lean views lean on recall: an answer out of the view may still be one `recall` away.
      if (session.recall) {
        let reached = 0;
        for (const q of asked) {
          if (seen.includes(q.answer) || normalizeAnswer(await session.recall(q.question)).includes(q.answer))
            reached++;
        }
        tally.recalledOrKept = (tally.recalledOrKept ?? 0) + reached;
      }
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

/** What the views kept, beside what they were billed: the task and the latest user turn. */
const KEPT_ROWS: Row[] = [
  shareRow(
    'task in view (first user turn, of usable views)',
    (t) => t.taskInView,
    (t) => t.usable,
  ),
  shareRow(
    'latest user turn in view (of usable views)',
    (t) => t.latestInView,
    (t) => t.usable,
  ),
];

/** The generated sessions' facts: ids, numbers, dates, paths said in what each usable view left out. */
const SAID_ROW: Row = shareRow(
  'facts kept of what left the view (ids, numbers, dates, paths said)',
  (t) => t.saidKept,
  (t) => t.saidLeftOut,
);

/** On chats, contextkit's answers in view or reached by `recall(question)`. */
const RECALL_ROW: Row = {
  label: `answers in view or reached by recall @ ${CHAT_BUDGET * 100}% budget`,
  value: (t) =>
    t.recalledOrKept === undefined
      ? Number.NaN
      : share(t.recalledOrKept, t.factsPresent.get(CHAT_BUDGET) ?? 0),
  show: (t) =>
    t.recalledOrKept === undefined ? '–' : pct(t.recalledOrKept, t.factsPresent.get(CHAT_BUDGET) ?? 0),
  higherIsBetter: true,
};

/**
 * Why a policy's figures may not be ranked: the provider would refuse its views, or they drop
 * the task (agent workloads only: a chat has none) or the latest user turn; null when they may.
 */
function unranked(t: Tally, hasTask: boolean): string | null {
  return unusableReason({
    requests: t.views,
    accepted: t.usable,
    taskInView: hasTask ? t.taskInView : t.usable,
    latestUserInView: t.latestInView,
    factsLeftOut: 0,
    factsKept: 0,
  });
}

/** Held to the frontier goal (as the issue has it): usable on ≥ 95% of requests, latest user turn kept. */
function goalUsable(t: Tally): boolean {
  return unranked(t, false) === null;
}

function rankRow(hasTask: boolean): Row {
  return {
    label: `ranked (usable on ≥ ${USABLE_SHARE * 100}%,${hasTask ? ' task and' : ''} latest user turn kept)`,
    value: (t) => (unranked(t, hasTask) === null ? 1 : 0),
    show: (t) => (unranked(t, hasTask) === null ? 'yes' : 'no'),
    higherIsBetter: true,
  };
}

function factRow(fraction: number): Row {
  return shareRow(
    `facts kept @ ${fraction * 100}% budget`,
    (t) => t.factsKept.get(fraction) ?? 0,
    (t) => t.factsPresent.get(fraction) ?? 0,
  );
}

/**
 * The best figure among the ranked peers (contextkit's own columns left out; see `unranked`), or
 * among all peers when `hasTask` is null (the goals that hold us to every peer).
 */
function bestPeer(row: Row, tallies: Map<string, Tally>, hasTask: boolean | null): number {
  const values = [...tallies]
    .filter(([name, t]) => !OURS_TOO.has(name) && (hasTask === null || unranked(t, hasTask) === null))
    .map(([, t]) => row.value(t));
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return Number.NaN;
  return row.higherIsBetter ? Math.max(...finite) : Math.min(...finite);
}

function table(report: Report, rows: Row[], tallies: Map<string, Tally>, hasTask: boolean): void {
  const names = [...tallies.keys()];
  const ours = tallies.get(OURS)!;
  report.table(
    ['', ...names, 'ours ÷ best ranked peer'],
    [...rows, rankRow(hasTask)].map((row) => {
      const best = bestPeer(row, tallies, hasTask);
      const mine = row.value(ours);
      const ratio = best === 0 ? (mine === 0 ? 1 : Number.POSITIVE_INFINITY) : mine / best;
      return [row.label, ...names.map((name) => row.show(tallies.get(name)!)), formatRatio(ratio)];
    }),
  );
}

function problemNotes(report: Report, tallies: Map<string, Tally>, hasTask: boolean): void {
  for (const [name, t] of tallies) {
    const why = unranked(t, hasTask);
    if (why !== null && !OURS_TOO.has(name)) report.note(`- ${name}, not ranked: ${why}`);
    if (t.firstProblem) report.note(`- ${name}, first rule broken: ${t.firstProblem}`);
    if (t.firstDecline) report.note(`- ${name}, first decline: ${t.firstDecline}`);
  }
}

interface Goals {
  validFit: Array<{ workload: string; pass: boolean; detail: string }>;
  frontier: Array<{ workload: string; pass: boolean; detail: string }>;
  facts: Array<{ workload: string; fraction: number; pass: boolean; detail: string }>;
  speed: Array<{ workload: string; pass: boolean; detail: string }>;
}

/**
 * The frontier of one workload: each policy a point (billed input per request at each priced
 * model, what it kept), as a table and a chart; and the goal that some contextkit setting is
 * billed no more than each usable peer while keeping at least as much, at each price.
 */
function frontier(
  report: Report,
  goals: Goals,
  workload: string,
  tallies: Map<string, Tally>,
  hasTask: boolean,
  keptLabel: string,
  keptOf: (t: Tally) => number,
): void {
  const points: FrontierPoint[] = [...tallies].map(([name, t]) => {
    const why = unranked(t, hasTask);
    return {
      name,
      ours: OURS_TOO.has(name),
      onLine: ON_THE_LINE.has(name),
      price: { 'gpt-4o': perRequest(t, 'gpt-4o'), 'claude-sonnet-4-5': perRequest(t, 'claude-sonnet-4-5') },
      kept: keptOf(t),
      usable: goalUsable(t),
      ...(why !== null ? { unranked: why } : {}),
    };
  });
  const recall = [...tallies.values()].some((t) => t.recalledOrKept !== undefined);
  report.note(`Frontier, ${workload}: each policy as a point (billed input per request, ${keptLabel}).`);
  report.table(
    [
      'policy',
      ...PRICED_MODELS.map((m) => `billed input per request, ${m}`),
      keptLabel,
      ...(recall ? [RECALL_ROW.label] : []),
      'ranked',
    ],
    points.map((p) => [
      p.name,
      ...PRICED_MODELS.map((m) => usd(p.price[m])),
      Number.isFinite(p.kept) ? `${(100 * p.kept).toFixed(1)}%` : '–',
      ...(recall ? [RECALL_ROW.show(tallies.get(p.name)!)] : []),
      p.unranked ? `no: ${p.unranked}` : 'yes',
    ]),
  );
  const slug = workload
    .replace(/[^a-z0-9]+/gi, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
  report.chart(
    `${workload}: ${keptLabel} against billed input per request`,
    `peers-frontier-${slug}.svg`,
    frontierSvg(workload, keptLabel, points),
  );
  const checks = checkFrontier(points, usd);
  if (checks.length === 0) {
    goals.frontier.push({
      workload,
      pass: true,
      detail: `no peer usable on ≥ ${USABLE_SHARE * 100}% of requests with the latest user turn kept: nothing to meet`,
    });
  }
  for (const c of checks) {
    goals.frontier.push({ workload: `${workload}, ${c.model}`, pass: c.met !== undefined, detail: c.detail });
  }
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
      'written here; contextkit (gpt-4o, default strategy `summarize` with the offline tools, the same with `protectTask: true` (the first user message kept verbatim; the default does not keep it), and `truncate`; ' +
      'and its `economy` settings `rich`, `lean`, `minimal` and `0.05` (views aimed at 5% of the budget)). ' +
      "LangChain's `summarizationMiddleware` is left out: it calls a chat model to summarize, and this benchmark " +
      "runs offline. Counters given to LangChain remember each message's count, which only makes it faster.",
  );
  report.note(
    'Billed input: every view a provider would take (valid and within budget) is billed by the cost meter ' +
      '(src/meter/cost-meter.ts) at gpt-4o and claude-sonnet-4-5 prices (src/tokens/pricing.ts, read 2026-11-24), ' +
      "with each provider's documented caching (OpenAI: automatic, 1,024-token minimum, 128-token steps, cached " +
      'input at half price; Anthropic: a breakpoint on the last block, reads at 0.1×, writes at 1.25×, 20-block ' +
      `lookback, 1,024-token minimum), counted with the benchmark's own o200k counts, one model call every ${TURN_SECONDS} s. ` +
      'In tau-bench only the replayed runs are billed. Per request is the fair column: a peer that declines or ' +
      'sends invalid views is billed for fewer requests.',
  );
  const goals: Goals = { validFit: [], frontier: [], facts: [], speed: [] };

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
      table(
        report,
        [...COMMON_ROWS, ...BUDGET_FRACTIONS.map(factRow), ...BILL_ROWS, ...KEPT_ROWS, TIME_ROW],
        tallies,
        true,
      );
      problemNotes(report, tallies, true);
      checkValidFit(goals, workload, tallies);
      frontier(report, goals, workload, tallies, true, 'facts kept, all budgets pooled', (t) =>
        share(
          BUDGET_FRACTIONS.reduce((n, f) => n + (t.factsKept.get(f) ?? 0), 0),
          BUDGET_FRACTIONS.reduce((n, f) => n + (t.factsPresent.get(f) ?? 0), 0),
        ),
      );
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
              ? `${(100 * mine).toFixed(1)}% vs best peer ${(100 * bestPeer(row, tallies, null)).toFixed(1)}%`
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
      table(
        report,
        [...COMMON_ROWS, ...BILL_ROWS, ...KEPT_ROWS, SAID_ROW, TIME_ROW, HEAP_ROW],
        tallies,
        true,
      );
      problemNotes(report, tallies, true);
      checkValidFit(goals, workload, tallies);
      frontier(report, goals, workload, tallies, true, 'facts kept of what left the view', (t) =>
        SAID_ROW.value(t),
      );
      if (n === 10_000) {
        const mine = TIME_ROW.value(tallies.get(OURS)!);
        const best = bestPeer(TIME_ROW, tallies, null);
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
    table(
      report,
      [...COMMON_ROWS, factRow(CHAT_BUDGET), RECALL_ROW, ...BILL_ROWS, ...KEPT_ROWS, TIME_ROW],
      tallies,
      false,
    );
    problemNotes(report, tallies, false);
    checkValidFit(goals, workload, tallies);
    frontier(report, goals, workload, tallies, false, `answers in view @ ${CHAT_BUDGET * 100}% budget`, (t) =>
      factRow(CHAT_BUDGET).value(t),
    );
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
      ...goals.frontier.map((g) => [
        'a contextkit setting billed ≤ and keeping ≥ each usable peer (usable ≥ 95%, latest user turn kept)',
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
