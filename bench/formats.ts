/**
 * The steady turn in every wire format, this tree against an earlier revision, in one run
 * (`npm run bench -- formats --against <rev>`). Moving the formats behind one interface must not
 * make a turn slower: both sides are built the same way (tsup, into temporary folders of the same
 * shape), fed the same session, and run in rounds of one process each, back to back, so they share
 * the machine's load.
 */
import { execFileSync, fork } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { declareModules } from './formats-build.js';
import {
  BUDGET,
  FORMATS,
  type FormatsBuild,
  formatSession,
  SIZE,
  type SideReply,
  type SideRequest,
  TURNS,
} from './formats-session.js';
import { formatCount, formatMs, Report, verdict } from './report.js';
import { type Summary, summarize } from './stats.js';
import { UsageError } from './usage-error.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The goal: the refactored turn within 10% of the earlier one. */
const GOAL = 1.1;

function progress(text: string): void {
  process.stderr.write(`bench formats: ${text}\n`);
}

function git(args: string[], cwd = ROOT): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/**
 * Bundles the tree at `dir` with the project's tsup config, quietly, into `<home>/dist`, where
 * `home` also holds a link to the dependencies (the bundle imports them by name; never inside
 * `dist`: tsup empties its output folder, and would follow the link). Both sides go through here,
 * so their bundles differ in nothing but their code, and `dist` is declared ES modules (see
 * formats-build.ts: a bundle taken for CommonJS runs slower for that alone).
 */
function bundle(dir: string, home: string): string {
  const outDir = join(home, 'dist');
  mkdirSync(home, { recursive: true });
  if (!existsSync(join(home, 'node_modules')))
    symlinkSync(join(ROOT, 'node_modules'), join(home, 'node_modules'));
  execFileSync(join(ROOT, 'node_modules', '.bin', 'tsup'), ['--out-dir', outDir, '--no-dts', '--silent'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  declareModules(outDir);
  return join(outDir, 'index.js');
}

/**
 * The earlier revision, exported (`git archive`, so the repository gets no extra worktree) into a
 * temporary folder and bundled there, once per commit.
 */
function buildRevision(rev: string): { label: string; entry: string } {
  const commit = git(['rev-parse', '--verify', `${rev}^{commit}`]);
  const short = commit.slice(0, 10);
  const home = join(tmpdir(), `contextkit-bench-${short}`);
  const entry = join(home, 'dist', 'index.js');
  if (!existsSync(join(home, 'dist', 'package.json'))) {
    progress(`bundling ${short} in ${home}…`);
    rmSync(home, { recursive: true, force: true });
    const src = join(home, 'src-tree');
    mkdirSync(src, { recursive: true });
    execFileSync('sh', ['-c', 'git archive --format=tar "$1" | tar -x -C "$2"', 'sh', commit, src], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    // tsup resolves the sources' imports of dependencies from the exported tree.
    symlinkSync(join(ROOT, 'node_modules'), join(src, 'node_modules'));
    bundle(src, home);
  }
  return { label: short, entry };
}

/** What a bundle is made from. */
const BUNDLED = ['src', 'package.json', 'tsconfig.json', 'tsup.config.ts'];

/** This tree, as it is on disk (uncommitted changes included), bundled the same way. */
function buildWorkingTree(): { label: string; entry: string; home: string } {
  progress('bundling this tree…');
  const home = join(tmpdir(), `contextkit-bench-tree-${process.pid}`);
  const entry = bundle(ROOT, home);
  // Only what goes into the bundle makes it differ from HEAD (not, say, a report just written).
  const dirty = git(['status', '--porcelain', '--untracked-files=no', '--', ...BUNDLED]) !== '';
  return { label: `${git(['rev-parse', '--short=10', 'HEAD'])}${dirty ? '+changes' : ''}`, entry, home };
}

interface Row {
  format: string;
  model: string;
  before: Summary;
  after: Summary;
  /** Each round's median turn after over before, in the order run. */
  ratios: number[];
}

const SIDE = join(dirname(fileURLToPath(import.meta.url)), 'formats-side.ts');
/** Rounds per format unless `--rounds N`: each round is a fresh pair of processes, one per side. */
const DEFAULT_ROUNDS = 10;
/** Turns a side runs before the other side runs the same ones. */
const BLOCK = 25;

/** A side process (formats-side.ts) with the build at `entry`, set up and waiting for blocks. */
interface Side {
  ready: Promise<void>;
  /** Runs the side's next `turns` turns; resolves with their times (ms). */
  run(turns: number): Promise<number[]>;
  /** Resolves when the process has exited after its last turn. */
  exited: Promise<void>;
  /** Ends the process early (the run failed elsewhere). */
  stop(): void;
}

function startSide(entry: string, format: string): Side {
  const child = fork(SIDE, [entry, format], {
    cwd: ROOT,
    execArgv: ['--expose-gc', '--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  // The parent asks for one thing at a time, so replies come back in the order of `waiting`.
  const waiting: { resolve(reply: SideReply): void; reject(error: Error): void }[] = [];
  const next = (): Promise<SideReply> => new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  child.on('message', (reply: SideReply) => waiting.shift()?.resolve(reply));
  const exited = new Promise<void>((resolve, reject) => {
    child.on('exit', (code, signal) => {
      const failed =
        code !== 0
          ? new Error(`bench formats: ${entry} (${format}) exited with ${code ?? signal}`)
          : undefined;
      for (const w of waiting.splice(0)) w.reject(failed ?? new Error('bench formats: a side exited early'));
      if (failed) reject(failed);
      else resolve();
    });
  });
  exited.catch(() => {});
  return {
    ready: next().then(() => undefined),
    run: async (turns) => {
      const reply = next();
      child.send({ turns } satisfies SideRequest);
      const answer = await reply;
      if (!('times' in answer)) throw new Error('bench formats: a side answered a block out of turn');
      return answer.times;
    },
    exited,
    stop: () => child.kill(),
  };
}

/**
 * Both builds' turns on one format, in rounds of a fresh pair of processes, one per side, both set
 * up before any turn is timed. The sides then take the same turns by blocks of {@link BLOCK}, A B
 * B A A B …, and the next round starts with the other side: the two sides' turns are milliseconds
 * apart, so a change of the machine's load falls on both, and each side is as often first as
 * second. A round's ratio is of its two median turns; the verdict takes the rounds' median, so
 * one pair of processes that drew a slow layout in memory does not decide it.
 */
async function runFormat(
  entries: readonly [string, string],
  format: string,
  rounds: number,
): Promise<Omit<Row, 'model'>> {
  const turns: [number[], number[]] = [[], []];
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    // The side started first alternates too (they set up side by side).
    const sides: Side[] = [];
    for (const side of round % 2 === 0 ? [0, 1] : [1, 0]) sides[side] = startSide(entries[side]!, format);
    const times: [number[], number[]] = [[], []];
    try {
      await Promise.all(sides.map((side) => side.ready));
      for (let block = 0; block * BLOCK < TURNS; block++) {
        const count = Math.min(BLOCK, TURNS - block * BLOCK);
        // Pairs of blocks alternate which side goes first: A B, B A, A B, …
        for (const side of (block + round) % 2 === 0 ? [0, 1] : [1, 0]) {
          times[side]!.push(...(await sides[side]!.run(count)));
        }
      }
      await Promise.all(sides.map((side) => side.exited));
    } catch (error) {
      for (const side of sides) side.stop();
      throw error;
    }
    ratios.push(summarize(times[1]).median / summarize(times[0]).median);
    turns[0].push(...times[0]);
    turns[1].push(...times[1]);
  }
  return { format, before: summarize(turns[0]), after: summarize(turns[1]), ratios };
}

function option(args: readonly string[], name: string): string | undefined {
  const at = args.indexOf(name);
  const value = at >= 0 ? args[at + 1] : undefined;
  return value === undefined || value.startsWith('--') ? undefined : value;
}

function parseArgs(args: readonly string[]): { rev: string; rounds: number } {
  const rev = option(args, '--against');
  if (rev === undefined) {
    throw new UsageError(
      'bench formats: give the revision to compare with, e.g. `npm run bench -- formats --against main~3`',
    );
  }
  const given = option(args, '--rounds');
  const rounds = given === undefined ? DEFAULT_ROUNDS : Number(given);
  if (!Number.isInteger(rounds) || rounds < 1) {
    throw new UsageError(`bench formats: --rounds takes a whole number of at least 1, not ${given}`);
  }
  return { rev, rounds };
}

export async function runFormatsBenchmark(args: readonly string[]): Promise<void> {
  const { rev, rounds } = parseArgs(args);
  const started = performance.now();
  const earlier = buildRevision(rev);
  const current = buildWorkingTree();
  const rows: Row[] = [];
  const probe = (await import(pathToFileURL(current.entry).href)) as FormatsBuild;
  try {
    for (const format of FORMATS) {
      progress(
        `${formatCount(SIZE)} ${format} messages, ${earlier.label} and ${current.label}, ${rounds} rounds of a pair of processes…`,
      );
      const row = await runFormat([earlier.entry, current.entry], format, rounds);
      progress(`  ratios by round: ${row.ratios.map((r) => r.toFixed(3)).join(' ')}`);
      rows.push({ ...row, model: formatSession(probe.convertMessages, format).model });
    }
  } finally {
    // This tree's bundle is made afresh each run; the earlier revision's stays for the next one.
    rmSync(current.home, { recursive: true, force: true });
  }
  const report = new Report('contextkit wire formats benchmark');
  report.note(
    `Node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(2)} at the end; ${((performance.now() - started) / 1000).toFixed(0)} s.`,
  );
  report.heading(
    `Steady turn by format, ${earlier.label} against ${current.label} (${formatCount(SIZE)} messages)`,
  );
  report.table(
    [
      'format',
      'model',
      `${earlier.label} median`,
      `${current.label} median`,
      'ratio',
      'rounds',
      `${earlier.label} p95`,
      `${current.label} p95`,
      'turns',
      `goal ≤ ${GOAL}×`,
    ],
    rows.map((r) => {
      const ratios = summarize(r.ratios);
      return [
        r.format,
        r.model,
        formatMs(r.before.median),
        formatMs(r.after.median),
        `${ratios.median.toFixed(2)}×`,
        `${ratios.min.toFixed(2)}–${ratios.max.toFixed(2)}×`,
        formatMs(r.before.p95),
        formatMs(r.after.p95),
        `${r.before.n} / ${r.after.n}`,
        verdict(ratios.median <= GOAL),
      ];
    }),
  );
  report.note(
    `Both builds bundled the same way, with the project's tsup config, into folders of the same shape that declare ES modules (the earlier one from \`git archive\` of ${rev}); the same session per format (this tree's generators: \`longSessionMessages\`, converted for Responses and Gemini), ${formatCount(SIZE)} messages added, then ${formatCount(TURNS)} turns (add one message, request the view at ${formatCount(BUDGET)} tokens); turns in which a compaction ran are left out. ${rounds} rounds per format, each a fresh pair of processes (one per side, both set up before any turn is timed) that take the same turns by blocks of ${BLOCK}, A B B A A B …, the next round starting with the other side. The medians and p95 are over every round's turns; the ratio is the median of the rounds' ratios of median turns (their range beside it), and the verdict is on it. Both builds in one process would not do: the one loaded second ran 6–15% slower even when both were the same code. \`--against HEAD\` on a clean tree compares it with itself and shows what the method's noise is (written to formats-control.md).`,
  );
  report.note(
    `Ratios by round, in the order run: ${rows.map((r) => `${r.format} ${r.ratios.map((x) => x.toFixed(2)).join(' ')}`).join('; ')}.`,
  );
  process.stdout.write(report.toText());
  // The tree against its own commit is the method's control: its report is kept beside the other.
  const control = current.label === earlier.label;
  progress(`written to ${report.write(control ? 'formats-control' : 'formats')}`);
}
