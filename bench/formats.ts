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
import type { Message } from '../src/messages/types.js';
import { longSessionMessages } from '../test/support/arbitraries.js';
import { formatCount, formatMs, Report, verdict } from './report.js';
import { type Summary, summarize } from './stats.js';
import { UsageError } from './usage-error.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SEED = 20_240_601;
const SIZE = 10_000;
const BUDGET = 100_000;
/** Turns per block and blocks: the two builds alternate by block, the first one changing each block. */
const BLOCK = 25;
const BLOCKS = 40;
/** The goal: the refactored turn within 10% of the earlier one. */
const GOAL = 1.1;

/** What the benchmark needs of a build's public API. */
interface Build {
  ContextManager: new (options: {
    model: string;
    costMeter?: boolean;
  }) => {
    addMessage(message: Message): Promise<unknown>;
    getMessagesForRequest(options: { tokenBudget: number }): Promise<unknown>;
    on(event: 'context:post_compact', listener: () => void): unknown;
  };
  convertMessages(messages: readonly Message[], to: string): Message[];
}

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

async function load(entry: string): Promise<Build> {
  return (await import(pathToFileURL(entry).href)) as Build;
}

interface Side {
  manager: InstanceType<Build['ContextManager']>;
  compacted: boolean;
  turns: number[];
}

interface Row {
  format: string;
  model: string;
  before: Summary;
  after: Summary;
}

/** The session in each format the earlier build knows, made by this tree's generators. */
function sessions(
  convert: Build['convertMessages'],
  formats: readonly string[],
): Array<[string, Message[], string]> {
  const n = SIZE + BLOCK * BLOCKS;
  const openai = longSessionMessages(n * 2, 'openai', SEED);
  const out: Array<[string, Message[], string]> = [
    ['openai', openai.slice(0, n), 'gpt-4o'],
    ['anthropic', longSessionMessages(n, 'anthropic', SEED), 'claude-sonnet-4-5'],
    ['openai-responses', convert(openai.slice(0, n), 'openai-responses'), 'gpt-4o'],
    ['gemini', convert(openai, 'gemini').slice(0, n), 'gemini-2.5-flash'],
  ];
  return out.filter(([format]) => formats.includes(format));
}

/**
 * One round: a manager per build, filled with the same history, then turns by blocks. The build
 * made and filled first has an edge (about 10–20% when both sides are the same code), so
 * `runFormat` plays two rounds with the order swapped.
 */
async function runRound(
  builds: readonly Build[],
  session: readonly Message[],
  model: string,
  blocks: number,
  from: number,
): Promise<number[][]> {
  const sides: Side[] = builds.map((build) => {
    const manager = new build.ContextManager({ model });
    const side: Side = { manager, compacted: false, turns: [] };
    manager.on('context:post_compact', () => {
      side.compacted = true;
    });
    return side;
  });
  for (const side of sides) {
    for (const message of session.slice(0, SIZE)) await side.manager.addMessage(message);
    await side.manager.getMessagesForRequest({ tokenBudget: BUDGET });
  }
  for (let block = 0; block < blocks; block++) {
    const order = block % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      for (let k = 0; k < BLOCK; k++) {
        const message = session[SIZE + (from + block) * BLOCK + k];
        if (message === undefined) break;
        side.compacted = false;
        const t0 = performance.now();
        await side.manager.addMessage(message);
        await side.manager.getMessagesForRequest({ tokenBudget: BUDGET });
        const ms = performance.now() - t0;
        if (!side.compacted) side.turns.push(ms);
      }
    }
  }
  return sides.map((side) => side.turns);
}

async function runFormat(
  builds: readonly [Build, Build],
  session: readonly Message[],
  model: string,
): Promise<Summary[]> {
  const half = BLOCKS / 2;
  const [a1, b1] = await runRound(builds, session, model, half, 0);
  const [b2, a2] = await runRound([builds[1], builds[0]], session, model, half, half);
  return [summarize([...a1!, ...a2!]), summarize([...b1!, ...b2!])];
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
  const before = await load(earlier.entry);
  const after = await load(current.entry);
  const rows: Row[] = [];
  const formats = ['openai', 'anthropic', 'openai-responses', 'gemini'];
  for (const [format, session, model] of sessions(after.convertMessages, formats)) {
    progress(`${formatCount(SIZE)} ${format} messages, ${earlier.label} and ${current.label} by turns…`);
    const [b, a] = await runFormat([before, after], session, model);
    rows.push({ format, model, before: b!, after: a! });
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
    `Both builds bundled with the project's tsup config (the earlier one from a detached worktree of ${rev}), the same session per format (this tree's generators: \`longSessionMessages\`, converted for Responses and Gemini), ${formatCount(SIZE)} messages added, then ${BLOCK * BLOCKS} turns (add one message, request the view at ${formatCount(BUDGET)} tokens) in blocks of ${BLOCK}, the two managers alternating; two rounds of fresh managers, the second with the builds' order swapped (the side made and filled first runs 10–20% faster even when both are the same code); turns in which a compaction ran are left out. \`--against HEAD\` compares the tree with itself and shows what the method's noise is.`,
  );
  process.stdout.write(report.toText());
  progress(`written to ${report.write('formats')}`);
}
