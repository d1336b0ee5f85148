import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ContextManager } from '../src/manager.js';
import type { Message } from '../src/messages/types.js';
import { FileStore } from '../src/stores/file.js';
import { MemoryStore } from '../src/stores/memory.js';
import type { ConversationStore, NewEntry } from '../src/stores/types.js';
import type { StoreSpec } from '../test/stores/fixtures/open-store.js';
import { startWriterProcess } from '../test/stores/fixtures/writer-process.js';
import { longSessionMessages } from '../test/support/arbitraries.js';
import { formatBytes, formatCount, formatMs, formatRatio, Report, verdict } from './report.js';
import { collectGarbage, type Summary, summarize } from './stats.js';
import { UsageError } from './usage-error.js';

const SEED = 20_240_601;
/** The history the append figures (and the goal against the baseline) are measured at. */
const HISTORY = 10_000;
const RESUME_SIZES = [10_000, 100_000] as const;
/** Resumes timed per size and driver; the report gives the median. */
const RESUME_RUNS = 3;
/** Batch of the prefills (setting up the histories, not measured as appends). */
const PREFILL_BATCH = 1_000;
/** Batch of the batched-append figure. */
const BATCH = 100;
/** Writer processes in the many-writers figure, and the `addMessage` calls each one makes. */
const WRITERS: ReadonlyArray<{ processes: number; each: number }> = [
  { processes: 1, each: 400 },
  { processes: 4, each: 150 },
  { processes: 8, each: 100 },
];
/** The child the many-writers figure runs: a `ContextManager` adding messages (the CI test's). */
const WRITER_CHILD = join(import.meta.dirname, '..', 'test', 'stores', 'fixtures', 'manager-writer.ts');

/**
 * How long each append loop runs. One-at-a-time loops stop at a time cap (at least `minOps`);
 * the baseline rewrites the whole file each add, so it gets fewer, slower turns.
 */
const LIMITS = {
  single: { capMs: 2_500, maxOps: 5_000, minOps: 20 },
  batched: { capMs: 1_500, maxOps: 150, minOps: 3 },
  baseline: { capMs: 5_000, maxOps: 1_000, minOps: 5 },
} as const;

type Limit = (typeof LIMITS)[keyof typeof LIMITS];

/** Pairs of appends (one plain, one identified) in the with-and-without-ids comparison. */
const ID_PAIRS: { capMs: number; maxOps: number; minOps: number } = {
  capMs: 2_500,
  maxOps: 2_000,
  minOps: 20,
};

const GOALS = {
  /** An identified append's median over a plain one's, one at a time at a 10k history: at most. */
  idsOverPlain: 1.5,
  /** File and SQLite one-at-a-time appends/s over the baseline's at a 10k history: at least. */
  appendsVsBaseline: 100,
  /** Resume of 100k messages from SQLite and the file store: under this many ms. */
  resumeMs: 1_000,
};

const REDIS_DEFAULT = 'redis://127.0.0.1:6379';
const POSTGRES_DEFAULT = 'postgres://postgres@127.0.0.1:5432/test';

/** A driver as the benchmark uses it: open a connection to the same data as often as needed. */
interface Driver {
  name: string;
  /** What a resolved append promises, in a few words. */
  durability: string;
  /** Opens the store; for memory, the one instance (it cannot be reopened: it is this process). */
  open(): Promise<ConversationStore>;
  /** False for memory: closing it would lose the data. */
  reopenable: boolean;
  /** How a child process opens the same store (absent for memory: it cannot be shared). */
  spec?: StoreSpec;
  /** Removes what the run wrote (temp directories, keys, rows). */
  cleanup(ids: readonly string[]): Promise<void>;
}

interface AppendFigures {
  /** Appends (one at a time) or messages (batched) per second. */
  perSecond: number;
  latency: Summary;
  ops: number;
}

interface ResumeFigures {
  size: number;
  /** Opening the store and reading the whole conversation. */
  openRead: Summary;
  /** `new ContextManager({ store, conversationId })` then `getMessages()`, on the open store. */
  manager: Summary;
  /** CPU time (user + system, all threads) of the same steps, which other processes inflate less. */
  openReadCpu: Summary;
  managerCpu: Summary;
  prefillMs: number;
}

interface WriterFigures {
  processes: number;
  appends: number;
  perSecond: number;
}

/** One-at-a-time appends with and without an id, alternated in one loop (issue 33 item 1). */
interface IdFigures {
  plain: Summary;
  identified: Summary;
  pairs: number;
}

interface DriverResult {
  name: string;
  durability: string;
  single: AppendFigures;
  ids: IdFigures;
  batched: AppendFigures;
  resume: ResumeFigures[];
  /** Empty for drivers no other process can open (memory). */
  writers: WriterFigures[];
}

interface Skipped {
  name: string;
  reason: string;
}

function progress(text: string): void {
  process.stderr.write(`[bench stores] ${text}\n`);
}

function sizeLabel(n: number): string {
  return n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n);
}

function keepGoing(
  limit: { capMs: number; maxOps: number; minOps: number },
  done: number,
  elapsedMs: number,
): boolean {
  if (done >= limit.maxOps) return false;
  return done < limit.minOps || elapsedMs < limit.capMs;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// ---------------------------------------------------------------------------------------------
// The baseline

/**
 * The seeds' `PersistentContext` (000_…, "Persistent Context"), in TypeScript and as written
 * there: the whole history in memory, loaded from one JSON file at construction, and the whole
 * file rewritten with every message on each `add_message`. Like the seed's `write_text`, the
 * write is neither flushed to disk nor atomic.
 */
class PersistentContextBaseline {
  private messages: Message[];

  constructor(private readonly storagePath: string) {
    this.messages = this.load();
  }

  async addMessage(message: Message): Promise<void> {
    this.messages.push(message);
    this.save();
  }

  async getMessages(): Promise<Message[]> {
    return [...this.messages];
  }

  async setMessages(messages: readonly Message[]): Promise<void> {
    this.messages = [...messages];
    this.save();
  }

  private load(): Message[] {
    if (existsSync(this.storagePath)) return JSON.parse(readFileSync(this.storagePath, 'utf8')) as Message[];
    return [];
  }

  private save(): void {
    mkdirSync(dirname(this.storagePath), { recursive: true });
    writeFileSync(this.storagePath, JSON.stringify(this.messages));
  }
}

interface BaselineResult {
  single: AppendFigures;
  resume: Array<{ size: number; load: Summary; cpu: Summary }>;
}

async function measureBaseline(dir: string, session: readonly Message[]): Promise<BaselineResult> {
  const path = join(dir, 'baseline', 'context.json');
  const context = new PersistentContextBaseline(path);
  await context.setMessages(session.slice(0, HISTORY));
  const latencies: number[] = [];
  const loopStart = performance.now();
  for (let i = 0; keepGoing(LIMITS.baseline, i, performance.now() - loopStart); i++) {
    const t0 = performance.now();
    await context.addMessage(session[HISTORY + i] as Message);
    latencies.push(performance.now() - t0);
  }
  const elapsed = performance.now() - loopStart;
  const single = {
    perSecond: (latencies.length / elapsed) * 1000,
    latency: summarize(latencies),
    ops: latencies.length,
  };

  const resume: BaselineResult['resume'] = [];
  for (const size of RESUME_SIZES) {
    await context.setMessages(session.slice(0, size));
    const times: number[] = [];
    const cpu: number[] = [];
    for (let r = 0; r < RESUME_RUNS; r++) {
      collectGarbage();
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const loaded = await new PersistentContextBaseline(path).getMessages();
      times.push(performance.now() - t0);
      const c1 = process.cpuUsage(c0);
      cpu.push((c1.user + c1.system) / 1000);
      if (loaded.length !== size)
        throw new Error(`baseline resumed ${loaded.length} messages, expected ${size}`);
    }
    resume.push({ size, load: summarize(times), cpu: summarize(cpu) });
  }
  return { single, resume };
}

/**
 * How many 500-byte appends, each followed by `fdatasync`, the disk under `dir` completes per
 * second, one at a time: the most a store that flushes a growing file before each append
 * resolves (the file store) could reach, whatever else it does. SQLite's WAL is rewritten in
 * place after checkpoints, which flushes a little faster.
 */
async function fdatasyncRate(dir: string, durationMs = 1_000): Promise<number> {
  const handle = await open(join(dir, 'fdatasync-probe'), 'a');
  const line = Buffer.from(`${'x'.repeat(499)}\n`);
  let n = 0;
  const t0 = performance.now();
  try {
    while (performance.now() - t0 < durationMs) {
      await handle.write(line);
      await handle.datasync();
      n++;
    }
  } finally {
    await handle.close();
  }
  return (n / (performance.now() - t0)) * 1000;
}

// ---------------------------------------------------------------------------------------------
// The drivers

async function fileDriver(dir: string): Promise<Driver> {
  const root = join(dir, 'file-store');
  return {
    name: 'file',
    durability: 'fdatasync per append',
    open: async () => new FileStore(root),
    reopenable: true,
    spec: { driver: 'file', location: root },
    cleanup: async () => rm(root, { recursive: true, force: true }),
  };
}

async function sqliteDriver(dir: string, synchronous: 'full' | 'normal'): Promise<Driver> {
  const { openSqliteStore } = await import('../src/stores/sqlite.js');
  const path = join(dir, `store-${synchronous}.db`);
  return {
    name: `sqlite (${synchronous})`,
    durability:
      synchronous === 'full' ? 'fsync per commit (WAL)' : 'survives a process crash, not power loss (WAL)',
    open: () => openSqliteStore(path, { synchronous }),
    reopenable: true,
    // Children open it with the defaults (synchronous full), so only the full run measures writers.
    ...(synchronous === 'full' ? { spec: { driver: 'sqlite' as const, location: path } } : {}),
    cleanup: async () => {
      for (const suffix of ['', '-wal', '-shm']) await rm(`${path}${suffix}`, { force: true });
    },
  };
}

function memoryDriver(): Driver {
  const store = new MemoryStore();
  return {
    name: 'memory',
    durability: 'none (this process)',
    open: async () => store,
    reopenable: false,
    cleanup: async () => store.close(),
  };
}

/** Deletes the run's conversations through a fresh connection, so a failed run cleans up too. */
async function deleteAll(connect: () => Promise<ConversationStore>, ids: readonly string[]): Promise<void> {
  const store = await connect();
  try {
    for (const id of ids) await store.delete(id);
  } finally {
    await store.close();
  }
}

/** Redis at REDIS_URL, or on the default port when something answers there. */
async function redisDriver(): Promise<Driver | Skipped> {
  const url = process.env.REDIS_URL || REDIS_DEFAULT;
  const source = process.env.REDIS_URL ? 'REDIS_URL' : `default ${REDIS_DEFAULT}`;
  const { openRedisStore } = await import('../src/stores/redis.js');
  const keyPrefix = `ck-bench-${process.pid}-${randomBytes(3).toString('hex')}:`;
  const connect = () => openRedisStore(url, { keyPrefix });
  try {
    await (await connect()).close();
  } catch (error) {
    return { name: 'redis', reason: `${source}: ${errorText(error)}` };
  }
  return {
    name: 'redis',
    durability: "the server's (AOF/fsync policy)",
    open: connect,
    reopenable: true,
    spec: { driver: 'redis', location: url, keyPrefix },
    cleanup: (ids) => deleteAll(connect, ids),
  };
}

/** Postgres at DATABASE_URL, or the default local database when it answers. */
async function postgresDriver(): Promise<Driver | Skipped> {
  const url = process.env.DATABASE_URL || POSTGRES_DEFAULT;
  const source = process.env.DATABASE_URL ? 'DATABASE_URL' : `default ${POSTGRES_DEFAULT}`;
  const { openPostgresStore } = await import('../src/stores/postgres.js');
  // A schema of its own: the run never migrates or touches the tables others use.
  const schema = `ck_bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  const connect = () => openPostgresStore(url, { schema });
  try {
    await (await connect()).close();
  } catch (error) {
    return { name: 'postgres', reason: `${source}: ${errorText(error)}` };
  }
  return {
    name: 'postgres',
    durability: 'commit (synchronous_commit as configured)',
    open: connect,
    reopenable: true,
    spec: { driver: 'postgres', location: url, schema },
    cleanup: async () => {
      const pg = (await import('pg')).default;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Measuring a driver

async function prefill(store: ConversationStore, id: string, entries: readonly NewEntry[]): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < entries.length; i += PREFILL_BATCH) {
    await store.append(id, entries.slice(i, i + PREFILL_BATCH), { expectedSeq: i });
  }
  return performance.now() - t0;
}

/**
 * Appends `batch` entries at a time, each awaited (so durable, as far as the driver makes it)
 * before the next, naming the conversation's generation as the manager does (the store gives
 * the sequence numbers; the loop checks they are the expected ones). The conversation holds `start`
 * entries, the first `start` of `source`, and grows with the ones after them.
 */
async function appendLoop(
  store: ConversationStore,
  id: string,
  source: readonly NewEntry[],
  start: number,
  batch: number,
  limit: Limit,
): Promise<AppendFigures & { end: number }> {
  const latencies: number[] = [];
  let seq = start;
  // The generation the conversation has (as the manager reads it on load), or a new one it takes.
  const epoch = (await store.epoch(id)) ?? `bench-${randomBytes(4).toString('hex')}`;
  const loopStart = performance.now();
  for (let i = 0; keepGoing(limit, i, performance.now() - loopStart); i++) {
    const entries = source.slice(seq, seq + batch);
    if (entries.length < batch) break;
    const t0 = performance.now();
    const given = await store.append(id, entries, { epoch });
    latencies.push(performance.now() - t0);
    if (given !== seq) throw new Error(`${id}: the store gave seq ${given}, expected ${seq}`);
    seq += batch;
  }
  const elapsed = performance.now() - loopStart;
  return {
    perSecond: ((latencies.length * batch) / elapsed) * 1000,
    latency: summarize(latencies),
    ops: latencies.length,
    end: seq,
  };
}

/**
 * The cost of an id: appends one at a time, alternately without and with an id (\`NewEntry.id\`,
 * which the store looks up in its index atomically with the append), so both see the same
 * history length, disk and load. Continues the conversation from \`start\`.
 */
async function idLoop(
  store: ConversationStore,
  id: string,
  source: readonly NewEntry[],
  start: number,
): Promise<IdFigures & { end: number }> {
  const plain: number[] = [];
  const identified: number[] = [];
  let seq = start;
  const epoch = (await store.epoch(id)) ?? `bench-${randomBytes(4).toString('hex')}`;
  const loopStart = performance.now();
  for (let i = 0; keepGoing(ID_PAIRS, i, performance.now() - loopStart); i++) {
    for (const withId of [false, true]) {
      const entry = source[seq];
      if (!entry) return { plain: summarize(plain), identified: summarize(identified), pairs: i, end: seq };
      const t0 = performance.now();
      const given = await store.append(id, [withId ? { ...entry, id: `msg-${seq}` } : entry], { epoch });
      (withId ? identified : plain).push(performance.now() - t0);
      if (given !== seq) throw new Error(`${id}: the store gave seq ${given}, expected ${seq}`);
      seq++;
    }
  }
  return { plain: summarize(plain), identified: summarize(identified), pairs: plain.length, end: seq };
}

async function measureResume(
  driver: Driver,
  shared: ConversationStore,
  id: string,
  size: number,
  last: Message,
): Promise<Omit<ResumeFigures, 'size' | 'prefillMs'>> {
  const openRead: number[] = [];
  const manager: number[] = [];
  const openReadCpu: number[] = [];
  const managerCpu: number[] = [];
  for (let r = 0; r < RESUME_RUNS; r++) {
    collectGarbage();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const store = driver.reopenable ? await driver.open() : shared;
    const entries = await store.read(id);
    const t1 = performance.now();
    const c1 = process.cpuUsage(c0);
    if (entries.length !== size || JSON.stringify(entries.at(-1)?.message) !== JSON.stringify(last)) {
      throw new Error(
        `${driver.name}: read ${entries.length} entries of ${id}, expected ${size} ending as written`,
      );
    }
    collectGarbage();
    const c2 = process.cpuUsage();
    const t2 = performance.now();
    // Not closed: closing a manager closes its store, which the next run (memory) still needs.
    const context = new ContextManager({ store, conversationId: id });
    const messages = await context.getMessages();
    const t3 = performance.now();
    const c3 = process.cpuUsage(c2);
    if (messages.length !== size)
      throw new Error(`${driver.name}: the manager resumed ${messages.length} of ${size}`);
    openRead.push(t1 - t0);
    manager.push(t3 - t2);
    openReadCpu.push((c1.user + c1.system) / 1000);
    managerCpu.push((c3.user + c3.system) / 1000);
    if (driver.reopenable) await store.close();
  }
  return {
    openRead: summarize(openRead),
    manager: summarize(manager),
    openReadCpu: summarize(openReadCpu),
    managerCpu: summarize(managerCpu),
  };
}

/**
 * `processes` child processes, each a `ContextManager` on conversation `id`, add `each` messages
 * one at a time; timed from the moment all are ready until all have exited. The store must then
 * hold every message.
 */
async function measureWriters(
  driver: Driver,
  spec: StoreSpec,
  id: string,
  processes: number,
  each: number,
): Promise<WriterFigures> {
  const writers = Array.from({ length: processes }, (_, w) =>
    startWriterProcess(WRITER_CHILD, [JSON.stringify(spec), id, String(w), String(each), String(each)], w),
  );
  try {
    await Promise.all(writers.map((w) => w.ready));
    const t0 = performance.now();
    for (const w of writers) w.child.stdin?.end('go\n');
    await Promise.all(writers.map((w) => w.done));
    const seconds = (performance.now() - t0) / 1000;
    const store = await driver.open();
    try {
      const head = await store.head(id);
      if (head !== processes * each)
        throw new Error(`${processes} writers stored ${head} of ${processes * each}`);
    } finally {
      await store.close();
    }
    return { processes, appends: processes * each, perSecond: (processes * each) / seconds };
  } finally {
    for (const { child } of writers) if (child.exitCode === null) child.kill('SIGKILL');
  }
}

async function measureDriver(
  driver: Driver,
  entries: readonly NewEntry[],
  ids: RunIds,
): Promise<DriverResult> {
  const store = await driver.open();
  progress(`${driver.name}: prefill ${sizeLabel(HISTORY)}, appends one at a time…`);
  await prefill(store, ids.appends, entries.slice(0, HISTORY));
  const single = await appendLoop(store, ids.appends, entries, HISTORY, 1, LIMITS.single);
  progress(`  ${formatCount(single.perSecond)} appends/s (${single.ops}); with and without ids…`);
  const idFigures = await idLoop(store, ids.appends, entries, single.end);
  progress(
    `  plain ${formatMs(idFigures.plain.median)}, with an id ${formatMs(idFigures.identified.median)} (${formatRatio(idFigures.identified.median / idFigures.plain.median)}); batched…`,
  );
  const batched = await appendLoop(store, ids.appends, entries, idFigures.end, BATCH, LIMITS.batched);
  progress(`  ${formatCount(batched.perSecond)} messages/s in batches of ${BATCH}`);
  const resume: ResumeFigures[] = [];
  const prefills: number[] = [];
  for (const size of RESUME_SIZES) {
    progress(`  prefill ${sizeLabel(size)} for the resume…`);
    prefills.push(await prefill(store, ids.resume(size), entries.slice(0, size)));
  }
  if (driver.reopenable) await store.close();
  for (const [i, size] of RESUME_SIZES.entries()) {
    progress(`  resume ${sizeLabel(size)}…`);
    const last = entries[size - 1]?.message as Message;
    const figures = await measureResume(driver, store, ids.resume(size), size, last);
    progress(
      `    open + read ${formatMs(figures.openRead.median)}, manager ${formatMs(figures.manager.median)}`,
    );
    resume.push({ size, ...figures, prefillMs: prefills[i] as number });
  }
  const writers: WriterFigures[] = [];
  if (driver.spec) {
    for (const { processes, each } of WRITERS) {
      progress(`  ${processes} writer process(es) × ${each} addMessage through ContextManager…`);
      const figures = await measureWriters(driver, driver.spec, ids.writers(processes), processes, each);
      progress(`    ${formatCount(figures.perSecond)} appends/s`);
      writers.push(figures);
    }
  }
  return {
    name: driver.name,
    durability: driver.durability,
    single,
    ids: { plain: idFigures.plain, identified: idFigures.identified, pairs: idFigures.pairs },
    batched,
    resume,
    writers,
  };
}

interface RunIds {
  appends: string;
  resume(size: number): string;
  writers(processes: number): string;
  all: string[];
}

function runIds(): RunIds {
  const base = `bench-${process.pid}-${randomBytes(3).toString('hex')}`;
  const resume = (size: number) => `${base}/resume-${sizeLabel(size)}`;
  const writers = (processes: number) => `${base}/writers-${processes}`;
  return {
    appends: `${base}/appends`,
    resume,
    writers,
    all: [`${base}/appends`, ...RESUME_SIZES.map(resume), ...WRITERS.map((w) => writers(w.processes))],
  };
}

// ---------------------------------------------------------------------------------------------

const DRIVER_NAMES = ['memory', 'file', 'sqlite-full', 'sqlite-normal', 'redis', 'postgres'] as const;
type DriverName = (typeof DRIVER_NAMES)[number];

function parseDrivers(args: readonly string[]): DriverName[] {
  let names: DriverName[] = [...DRIVER_NAMES];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const value = arg.startsWith('--drivers=')
      ? arg.slice('--drivers='.length)
      : arg === '--drivers'
        ? args[++i]
        : null;
    if (value === null || value === undefined) {
      throw new UsageError(
        `unknown option ${JSON.stringify(arg)} (stores takes --drivers ${DRIVER_NAMES.join(',')})`,
      );
    }
    names = value.split(',').map((s) => {
      const name = s.trim();
      if (!(DRIVER_NAMES as readonly string[]).includes(name)) {
        throw new UsageError(
          `--drivers: unknown driver ${JSON.stringify(name)} (known: ${DRIVER_NAMES.join(', ')})`,
        );
      }
      return name as DriverName;
    });
  }
  return names;
}

async function driverFor(name: DriverName, dir: string): Promise<Driver | Skipped> {
  switch (name) {
    case 'memory':
      return memoryDriver();
    case 'file':
      return fileDriver(dir);
    case 'sqlite-full':
      return sqliteDriver(dir, 'full');
    case 'sqlite-normal':
      return sqliteDriver(dir, 'normal');
    case 'redis':
      return redisDriver();
    case 'postgres':
      return postgresDriver();
  }
}

/** Runs the stores benchmark, prints its report and writes `bench/results/stores.md`. */
export async function runStoresBenchmark(args: readonly string[]): Promise<void> {
  const names = parseDrivers(args);
  const wallStart = performance.now();
  const maxSize = Math.max(...RESUME_SIZES);
  const dir = await mkdtemp(join(tmpdir(), 'ck-bench-stores-'));
  const loadAtStart = loadavg()[0] ?? Number.NaN;
  try {
    progress(`generating a ${formatCount(maxSize)}-message OpenAI session (seed ${SEED})…`);
    const session = longSessionMessages(maxSize, 'openai', SEED);
    const start = Date.UTC(2025, 0, 1);
    const entries: NewEntry[] = session.map((message, i) => ({
      message,
      metadata: { timestamp: new Date(start + i * 1_000).toISOString() },
    }));
    const jsonBytes = RESUME_SIZES.map((size) => Buffer.byteLength(JSON.stringify(session.slice(0, size))));

    const fsyncPerSecond = await fdatasyncRate(dir);
    progress(`disk: ${formatCount(fsyncPerSecond)} write + fdatasync pairs per second`);

    progress(`baseline (seed PersistentContext): adds at ${sizeLabel(HISTORY)}, resume…`);
    const baseline = await measureBaseline(dir, session);
    progress(`  ${baseline.single.perSecond.toFixed(1)} adds/s over ${baseline.single.ops} adds`);

    const results: DriverResult[] = [];
    const skipped: Skipped[] = [];
    for (const name of names) {
      const driver = await driverFor(name, dir);
      if (!('open' in driver)) {
        progress(`${driver.name}: skipped (${driver.reason})`);
        skipped.push(driver);
        continue;
      }
      const ids = runIds();
      try {
        results.push(await measureDriver(driver, entries, ids));
      } finally {
        await driver.cleanup(ids.all).catch((error: unknown) => {
          progress(`  cleanup of ${driver.name} failed: ${errorText(error)}`);
        });
      }
    }
    const report = buildReport(results, skipped, baseline, {
      jsonBytes,
      wallMs: performance.now() - wallStart,
      fsyncPerSecond,
      loadAtStart,
    });
    process.stdout.write(report.toText());
    progress(`written to ${report.write('stores')}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** What the report says about the run itself. */
interface RunFacts {
  jsonBytes: readonly number[];
  wallMs: number;
  fsyncPerSecond: number;
  loadAtStart: number;
}

function wallAndCpu(wall: Summary, cpu: Summary): string {
  return `${formatMs(wall.median)} (cpu ${formatMs(cpu.median)})`;
}

function buildReport(
  results: readonly DriverResult[],
  skipped: readonly Skipped[],
  baseline: BaselineResult,
  facts: RunFacts,
): Report {
  const { jsonBytes, wallMs, fsyncPerSecond, loadAtStart } = facts;
  const report = new Report('contextkit stores benchmark');
  const ran = results.map((r) => r.name).join(', ');
  report.note(
    [
      `Node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} cores, load average ${loadAtStart.toFixed(2)} at the start and ${loadavg()[0]?.toFixed(2)} at the end (other processes share the machine: figures move from run to run; resume cells also give the CPU time, which the load inflates less). Files in ${tmpdir()}. Whole run ${formatMs(wallMs)}.`,
      `Messages: \`longSessionMessages(n, 'openai', ${SEED})\` from test/support/arbitraries.ts, each with \`{timestamp}\` metadata; ${RESUME_SIZES.map((s, i) => `${sizeLabel(s)} messages are ${formatBytes(jsonBytes[i] ?? 0)} of JSON`).join(', ')}.`,
      `Drivers run: ${ran || 'none'}.${skipped.length > 0 ? ` Skipped: ${skipped.map((s) => `${s.name} (${s.reason})`).join('; ')}.` : ''}`,
      `Appends: into a conversation already holding ${formatCount(HISTORY)} messages; one at a time, each awaited before the next and naming the conversation's generation as the manager does (up to ${formatCount(LIMITS.single.maxOps)} appends or ${LIMITS.single.capMs / 1000} s), then in batches of ${BATCH} (up to ${LIMITS.batched.maxOps} batches or ${LIMITS.batched.capMs / 1000} s).`,
      `Resume: a new store instance (connection) opened and the whole conversation read; then \`new ContextManager({ store, conversationId })\` and \`getMessages()\` on that open store. Median of ${RESUME_RUNS} runs, after a full GC. The memory store cannot be reopened, so its figure is a read of the live instance. Histories are written beforehand in batches of ${formatCount(PREFILL_BATCH)} (the "prefill" column).`,
      `Disk: ${formatCount(fsyncPerSecond)} appends + fdatasync per second to a growing file, one at a time, in the same directory, with nothing else done: the most a store that flushes a growing file before an append resolves (the file store) could reach, here ${formatRatio(fsyncPerSecond / baseline.single.perSecond)} the baseline's adds/s.`,
      `Baseline: the seeds' PersistentContext (000_…): the whole history in one JSON file, rewritten on every \`add_message\` (\`writeFileSync\`, as the seed's \`write_text\`: not flushed, not atomic, so it promises less than every durable driver here); resume parses the file. Its adds are measured at the same ${formatCount(HISTORY)}-message history for up to ${LIMITS.baseline.capMs / 1000} s (turns measured: ${baseline.single.ops}).`,
    ].join('\n'),
  );

  const base = baseline.single.perSecond;
  report.heading(`Appends at a ${sizeLabel(HISTORY)}-message history`);
  report.table(
    [
      'store',
      'a resolved append is',
      'one at a time: appends/s',
      'median',
      'p95',
      'appends',
      '÷ baseline',
      `batches of ${BATCH}: msgs/s`,
      'batch median',
      'batches',
      '÷ baseline',
    ],
    [
      [
        'baseline (PersistentContext)',
        'written, not flushed',
        baseline.single.perSecond.toFixed(1),
        formatMs(baseline.single.latency.median),
        formatMs(baseline.single.latency.p95),
        String(baseline.single.ops),
        '1.00×',
        '–',
        '–',
        '–',
        '–',
      ],
      ...results.map((r) => [
        r.name,
        r.durability,
        formatCount(r.single.perSecond),
        formatMs(r.single.latency.median),
        formatMs(r.single.latency.p95),
        formatCount(r.single.ops),
        formatRatio(r.single.perSecond / base),
        formatCount(r.batched.perSecond),
        formatMs(r.batched.latency.median),
        String(r.batched.ops),
        formatRatio(r.batched.perSecond / base),
      ]),
    ],
  );

  report.heading('Identified appends (issue 33 item 1)');
  report.note(
    `One at a time at the same ${sizeLabel(HISTORY)}-message history, alternately without and with an id (the store checks the id in its index atomically with the append: a map lookup on memory and file, the unique (conversation, id) index on SQLite and Postgres, a hash field on Redis), up to ${formatCount(ID_PAIRS.maxOps)} pairs or ${ID_PAIRS.capMs / 1000} s. The ratio is the medians'.`,
  );
  report.table(
    ['store', 'plain: median', 'p95', 'with an id: median', 'p95', 'pairs', 'with ÷ without'],
    results.map((r) => [
      r.name,
      formatMs(r.ids.plain.median),
      formatMs(r.ids.plain.p95),
      formatMs(r.ids.identified.median),
      formatMs(r.ids.identified.p95),
      formatCount(r.ids.pairs),
      formatRatio(r.ids.identified.median / r.ids.plain.median),
    ]),
  );

  report.heading('Resume');
  const headers = ['store'];
  for (const size of RESUME_SIZES) {
    headers.push(`${sizeLabel(size)}: open + read`, `${sizeLabel(size)}: ContextManager`);
  }
  headers.push(`prefill ${sizeLabel(Math.max(...RESUME_SIZES))}`);
  report.table(headers, [
    [
      'baseline (PersistentContext)',
      ...baseline.resume.flatMap((r) => [wallAndCpu(r.load, r.cpu), '–']),
      '–',
    ],
    ...results.map((r) => [
      r.name,
      ...r.resume.flatMap((x) => [
        wallAndCpu(x.openRead, x.openReadCpu),
        wallAndCpu(x.manager, x.managerCpu),
      ]),
      formatMs(r.resume.at(-1)?.prefillMs ?? Number.NaN),
    ]),
  ]);

  report.heading('Many writers through ContextManager');
  report.note(
    `Writer processes, each a \`ContextManager\` (the child of test/stores/manager-writers.test.ts) on one shared conversation, adding messages one at a time with \`addMessage\`: ${WRITERS.map((w) => `${w.processes} × ${w.each}`).join(', ')}. Timed from all writers ready to all exited; the store must hold every message. The store numbers the appends and each writer reads back what others appended before it, so no writer retries or waits on another's failure. SQLite with its defaults (synchronous full); memory cannot be shared between processes.`,
  );
  const shared = results.filter((r) => r.writers.length > 0);
  report.table(
    ['store', ...WRITERS.map((w) => `${w.processes} writer${w.processes > 1 ? 's' : ''}: appends/s`)],
    shared.map((r) => [r.name, ...r.writers.map((w) => formatCount(w.perSecond))]),
  );

  report.heading('Goals');
  const rows: string[][] = [];
  for (const r of results) {
    const idRatio = r.ids.identified.median / r.ids.plain.median;
    rows.push([
      `${r.name}: an append with an id costs at most ${GOALS.idsOverPlain}× one without (median, one at a time)`,
      `${formatMs(r.ids.identified.median)} vs ${formatMs(r.ids.plain.median)} (${formatRatio(idRatio)})`,
      verdict(idRatio <= GOALS.idsOverPlain),
    ]);
  }
  for (const r of results) {
    if (r.name === 'file' || r.name.startsWith('sqlite')) {
      const ratio = r.single.perSecond / base;
      rows.push([
        `${r.name}: one-at-a-time appends/s at ${sizeLabel(HISTORY)} ≥ ${GOALS.appendsVsBaseline}× the baseline's`,
        `${formatCount(r.single.perSecond)} vs ${base.toFixed(1)} (${formatRatio(ratio)})` +
          (r.name === 'file' ? `; bare append + fdatasync: ${formatRatio(fsyncPerSecond / base)}` : ''),
        verdict(ratio >= GOALS.appendsVsBaseline),
      ]);
    }
  }
  for (const r of results) {
    if (r.name === 'file' || r.name.startsWith('sqlite')) {
      const big = r.resume.find((x) => x.size === 100_000);
      if (!big) continue;
      rows.push([
        `${r.name}: resume of 100k messages (open + read) < ${GOALS.resumeMs / 1000} s`,
        wallAndCpu(big.openRead, big.openReadCpu),
        verdict(big.openRead.median < GOALS.resumeMs),
      ]);
      rows.push([
        `${r.name}: resume of 100k messages (ContextManager over the open store) < ${GOALS.resumeMs / 1000} s`,
        wallAndCpu(big.manager, big.managerCpu),
        verdict(big.manager.median < GOALS.resumeMs),
      ]);
    }
  }
  report.table(['goal', 'measured', 'verdict'], rows);
  return report;
}
