/**
 * Long work in slices that yield (issue 24): a cold start (setMessages of a long history, its
 * first request, a resume from a store) gives exactly what it gives in place, and lets a timer run
 * throughout. The slicing clock is replaced to force a pause between any two items, or to never
 * pause; stretches are measured in this process's CPU time, which the machine's load does not
 * stretch (speed itself is a benchmark goal, `npm run bench -- cold`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { CompactionReceipt } from '../src/events.js';
import { ContextManager } from '../src/manager.js';
import { ContextMeasurer } from '../src/measure/measurer.js';
import type { HistoryEntry, Message, MessageFormat } from '../src/messages/types.js';
import { mapInSlices, sortSteps, useSliceClock } from '../src/slices.js';
import { openSqliteStore } from '../src/stores/sqlite.js';
import { getModelInfo } from '../src/tokens/catalog.js';
import { countKey } from '../src/tokens/count-key.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { dialogueMemory, dialogueMemoryInSlices, isDialogue } from '../src/tools/dialogue-memory.js';
import { entrySegments } from '../src/tools/entry-segments.js';
import { createOfflineTools } from '../src/tools/offline.js';
import { summarizeOffline } from '../src/tools/offline-summarizer.js';
import { longSessionMessages } from './support/arbitraries.js';
import { LOCOMO_DIR, loadChats } from './support/locomo.js';
import { missingData, skipFor } from './support/requirements.js';

const chatSet = loadChats();

let restoreClock: (() => void) | undefined;
afterEach(() => {
  restoreClock?.();
  restoreClock = undefined;
});

/** A slicing clock past its slice at every reading: every loop pauses between any two items. */
function pauseEverywhere(): void {
  let t = 0;
  restoreClock = useSliceClock({ now: () => (t += 1_000) });
}

/** A slicing clock that never moves: every loop runs in place, as it did before slicing. */
function neverPause(): void {
  restoreClock = useSliceClock({ now: () => 0 });
}

interface Run {
  views: Message[][];
  receipts: Array<Omit<CompactionReceipt, 'durationMs'>>;
  tokens: number;
  /** With a store: the messages whose stored seq the manager tells right after `setMessages`. */
  storedSeqs?: number;
}

/** setMessages, then requests at three budgets; the views and receipts (timings left out). */
async function coldRun(history: readonly Message[], store?: string): Promise<Run> {
  const ctx = new ContextManager(
    store ? { model: 'gpt-4o', store, conversationId: 'cold' } : { model: 'gpt-4o' },
  );
  const receipts: Run['receipts'] = [];
  ctx.on('context:post_compact', ({ receipt }) => {
    const { durationMs: _, ...rest } = receipt;
    receipts.push(rest);
  });
  await ctx.setMessages(history, { replace: true });
  // The table of stored messages `setMessages` fills (in slices too): every message, at its seq.
  const storedSeqs = store
    ? (await ctx.getMessages()).filter((m, seq) => ctx.storedSeqOf(m) === seq).length
    : undefined;
  const views: Message[][] = [];
  for (const tokenBudget of [60_000, 20_000, 8_000])
    views.push(await ctx.getMessagesForRequest({ tokenBudget }));
  const tokens = await ctx.getTokenCount();
  await ctx.close();
  return { views, receipts, tokens, ...(storedSeqs === undefined ? {} : { storedSeqs }) };
}

describe('work in slices gives what it gives in place', () => {
  it('mapInSlices maps every item once, in order, pausing between items', async () => {
    pauseEverywhere();
    const seen: number[] = [];
    const out = await mapInSlices([3, 1, 2], (n, i) => {
      seen.push(i);
      return n * 10;
    });
    expect(out).toEqual([30, 10, 20]);
    expect(seen).toEqual([0, 1, 2]);
  });

  it('counting ahead in slices fills the memo with the counts made in place', async () => {
    const history = longSessionMessages(1_500, 'openai', 7);
    const entries = history.map((message) => ({ message }));
    const inPlace = new ContextMeasurer({ model: 'gpt-4o' });
    const counter = inPlace.defaultCounter('openai');
    const expected = history.map((m) => counter.countMessage(m, 'openai'));
    pauseEverywhere();
    const sliced = new ContextMeasurer({ model: 'gpt-4o' });
    const slicedCounter = sliced.defaultCounter('openai');
    const done = sliced.countAhead(slicedCounter, entries, 0, 'openai');
    expect(done).toBeInstanceOf(Promise);
    expect(await done).toBe(history.length);
    const memo = sliced.memoFor(slicedCounter);
    expect(history.map((m) => memo.get(m))).toEqual(expected);
  });

  for (const format of ['openai', 'anthropic', 'gemini'] as const satisfies readonly MessageFormat[]) {
    it(`a cold start of a long ${format} history: the same views, receipts and count with pauses everywhere as in place`, async () => {
      const history = longSessionMessages(3_000, format, 11);
      neverPause();
      const inPlace = await coldRun(history);
      restoreClock?.();
      pauseEverywhere();
      const sliced = await coldRun(history);
      expect(sliced.receipts.length).toBeGreaterThan(0);
      expect(sliced).toEqual(inPlace);
    });
  }

  for (const kind of ['sqlite', 'file'] as const) {
    it(`${kind}: a conversation set, then resumed and read a part at a time, gives the views made in place`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'contextkit-cold-slices-'));
      const spec = (name: string) =>
        kind === 'sqlite' ? `sqlite:${join(dir, `${name}.db`)}` : `file:${join(dir, name)}`;
      try {
        const history = longSessionMessages(2_000, 'openai', 5);
        neverPause();
        const inPlace = await coldRun(history, spec('in-place'));
        restoreClock?.();
        pauseEverywhere();
        const sliced = await coldRun(history, spec('sliced'));
        expect(sliced.storedSeqs).toBe(history.length);
        expect(sliced).toEqual(inPlace);
        // A new manager resumes what was stored: the same history, read a part at a time.
        const resumed = new ContextManager({
          model: 'gpt-4o',
          store: spec('sliced'),
          conversationId: 'cold',
        });
        expect(await resumed.getMessages()).toEqual(history);
        expect(await resumed.getMessagesForRequest({ tokenBudget: 8_000 })).toEqual(inPlace.views[2]);
        await resumed.close();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }

  it('SQLite: counts made for a history stored without them are kept a part at a time, all of them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'contextkit-cold-slices-'));
    const path = join(dir, 'bare.db');
    try {
      const history = longSessionMessages(2_500, 'openai', 9);
      const bare = await openSqliteStore(path);
      const stamp = new Date(0).toISOString();
      await bare.replace(
        'cold',
        history.map((message) => ({ message, metadata: { timestamp: stamp } })),
      );
      await bare.close();
      pauseEverywhere();
      const ctx = new ContextManager({ model: 'gpt-4o', store: `sqlite:${path}`, conversationId: 'cold' });
      await ctx.getMessagesForRequest();
      await ctx.close();
      const key = countKey(new ContextMeasurer({ model: 'gpt-4o' }).defaultCounter('openai'));
      const store = await openSqliteStore(path);
      const stored = await store.read('cold');
      await store.close();
      expect(stored).toHaveLength(history.length);
      expect(stored.filter((e) => typeof e.counts?.[key] !== 'number').map((e) => e.seq)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('SQLite: a replace between two pages of a read starts the read again, never mixing generations', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'contextkit-cold-slices-'));
    const store = await openSqliteStore(join(dir, 'store.db'));
    try {
      const stamp = new Date(0).toISOString();
      const entries = (text: string, n: number) =>
        Array.from({ length: n }, (_, i) => ({
          message: { role: 'user' as const, content: `${text} ${i}` },
          metadata: { timestamp: stamp },
        }));
      await store.replace('c', entries('old', 2_000));
      pauseEverywhere();
      // The replace lands while the read is paused after its first page.
      const reading = store.read('c');
      await new Promise((resolve) => setImmediate(resolve));
      // The replace itself runs in place (it too would pause between items otherwise, and the
      // paused read would end first): it lands before the read's next page.
      restoreClock?.();
      neverPause();
      await store.replace('c', entries('new', 1_500));
      const read = await reading;
      expect(read).toHaveLength(1_500);
      expect(read.every((e, i) => (e.message as { content: string }).content === `new ${i}`)).toBe(true);
      expect(await store.read('c', { fromSeq: 1_400, limit: 50 })).toHaveLength(50);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** `isDialogue` as it was before it stopped early: every segment made, then counted. */
function isDialogueInFull(entries: readonly HistoryEntry[], minTurns = 4): boolean {
  let text = 0;
  let tools = 0;
  for (const s of entrySegments(entries)) {
    if (s.role === 'system') continue;
    if (s.kind === 'text') text += 1;
    else tools += 1;
  }
  return text >= minTurns && tools * 10 <= text;
}

describe('isDialogue stops once tool traffic decides it', () => {
  it('answers as reading every segment does, for agent sessions, chats and mixes of them', () => {
    const stamp = new Date(0).toISOString();
    const asEntries = (messages: readonly Message[]): HistoryEntry[] =>
      messages.map((message, seq) => ({ seq, message, metadata: { timestamp: stamp } }));
    const chat = (n: number, offset: number): Message[] =>
      Array.from({ length: n }, (_, i) => ({
        role: (i + offset) % 2 === 0 ? 'user' : 'assistant',
        content: `turn ${i}: we talked about the trip to Lisbon on day ${i % 9}`,
      })) as Message[];
    for (const format of ['openai', 'anthropic', 'gemini'] as const) {
      for (const [n, seed] of [
        [40, 1],
        [700, 2],
        [3_000, 3],
      ] as const) {
        const agent = longSessionMessages(n, format, seed);
        for (const messages of [
          agent,
          [...agent.slice(0, 1), ...chat(n, 1)],
          // Mostly chat with a few tool exchanges: near the tenfold line.
          [...chat(n, 1), ...agent.slice(1, Math.ceil(n / 25))],
          [...agent.slice(0, Math.ceil(n / 12)), ...chat(n, 1)],
        ]) {
          const entries = asEntries(messages);
          for (const minTurns of [1, 4]) {
            expect(isDialogue(entries, minTurns)).toBe(isDialogueInFull(entries, minTurns));
          }
        }
      }
    }
  });
});

/** CPU time this process has used, in ms: a clock the machine's load does not stretch. */
function cpuMs(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

/**
 * Runs `work` while a timer that should fire every 5 ms records the CPU time spent between its
 * firings (a synchronous stretch shows as a long one); resolves with the longest.
 */
async function longestStretch(work: () => Promise<unknown>): Promise<number> {
  let previous = cpuMs();
  let longest = 0;
  const tick = () => {
    const now = cpuMs();
    longest = Math.max(longest, now - previous);
    previous = now;
  };
  const timer = setInterval(tick, 5);
  try {
    previous = cpuMs();
    await work();
    tick();
    return longest;
  } finally {
    clearInterval(timer);
  }
}

describe('a cold start lets timers run', () => {
  it('setMessages of 20k messages and the first request hold the process for no long stretch', async () => {
    const history = longSessionMessages(20_000, 'openai', 24);
    const ctx = new ContextManager({ model: 'gpt-4o' });
    // The tokenizer's rank table loads once per process, in one synchronous require: before.
    new ContextMeasurer({ model: 'gpt-4o' }).defaultCounter('openai').countText('warm up');
    // Generous: a slice is 8 ms; before slicing these stretches took 160–330 ms of CPU time.
    const set = await longestStretch(() => ctx.setMessages(history, { replace: true }));
    const first = await longestStretch(() => ctx.getMessagesForRequest());
    expect(set, 'longest stretch of setMessages, ms of CPU time').toBeLessThan(120);
    expect(first, 'longest stretch of the first request, ms of CPU time').toBeLessThan(120);
  });
});

describe('sorting and summarizing in slices', () => {
  it('sortSteps sorts as Array.prototype.sort does (stable), pausing between runs and merges', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9_000 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer(),
        (n, keys, seed) => {
          let state = seed >>> 0 || 1;
          const next = () => {
            state ^= state << 13;
            state ^= state >>> 17;
            state ^= state << 5;
            return (state >>> 0) % keys;
          };
          const items = Array.from({ length: n }, (_, i) => ({ key: next(), i }));
          const compare = (a: { key: number }, b: { key: number }) => a.key - b.key;
          const expected = items.slice().sort(compare);
          const sorted = items.slice();
          let pauses = 0;
          const steps = sortSteps(sorted, compare);
          for (let step = steps.next(); !step.done; step = steps.next()) pauses++;
          expect(sorted).toEqual(expected);
          if (n > 2 * 2_048) expect(pauses).toBeGreaterThan(2);
        },
      ),
      { numRuns: 40 },
    );
  });

  it(
    'the dialogue memory of a long chat made in slices is the one made in place, pausing throughout',
    skipFor(missingData(LOCOMO_DIR)),
    async () => {
      const counter = createTokenCounter(getModelInfo('gpt-4o')!);
      const countText = (t: string) => counter.countText(t);
      // Five chats one after another: a few thousand statements.
      const entries: HistoryEntry[] = (chatSet ?? [])
        .slice(0, 5)
        .flatMap((chat) => chat.entries)
        .map((entry, seq) => ({ ...entry, seq }));
      expect(isDialogue(entries)).toBe(true);
      const inPlace = dialogueMemory(entries, { maxTokens: 2_000, countText });
      let reads = 0;
      let t = 0;
      restoreClock = useSliceClock({
        now: () => {
          reads++;
          t += 1_000;
          return t;
        },
      });
      const sliced = await dialogueMemoryInSlices(entries, { maxTokens: 2_000, countText });
      expect(sliced).toBe(inPlace);
      expect(reads).toBeGreaterThan(entries.length);
      // A memory built on top of it, as the next compaction builds one.
      const more = { maxTokens: 2_000, countText, previousSummary: inPlace };
      expect(await dialogueMemoryInSlices(entries.slice(-500), more)).toBe(
        dialogueMemory(entries.slice(-500), more),
      );
      // The offline tools' summary is the sliced one.
      expect(await createOfflineTools().summarize(entries, { maxTokens: 2_000, countText })).toBe(
        summarizeOffline(entries, { maxTokens: 2_000, countText }),
      );
    },
  );
});
