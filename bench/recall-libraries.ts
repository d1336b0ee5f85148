/**
 * `npm run bench -- recall-libraries`: the npm search libraries that could hold recall's
 * in-process index (MiniSearch, FlexSearch, Orama) beside recall's own `PostingsIndex`, on what
 * decides the choice: time to index 10k and 100k messages, memory held, search latency, and the
 * answers recall reaches on the chat set with each one underneath (the ranking on top is the same).
 */
import { availableParallelism, loadavg } from 'node:os';
import type { HistoryEntry } from '../src/messages/types.js';
import { RecallIndex } from '../src/recall/recall-index.js';
import { searchTerms, searchWords } from '../src/recall/terms.js';
import type { TextIndex } from '../src/recall/text-index.js';
import { searchText } from '../src/recall/turn-text.js';
import { getModelInfo } from '../src/tokens/catalog.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { longSessionMessages } from '../test/support/arbitraries.js';
import { answersReachable, loadChats } from '../test/support/locomo.js';
import { CANDIDATES, type Candidate } from './recall/candidates.js';
import { formatBytes, formatCount, formatMs, Report } from './report.js';
import { liveMemoryBytes, summarize } from './stats.js';

const SEED = 20_240_601;
const SIZES = [10_000, 100_000];
const QUERIES = 200;
/** Candidates recall reads per call (5 hits × 40). */
const CANDIDATE_LIMIT = 200;

function progress(text: string): void {
  process.stderr.write(`${text}\n`);
}

/** Deterministic queries: three to five words of messages spread over the history. */
function queriesFor(texts: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let k = 0; out.length < QUERIES && k < QUERIES * 10; k++) {
    const words = searchWords(texts[(k * 7_919) % texts.length] as string);
    if (words.length < 3) continue;
    const pick = words.slice(
      k % Math.max(1, words.length - 4),
      (k % Math.max(1, words.length - 4)) + 3 + (k % 3),
    );
    out.push([...new Set(pick.map((w) => searchTerms(w)[0] ?? w))]);
  }
  return out;
}

/** Indexing that takes longer than this is stopped, and the library reported as too slow at that size. */
const BUILD_CAP_MS = 180_000;

interface SizeResult {
  size: number;
  /** CPU time of the searches (user + system), less inflated than wall time by other processes' load. */
  cpu?: ReturnType<typeof summarize>;
  /** Entries indexed when the cap stopped the build; undefined when all were. */
  stoppedAt?: number;
  buildMs: number;
  heapBytes: number;
  search: ReturnType<typeof summarize>;
}

function measureSize(
  candidate: Candidate,
  texts: readonly string[],
  queries: readonly string[][],
): SizeResult {
  const before = liveMemoryBytes();
  const start = performance.now();
  let index: TextIndex | null = candidate.create();
  for (let i = 0; i < texts.length; i++) {
    index.add(i, texts[i] as string);
    if (i % 1_000 === 999 && performance.now() - start > BUILD_CAP_MS) {
      return {
        size: texts.length,
        stoppedAt: i + 1,
        buildMs: performance.now() - start,
        heapBytes: Number.NaN,
        search: summarize([]),
      };
    }
  }
  const buildMs = performance.now() - start;
  const heapBytes = liveMemoryBytes() - before;
  const times: number[] = [];
  const cpu: number[] = [];
  for (const q of queries.slice(0, 20)) index.search(q, CANDIDATE_LIMIT); // warm-up
  for (const q of queries) {
    const c = process.cpuUsage();
    const t = performance.now();
    index.search(q, CANDIDATE_LIMIT);
    times.push(performance.now() - t);
    const used = process.cpuUsage(c);
    cpu.push((used.user + used.system) / 1000);
  }
  if (index.size !== texts.length)
    throw new Error(`${candidate.name} indexed ${index.size} of ${texts.length}`);
  index = null;
  return { size: texts.length, buildMs, heapBytes, search: summarize(times), cpu: summarize(cpu) };
}

/** Runs the comparison, prints it and writes `bench/results/recall-libraries.md`. */
export async function runRecallLibrariesBenchmark(_args: readonly string[]): Promise<void> {
  const counter = createTokenCounter(getModelInfo('gpt-4o')!);
  const countText = (text: string) => counter.countText(text);
  const maxSize = Math.max(...SIZES);
  progress(`generating a ${formatCount(maxSize)}-message session (seed ${SEED})…`);
  const texts = longSessionMessages(maxSize, 'openai', SEED).map(searchText);
  const historyBytes = texts.reduce((sum, t) => sum + t.length * 2, 0);
  const queries = queriesFor(texts);
  const chats = loadChats();
  const report = new Report('contextkit recall: in-process index libraries');
  report.note(
    `Node ${process.version}, ${availableParallelism()} cores, load average ${loadavg()[0]?.toFixed(2)} at the start (other processes share the machine). ` +
      `History: \`longSessionMessages(n, 'openai', ${SEED})\` (an agent session: prose, tool calls, JSON and code results), each message's searched text (${formatBytes(historyBytes / (maxSize / SIZES[0]!))} of UTF-16 text at 10k). ` +
      `Every library gets recall's own words and stems (src/recall/terms.ts), so only the library differs. ` +
      `Search: ${queries.length} queries of 3–5 words from messages spread over the history, ${CANDIDATE_LIMIT} results each (what one recall reads); median and p95. ` +
      'Memory: live heap plus array buffers (typed arrays live outside the heap) after a full collection, before and after indexing (the texts themselves are held outside). ' +
      `Indexing is stopped after ${formatMs(BUILD_CAP_MS)}.`,
  );
  const rows: string[][] = [];
  const quality: string[][] = [];
  for (const candidate of CANDIDATES) {
    for (const size of SIZES) {
      progress(`${candidate.name}: ${formatCount(size)} messages…`);
      const r = measureSize(
        candidate,
        texts.slice(0, size),
        queries.filter((q) => q.length > 0),
      );
      if (r.stoppedAt !== undefined) {
        rows.push([
          `${candidate.name} ${candidate.version}`,
          formatCount(size),
          `stopped: ${formatCount(r.stoppedAt)} in ${formatMs(r.buildMs)}`,
          `${((r.buildMs * 1000) / r.stoppedAt).toFixed(1)} µs`,
          '–',
          '–',
          '–',
          '–',
          '–',
        ]);
        continue;
      }
      rows.push([
        `${candidate.name} ${candidate.version}`,
        formatCount(size),
        formatMs(r.buildMs),
        `${((r.buildMs * 1000) / size).toFixed(1)} µs`,
        formatBytes(r.heapBytes),
        `${Math.round(r.heapBytes / size)} B`,
        formatMs(r.search.median),
        formatMs(r.search.p95),
        formatMs(r.cpu?.median ?? Number.NaN),
      ]);
    }
    if (chats) {
      progress(`${candidate.name}: chat set…`);
      const reach = await answersReachable(
        chats,
        (chat) => {
          const entries: readonly HistoryEntry[] = chat.entries;
          const index = new RecallIndex({ entries: () => entries, countText, createIndex: candidate.create });
          return async (q) => (await index.recall(q)).map((h) => h.text);
        },
        countText,
      );
      quality.push([
        `${candidate.name} ${candidate.version}`,
        `${reach.found} / ${reach.total}`,
        `${((100 * reach.found) / reach.total).toFixed(1)}%`,
        reach.meanTokens.toFixed(0),
      ]);
    }
  }
  report.heading('Index and search');
  report.table(
    [
      'index',
      'messages',
      'index all',
      'per message',
      'memory',
      'per message',
      'search median',
      'search p95',
      'search CPU median',
    ],
    rows,
  );
  report.heading('Answers reachable on the chat set (recall top 5 within 1,000 tokens)');
  if (chats) {
    report.table(['index', 'answers', 'share', 'mean tokens'], quality);
  } else {
    report.note('skipped: ../shared/data/locomo-dev is not beside the repository');
  }
  process.stdout.write(report.toText());
  progress(`written to ${report.write('recall-libraries')}`);
}
