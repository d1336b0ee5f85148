/**
 * `npm run bench waits`: the requests a user notices (issue 24). Counting any text (ordinary,
 * blobs, after the process has counted a lot) against gpt-tokenizer called directly; the longest
 * stretch a 10 ms timer waits during a cold first request at 100k messages, against counting the
 * same history in place; resume plus first request on the file and SQLite stores; requests that
 * wait for the summarizer, asked at the compaction or prepared ahead (waits-summaries.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
// gpt-tokenizer's ESM build with its defaults: another instance than the CommonJS one we load.
import { countTokens as gptCountTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { ContextManager } from '../src/manager.js';
import type { Message } from '../src/messages/types.js';
import { openSqliteStore } from '../src/stores/sqlite.js';
import { INDEX_BATCH } from '../src/stores/sqlite-search.js';
import type { ConversationStore } from '../src/stores/types.js';
import { getModelInfo } from '../src/tokens/catalog.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { countTextTokens } from '../src/tokens/encodings.js';
import { longSessionMessages } from '../test/support/arbitraries.js';
import { loadChats } from '../test/support/locomo.js';
import { hasTauBench, loadTauBench, TAU_BENCH_PATH } from '../test/support/tau-bench.js';
import { formatCount, formatMs, formatRatio, Report, verdict } from './report.js';
import { UsageError } from './usage-error.js';
import { summariesSection } from './waits-summaries.js';

const SEED = 24;
const MODEL = 'gpt-4o';
const ORDINARY = { disallowedSpecial: new Set<string>() };
const MB = 1024 * 1024;

const PARTS = ['counting', 'cold', 'stores', 'summaries'] as const;
type Part = (typeof PARTS)[number];

interface Args {
  dataDir: string;
  messages: number;
  parts: Set<Part>;
}

function parseArgs(args: readonly string[]): Args {
  const out: Args = { dataDir: dirname(dirname(TAU_BENCH_PATH)), messages: 100_000, parts: new Set(PARTS) };
  let only: Set<Part> | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = args[i + 1];
    if (arg === '--data' && value !== undefined) out.dataDir = value;
    else if (arg === '--messages' && value !== undefined && Number(value) > 0) out.messages = Number(value);
    else if (arg === '--part' && PARTS.includes(value as Part)) {
      only ??= new Set();
      only.add(value as Part);
    } else
      throw new UsageError(
        `waits: unknown option ${JSON.stringify(arg)} (--data DIR, --messages N, --part ${PARTS.join('|')})`,
      );
    i++;
  }
  if (only) out.parts = only;
  return out;
}

function progress(text: string): void {
  process.stderr.write(`bench waits: ${text}\n`);
}

function timed<T>(fn: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = fn();
  return { value, ms: performance.now() - start };
}

/** A timer that should fire every `everyMs`: the longest gap between two firings (or to now). */
function startProbe(everyMs = 10): { stop(): number } {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(longest, performance.now() - last);
    },
  };
}

/** Lets a probe's first firing be scheduled before the measured work starts. */
const nextTick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

// ------------------------------------------------------------------------------ counting

/** Every message text of the tau-bench runs and the LoCoMo turns: ordinary text. */
function ordinaryTexts(dataDir: string): { tau: string[]; locomo: string[] } {
  const tauPath = join(dataDir, 'tau-bench', 'airline-gpt4o.json');
  const tau: string[] = [];
  if (hasTauBench(tauPath)) {
    for (const run of loadTauBench(tauPath).slice(0, 60)) {
      for (const m of run.openai)
        if (typeof m.content === 'string' && m.content.length > 0) tau.push(m.content);
    }
  }
  const locomo: string[] = [];
  for (const chat of loadChats(join(dataDir, 'locomo-dev')) ?? []) {
    for (const e of chat.entries) {
      const content = (e.message as { content?: unknown }).content;
      if (typeof content === 'string' && content.length > 0) locomo.push(content);
    }
  }
  return { tau, locomo };
}

/** Random base64 text of `chars` characters. */
function base64Blob(chars: number): string {
  return randomBytes(Math.ceil((chars * 3) / 4) + 3)
    .toString('base64')
    .slice(0, chars);
}

/** `chars` characters of distinct random six-letter words: fills a merge cache with new pre-tokens. */
function distinctWords(chars: number): string {
  const bytes = randomBytes(chars);
  let out = '';
  for (let i = 0; i + 7 <= chars; i += 7) {
    out += ' ';
    for (let j = 1; j < 7; j++) out += String.fromCharCode(97 + (bytes[i + j]! % 26));
  }
  return out;
}

function countingSection(report: Report, dataDir: string): void {
  const ours = (text: string) => countTextTokens(text, 'o200k_base');
  const direct = (text: string) => gptCountTokens(text, ORDINARY);
  const { tau, locomo } = ordinaryTexts(dataDir);
  report.heading('Counting: any text, whatever came before');
  report.note(
    `Load average when this section started: ${(loadavg()[0] ?? 0).toFixed(1)} on ${availableParallelism()} cores.`,
  );
  if (tau.length === 0 || locomo.length === 0) {
    report.note(`skipped: tau-bench or locomo-dev not found under ${dataDir} (pass --data DIR)`);
    return;
  }
  let ordinary = [...tau, ...locomo].join('\n');
  while (ordinary.length < 10 * MB) ordinary += `\n${ordinary}`;
  ordinary = ordinary.slice(0, 10 * MB);
  const fresh = ordinary.slice(0, 200_000);
  const later = ordinary.slice(200_000, 400_000);
  const rows: string[][] = [];
  /** Times both counters on `text` (ours first), adds a row, and returns our time. */
  const compare = (label: string, text: string): number => {
    const a = timed(() => ours(text));
    const b = timed(() => direct(text));
    const blob = a.value !== b.value && a.value > b.value;
    rows.push([
      label,
      formatMs(b.ms),
      formatMs(a.ms),
      a.value === b.value
        ? 'exact'
        : `${formatRatio(a.value / b.value)} of exact (never under: ${verdict(blob)})`,
    ]);
    return a.ms;
  };
  // Both encoders loaded (rank tables) before anything is timed.
  ours('warm up');
  direct('warm up');
  progress('ordinary text in a fresh process…');
  compare('200k ordinary characters, fresh process', fresh);
  progress('1.6 M characters of random base64 (gpt-tokenizer takes seconds)…');
  compare('1.6 M random base64', base64Blob(1_600_000));
  progress('filling the merge caches with 150k distinct words, then ordinary text again…');
  compare('150k distinct words (1 M characters)', distinctWords(1_050_000));
  compare('200k ordinary characters after those', later);
  progress('10 MB of ordinary text and of random base64…');
  const bigOrdinary = compare('10 MB ordinary (tau-bench + LoCoMo texts, repeated)', ordinary);
  const bigBlob = base64Blob(10 * MB);
  const bigBlobOurs = timed(() => ours(bigBlob));
  rows.push([
    '10 MB random base64',
    'not run (over a minute)',
    formatMs(bigBlobOurs.ms),
    `${formatRatio(bigBlobOurs.value / bigBlob.length)} tokens a character`,
  ]);
  const worst = Math.max(bigOrdinary, bigBlobOurs.ms);
  report.table(['text', 'gpt-tokenizer directly', 'contextkit', 'count'], rows);
  progress('exactness on every tau-bench and LoCoMo text…');
  let mismatches = 0;
  let texts = 0;
  for (const text of [...tau, ...locomo]) {
    texts++;
    if (ours(text) !== direct(text)) mismatches++;
  }
  report.note(
    `Exact on ordinary text: ${mismatches} of ${formatCount(texts)} message texts (60 tau-bench runs, ${formatCount(locomo.length)} LoCoMo turns) counted differently from gpt-tokenizer: ${verdict(mismatches === 0)}. Any text up to 10 MB in under 2 s: ${formatMs(worst)} at most, ${verdict(worst < 2000)}. gpt-tokenizer "directly" is its ESM build with its defaults (a 100,000-entry merge cache), a separate instance from ours, fed the same texts in the same order.`,
  );
}

// --------------------------------------------------------------------- cold start, resume

interface ColdResult {
  label: string;
  firstMs: number;
  longestStretch: number;
  setupMs: number;
}

/** `setMessages` of the history, then the first request, with the probe running during it. */
async function coldFirstRequest(
  label: string,
  history: readonly Message[],
  store?: string,
): Promise<ColdResult> {
  const options = store ? { model: MODEL, store, conversationId: 'cold' } : { model: MODEL };
  const ctx = new ContextManager(options);
  const setup = performance.now();
  await ctx.setMessages(history as Message[], { replace: true });
  const setupMs = performance.now() - setup;
  const probe = startProbe();
  await nextTick();
  const start = performance.now();
  await ctx.getMessagesForRequest();
  const firstMs = performance.now() - start;
  const longestStretch = probe.stop();
  await ctx.close();
  return { label, firstMs, longestStretch, setupMs };
}

/** Opens a stored conversation in a new manager and makes its first request. */
async function resumeFirstRequest(label: string, store: string): Promise<ColdResult> {
  const probe = startProbe();
  await nextTick();
  const start = performance.now();
  const ctx = new ContextManager({ model: MODEL, store, conversationId: 'cold' });
  await ctx.getMessagesForRequest();
  const firstMs = performance.now() - start;
  const longestStretch = probe.stop();
  await ctx.close();
  return { label, firstMs, longestStretch, setupMs: 0 };
}

async function coldSection(report: Report, size: number): Promise<void> {
  progress(`generating a ${formatCount(size)}-message session…`);
  const history = longSessionMessages(size, 'openai', SEED);
  // Baseline: what the first request did before counting yielded, the whole history counted in place.
  const counter = createTokenCounter(getModelInfo(MODEL)!);
  const probe = startProbe();
  await nextTick();
  const inPlace = timed(() => {
    let n = 0;
    for (const m of history) n += counter.countMessage(m, 'openai');
    return n;
  });
  const inPlaceStretch = probe.stop();
  const results: ColdResult[] = [];
  progress('cold first request in memory…');
  results.push(await coldFirstRequest('memory, no stored plan', history));
  const dir = await mkdtemp(join(tmpdir(), 'contextkit-waits-'));
  try {
    for (const [name, spec] of [
      ['file', `file:${join(dir, 'file')}`],
      ['sqlite', `sqlite:${join(dir, 'store.db')}`],
    ] as const) {
      progress(`${name}: storing ${formatCount(size)} messages, first request, then resume…`);
      results.push(await coldFirstRequest(`${name}, no stored plan`, history, spec));
      results.push(await resumeFirstRequest(`${name}, resume (read + first request)`, spec));
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  report.heading(`Cold first request at ${formatCount(size)} messages`);
  report.table(
    ['', 'store write', 'first request', 'longest wait of a 10 ms timer'],
    [
      ['baseline: the history counted in place', '', formatMs(inPlace.ms), formatMs(inPlaceStretch)],
      ...results.map((r) => [
        r.label,
        r.setupMs > 0 ? formatMs(r.setupMs) : '',
        formatMs(r.firstMs),
        formatMs(r.longestStretch),
      ]),
    ],
  );
  const cold = results[0]!;
  const resumes = results.filter((r) => r.label.includes('resume'));
  const stretches = Math.max(...results.map((r) => r.longestStretch));
  report.note(
    `Goals: cold first request under 1 s: ${formatMs(cold.firstMs)}, ${verdict(cold.firstMs < 1000)}; resume + first request under 1 s on file and SQLite: ${resumes.map((r) => formatMs(r.firstMs)).join(' and ')}, ${verdict(resumes.every((r) => r.firstMs < 1000))}; no stretch over 50 ms: longest ${formatMs(stretches)}, ${verdict(stretches <= 50)}. History: \`longSessionMessages(${size}, 'openai', ${SEED})\`, model ${MODEL}.`,
  );
}

// ------------------------------------------------------------------------------ stores

/** A store whose every call is counted: each is at least one round trip to a server. */
function countingStore(store: ConversationStore): { store: ConversationStore; calls: () => number } {
  let calls = 0;
  const proxy = new Proxy(store, {
    get(target, key) {
      // Read on the store itself: its private fields are not the proxy's.
      const value: unknown = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (key !== 'close') calls++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls: () => calls };
}

const STEADY_TURNS = 50;

/** Store calls per steady turn (a user message added, the request, the reply added). */
async function roundTrips(store: ConversationStore, history: readonly Message[]): Promise<number> {
  const counted = countingStore(store);
  const ctx = new ContextManager({
    model: MODEL,
    store: counted.store,
    conversationId: `waits-${process.pid}-${Date.now()}`,
  });
  try {
    await ctx.setMessages(history.slice(0, 200) as Message[], { replace: true });
    await ctx.getMessagesForRequest();
    const before = counted.calls();
    for (let i = 0; i < STEADY_TURNS; i++) {
      await ctx.addMessage({ role: 'user', content: `steady turn ${i}` });
      await ctx.getMessagesForRequest();
      await ctx.addMessage({ role: 'assistant', content: `reply ${i}` });
    }
    return (counted.calls() - before) / STEADY_TURNS;
  } finally {
    await ctx.clear();
    await ctx.close();
  }
}

const SQLITE_APPENDS = 3000;

/** Appends a second, one entry per append, to a new SQLite file (synchronous normal). */
async function sqliteAppendRate(dir: string, mode: 'no index' | 'batched' | 'every append'): Promise<number> {
  const path = join(dir, `appends-${mode.replace(' ', '-')}.db`);
  const store = await openSqliteStore(path, { synchronous: 'normal' });
  try {
    if (mode === 'no index') {
      await store.append('warm', [
        { message: { role: 'user', content: 'x' }, metadata: { timestamp: new Date().toISOString() } },
      ]);
      const raw = new Database(path);
      raw.exec('DROP TABLE entries_fts');
      raw.close();
    }
    const start = performance.now();
    for (let i = 0; i < SQLITE_APPENDS; i++) {
      await store.append('c', [
        {
          message: { role: 'user', content: `note ${i}: ${i % 7} pears` },
          metadata: { timestamp: new Date().toISOString() },
        },
      ]);
      if (mode === 'every append') store.search.flush('c');
    }
    return SQLITE_APPENDS / ((performance.now() - start) / 1000);
  } finally {
    await store.close();
  }
}

async function storesSection(report: Report, history: readonly Message[]): Promise<void> {
  const rows: string[][] = [];
  for (const [name, open] of [
    [
      'redis',
      async () =>
        (await import('../src/stores/redis.js')).openRedisStore(
          process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
          {
            keyPrefix: `waits-${process.pid}:`,
          },
        ),
    ],
    [
      'postgres',
      async () =>
        (await import('../src/stores/postgres.js')).openPostgresStore(
          process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
          { schema: `waits_${process.pid}` },
        ),
    ],
  ] as const) {
    progress(`${name}: store calls per steady turn…`);
    try {
      const store = await open();
      try {
        rows.push([name, (await roundTrips(store, history)).toFixed(2)]);
      } finally {
        await store.close();
      }
    } catch (err) {
      rows.push([name, `not measured: ${err instanceof Error ? err.message : String(err)}`]);
    }
  }
  report.heading('Store round trips per steady turn');
  report.table(['store', 'calls per turn (add user, request, add reply)'], rows);
  report.note(
    `Each store call is at least one round trip. Goal: 1 per turn on Redis and Postgres, ${verdict(rows.every((r) => Number(r[1]) <= 1))}. ${STEADY_TURNS} turns after a 200-message history.`,
  );
  progress('SQLite appends with the index off, batched, and written at every append…');
  const dir = await mkdtemp(join(tmpdir(), 'contextkit-waits-sqlite-'));
  try {
    const off = await sqliteAppendRate(dir, 'no index');
    const batched = await sqliteAppendRate(dir, 'batched');
    const every = await sqliteAppendRate(dir, 'every append');
    report.heading('SQLite appends with recall on');
    report.table(
      ['full-text index', 'appends/s', 'vs no index'],
      [
        ['none (table dropped)', formatCount(Math.round(off)), '1.00×'],
        [
          `batched (${INDEX_BATCH} appends at a time)`,
          formatCount(Math.round(batched)),
          formatRatio(batched / off),
        ],
        ['written after every append', formatCount(Math.round(every)), formatRatio(every / off)],
      ],
    );
    report.note(
      `${formatCount(SQLITE_APPENDS)} appends of one entry, synchronous normal. Goal: with recall on at least 0.8× the rate without, ${verdict(batched / off >= 0.8)}. "After every append" indexes each append in a transaction of its own (before, it was inside the append's).`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs the benchmark and prints (and writes) its report. */
export async function runWaitsBenchmark(args: readonly string[]): Promise<void> {
  const { dataDir, messages, parts } = parseArgs(args);
  const report = new Report('Requests that wait (issue 24)');
  const load = loadavg()[0] ?? 0;
  report.note(
    `Load average at start ${load.toFixed(1)} on ${availableParallelism()} cores: wall times on a loaded machine mostly measure waiting for a core, so compare columns of one run, not runs.`,
  );
  if (parts.has('counting')) countingSection(report, dataDir);
  if (parts.has('cold')) await coldSection(report, messages);
  if (parts.has('stores')) await storesSection(report, longSessionMessages(200, 'openai', SEED));
  if (parts.has('summaries')) await summariesSection(report, progress);
  process.stdout.write(report.toText());
  progress(`written to ${report.write('waits', { keepOtherSections: parts.size < PARTS.length })}`);
}
