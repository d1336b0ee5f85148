/**
 * The steady turn in every wire format, this tree against an earlier revision, in one run
 * (`npm run bench -- formats --against <rev>`). Moving the formats behind one interface must not
 * make a turn slower: both sides are built with the same bundler (tsup) into temporary folders, fed
 * the same session, and take turns by blocks, so they share the machine's load.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BUDGET, FORMATS, type FormatsBuild, formatSession, SIZE, TURNS } from './formats-session.js';
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

/** Bundles the tree at `dir` into `outDir` with the project's tsup config, quietly. */
function bundle(dir: string, outDir: string): void {
  execFileSync(join(ROOT, 'node_modules', '.bin', 'tsup'), ['--out-dir', outDir, '--no-dts', '--silent'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** The earlier revision checked out beside the tree (a detached worktree) and bundled, once. */
function buildRevision(rev: string): { label: string; entry: string } {
  const commit = git(['rev-parse', '--verify', `${rev}^{commit}`]);
  const short = commit.slice(0, 10);
  const dir = join(tmpdir(), `contextkit-bench-${short}`);
  const entry = join(dir, 'bench-dist', 'index.js');
  if (!existsSync(entry)) {
    progress(`bundling ${short} in ${dir}…`);
    if (existsSync(dir)) {
      git(['worktree', 'remove', '--force', dir]);
      rmSync(dir, { recursive: true, force: true });
    }
    git(['worktree', 'add', '--detach', dir, commit]);
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    bundle(dir, join(dir, 'bench-dist'));
  }
  return { label: short, entry };
}

/** This tree, as it is on disk (uncommitted changes included), bundled the same way. */
function buildWorkingTree(): { label: string; entry: string } {
  // The bundle imports its dependencies by name: they resolve through a link beside its folder.
  // Never inside it: tsup empties its output folder, and would follow the link.
  const dir = join(tmpdir(), `contextkit-bench-tree-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  if (!existsSync(join(dir, 'node_modules')))
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  progress('bundling this tree…');
  bundle(ROOT, join(dir, 'dist'));
  const dirty = git(['status', '--porcelain', '--untracked-files=no']) !== '';
  return {
    label: `${git(['rev-parse', '--short=10', 'HEAD'])}${dirty ? '+changes' : ''}`,
    entry: join(dir, 'dist', 'index.js'),
  };
}

interface Row {
  format: string;
  model: string;
  before: Summary;
  after: Summary;
}

const SIDE = join(dirname(fileURLToPath(import.meta.url)), 'formats-side.ts');
/** Processes per side and format, in the order A B B A (drift on the machine cancels out). */
const ORDER = [0, 1, 1, 0] as const;

/** One process's turns with the build at `entry` (see formats-side.ts). */
function sideTurns(entry: string, format: string, first: number, count: number): number[] {
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', SIDE, entry, format, String(first), String(count)],
    { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(out) as number[];
}

/** Both builds' turns on one format: a fresh process per run, A B B A, each on the same turns. */
function runFormat(entries: readonly [string, string], format: string): [Summary, Summary] {
  const turns: [number[], number[]] = [[], []];
  const per = Math.floor(TURNS / 2);
  ORDER.forEach((side, k) => {
    // Each side sees the session's first and second halves of turns once.
    const half = k < 2 ? 0 : 1;
    turns[side].push(...sideTurns(entries[side], format, half * per, per));
  });
  return [summarize(turns[0]), summarize(turns[1])];
}

function parseAgainst(args: readonly string[]): string {
  const at = args.indexOf('--against');
  const rev = at >= 0 ? args[at + 1] : undefined;
  if (rev === undefined || rev.startsWith('--')) {
    throw new UsageError(
      'bench formats: give the revision to compare with, e.g. `npm run bench -- formats --against main~3`',
    );
  }
  return rev;
}

export async function runFormatsBenchmark(args: readonly string[]): Promise<void> {
  const rev = parseAgainst(args);
  const started = performance.now();
  const earlier = buildRevision(rev);
  const current = buildWorkingTree();
  const rows: Row[] = [];
  const probe = (await import(pathToFileURL(current.entry).href)) as FormatsBuild;
  for (const format of FORMATS) {
    progress(
      `${formatCount(SIZE)} ${format} messages, ${earlier.label} and ${current.label}, a process per run…`,
    );
    const [b, a] = runFormat([earlier.entry, current.entry], format);
    rows.push({ format, model: formatSession(probe.convertMessages, format).model, before: b, after: a });
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
      `${earlier.label} p95`,
      `${current.label} p95`,
      'turns',
      `goal ≤ ${GOAL}×`,
    ],
    rows.map((r) => {
      const ratio = r.after.median / r.before.median;
      return [
        r.format,
        r.model,
        formatMs(r.before.median),
        formatMs(r.after.median),
        `${ratio.toFixed(2)}×`,
        formatMs(r.before.p95),
        formatMs(r.after.p95),
        `${r.before.n} / ${r.after.n}`,
        verdict(ratio <= GOAL),
      ];
    }),
  );
  report.note(
    `Both builds bundled with the project's tsup config (the earlier one from a detached worktree of ${rev}), the same session per format (this tree's generators: \`longSessionMessages\`, converted for Responses and Gemini), ${formatCount(SIZE)} messages added, then ${formatCount(TURNS)} turns (add one message, request the view at ${formatCount(BUDGET)} tokens), each side in a fresh process per run, four runs in the order A B B A, each side over the same turns; turns in which a compaction ran are left out. Both builds in one process would not do: the one loaded second ran 6–15% slower even when both were the same code. \`--against HEAD\` compares the tree with itself and shows what the method's noise is.`,
  );
  process.stdout.write(report.toText());
  progress(`written to ${report.write('formats')}`);
}
