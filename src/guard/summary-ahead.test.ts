import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../test/support/virtual-clock.js';
import type { CompactionPlan } from '../compaction/plan.js';
import type { HistoryEntry } from '../messages/types.js';
import type { MemoryRequest, PreparingTools } from '../tools/llm.js';
import { createOfflineTools } from '../tools/offline.js';
import type { ContextTools, SummarizeOptions } from '../tools/types.js';
import type { Atom } from '../wire/atoms.js';
import {
  type AheadState,
  emptyAheadState,
  leftView,
  type Preparation,
  SummaryAhead,
} from './summary-ahead.js';

/** Lets deferred work (setImmediate) and its promises run. */
async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

const LATENCY = 2_000;

/** A model answering each call after `LATENCY` on the clock: `MODEL[previous + #first-#last]`. */
function fakeModel(clock: VirtualClock, fail = false) {
  const asked: MemoryRequest[] = [];
  const tools: PreparingTools = {
    kind: 'model',
    summarize: () => Promise.reject(new Error('asked on the request path')),
    extractFacts: () => Promise.resolve([]),
    async prepareMemory(request) {
      asked.push(request);
      await clock.sleep(LATENCY);
      if (fail) throw new Error('HTTP 500');
      const seqs = request.summaryEntries.map((e) => e.seq);
      const before = request.previousSummary ? `${request.previousSummary} + ` : '';
      return { summary: `MODEL[${before}#${Math.min(...seqs)}-#${Math.max(...seqs)}]`, facts: [] };
    },
  };
  return { tools, asked };
}

/** The offline tools, counting what they are asked to summarize. */
function countingOffline() {
  const offline = createOfflineTools();
  const calls: Array<{ seqs: number[]; previousSummary: string | undefined }> = [];
  const tools: ContextTools = {
    kind: offline.kind,
    summarize(entries, options) {
      calls.push({ seqs: entries.map((e) => e.seq), previousSummary: options.previousSummary });
      return offline.summarize(entries, options);
    },
    extractFacts: (entries, options) => offline.extractFacts(entries, options),
  };
  return { tools, calls };
}

const stored: HistoryEntry[] = Array.from({ length: 60 }, (_, seq) => ({
  seq,
  message:
    seq % 2 === 0
      ? { role: 'user', content: `Please fix src/mod${seq}.ts for ticket T-${seq}.` }
      : { role: 'assistant', content: `Fixed src/mod${seq - 1}.ts: the parser now accepts dates.` },
  metadata: { timestamp: '2026-01-01T00:00:00.000Z' },
}));

/** Stored entries `from`..`to` (inclusive), less `without`. */
function range(from: number, to: number, without: readonly number[] = []): HistoryEntry[] {
  return stored.slice(from, to + 1).filter((e) => !without.includes(e.seq));
}

const OPTIONS: SummarizeOptions = { maxTokens: 400, countText: (t) => Math.ceil(t.length / 4) };

/** What a speculative plan found for `entries`. */
function found(entries: readonly HistoryEntry[], usage: number, settled: boolean): Preparation {
  return {
    seqs: new Set(entries.map((e) => e.seq)),
    calls: { summary: { entries, options: OPTIONS }, factEntries: new Map() },
    spec: null,
    settled,
    generation: 0,
    usage,
  };
}

function setup(fail = false) {
  const clock = new VirtualClock();
  const model = fakeModel(clock, fail);
  const offline = countingOffline();
  const warnings: string[] = [];
  const ahead = new SummaryAhead(model.tools, offline.tools, 0.76, 0.32, (code) => warnings.push(code));
  const state: AheadState = emptyAheadState();
  /** A compaction summarizing `entries` with the prepared tools; its text and how it went. */
  const compact = async (entries: readonly HistoryEntry[]) => {
    const tools = ahead.compactionTools(state, null, stored, 0);
    const text = await tools.tools.summarize(entries, OPTIONS);
    const how = tools.outcome(text)!;
    return { text, kind: tools.tools.kind, ...how };
  };
  return { clock, model, offline, warnings, ahead, state, compact };
}

describe('summaries prepared ahead: when the model is asked', () => {
  it('plans from `from` on, but asks the model only once the range is settled', async () => {
    const { ahead, state, model, offline } = setup();
    expect(ahead.due(state, null, 0.2, 0)).toBe(false);
    expect(ahead.due(state, null, 0.35, 0)).toBe(true);
    ahead.prepare(state, null, found(range(1, 10), 0.35, false));
    await ahead.writeFallback(state);
    await settle();
    // Not settled: the offline summary of the range is written ahead, the model is not asked.
    expect(model.asked).toHaveLength(0);
    expect(offline.calls).toHaveLength(1);
    // Planned again a step later, not before.
    expect(ahead.due(state, null, 0.37, 0)).toBe(false);
    expect(ahead.due(state, null, 0.41, 0)).toBe(true);
    ahead.prepare(state, null, found(range(1, 16), 0.41, true));
    await settle();
    expect(model.asked.map((r) => r.summaryEntries.length)).toEqual([16]);
    // Settled and asked: nothing more until usage passes `at`.
    expect(ahead.due(state, null, 0.6, 0)).toBe(false);
    expect(ahead.due(state, null, 0.77, 0)).toBe(true);
    // A history replaced since is planned again at once.
    expect(ahead.due(state, null, 0.6, 1)).toBe(true);
  });

  it('asks the model by `at` even when the range never settles', async () => {
    const { ahead, state, model } = setup();
    ahead.prepare(state, null, found(range(1, 10), 0.5, false));
    await settle();
    expect(model.asked).toHaveLength(0);
    ahead.prepare(state, null, found(range(1, 12), 0.78, false));
    await settle();
    expect(model.asked.map((r) => r.summaryEntries.length)).toEqual([12]);
  });

  it('a range that grew: the model is asked only for the new entries, building on its own summary', async () => {
    const { ahead, state, model, clock, compact } = setup();
    ahead.prepare(state, null, found(range(1, 20), 0.5, true));
    await clock.advance(LATENCY, settle);
    ahead.prepare(state, null, found(range(1, 30), 0.78, true));
    await clock.advance(LATENCY, settle);
    expect(model.asked.map((r) => r.summaryEntries.map((e) => e.seq))).toEqual([
      range(1, 20).map((e) => e.seq),
      range(21, 30).map((e) => e.seq),
    ]);
    expect(model.asked[1]!.previousSummary).toBe('MODEL[#1-#20]');
    const done = await compact(range(1, 30));
    expect(done).toMatchObject({ text: 'MODEL[MODEL[#1-#20] + #21-#30]', kind: 'model', outcome: 'used' });
    // The same range again (or less of it) asks nothing.
    ahead.prepare(state, null, found(range(1, 30), 0.8, true));
    await settle();
    expect(model.asked).toHaveLength(2);
  });
});

describe('summaries prepared ahead: at the compaction', () => {
  it('takes the offline summary written ahead while the model is out: nothing summarized on the request path', async () => {
    const { ahead, state, offline, compact } = setup();
    ahead.prepare(state, null, found(range(1, 20), 0.5, true));
    await ahead.writeFallback(state);
    const written = offline.calls.length;
    const done = await compact(range(1, 20));
    expect(done.outcome).toBe('pending');
    expect(done.kind).toBe('offline');
    expect(offline.calls).toHaveLength(written);
  });

  it('a range that grew past what the model covers: its summary, the rest written offline on top', async () => {
    const { ahead, state, offline, model, clock, compact } = setup();
    ahead.prepare(state, null, found(range(1, 20), 0.5, true));
    await ahead.writeFallback(state);
    await clock.advance(LATENCY, settle);
    // A turn leapt past the trigger: the compaction takes ten more messages.
    const done = await compact(range(1, 30));
    expect(done.outcome).toBe('partial');
    expect(done.kind).toBe('model+offline');
    expect(done.text).toContain('MODEL[#1-#20]');
    expect(done.text).toContain('src/mod22.ts');
    expect(offline.calls.at(-1)).toEqual({
      seqs: range(21, 30).map((e) => e.seq),
      previousSummary: 'MODEL[#1-#20]',
    });
    expect(done.extras.size).toBe(0);
    // Taken: the model is asked for the rest, off the request path, building on its summary.
    expect(model.asked).toHaveLength(1);
    done.taken();
    expect(model.asked).toHaveLength(1);
    await settle();
    expect(model.asked.at(-1)!.summaryEntries.map((e) => e.seq)).toEqual(range(21, 30).map((e) => e.seq));
    expect(model.asked.at(-1)!.previousSummary).toBe('MODEL[#1-#20]');
    await clock.advance(LATENCY, settle);
    // The next compaction's range builds on the model's whole summary, not the composed text.
    const plan: CompactionPlan = {
      v: 1,
      dropped: range(1, 30).map((e) => e.seq),
      cleared: [],
      truncated: [],
      historyLength: 31,
      budget: 3000,
      tokens: 1000,
      counterId: 'test',
    };
    ahead.prepare(state, plan, {
      ...found(range(31, 40), 0.5, true),
      calls: {
        summary: { entries: range(31, 40), options: { ...OPTIONS, previousSummary: done.text } },
        factEntries: new Map(),
      },
    });
    await settle();
    expect(model.asked.at(-1)!.previousSummary).toBe('MODEL[MODEL[#1-#20] + #21-#30]');
  });

  it('while the call for what the range gained is out, takes the part that is back, written ahead', async () => {
    const { ahead, state, offline, clock, compact } = setup();
    ahead.prepare(state, null, found(range(1, 20), 0.5, true));
    await ahead.writeFallback(state);
    await clock.advance(LATENCY, settle);
    ahead.prepare(state, null, found(range(1, 30), 0.78, true));
    await ahead.writeFallback(state);
    await settle();
    const written = offline.calls.length;
    const done = await compact(range(1, 30));
    expect(done).toMatchObject({ outcome: 'partial', kind: 'model+offline' });
    expect(done.text).toContain('MODEL[#1-#20]');
    expect(offline.calls).toHaveLength(written);
  });

  it('a failed call fails the one building on it (one warning), and compactions go offline', async () => {
    const { ahead, state, clock, warnings, compact } = setup(true);
    ahead.prepare(state, null, found(range(1, 20), 0.5, true));
    ahead.prepare(state, null, found(range(1, 30), 0.78, true));
    await clock.advance(LATENCY, settle);
    await clock.advance(LATENCY, settle);
    expect(warnings).toEqual(['llm_fallback']);
    const done = await compact(range(1, 30));
    expect(done).toMatchObject({ outcome: 'failed', kind: 'offline' });
    expect(done.text).not.toContain('MODEL');
  });

  it('never uses a prepared summary reaching past the range the compaction takes', async () => {
    const { ahead, state, clock, compact } = setup();
    ahead.prepare(state, null, found(range(1, 30), 0.5, true));
    await clock.advance(LATENCY, settle);
    const done = await compact(range(1, 20));
    expect(done).toMatchObject({ outcome: 'stale', kind: 'offline' });
    expect(done.text).not.toContain('MODEL');
  });

  it('says which older messages a prepared summary covers beyond the range (the plan must leave them out)', async () => {
    const { ahead, state, clock, compact } = setup();
    ahead.prepare(state, null, found(range(1, 20), 0.5, true));
    await clock.advance(LATENCY, settle);
    // The compaction leaves seq 5 out of the range (a repeat it drops) and takes five more.
    const done = await compact(range(1, 25, [5]));
    expect(done.outcome).toBe('partial');
    expect([...done.extras]).toEqual([5]);
  });
});

it('a prepared summary covering older messages beyond its range stands only where the plan leaves them out', () => {
  const atom = (id: number, seqs: number[]) => ({ id, seqs }) as unknown as Atom;
  const atoms = [atom(1, [1]), atom(2, [2, 3]), atom(4, [4])];
  const plan = (dropped: number[]): CompactionPlan => ({
    v: 1,
    dropped,
    cleared: [],
    truncated: [],
    historyLength: 5,
    budget: 1000,
    tokens: 100,
    counterId: 'test',
  });
  expect(leftView(plan([1]), atoms, new Set())).toBe(true);
  expect(leftView(plan([1, 2]), atoms, new Set([3]))).toBe(true);
  // Seq 3 is in an atom the plan keeps: the summary would stand for a message still shown.
  expect(leftView(plan([1]), atoms, new Set([3]))).toBe(false);
  // A message no longer in the view at all (superseded) is out of it.
  expect(leftView(plan([]), atoms, new Set([9]))).toBe(true);
});
