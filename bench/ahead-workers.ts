/**
 * `npm run bench -- ahead-workers`: summaries prepared ahead (issue 24) on workers that never keep
 * a conversation (issue 32: views byte-identical whichever worker serves). One conversation of
 * agent turns is served three ways, in one run: by one long-lived manager (the baseline), by a new
 * manager per turn that loads the conversation (`storedView: false`), and by a new manager per
 * turn served from the stored view record (the default). The model is a stand-in on 127.0.0.1
 * (test/support/fake-llm-server.ts) that answers at once, so every difference is the workers'.
 *
 * Per shape of turns and per worker: the runs whose every view is the long-lived manager's byte
 * for byte, the compactions, how many took the model's summary (`receipt.prepared === 'used'`),
 * the whole-history reads, and the time per turn.
 */

import { availableParallelism, loadavg } from 'node:os';
import { ContextManager } from '../src/manager.js';
import { MemoryStore } from '../src/stores/memory.js';
import { type FakePrompt, startFakeLLMServer } from '../test/support/fake-llm-server.js';
import { countingLoads, keepOpen } from '../test/support/workers.js';
import { formatCount, formatMs, Report, verdict } from './report.js';
import { UsageError } from './usage-error.js';

/** A shape of conversation: turns of up to this many words (message, reply), at a budget in this range. */
interface Shape {
  name: string;
  words: readonly [number, number];
  budget: readonly [number, number];
  turns: number;
}

const SHAPES: readonly Shape[] = [
  { name: 'turns of up to a quarter of the budget', words: [120, 200], budget: [4_000, 8_000], turns: 45 },
  { name: 'turns of up to half the budget', words: [120, 200], budget: [2_000, 4_000], turns: 60 },
];

const WORKERS = ['long-lived', 'loaded', 'served'] as const;
type Worker = (typeof WORKERS)[number];

/** A small deterministic generator (the runs are the same from run to run). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

const filler = (n: number, seed: number) =>
  Array.from({ length: n }, (_, i) => `item${(i + seed) % 41} ok`).join(' ');

/** The model's answer: a summary naming the range it was asked of, and one fact. */
function modelReply(prompt: FakePrompt): string {
  const seqs = [...prompt.user.matchAll(/#(\d+)/g)].map((m) => Number(m[1]));
  const text = `MODEL SUMMARY of #${Math.min(...seqs)}–#${Math.max(...seqs)}: the user asked for updates to src/mod files; all were done.`;
  if (!prompt.system.includes('"summary"')) return text;
  return JSON.stringify({
    summary: text,
    facts: [{ key: 'ticket', value: 'T-100', category: 'identifier', seq: 1 }],
  });
}

/** Lets the preparation queued after a turn, and the model's answer, run before the next turn. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 2));
}

interface Served {
  views: string[];
  compactions: number;
  used: number;
  wholeReads: number;
  turnMs: number[];
}

/** The turns of `sizes` at `budget`, served by `worker`. */
async function serve(
  worker: Worker,
  sizes: ReadonlyArray<readonly [number, number]>,
  budget: number,
): Promise<Served> {
  const server = await startFakeLLMServer({ provider: 'openai', apiKey: 'sk-bench', reply: modelReply });
  const store = countingLoads(keepOpen(new MemoryStore()));
  const options = {
    model: 'gpt-4o',
    store,
    conversationId: 'c',
    storedView: worker !== 'loaded',
    llm: { provider: 'openai' as const, baseURL: server.baseURL, apiKey: 'sk-bench', model: 'small' },
  };
  const out: Served = { views: [], compactions: 0, used: 0, wholeReads: 0, turnMs: [] };
  const open = () => {
    const ctx = new ContextManager(options);
    ctx.on('context:post_compact', ({ receipt }) => {
      out.compactions++;
      if (receipt.prepared === 'used') out.used++;
    });
    return ctx;
  };
  const kept = open();
  try {
    await kept.addMessage({ role: 'system', content: 'You update the project files the user names.' });
    for (const [t, [asked, answered]] of sizes.entries()) {
      const start = performance.now();
      const ctx = worker === 'long-lived' ? kept : open();
      await ctx.addMessage({
        role: 'user',
        content: `Please update src/mod${t}.ts for ticket T-${100 + t}. ${filler(asked, t)}`,
      });
      out.views.push(JSON.stringify(await ctx.getMessagesForRequest({ tokenBudget: budget })));
      await ctx.addMessage({ role: 'assistant', content: `Updated src/mod${t}.ts. ${filler(answered, t)}` });
      if (ctx !== kept) await ctx.close();
      out.turnMs.push(performance.now() - start);
      await settle();
    }
  } finally {
    await kept.close();
    await server.close();
  }
  out.wholeReads = store.wholeReads;
  return out;
}

interface Row {
  shape: string;
  worker: Worker;
  runs: number;
  agreeing: number;
  compactions: number;
  used: number;
  wholeReads: number;
  turns: number;
  turnMs: number;
}

function parseRuns(args: readonly string[]): number {
  let runs = 10;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--runs') {
      runs = Number(args[++i]);
      if (!Number.isInteger(runs) || runs < 1)
        throw new UsageError('--runs takes a whole number of at least 1');
    } else throw new UsageError(`unknown argument ${JSON.stringify(args[i])} (accepted: --runs N)`);
  }
  return runs;
}

export async function runAheadWorkersBenchmark(args: readonly string[]): Promise<void> {
  const runs = parseRuns(args);
  const started = performance.now();
  const loadStart = loadavg()[0] ?? 0;
  const rows: Row[] = [];
  for (const shape of SHAPES) {
    const byWorker = new Map<Worker, Row>(
      WORKERS.map((worker) => [
        worker,
        {
          shape: shape.name,
          worker,
          runs,
          agreeing: 0,
          compactions: 0,
          used: 0,
          wholeReads: 0,
          turns: 0,
          turnMs: 0,
        },
      ]),
    );
    for (let seed = 1; seed <= runs; seed++) {
      process.stderr.write(`bench ahead-workers: ${shape.name}, run ${seed} of ${runs}…\n`);
      const next = random(seed);
      const sizes = Array.from(
        { length: shape.turns },
        () =>
          [
            5 + Math.floor(next() * (shape.words[0] - 4)),
            5 + Math.floor(next() * (shape.words[1] - 4)),
          ] as const,
      );
      const budget = shape.budget[0] + Math.floor(next() * (shape.budget[1] - shape.budget[0]));
      const served = new Map<Worker, Served>();
      for (const worker of WORKERS) served.set(worker, await serve(worker, sizes, budget));
      const baseline = served.get('long-lived')!.views;
      for (const worker of WORKERS) {
        const s = served.get(worker)!;
        const row = byWorker.get(worker)!;
        if (s.views.every((view, i) => view === baseline[i])) row.agreeing++;
        row.compactions += s.compactions;
        row.used += s.used;
        row.wholeReads += s.wholeReads;
        row.turns += s.turnMs.length;
        row.turnMs += s.turnMs.reduce((a, b) => a + b, 0);
      }
    }
    rows.push(...byWorker.values());
  }
  const report = new Report('Summaries prepared ahead, whichever worker serves (issues 24 and 32)');
  report.note(
    `Node ${process.version}, ${availableParallelism()} cores, load ${loadStart.toFixed(2)} at start; ${runs} runs a shape (seeds 1–${runs}), run took ${formatMs(performance.now() - started)}. Each run: one conversation of agent turns (the user asks for an update with a message of 5 words up to the shape's first figure, the reply has 5 up to its second; about 3 tokens a word), at a budget drawn in the shape's range, \`llm\` set (summaries prepared ahead, the default), the model a stand-in on 127.0.0.1 answering at once, served three ways in the same run: one long-lived manager (the baseline), a new manager per turn loading the conversation (\`storedView: false\`), a new manager per turn served from the stored view record (the default). Agreeing: runs whose every view is the long-lived manager's, byte for byte. Model's summary used: compactions whose receipt says \`prepared: 'used'\`. Whole-history reads: the store's reads of the whole log (loads), off the request path or on it.`,
  );
  report.table(
    [
      'shape',
      'worker',
      'runs agreeing',
      'compactions',
      "model's summary used",
      'whole-history reads',
      'per turn (mean)',
    ],
    rows.map((r) => [
      r.shape,
      r.worker,
      `${r.agreeing} of ${r.runs}`,
      formatCount(r.compactions),
      `${formatCount(r.used)} (${r.compactions === 0 ? '–' : `${Math.round((100 * r.used) / r.compactions)}%`})`,
      formatCount(r.wholeReads),
      formatMs(r.turnMs / Math.max(1, r.turns)),
    ]),
  );
  report.heading("The issue's goal");
  const goals = rows
    .filter((r) => r.worker !== 'long-lived')
    .map((r) => [
      `views byte-identical whichever worker serves: ${r.worker}, ${r.shape}`,
      `${r.agreeing} of ${r.runs} runs`,
      verdict(r.agreeing === r.runs),
    ]);
  report.table(['goal', 'measured', ''], goals);
  report.note(
    "A worker served from the stored view record prepares only from `summaryAhead.at` on (preparing loads the whole history): a turn that leaps from below `at` past the trigger finds nothing prepared there, where the long-lived manager prepared from `from`. Turns of up to half the budget leap so; agents' turns rarely do.",
  );
  process.stdout.write(report.toText());
  process.stderr.write(`bench ahead-workers: written to ${report.write('ahead-workers')}\n`);
}
