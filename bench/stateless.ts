/**
 * `npm run bench stateless` (issue 32 item 5): a worker's first turn of a stored agent
 * conversation it has never seen, per store, at 2k, 10k, 20k and 100k messages. The worker is
 * one "already serving other conversations": the store is connected and the tokenizer loaded (a
 * turn of another conversation ran on the same store first); the turn is a new `ContextManager`
 * on the conversation and its `getMessagesForRequest()`. Beside it, in the same run: reading just
 * the rows the view holds through the same driver (the floor the issue names), and Mastra's
 * `TokenLimiter` and LangChain's `trimMessages` stateless calls on the same messages at 10k. Also
 * the heap held per conversation after the turn, and the longest event-loop stall in it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ContextManager } from '../src/manager.js';
import type { Message } from '../src/messages/types.js';
import { FileStore } from '../src/stores/file.js';
import { openSqliteStore } from '../src/stores/sqlite.js';
import type { ConversationStore } from '../src/stores/types.js';
import { longSessionMessages } from '../test/support/arbitraries.js';
import { countingLoads, keepOpen } from '../test/support/workers.js';
import { withTimer } from './cold.js';
import { ensurePeersInstalled } from './peers-install.js';
import { formatBytes, formatCount, formatMs, formatRatio, Report, verdict } from './report.js';
import { collectGarbage, liveMemoryBytes, summarize } from './stats.js';
import { UsageError } from './usage-error.js';

const SEED = 32;
const MODEL = 'gpt-4o';
/** The peers benchmark's budget (a 128k window less output and margin), for every contender here. */
const BUDGET = 100_000;
const PEER_SIZE = 10_000;
/**
 * The conversation a worker (and each peer) served before the timed ones, and how many turns: a
 * server that has run a while, its code compiled for views of this size, not only its tokenizer
 * loaded (one 200-message turn before left the first size timed to carry the JIT's warm-up).
 */
const WARM_SIZE = 2_000;
const WARM_TURNS = 20;
/** The agent loop across workers: the conversation's size before it, and its steps. */
const LOOP_SIZE = 20_000;
const LOOP_STEPS = 120;
const POSTGRES_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The goals. */
export const GOALS = {
  /** First turn at 20k and 100k within this many times the turn at 2k. */
  growth: 1.5,
  /** First turn within this many times reading the view's rows through the same driver. */
  overRows: 2,
  /** First turn at 100k under this (on a quiet machine). */
  at100kMs: 50,
  /** Peers' stateless calls at 10k at least this many times slower than the first turn. */
  peerFactor: 10,
  /** Heap held per conversation at most this many times its view's JSON, plus `heapSlackBytes`. */
  heapFactor: 2,
  heapSlackBytes: 1024 * 1024,
  /** No event-loop stall over this in a first turn, a `setMessages` or a resume. */
  stallMs: 50,
  /** `getMessages()` of 100k messages from SQLite within this. */
  getAll100kSqliteMs: 500,
} as const;

function progress(text: string): void {
  process.stderr.write(`bench stateless: ${text}\n`);
}

/** One store at one size. */
export interface SizeRow {
  store: string;
  size: number;
  /** Median first turn over the repeats (a new manager each time). */
  firstMs: number;
  firstCpuMs: number;
  /** The longest event-loop stall in any of the repeats. */
  stallMs: number;
  /** Median time to read the rows the view holds, through the same driver. */
  rowsMs: number;
  rows: number;
  /**
   * Median time to read those rows and the conversation's metadata together: the plan (its
   * summary and facts, which the view holds), the stored view record (the cleared results'
   * placeholders it holds) and the guard's state, which no turn can skip.
   */
  rowsMetaMs: number;
  /** The metadata's size (its JSON). */
  metaBytes: number;
  viewMessages: number;
  viewJsonBytes: number;
  /** Live heap held after the turn, with the manager and its view still referenced. */
  heapBytes: number;
  /** The baseline, same run: the first turn of a manager that reads the whole history (`storedView: false`). */
  wholeMs: number;
  /** A whole agent turn of a new manager: the user's message added, the view, the reply added. */
  agentTurnMs: number;
  /** `setMessages` of the whole history (checked, counted, stored): its time and longest stall. */
  setMs: number;
  setStallMs: number;
  /** A new manager's `getMessages()` of the whole stored history (a resume): time, cpu, longest stall. */
  getAllMs: number;
  getAllCpuMs: number;
  getAllStallMs: number;
}

export interface PeerRow {
  name: string;
  ms: number;
}

/** An agent loop served step by step by workers that never saw the conversation, beside one long-lived manager. */
export interface LoopRow {
  store: string;
  /** Whether every manager of the loop (workers and the long-lived one) puts compactions off the request path. */
  compactAfterRequest: boolean;
  /** Messages stored before the loop's first step. */
  size: number;
  steps: number;
  /** Steps where the long-lived manager compacted (its plan changed). */
  compactions: number;
  /** Steps where the worker read the whole history on the request path (a request the stored view record could not serve). */
  loadedSteps: number;
  /** Steps where the worker read the whole history after its request (a compaction put off), before its `close()` resolved. */
  loadedAfter: number;
  /** Steps whose worker view differed from the long-lived manager's (byte for byte). */
  differingSteps: number;
  /** A worker's step (new manager, messages added, view), over the steps: median, 95th percentile, longest, mean. */
  worker: { median: number; p95: number; max: number; mean: number };
  /** The same for the worker's steps that read the whole history. */
  loadedMean: number;
  /** A worker's step with its `close()` (which waits for what the request put off): mean and longest. */
  withClose: { mean: number; max: number };
  /** The long-lived manager's step (messages added, view): median and mean. */
  longLived: { median: number; mean: number };
}

/** The messages of agent step `i`: a tool call and its result (about 1,200 tokens), a user message every tenth. */
export function loopStep(i: number): Message[] {
  const out: Message[] = [];
  if (i % 10 === 0)
    out.push({ role: 'user', content: `Step ${i}: read the next module and note what it exports.` });
  const id = `loop_${i}`;
  out.push({
    role: 'assistant',
    content: null,
    tool_calls: [
      {
        id,
        type: 'function',
        function: { name: 'read_file', arguments: JSON.stringify({ path: `src/module-${i}.ts` }) },
      },
    ],
  });
  const lines = Array.from(
    { length: 60 },
    (_, k) =>
      `export const value${i}_${k} = compute(${(i * 7919 + k * 104729) % 100_003}, "module ${i} line ${k}");`,
  );
  out.push({ role: 'tool', tool_call_id: id, content: lines.join('\n') });
  return out;
}

/**
 * `steps` agent steps on a conversation of `history` stored as an earlier worker left it: each
 * step by a new manager on the stored conversation (the step's messages added, then its view),
 * and the same steps by one manager kept across them, on a copy of the conversation.
 */
async function measureLoop(
  storeName: string,
  store: ConversationStore,
  turnStore: TurnStore,
  history: readonly Message[],
  steps: number,
  compactAfterRequest: boolean,
): Promise<LoopRow> {
  const id = `loop-${history.length}`;
  const copy = `loop-${history.length}-long-lived`;
  const options = { model: MODEL, compactAfterRequest };
  const writer = new ContextManager({ ...options, store, conversationId: id });
  await writer.setMessages(history, { replace: true });
  await writer.getMessagesForRequest({ tokenBudget: BUDGET, provider: 'openai' });
  await writer.close();
  const kept = new ContextManager({ ...options, store: keepOpen(store), conversationId: copy });
  await kept.setMessages(history, { replace: true });
  await kept.getMessagesForRequest({ tokenBudget: BUDGET, provider: 'openai' });
  let compactions = 0;
  kept.on('context:post_compact', () => {
    compactions++;
  });
  const workerMs: number[] = [];
  const loadedMs: number[] = [];
  const withCloseMs: number[] = [];
  let loadedAfter = 0;
  const keptMs: number[] = [];
  let differing = 0;
  try {
    for (let i = 0; i < steps; i++) {
      const messages = loopStep(i);
      const handle = turnStore();
      const counting = countingLoads(handle.store);
      const start = performance.now();
      const ctx = new ContextManager({ ...options, store: counting, conversationId: id });
      await ctx.addMessages(messages);
      const view = await ctx.getMessagesForRequest({ tokenBudget: BUDGET, provider: 'openai' });
      const ms = performance.now() - start;
      const onPath = counting.wholeReads;
      await ctx.close();
      withCloseMs.push(performance.now() - start);
      await handle.release();
      workerMs.push(ms);
      if (onPath > 0) loadedMs.push(ms);
      else if (counting.wholeReads > 0) loadedAfter++;
      const keptStart = performance.now();
      await kept.addMessages(messages);
      const keptView = await kept.getMessagesForRequest({ tokenBudget: BUDGET, provider: 'openai' });
      keptMs.push(performance.now() - keptStart);
      if (JSON.stringify(view) !== JSON.stringify(keptView)) differing++;
    }
  } finally {
    await kept.close();
    await store.delete(id).catch(() => {});
    await store.delete(copy).catch(() => {});
  }
  const worker = summarize(workerMs);
  const withClose = summarize(withCloseMs);
  return {
    store: storeName,
    compactAfterRequest,
    size: history.length,
    steps,
    compactions,
    loadedSteps: loadedMs.length,
    loadedAfter,
    differingSteps: differing,
    worker: { median: worker.median, p95: worker.p95, max: worker.max, mean: worker.mean },
    loadedMean: loadedMs.length === 0 ? 0 : summarize(loadedMs).mean,
    withClose: { mean: withClose.mean, max: withClose.max },
    longLived: { median: summarize(keptMs).median, mean: summarize(keptMs).mean },
  };
}

export interface Goal {
  goal: string;
  measured: string;
  met: boolean;
}

/** The goals judged on one run's rows: one line per goal and store. */
export function judgeGoals(rows: readonly SizeRow[], peers: readonly PeerRow[]): Goal[] {
  const goals: Goal[] = [];
  const stores = [...new Set(rows.map((r) => r.store))];
  const at = (store: string, size: number) => rows.find((r) => r.store === store && r.size === size);
  for (const store of stores) {
    const base = at(store, 2_000);
    for (const size of [20_000, 100_000]) {
      const row = at(store, size);
      if (!base || !row) continue;
      const ratio = row.firstMs / base.firstMs;
      goals.push({
        goal: `${store}: first turn at ${formatCount(size)} ≤ ${GOALS.growth}× the turn at 2,000`,
        measured: `${formatMs(row.firstMs)} / ${formatMs(base.firstMs)} = ${formatRatio(ratio)} (cpu ${formatRatio(row.firstCpuMs / base.firstCpuMs)})`,
        met: ratio <= GOALS.growth,
      });
    }
    const storeRows = rows.filter((r) => r.store === store);
    for (const [what, stall] of [
      ['setMessages', (r: SizeRow) => r.setStallMs],
      ['resume (getMessages)', (r: SizeRow) => r.getAllStallMs],
    ] as const) {
      const longest = storeRows.reduce<SizeRow | undefined>(
        (w, r) => (!w || stall(r) > stall(w) ? r : w),
        undefined,
      );
      if (longest)
        goals.push({
          goal: `${store}: no event-loop stall over ${GOALS.stallMs} ms in a ${what}`,
          measured: `longest ${formatMs(stall(longest))} (at ${formatCount(longest.size)})`,
          met: stall(longest) <= GOALS.stallMs,
        });
    }
    const whole = at(store, 100_000);
    if (store === 'sqlite' && whole)
      goals.push({
        goal: `sqlite: getMessages() of 100,000 ≤ ${formatMs(GOALS.getAll100kSqliteMs)}`,
        measured: `${formatMs(whole.getAllMs)} (cpu ${formatMs(whole.getAllCpuMs)})`,
        met: whole.getAllMs <= GOALS.getAll100kSqliteMs,
      });
    const worst = storeRows.reduce<SizeRow | undefined>(
      (w, r) => (!w || r.firstMs / r.rowsMs > w.firstMs / w.rowsMs ? r : w),
      undefined,
    );
    if (worst) {
      const ratio = worst.firstMs / worst.rowsMs;
      goals.push({
        goal: `${store}: first turn ≤ ${GOALS.overRows}× reading the view's rows (worst size)`,
        // Beside it, not judged: the rows read with the metadata the view also holds (see `rowsMetaMs`).
        measured: `${formatRatio(ratio)} at ${formatCount(worst.size)} (${formatMs(worst.firstMs)} vs ${formatMs(worst.rowsMs)}; ${formatRatio(worst.firstMs / worst.rowsMetaMs)} of the rows and metadata read together, ${formatMs(worst.rowsMetaMs)})`,
        met: ratio <= GOALS.overRows,
      });
    }
    const big = at(store, 100_000);
    if (big) {
      goals.push({
        goal: `${store}: first turn at 100,000 < ${GOALS.at100kMs} ms (quiet machine)`,
        measured: formatMs(big.firstMs),
        met: big.firstMs < GOALS.at100kMs,
      });
    }
    const mid = at(store, PEER_SIZE);
    if (mid) {
      for (const peer of peers) {
        const ratio = peer.ms / mid.firstMs;
        goals.push({
          goal: `${store}: ≥ ${GOALS.peerFactor}× faster than ${peer.name} at ${formatCount(PEER_SIZE)}`,
          measured: `${formatMs(peer.ms)} / ${formatMs(mid.firstMs)} = ${formatRatio(ratio)}`,
          met: ratio >= GOALS.peerFactor,
        });
      }
    }
    const heavy = storeRows.reduce<SizeRow | undefined>(
      (w, r) => (!w || heapExcess(r) > heapExcess(w) ? r : w),
      undefined,
    );
    if (heavy) {
      goals.push({
        goal: `${store}: heap held ≤ ${GOALS.heapFactor}× view JSON + 1 MiB (worst size)`,
        measured: `${formatBytes(heavy.heapBytes)} vs ${formatBytes(heapAllowance(heavy))} at ${formatCount(heavy.size)}`,
        met: heavy.heapBytes <= heapAllowance(heavy),
      });
    }
    const stall = Math.max(...storeRows.map((r) => r.stallMs));
    if (storeRows.length > 0) {
      goals.push({
        goal: `${store}: no event-loop stall over ${GOALS.stallMs} ms in a first turn`,
        measured: `longest ${formatMs(stall)}`,
        met: stall <= GOALS.stallMs,
      });
    }
  }
  return goals;
}

/** The agent loops' goal: views byte-identical whichever worker serves, compactions included. */
export function judgeLoops(loops: readonly LoopRow[]): Goal[] {
  const goals: Goal[] = [];
  for (const l of loops) {
    goals.push({
      goal: `${l.store}${loopMode(l)}: views byte-identical whichever worker serves (agent loop, compactions included)`,
      measured: `${formatCount(l.differingSteps)} of ${formatCount(l.steps)} steps differ (${formatCount(l.compactions)} compactions)`,
      met: l.differingSteps === 0,
    });
    // Item 1: a compaction reads the history off the request path.
    if (l.compactAfterRequest)
      goals.push({
        goal: `${l.store}${loopMode(l)}: no worker request reads the whole history (agent loop, compactions included)`,
        measured: `${formatCount(l.loadedSteps)} of ${formatCount(l.steps)} steps (${formatCount(l.loadedAfter)} read it after their request, for ${formatCount(l.compactions)} compactions)`,
        met: l.loadedSteps === 0 && l.compactions > 0,
      });
  }
  return goals;
}

/** How a loop's managers compact, as its rows name it. */
function loopMode(l: LoopRow): string {
  return l.compactAfterRequest ? ' (compactAfterRequest)' : '';
}

function heapAllowance(row: SizeRow): number {
  return GOALS.heapFactor * row.viewJsonBytes + GOALS.heapSlackBytes;
}

function heapExcess(row: SizeRow): number {
  return row.heapBytes / heapAllowance(row);
}

/**
 * Which stored rows (seq ranges) a view holds: its leading messages equal to the history's first
 * ones (the system prompt), and the history from the oldest other message it holds verbatim to
 * the end (a tool result cleared in that stretch is still a row read). The view's messages are
 * matched from the newest back, each to the latest equal history message before the previous
 * match and the changed messages after it, so a message repeated in the history is not taken for
 * a later copy.
 */
export function viewRows(
  history: readonly Message[],
  view: readonly Message[],
): { prefix: number; singles: number[]; fromSeq: number } {
  const text = (m: Message) => JSON.stringify(m);
  let prefix = 0;
  while (prefix < view.length && prefix < history.length && text(view[prefix]!) === text(history[prefix]!))
    prefix++;
  const positions = new Map<string, number[]>();
  for (let i = prefix; i < history.length; i++) {
    const key = text(history[i]!);
    const list = positions.get(key);
    if (list) list.push(i);
    else positions.set(key, [i]);
  }
  let fromSeq = history.length;
  // Rows matched before a gap of more than TAIL_GAP rows the view does not hold (the task kept at
  // the start, a pinned message): read one by one rather than with every row between.
  const singles: number[] = [];
  let inTail = true;
  // Messages the view changed (a cleared result) since the last match: each stands for a stored
  // row, so the next match lies before them (else an earlier copy of a message could be matched to
  // a later row, and the rows between missed). Changed ones older than every match are the view's
  // own (a summary, a facts block) or not read.
  let pending = 0;
  for (let v = view.length - 1; v >= prefix; v--) {
    const list = positions.get(text(view[v]!));
    const bound = fromSeq - pending;
    // The latest position below the bound (binary search on the ascending list).
    let lo = 0;
    let hi = list?.length ?? 0;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list![mid]! < bound) lo = mid + 1;
      else hi = mid;
    }
    if (list && lo > 0) {
      const at = list[lo - 1]!;
      const earliest = singles.length > 0 ? singles[singles.length - 1]! : fromSeq;
      if (inTail && fromSeq < history.length && earliest - pending - at > TAIL_GAP) inTail = false;
      if (inTail) fromSeq = at;
      else singles.push(at);
      pending = 0;
    } else pending++;
  }
  return { prefix, singles: singles.reverse(), fromSeq };
}

/** Rows between two a view holds, past which the older one is read on its own (see `viewRows`). */
const TAIL_GAP = 16;

interface StoreUnderTest {
  name: string;
  open(): Promise<ConversationStore>;
  /**
   * A handle on the same data as a worker that never saw the conversation has it, where the store
   * keeps per-conversation state in its instance (the file store's log index): a new instance.
   * Without it, the connected store is that handle (it keeps nothing of a conversation).
   */
  fresh?(): ConversationStore;
  cleanup(): Promise<void>;
}

/** The store a first turn uses, as a worker that never saw the conversation holds it, and its release. */
type TurnStore = () => { store: ConversationStore; release(): Promise<void> };

function storesUnderTest(dir: string, tag: string): StoreUnderTest[] {
  const schema = `stateless_${tag}`;
  return [
    {
      name: 'file',
      open: async () => new FileStore(join(dir, 'file')),
      fresh: () => new FileStore(join(dir, 'file')),
      cleanup: async () => {},
    },
    {
      name: 'sqlite',
      open: () => openSqliteStore(join(dir, 'store.db')),
      cleanup: async () => {},
    },
    {
      name: 'postgres',
      open: async () =>
        (await import('../src/stores/postgres.js')).openPostgresStore(POSTGRES_URL, { schema }),
      cleanup: async () => {
        const client = new pg.Client({ connectionString: POSTGRES_URL });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      },
    },
    {
      name: 'redis',
      open: async () =>
        (await import('../src/stores/redis.js')).openRedisStore(REDIS_URL, {
          keyPrefix: `stateless-${tag}:`,
        }),
      cleanup: async () => {},
    },
  ];
}

async function measureStore(
  spec: StoreUnderTest,
  sizes: readonly number[],
  repeats: number,
  failures: string[],
  loops: LoopRow[],
): Promise<SizeRow[]> {
  const store = await spec.open();
  const worker = keepOpen(store);
  const turnStore: TurnStore = () => {
    if (!spec.fresh) return { store: worker, release: async () => {} };
    const fresh = spec.fresh();
    return { store: keepOpen(fresh), release: () => fresh.close() };
  };
  const out: SizeRow[] = [];
  try {
    // The worker already serves another conversation: the store is connected, the tokenizer loaded.
    const warm = new ContextManager({ model: MODEL, store: worker, conversationId: 'warm' });
    await warm.setMessages(longSessionMessages(WARM_SIZE, 'openai', SEED + 1), { replace: true });
    await warm.getMessagesForRequest({ tokenBudget: BUDGET, provider: 'openai' });
    await warm.close();
    for (let t = 0; t < WARM_TURNS; t++) {
      const turn = new ContextManager({ model: MODEL, store: worker, conversationId: 'warm' });
      await turn.getMessagesForRequest({ tokenBudget: BUDGET, provider: 'openai' });
      await turn.close();
    }
    for (const size of sizes) {
      const id = `conversation-${size}`;
      // Made per size and let go after it: a process holding every size's session (130k messages)
      // timed its own collections' pauses in the resumes measured here.
      const history = longSessionMessages(size, 'openai', SEED);
      try {
        out.push(await measureSize(spec.name, worker, turnStore, id, history, repeats));
      } catch (err) {
        // One size failing (a driver limit) leaves the others measured; the report names it.
        failures.push(
          `${spec.name} at ${formatCount(size)}: ${err instanceof Error ? err.message : String(err)}`,
        );
        progress(`not measured: ${failures.at(-1)}`);
      } finally {
        await store.delete(id).catch(() => {});
      }
    }
    progress(
      `${spec.name}: an agent loop of ${LOOP_STEPS} steps at ${formatCount(LOOP_SIZE)}, a new worker each step…`,
    );
    try {
      const history = longSessionMessages(LOOP_SIZE, 'openai', SEED);
      for (const compactAfterRequest of [false, true])
        loops.push(await measureLoop(spec.name, worker, turnStore, history, LOOP_STEPS, compactAfterRequest));
    } catch (err) {
      failures.push(`${spec.name} agent loop: ${err instanceof Error ? err.message : String(err)}`);
      progress(`not measured: ${failures.at(-1)}`);
    }
    await store.delete('warm');
  } finally {
    await store.close();
  }
  return out;
}

async function measureSize(
  storeName: string,
  worker: ConversationStore,
  turnStore: TurnStore,
  id: string,
  history: readonly Message[],
  repeats: number,
): Promise<SizeRow> {
  const size = history.length;
  const spec = { name: storeName };
  progress(`${spec.name}: storing ${formatCount(size)} messages…`);
  // The conversation as an earlier worker left it: stored with its counts, one view served.
  const writer = new ContextManager({ model: MODEL, store: worker, conversationId: id });
  const set = await withTimer(() => writer.setMessages(history, { replace: true }));
  await writer.getMessagesForRequest({ tokenBudget: BUDGET, provider: 'openai' });
  await writer.close();
  // The bench's own garbage (the session it just made and stored) collected once, and its sweep let
  // finish, before any turn is timed: a worker's first turn is not charged with it.
  collectGarbage();
  await new Promise((resolve) => setTimeout(resolve, 100));
  progress(`${spec.name}: first turns at ${formatCount(size)}…`);
  let heapBytes = 0;
  let view: Message[];
  {
    // Held: the manager and its view, as a server keeping the conversation between turns (one
    // first turn, untimed, between full collections). Its view is the one every turn must serve.
    const handle = turnStore();
    // Array buffers counted with the heap: typed arrays (the file store's log index) live outside it.
    const before = liveMemoryBytes();
    const ctx = new ContextManager({ model: MODEL, store: handle.store, conversationId: id });
    view = await ctx.getMessagesForRequest({ tokenBudget: BUDGET, provider: 'openai' });
    heapBytes = liveMemoryBytes() - before;
    await ctx.close();
    await handle.release();
  }
  const { prefix, singles, fromSeq } = viewRows(history, view);
  // The reads of the rows the view holds, all at once, through the store as a first turn holds it.
  // The early rows without their token counts, the last ones with them, as the turn reads them
  // (the stored view record holds the counts of the rows it covers): the file store keeps counts
  // in a file of their own, read from its end, and reading an early row's took the whole file.
  const rowReads = (store: ConversationStore) => [
    store.read(id, { limit: prefix, counts: false }),
    ...singles.map((seq) => store.read(id, { fromSeq: seq, limit: 1, counts: false })),
    store.read(id, { fromSeq }),
  ];
  const firsts: number[] = [];
  const cpus: number[] = [];
  let stall = 0;
  const reads: number[] = [];
  let rows = 0;
  const withMeta: number[] = [];
  let metaBytes = 0;
  // A first turn, the row reads and the row reads with the metadata, in turn within each repeat,
  // so that what the machine does meanwhile (other processes, this one's collections) falls on
  // all three alike and their ratios hold. No collection is forced before a timed turn: its
  // concurrent sweep of this process's heap would be timed with the turn, and with none of the
  // row reads it is compared to.
  for (let r = 0; r < repeats; r++) {
    {
      const handle = turnStore();
      const turn = await withTimer(async () => {
        const ctx = new ContextManager({ model: MODEL, store: handle.store, conversationId: id });
        const messages = await ctx.getMessagesForRequest({ tokenBudget: BUDGET, provider: 'openai' });
        return { ctx, messages };
      });
      firsts.push(turn.ms);
      cpus.push(turn.cpuMs);
      stall = Math.max(stall, turn.longestWait);
      await turn.value.ctx.close();
      await handle.release();
      if (JSON.stringify(turn.value.messages) !== JSON.stringify(view))
        throw new Error(`${spec.name}: the views differ`);
    }
    {
      const handle = turnStore();
      const start = performance.now();
      const parts = await Promise.all(rowReads(handle.store));
      reads.push(performance.now() - start);
      rows = parts.reduce((sum, part) => sum + part.length, 0);
      await handle.release();
    }
    {
      // The same reads with the metadata's beside them.
      const handle = turnStore();
      const start = performance.now();
      const [meta] = await Promise.all([handle.store.getMeta(id), ...rowReads(handle.store)]);
      withMeta.push(performance.now() - start);
      metaBytes = Buffer.byteLength(JSON.stringify(meta.value));
      await handle.release();
    }
  }
  const expected = prefix + singles.length + history.length - fromSeq;
  if (rows !== expected) throw new Error(`${spec.name}: read ${rows} rows, expected ${expected}`);
  // The baseline: the same first turn read from the whole history.
  const wholes: number[] = [];
  for (let r = 0; r < wholeRepeats(repeats); r++) {
    const handle = turnStore();
    const start = performance.now();
    const ctx = new ContextManager({
      model: MODEL,
      store: handle.store,
      conversationId: id,
      storedView: false,
    });
    const whole = await ctx.getMessagesForRequest({ tokenBudget: BUDGET, provider: 'openai' });
    wholes.push(performance.now() - start);
    await ctx.close();
    await handle.release();
    if (JSON.stringify(whole) !== JSON.stringify(view)) throw new Error(`${spec.name}: the views differ`);
  }
  // What a stateless worker does for one step of an agent: add, view, add (the conversation grows).
  const agentTurns: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const handle = turnStore();
    const start = performance.now();
    const ctx = new ContextManager({ model: MODEL, store: handle.store, conversationId: id });
    await ctx.addMessage({ role: 'user', content: `Next: check step ${r} and report.` });
    await ctx.getMessagesForRequest({ tokenBudget: BUDGET, provider: 'openai' });
    await ctx.addMessage({ role: 'assistant', content: `Step ${r} checked.` });
    agentTurns.push(performance.now() - start);
    await ctx.close();
    await handle.release();
  }
  // A resume: a new manager reads the whole history back (`getMessages()`), after the bench's own
  // garbage was collected and its sweep let finish (not charged to the resume).
  collectGarbage();
  await new Promise((resolve) => setTimeout(resolve, 100));
  const resumer = turnStore();
  const getAll = await withTimer(async () => {
    const ctx = new ContextManager({ model: MODEL, store: resumer.store, conversationId: id });
    const all = await ctx.getMessages();
    await ctx.close();
    return all.length;
  });
  await resumer.release();
  if (getAll.value !== history.length + 2 * repeats)
    throw new Error(`${spec.name}: getMessages() gave ${getAll.value} messages`);
  return {
    setMs: set.ms,
    setStallMs: set.longestWait,
    getAllMs: getAll.ms,
    getAllCpuMs: getAll.cpuMs,
    getAllStallMs: getAll.longestWait,
    store: spec.name,
    size,
    firstMs: summarize(firsts).median,
    firstCpuMs: summarize(cpus).median,
    stallMs: stall,
    rowsMs: summarize(reads).median,
    rows,
    rowsMetaMs: summarize(withMeta).median,
    metaBytes,
    viewMessages: view.length,
    viewJsonBytes: Buffer.byteLength(JSON.stringify(view)),
    heapBytes,
    wholeMs: summarize(wholes).median,
    agentTurnMs: summarize(agentTurns).median,
  };
}

interface StatelessCall {
  readonly name: string;
  call(messages: readonly Message[], budget: number): Promise<() => Message[]>;
}

async function measurePeers(history: readonly Message[], repeats: number): Promise<PeerRow[]> {
  ensurePeersInstalled('stateless');
  const entry = './peers/stateless-calls.js';
  const { statelessCalls } = (await import(entry)) as { statelessCalls: readonly StatelessCall[] };
  const warm = longSessionMessages(WARM_SIZE, 'openai', SEED + 1);
  const out: PeerRow[] = [];
  for (const peer of statelessCalls) {
    progress(`${peer.name}: stateless calls at ${formatCount(history.length)}…`);
    // A server already running: the peer's tokenizer is loaded, its code compiled.
    for (let t = 0; t < WARM_TURNS; t++) await peer.call(warm, BUDGET);
    const times: number[] = [];
    for (let r = 0; r < repeats; r++) {
      const start = performance.now();
      const view = await peer.call(history, BUDGET);
      times.push(performance.now() - start);
      if (view().length === 0) throw new Error(`${peer.name}: an empty view`);
    }
    out.push({ name: peer.name, ms: summarize(times).median });
  }
  return out;
}

const STORES = ['file', 'sqlite', 'postgres', 'redis'] as const;

/**
 * Repeats of each cheap measurement (a first turn, the row reads, an agent turn, a peer's call) by
 * default: a median of 5 moved by more than the goals' margins on a busy machine.
 */
const DEFAULT_REPEATS = 15;
/** The whole-history baseline (a second or more at 100,000) is read at most this many times. */
const WHOLE_REPEATS = 5;

function wholeRepeats(repeats: number): number {
  return Math.min(repeats, WHOLE_REPEATS);
}

function parseArgs(args: readonly string[]): { sizes: number[]; repeats: number; stores: Set<string> } {
  let sizes = [2_000, PEER_SIZE, 20_000, 100_000];
  let repeats = DEFAULT_REPEATS;
  let stores: Set<string> | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--quick') sizes = [2_000, PEER_SIZE, 20_000];
    else if (arg === '--repeats' && Number(args[i + 1]) >= 1) repeats = Number(args[++i]);
    else if (arg === '--store' && STORES.includes(args[i + 1] as (typeof STORES)[number])) {
      stores ??= new Set();
      stores.add(args[++i]!);
    } else
      throw new UsageError(
        `stateless: unknown option ${JSON.stringify(arg)} (--quick, --repeats N, --store ${STORES.join('|')})`,
      );
  }
  return { sizes, repeats, stores: stores ?? new Set(STORES) };
}

/** Runs the benchmark and prints (and writes) its report. */
export async function runStatelessBenchmark(args: readonly string[]): Promise<void> {
  const { sizes, repeats, stores } = parseArgs(args);
  const report = new Report(
    "Stateless workers: a worker's first turn of a conversation it never saw (issue 32)",
  );
  const loadStart = loadavg()[0] ?? 0;
  const started = performance.now();
  const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const dir = await mkdtemp(join(tmpdir(), 'contextkit-stateless-'));
  const rows: SizeRow[] = [];
  const loops: LoopRow[] = [];
  const skipped: string[] = [];
  try {
    for (const spec of storesUnderTest(dir, tag).filter((s) => stores.has(s.name))) {
      try {
        rows.push(...(await measureStore(spec, sizes, repeats, skipped, loops)));
      } catch (err) {
        skipped.push(`${spec.name}: ${err instanceof Error ? err.message : String(err)}`);
        progress(`${spec.name} not measured: ${skipped.at(-1)}`);
      } finally {
        await spec.cleanup().catch(() => {});
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const peers = await measurePeers(longSessionMessages(PEER_SIZE, 'openai', SEED), repeats);
  const loadEnd = loadavg()[0] ?? 0;

  report.note(
    `Node ${process.version}, ${availableParallelism()} cores, load average ${loadStart.toFixed(2)} at the start and ${loadEnd.toFixed(2)} at the end (other processes share the machine: compare rows of one run, and read the absolute times as upper bounds). Run took ${formatMs(performance.now() - started)}.`,
  );
  report.heading('First turn of a stored conversation, per store');
  report.table(
    [
      'store',
      'messages',
      'first turn (median)',
      'cpu',
      'vs 2,000',
      'longest stall',
      "reading the view's rows",
      'turn / rows',
      'rows and metadata',
      'turn / both',
      'view (messages, JSON)',
      'heap held',
      'whole history read (baseline)',
      'agent turn (add, view, add)',
    ],
    rows.map((r) => {
      const base = rows.find((b) => b.store === r.store && b.size === 2_000);
      return [
        r.store,
        formatCount(r.size),
        formatMs(r.firstMs),
        formatMs(r.firstCpuMs),
        base ? formatRatio(r.firstMs / base.firstMs) : '–',
        formatMs(r.stallMs),
        `${formatMs(r.rowsMs)} (${formatCount(r.rows)} rows)`,
        formatRatio(r.firstMs / r.rowsMs),
        `${formatMs(r.rowsMetaMs)} (${formatBytes(r.metaBytes)})`,
        formatRatio(r.firstMs / r.rowsMetaMs),
        `${formatCount(r.viewMessages)}, ${formatBytes(r.viewJsonBytes)}`,
        formatBytes(r.heapBytes),
        `${formatMs(r.wholeMs)} (${formatRatio(r.wholeMs / r.firstMs)} slower)`,
        formatMs(r.agentTurnMs),
      ];
    }),
  );
  report.note(
    [
      `History: \`longSessionMessages(N, 'openai', ${SEED})\` (an agent session with tool calls), model ${MODEL}, budget ${formatCount(BUDGET)} tokens, default strategy; each size's session is made before its measurements and let go after them (the bench holds one at a time). Each conversation is stored by a manager (\`setMessages\`, counts kept) that serves one view and closes, as an earlier worker leaves it. The worker then already serves another conversation on the same connected store (${WARM_TURNS} first turns of a ${formatCount(WARM_SIZE)}-message conversation ran first, as did ${WARM_TURNS} calls of each peer: tokenizer loaded, connection up, code compiled). The file store keeps each conversation's log index in its instance, so there every timed call below (first turns, row reads, the baseline, the agent turn, the resume, each agent-loop step) is made on a new instance, as by a worker that never saw the conversation: its figures include reading the index kept beside the log (\`NAME.idx\`).`,
      `First turn: a new \`ContextManager\` on the stored conversation and its \`getMessagesForRequest()\`, ${repeats} times (a new manager each time), median; cpu is this process's user + system time; the longest stall is the longest gap of a 10 ms interval timer during any of them. Reading the view's rows: the same driver's \`read\` of the rows the view holds (its leading system rows; each row it holds before a gap of more than ${TAIL_GAP} rows it does not hold, such as the task, on its own; and from the oldest other row it holds to the end, the only read with the rows' token counts, as in the turn, whose stored view record holds the others'), all reads at once, median of ${repeats}. Rows and metadata: the same reads with the driver's \`getMeta\` beside them, all at once, median of ${repeats}. Each repeat makes a first turn, the row reads and the row reads with the metadata, one after the other, so that what the machine does meanwhile falls on all three alike; an untimed first turn before them gives the view every turn must serve (and the heap held): the metadata holds what the view holds beside the rows (the plan's summary and facts, the cleared results' placeholders in the stored view record), which no turn can skip; \`turn / both\` is shown beside the issue's goal, not judged. No collection is forced before a timed turn (its concurrent sweep of this process's heap would be timed with the turn; runs before this one forced one before each). Heap held: live heap and array buffers (\`heapUsed + arrayBuffers\`: typed arrays keep their contents outside the heap) after a full collection with the manager and view of the untimed first turn still referenced, less the same before it. The first turn is served from the stored view record and the rows the view holds (\`storedView\`, issue 32 item 1); the baseline beside it, same run, is the same turn with \`storedView: false\` (the whole history read and checked), median of ${wholeRepeats(repeats)}, whose view must be the same byte for byte. Agent turn: a new manager adds the user's message (appended unread), serves the view, adds the reply: median of ${repeats}.`,
      ...(skipped.length > 0 ? [`Not measured: ${skipped.join('; ')}.`] : []),
    ].join('\n'),
  );
  report.heading('Storing and reading back the whole conversation, per store');
  report.table(
    ['store', 'messages', 'setMessages', 'longest stall', 'getMessages() (resume)', 'cpu', 'longest stall'],
    rows.map((r) => [
      r.store,
      formatCount(r.size),
      formatMs(r.setMs),
      formatMs(r.setStallMs),
      formatMs(r.getAllMs),
      formatMs(r.getAllCpuMs),
      formatMs(r.getAllStallMs),
    ]),
  );
  report.note(
    "setMessages: the writer's `setMessages(history, { replace: true })` above (every message checked, counted and stored with its counts), once; the tokenizer is already loaded (the warm-up turn). getMessages(): a new manager's `getMessages()` of the whole stored history (read, every row checked), once, after the turns above. The longest stall is the longest gap of a 10 ms interval timer during the call.",
  );
  report.heading(`Peers' stateless calls at ${formatCount(PEER_SIZE)} messages`);
  report.table(
    [
      'contender',
      'one request (median)',
      ...rows.filter((r) => r.size === PEER_SIZE).map((r) => `vs ${r.store} first turn`),
    ],
    peers.map((p) => [
      p.name,
      formatMs(p.ms),
      ...rows.filter((r) => r.size === PEER_SIZE).map((r) => formatRatio(p.ms / r.firstMs)),
    ]),
  );
  report.note(
    `Each call is what a stateless route handler does with the conversation's messages already read: a new session (\`bench/peers/mastra.ts\`, \`bench/peers/langchain.ts\` with the o200k count), every message converted and added, one view at ${formatCount(BUDGET)} tokens; median of ${repeats}, after a warm-up call (tokenizers loaded). Their read of the messages is not counted; contextkit's first turn includes its read.`,
  );
  report.heading(
    `An agent loop served by workers that never saw the conversation (${formatCount(LOOP_SIZE)} messages, ${LOOP_STEPS} steps)`,
  );
  report.table(
    [
      'store',
      'compactions',
      'steps that read the whole history: on the request path',
      'after it',
      'worker step: median',
      'p95',
      'longest',
      'mean',
      'mean of steps that read it whole',
      'step with close(): mean',
      'longest',
      'long-lived manager: median',
      'mean',
      'views differing',
    ],
    loops.map((l) => [
      `${l.store}${loopMode(l)}`,
      formatCount(l.compactions),
      `${formatCount(l.loadedSteps)} of ${formatCount(l.steps)}`,
      formatCount(l.loadedAfter),
      formatMs(l.worker.median),
      formatMs(l.worker.p95),
      formatMs(l.worker.max),
      formatMs(l.worker.mean),
      l.loadedSteps > 0 ? formatMs(l.loadedMean) : '–',
      formatMs(l.withClose.mean),
      formatMs(l.withClose.max),
      formatMs(l.longLived.median),
      formatMs(l.longLived.mean),
      formatCount(l.differingSteps),
    ]),
  );
  report.note(
    `Each step (\`loopStep\`: a tool call and its result of about 1,200 tokens, a user message every tenth step) is served by a new \`ContextManager\` on the stored conversation (the step's messages added, then \`getMessagesForRequest()\`, budget ${formatCount(BUDGET)}), as a stateless worker serves it; beside it, in the same run, one manager kept across the steps does the same on a copy of the conversation. A step reads the whole history when the stored view record cannot serve it: a compaction is due (planning one needs the whole history), or the record is stale. Each store runs the loop twice, on the same conversation: with the defaults, where a step that compacts reads the whole history on its request path; and with \`compactAfterRequest: true\` on every manager, where the view that passes the trigger goes as it is (within the budget) and the compaction runs after the request, before the worker's \`close()\` resolves (the model call need not wait for it): the worker step is timed to its view, and with its \`close()\`. Views differing: steps whose worker view is not byte for byte the long-lived manager's (with the same options).`,
  );
  const goals = [...judgeGoals(rows, peers), ...judgeLoops(loops)];
  report.heading("The issue's goals");
  report.table(
    ['goal', 'measured', ''],
    goals.map((g) => [g.goal, g.measured, verdict(g.met)]),
  );
  report.note(
    `${goals.filter((g) => g.met).length} of ${goals.length} met. Issue 32's goals, on the first turn served from the stored view record.`,
  );
  process.stdout.write(report.toText());
  // A run of some stores only writes its own file, so it does not replace the whole run's.
  const name = stores.size === STORES.length ? 'stateless' : `stateless-${[...stores].join('-')}`;
  progress(`written to ${report.write(name)}`);
}
