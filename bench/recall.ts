/**
 * `npm run bench -- recall`: `ctx.recall()` over long histories. Search latency at 10k and 100k
 * messages (in process, and in the SQLite and Postgres stores' own indexes), the in-process
 * index's memory next to the history's, the steady turn (add a message, ask for the view) with
 * and without the index kept up to date, and the answers recall reaches on the chat set next to
 * a plain BM25 baseline.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as O200k from 'gpt-tokenizer/encoding/o200k_base';
import { ContextManager } from '../src/manager.js';
import type { Message } from '../src/messages/types.js';
import type { RecallOptions } from '../src/recall/recall-hit.js';
import { searchWords } from '../src/recall/terms.js';
import { openSqliteStore } from '../src/stores/sqlite.js';
import type { ConversationStore, NewEntry } from '../src/stores/types.js';
import { getModelInfo } from '../src/tokens/catalog.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { longSessionMessages } from '../test/support/arbitraries.js';
import {
  answersReachable,
  type Chat,
  type FilteredReach,
  filteredReach,
  loadChats,
} from '../test/support/locomo.js';
import { hasTauBench, loadTauBench } from '../test/support/tau-bench.js';
import { PlainBm25 } from './recall/plain-bm25.js';
import { formatBytes, formatCount, formatMs, formatRatio, Report, verdict } from './report.js';
import { liveMemoryBytes, type Summary, summarize } from './stats.js';

const MODEL = 'gpt-4o';
const SEED = 20_240_601;
const SIZES = [10_000, 100_000];
const QUERIES = 100;
const STEADY_TURNS = 300;
/** Messages appended per store call while filling a store (the fill is not what is measured). */
const FILL_BATCH = 1_000;

const GOALS = {
  /** Recall median, ms, by history size. */
  latency: new Map([
    [10_000, 5],
    [100_000, 50],
  ]),
  /** Index heap over the history's: at most. */
  memory: 1.5,
  /** Steady turn with the index, ms. */
  turnMs: 1,
  /** Share of the chat set's answers reachable. */
  reachable: 0.85,
};

const requireFromHere = createRequire(import.meta.url);
/** gpt-tokenizer's shared merge cache: not the history's memory nor the index's. */
const gptTokenizer: typeof O200k = requireFromHere('gpt-tokenizer/encoding/o200k_base');

function progress(text: string): void {
  process.stderr.write(`[bench recall] ${text}\n`);
}

/** Deterministic queries: two to four words of messages spread over the history. */
function queriesFor(messages: readonly Message[]): string[] {
  const out: string[] = [];
  for (let k = 0; out.length < QUERIES && k < QUERIES * 20; k++) {
    const words = searchWords(JSON.stringify(messages[(k * 7_919) % messages.length]?.content ?? ''));
    if (words.length < 4) continue;
    const at = (k * 31) % (words.length - 3);
    out.push(words.slice(at, at + 2 + (k % 3)).join(' '));
  }
  return out;
}

/** Wall and CPU time of each query (CPU time is less inflated by other processes' load). */
interface Timings {
  wall: Summary;
  cpu: Summary;
}

async function timeQueries(
  manager: ContextManager,
  queries: readonly string[],
  options: RecallOptions = {},
): Promise<Timings> {
  for (const q of queries.slice(0, 10)) await manager.recall(q, options);
  const wall: number[] = [];
  const cpu: number[] = [];
  for (const q of queries) {
    const c = process.cpuUsage();
    const t = performance.now();
    await manager.recall(q, options);
    wall.push(performance.now() - t);
    const used = process.cpuUsage(c);
    cpu.push((used.user + used.system) / 1000);
  }
  return { wall: summarize(wall), cpu: summarize(cpu) };
}

interface InProcessResult {
  size: number;
  historyHeap: number;
  indexHeap: number;
  buildMs: number;
  buildCpuMs: number;
  latency: Timings;
  /** With `FILTER`: the role and seq filters read every entry in range. */
  filtered: Timings;
}

/** The filters timed: the assistant's turns of the second half of the history. */
function filterFor(size: number): RecallOptions {
  return { role: 'assistant', fromSeq: Math.floor(size / 2) };
}

async function measureInProcess(
  messages: readonly Message[],
  queries: readonly string[],
): Promise<InProcessResult> {
  gptTokenizer.clearMergeCache();
  const before = liveMemoryBytes();
  const manager = new ContextManager({ model: MODEL });
  for (const m of messages) await manager.addMessage(m);
  gptTokenizer.clearMergeCache();
  const withHistory = liveMemoryBytes();
  const t = performance.now();
  const c = process.cpuUsage();
  // The first recall builds the index from the history (later messages are added one by one).
  await manager.recall('warm up');
  const buildMs = performance.now() - t;
  const used = process.cpuUsage(c);
  gptTokenizer.clearMergeCache();
  const withIndex = liveMemoryBytes();
  const latency = await timeQueries(manager, queries);
  const filtered = await timeQueries(manager, queries, filterFor(messages.length));
  return {
    size: messages.length,
    filtered,
    historyHeap: withHistory - before,
    indexHeap: withIndex - withHistory,
    buildMs,
    buildCpuMs: (used.user + used.system) / 1000,
    latency,
  };
}

interface TurnResult {
  size: number;
  off: Summary;
  on: Summary;
}

async function steadyTurns(
  history: readonly Message[],
  next: readonly Message[],
  recall: boolean,
): Promise<Summary> {
  const manager = new ContextManager({ model: MODEL, recall });
  for (const m of history) await manager.addMessage(m);
  await manager.getMessagesForRequest();
  if (recall) await manager.recall('warm up');
  const times: number[] = [];
  for (const m of next) {
    const t = performance.now();
    await manager.addMessage(m);
    await manager.getMessagesForRequest();
    times.push(performance.now() - t);
  }
  return summarize(times);
}

interface StoreDriver {
  name: string;
  open: () => Promise<ConversationStore>;
  cleanup: () => Promise<void>;
}

async function storeDrivers(dir: string): Promise<StoreDriver[]> {
  const drivers: StoreDriver[] = [
    {
      name: 'sqlite',
      open: () => openSqliteStore(join(dir, 'recall.db'), { synchronous: 'normal' }),
      cleanup: async () => {},
    },
  ];
  const url = process.env.DATABASE_URL;
  if (url) {
    const { openPostgresStore } = await import('../src/stores/postgres.js');
    const schema = `ck_bench_recall_${process.pid}`;
    drivers.push({
      name: 'postgres',
      open: () => openPostgresStore(url, { schema }),
      cleanup: async () => {
        const pg = (await import('pg')).default;
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      },
    });
  } else {
    progress('postgres skipped: set DATABASE_URL to measure it');
  }
  return drivers;
}

interface StoreResult {
  driver: string;
  size: number;
  latency: Timings;
  filtered: Timings;
}

async function measureStore(
  driver: StoreDriver,
  messages: readonly Message[],
  queries: readonly string[],
): Promise<StoreResult> {
  const store = await driver.open();
  const id = `recall-${messages.length}`;
  try {
    await store.delete(id);
    for (let i = 0; i < messages.length; i += FILL_BATCH) {
      const batch: NewEntry[] = messages
        .slice(i, i + FILL_BATCH)
        .map((message) => ({ message, metadata: { timestamp: '2025-01-01T00:00:00.000Z' } }));
      await store.append(id, batch);
    }
    const manager = new ContextManager({ model: MODEL, store, conversationId: id });
    await manager.getMessages();
    const latency = await timeQueries(manager, queries);
    const filtered = await timeQueries(manager, queries, filterFor(messages.length));
    return { driver: driver.name, size: messages.length, latency, filtered };
  } finally {
    await store.delete(id).catch(() => {});
    await store.close();
  }
}

interface Reach {
  label: string;
  found: number;
  total: number;
  meanTokens: number;
}

async function managerOver(chat: Chat, store?: ConversationStore): Promise<ContextManager> {
  const manager = new ContextManager({
    model: MODEL,
    ...(store ? { store, conversationId: `locomo-${chat.name}` } : {}),
  });
  if (store) await store.delete(`locomo-${chat.name}`);
  for (const entry of chat.entries) await manager.addMessage(entry.message, { metadata: entry.metadata });
  return manager;
}

async function measureChats(chats: readonly Chat[], drivers: readonly StoreDriver[]): Promise<Reach[]> {
  const counter = createTokenCounter(getModelInfo(MODEL)!);
  const countText = (text: string) => counter.countText(text);
  const out: Reach[] = [];
  const plain = await answersReachable(
    chats,
    (chat) => {
      const index = new PlainBm25(chat.entries);
      return (q) => index.recall(q, countText);
    },
    countText,
  );
  out.push({ label: 'plain BM25, one neighbour each side (baseline)', ...plain });
  const managers = new Map<string, ContextManager>();
  for (const chat of chats) managers.set(chat.name, await managerOver(chat));
  const ours = await answersReachable(
    chats,
    (chat) => async (q) => (await managers.get(chat.name)!.recall(q)).map((h) => h.text),
    countText,
  );
  out.push({ label: 'contextkit recall, in process (PostingsIndex)', ...ours });
  for (const driver of drivers) {
    progress(`chat set on ${driver.name}…`);
    const store = await driver.open();
    try {
      const stored = new Map<string, ContextManager>();
      for (const chat of chats) stored.set(chat.name, await managerOver(chat, store));
      const reach = await answersReachable(
        chats,
        (chat) => async (q) => (await stored.get(chat.name)!.recall(q)).map((h) => h.text),
        countText,
      );
      out.push({ label: `contextkit recall, ${driver.name} store's index`, ...reach });
      for (const chat of chats) await store.delete(`locomo-${chat.name}`);
    } finally {
      await store.close();
    }
  }
  return out;
}

interface FilteredResult extends FilteredReach {
  label: string;
}

/**
 * The chat set's questions asked unfiltered and restricted to the speaker (role) and month of the
 * turn holding the answer, entries timestamped when they were said: in process and on each store.
 */
async function measureFiltered(
  chats: readonly Chat[],
  drivers: readonly StoreDriver[],
): Promise<FilteredResult[]> {
  const out: FilteredResult[] = [];
  const over = (store?: ConversationStore) => async (chat: Chat) => {
    const manager = await managerOver(chat, store);
    return async (q: string, filters?: RecallOptions) =>
      (await manager.recall(q, filters)).map((h) => h.text);
  };
  out.push({ label: 'in process (PostingsIndex)', ...(await filteredReach(chats, over())) });
  for (const driver of drivers) {
    progress(`filtered questions on ${driver.name}…`);
    const store = await driver.open();
    try {
      out.push({ label: `${driver.name} store's index`, ...(await filteredReach(chats, over(store))) });
      for (const chat of chats) await store.delete(`locomo-${chat.name}`);
    } finally {
      await store.close();
    }
  }
  return out;
}

interface FactsFound {
  format: 'openai' | 'anthropic';
  found: number;
  asked: number;
}

/** Each fact a tau-bench run acted on, searched for by itself: is it in the hits? */
async function measureTauBench(): Promise<FactsFound[]> {
  const out: FactsFound[] = [];
  for (const format of ['openai', 'anthropic'] as const) {
    let found = 0;
    let asked = 0;
    for (const run of loadTauBench()) {
      const ctx = new ContextManager({ model: format === 'openai' ? 'gpt-4o' : 'claude-sonnet-4-5' });
      for (const m of run[format]) await ctx.addMessage(m);
      for (const fact of run.presentFacts) {
        asked++;
        if ((await ctx.recall(fact)).some((h) => h.text.includes(fact))) found++;
      }
    }
    out.push({ format, found, asked });
  }
  return out;
}

/** Runs the recall benchmark, prints it and writes `bench/results/recall.md`. */
export async function runRecallBenchmark(_args: readonly string[]): Promise<void> {
  const loadAtStart = loadavg()[0] ?? Number.NaN;
  const wallStart = performance.now();
  const maxSize = Math.max(...SIZES);
  progress(`generating a ${formatCount(maxSize + STEADY_TURNS)}-message session (seed ${SEED})…`);
  const session = longSessionMessages(maxSize + STEADY_TURNS, 'openai', SEED);
  const dir = await mkdtemp(join(tmpdir(), 'ck-bench-recall-'));
  const drivers = await storeDrivers(dir);
  try {
    const inProcess: InProcessResult[] = [];
    const turns: TurnResult[] = [];
    const stores: StoreResult[] = [];
    for (const size of SIZES) {
      const history = session.slice(0, size);
      const queries = queriesFor(history);
      progress(`${formatCount(size)} messages: in process…`);
      inProcess.push(await measureInProcess(history, queries));
      progress(`${formatCount(size)} messages: steady turn without and with recall…`);
      const next = session.slice(size, size + STEADY_TURNS);
      turns.push({
        size,
        off: await steadyTurns(history, next, false),
        on: await steadyTurns(history, next, true),
      });
      for (const driver of drivers) {
        progress(`${formatCount(size)} messages: ${driver.name}…`);
        stores.push(await measureStore(driver, history, queries));
      }
    }
    const chats = loadChats();
    const reach = chats ? await measureChats(chats, drivers) : undefined;
    const filtered = chats ? await measureFiltered(chats, drivers) : undefined;
    progress('tau-bench facts…');
    const tau = hasTauBench() ? await measureTauBench() : undefined;
    const report = buildReport({
      inProcess,
      turns,
      stores,
      reach,
      filtered,
      tau,
      loadAtStart,
      wallMs: performance.now() - wallStart,
    });
    process.stdout.write(report.toText());
    progress(`written to ${report.write('recall')}`);
  } finally {
    for (const driver of drivers) await driver.cleanup().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

function buildReport(r: {
  inProcess: InProcessResult[];
  turns: TurnResult[];
  stores: StoreResult[];
  reach: Reach[] | undefined;
  filtered: FilteredResult[] | undefined;
  tau: FactsFound[] | undefined;
  loadAtStart: number;
  wallMs: number;
}): Report {
  const report = new Report('contextkit recall benchmark');
  report.note(
    `Node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} cores, load average ${r.loadAtStart.toFixed(2)} at the start and ${loadavg()[0]?.toFixed(2)} at the end (other processes share the machine: figures move from run to run). Whole run ${formatMs(r.wallMs)}. ` +
      `History: \`longSessionMessages(n, 'openai', ${SEED})\` (an agent session: prose, tool calls, JSON, code and log results, some of 10k–60k characters). ` +
      `Queries: ${QUERIES} of two to four words taken from messages spread over the history (so most match thousands of messages), through \`ctx.recall(query)\` with the defaults (5 hits within 1,000 tokens), after 10 warm-up calls.`,
  );
  report.heading('Recall latency and memory, index in process');
  report.table(
    [
      'history',
      'median',
      'p95',
      'CPU median',
      'goal',
      'wall',
      'CPU',
      'with a filter: median',
      'index built: wall / CPU',
      'history memory',
      'index memory',
      'index ÷ history',
      'goal ≤ 1.5×',
    ],
    r.inProcess.map((x) => {
      const goal = GOALS.latency.get(x.size) ?? Number.NaN;
      const ratio = x.indexHeap / x.historyHeap;
      return [
        `${formatCount(x.size)} msgs`,
        formatMs(x.latency.wall.median),
        formatMs(x.latency.wall.p95),
        formatMs(x.latency.cpu.median),
        `< ${formatMs(goal)}`,
        verdict(x.latency.wall.median < goal),
        verdict(x.latency.cpu.median < goal),
        formatMs(x.filtered.wall.median),
        `${formatMs(x.buildMs)} / ${formatMs(x.buildCpuMs)}`,
        formatBytes(x.historyHeap),
        formatBytes(x.indexHeap),
        formatRatio(ratio),
        verdict(ratio <= GOALS.memory),
      ];
    }),
  );
  report.note(
    "Wall and CPU (user + system of this process) time per `recall`: on a machine whose load average is above its core count, wall time mostly measures waiting for a core, so both are given and judged. History memory: what the manager holds after the messages are added (live heap and array buffers after a full collection). Index memory: what the first `recall` adds (the postings, speakers and days per entry, tool names of results, the stem memo); that first call indexes the whole history. gpt-tokenizer's shared merge cache is cleared before each reading. With a filter: the same queries with `{ role: 'assistant', fromSeq: n/2 }` (each call reads the role of every entry in range).",
  );
  report.heading('Steady turn: add one message, then ask for the view');
  report.table(
    [
      'history',
      'recall off: median',
      'p95',
      'recall: true: median',
      'p95',
      'with ÷ without',
      'goal < 1 ms',
      '',
    ],
    r.turns.map((t) => [
      `${formatCount(t.size)} msgs`,
      formatMs(t.off.median),
      formatMs(t.off.p95),
      formatMs(t.on.median),
      formatMs(t.on.p95),
      formatRatio(t.on.median / t.off.median),
      formatMs(t.on.median),
      verdict(t.on.median < GOALS.turnMs),
    ]),
  );
  report.note(
    `${STEADY_TURNS} turns after the history, no budget limit reached at first; with \`recall: true\` each added message is indexed as it comes.`,
  );
  if (r.stores.length > 0) {
    report.heading('Recall latency, index in the store (SQLite FTS5, Postgres tsvector + GIN)');
    report.table(
      ['store', 'history', 'median', 'p95', 'CPU median (this process)', 'with a filter: median'],
      r.stores.map((s) => [
        s.driver,
        `${formatCount(s.size)} msgs`,
        formatMs(s.latency.wall.median),
        formatMs(s.latency.wall.p95),
        formatMs(s.latency.cpu.median),
        formatMs(s.filtered.wall.median),
      ]),
    );
    report.note(
      'The store searches its own index (one query per recall, top 200 candidates) and recall ranks them as in process. SQLite with `synchronous: normal`, in a temporary directory; Postgres on 127.0.0.1.',
    );
  }
  report.heading('Answers reachable on the chat set (top 5 within 1,000 tokens)');
  if (r.reach) {
    report.table(
      ['recall', 'answers', 'share', 'goal ≥ 85%', 'mean tokens'],
      r.reach.map((x) => [
        x.label,
        `${x.found} / ${x.total}`,
        `${((100 * x.found) / x.total).toFixed(1)}%`,
        x.label.includes('baseline') ? '' : verdict(x.found / x.total >= GOALS.reachable),
        x.meanTokens.toFixed(0),
      ]),
    );
    report.note(
      "LoCoMo conversations 0–4 from ../shared/data/locomo-dev (read at run time, not part of the project): each chat's turns added to a manager, each question asked as the query; an answer counts when it is in the hits' texts together (lowercase, punctuation removed, as the set's README says). The baseline (bench/recall/plain-bm25.ts) indexes each message as written, without stemming, and shows each of its top 5 with one neighbour on each side until 1,000 tokens.",
    );
  } else {
    report.note('skipped: ../shared/data/locomo-dev is not beside the repository');
  }
  report.heading('Questions restricted to the right speaker and month (top 5 within 1,000 tokens)');
  if (r.filtered) {
    report.table(
      ['recall', 'unfiltered', 'share', 'speaker and month', 'share', 'goal: filtered ≥ unfiltered'],
      r.filtered.map((x) => [
        x.label,
        `${x.unfiltered} / ${x.total}`,
        `${((100 * x.unfiltered) / x.total).toFixed(1)}%`,
        `${x.filtered} / ${x.total}`,
        `${((100 * x.filtered) / x.total).toFixed(1)}%`,
        verdict(x.filtered >= x.unfiltered),
      ]),
    );
    report.note(
      "The same LoCoMo chats, each entry's timestamp set to the day its session's stamp names (as an application storing the chat as it happened would have it). Each question whose evidence turn states its answer is asked twice: as it is, and with `{ role, startDate, endDate }` set to the role of that turn (the set's first speaker is `user`) and the first and last day of its month. The filters read the entries' roles and timestamps, not the text.",
    );
  } else {
    report.note('skipped: ../shared/data/locomo-dev is not beside the repository');
  }
  report.heading('Facts of the tau-bench runs found by recall (top 5 within 1,000 tokens)');
  if (r.tau) {
    report.table(
      ['format', 'facts found', 'share'],
      r.tau.map((t) => [t.format, `${t.found} / ${t.asked}`, `${((100 * t.found) / t.asked).toFixed(1)}%`]),
    );
    report.note(
      "The 200 airline runs in ../shared/data/tau-bench: every argument value of the run's ground-truth actions that occurs in the run (ids, names, dates, amounts), searched for by itself; found when a hit's text holds it verbatim.",
    );
  } else {
    report.note('skipped: ../shared/data/tau-bench is not beside the repository');
  }
  return report;
}
