import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeLLMServer, type FakePrompt, startFakeLLMServer } from '../test/support/fake-llm-server.js';
import { VirtualClock } from '../test/support/virtual-clock.js';
import { countingLoads, keepOpen } from '../test/support/workers.js';
import type { CompactionReceipt } from './events.js';
import { ContextManager } from './manager.js';
import type { Message } from './messages/types.js';
import { useSliceClock } from './slices.js';
import { MemoryStore } from './stores/memory.js';
import { openSqliteStore } from './stores/sqlite.js';
import type { ConversationStore } from './stores/types.js';
import type { PreparingTools } from './tools/llm.js';

const filler = (n: number, seed = 0) =>
  Array.from({ length: n }, (_, i) => `item${(i + seed) % 41} ok`).join(' ');

/** The model's replies: the summary and facts in one JSON object, or a summary alone. */
function modelReply(prompt: FakePrompt): string {
  const rangeOf = /#(\d+)/g;
  const seqs = [...prompt.user.matchAll(rangeOf)].map((m) => Number(m[1]));
  const text = `MODEL SUMMARY of #${Math.min(...seqs)}–#${Math.max(...seqs)}: the user asked for updates to src/mod files for tickets; all were done.`;
  if (!prompt.system.includes('"summary"')) return text;
  return JSON.stringify({
    summary: text,
    facts: [{ key: 'ticket', value: 'T-100', category: 'identifier', seq: 1 }],
  });
}

/** A `fetch` whose requests wait for `open()` (the model's latency, decided by the test). */
function gatedFetch() {
  let opened = false;
  const waiting: Array<() => void> = [];
  let asked = 0;
  return {
    fetch: (async (url: string | URL | Request, init?: RequestInit) => {
      asked++;
      if (!opened) await new Promise<void>((resolve) => waiting.push(resolve));
      return fetch(url, init);
    }) as typeof fetch,
    open() {
      opened = true;
      for (const resolve of waiting.splice(0)) resolve();
    },
    close() {
      opened = false;
    },
    get asked() {
      return asked;
    },
  };
}

/** Lets what was queued after a request (the preparation) and the model's answers run. */
async function idle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setTimeout(resolve, 2));
}

const BUDGET = 3000;
const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);

/** One turn: the user's message, the request (timed), the reply. */
async function turn(ctx: ContextManager, t: number, views: Message[][]): Promise<number> {
  await ctx.addMessage({
    role: 'user',
    content: `Please update src/mod${t}.ts for ticket T-${100 + t}. ${filler(40, t)}`,
  });
  const start = performance.now();
  views.push(await ctx.getMessagesForRequest({ tokenBudget: BUDGET }));
  const ms = performance.now() - start;
  await ctx.addMessage({ role: 'assistant', content: `Updated src/mod${t}.ts. ${filler(20, t)}` });
  return ms;
}

/** Whether each view starts with the one before, byte for byte, unless a compaction came between. */
function prefixBreaks(views: readonly Message[][], compactedAt: ReadonlySet<number>): number[] {
  const breaks: number[] = [];
  for (let i = 1; i < views.length; i++) {
    if (compactedAt.has(i)) continue;
    const before = views[i - 1]!;
    const now = views[i]!;
    if (JSON.stringify(now.slice(0, before.length)) !== JSON.stringify(before)) breaks.push(i);
  }
  return breaks;
}

describe.each(['openai', 'anthropic'] as const)('summaries prepared ahead (%s)', (provider) => {
  let server: FakeLLMServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function managerWith(gate: ReturnType<typeof gatedFetch>, at?: number) {
    server = await startFakeLLMServer({ provider, apiKey: 'sk-test', reply: modelReply });
    const ctx = new ContextManager({
      model: 'gpt-4o',
      // The ranges prepared ahead here start at the first message (the task kept by default would
      // split them): these tests are about the preparation, not the task.
      protectTask: false,
      llm: { provider, baseURL: server.baseURL, apiKey: 'sk-test', model: 'small', fetch: gate.fetch },
      ...(at !== undefined ? { summaryAhead: { at } } : {}),
    });
    const receipts: CompactionReceipt[] = [];
    const warnings: string[] = [];
    ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
    ctx.on('context:warn', (w) => warnings.push(w.code));
    await ctx.addMessage({ role: 'system', content: 'sys' });
    return { ctx, receipts, warnings, server };
  }

  it('no request waits for the model; a summary not back at the trigger is the model’s at the next compaction', async () => {
    const gate = gatedFetch();
    const { ctx, receipts, warnings, server } = await managerWith(gate);
    const views: Message[][] = [];
    const compactedAt = new Set<number>();
    let t = 0;
    // The model does not answer: the first compaction cannot wait for it, and does not.
    while (receipts.length === 0) {
      await turn(ctx, t++, views);
      await idle(2);
      if (receipts.length > 0) compactedAt.add(views.length - 1);
    }
    expect(gate.asked).toBeGreaterThan(0);
    expect(receipts[0]!.prepared).toBe('pending');
    expect(receipts[0]!.summary?.tools).toBe('offline');
    // The model answers; its summary of the range the offline one stands for is what the next builds on.
    gate.open();
    await idle();
    const asked = server.requests.length;
    while (receipts.length === 1) {
      await turn(ctx, t++, views);
      await idle();
      if (receipts.length > 1) compactedAt.add(views.length - 1);
    }
    const second = receipts[1]!;
    expect(second.prepared).toBe('used');
    expect(second.summary?.tools).toBe(provider);
    const lastView = JSON.stringify(views.at(-1));
    expect(lastView).toContain('MODEL SUMMARY');
    // One model call for the second compaction (summary and facts in one reply), built on the
    // model's own summary of the first range rather than the offline one.
    expect(server.requests.length - asked).toBe(1);
    const prompt = JSON.stringify(server.requests.at(-1)!.body);
    expect(prompt).toContain('MODEL SUMMARY of #');
    expect(server.requests.every((r) => r.problems.length === 0)).toBe(true);
    expect(warnings).not.toContain('llm_fallback');
    // The prepared summary came in at a compaction point only: between compactions, each view
    // extends the one before.
    expect(prefixBreaks(views, compactedAt)).toEqual([]);
    for (const view of views) expect(JSON.stringify(view).length).toBeGreaterThan(0);
  });

  it('uses the prepared summary and facts at the trigger when they came back in time', async () => {
    const gate = gatedFetch();
    gate.open();
    const { ctx, receipts } = await managerWith(gate);
    const views: Message[][] = [];
    let t = 0;
    while (receipts.length < 3) {
      await turn(ctx, t++, views);
      await idle();
    }
    expect(receipts.map((r) => r.prepared)).toEqual(['used', 'used', 'used']);
    expect(receipts.every((r) => r.summary?.tools === provider)).toBe(true);
    expect(receipts[0]!.facts.values).toContain('T-100');
    expect(ctx.usage().tokens).toBeLessThanOrEqual(BUDGET);
  });

  it('never uses a prepared summary for messages it does not cover (history replaced since)', async () => {
    const gate = gatedFetch();
    gate.open();
    const { ctx, receipts } = await managerWith(gate);
    const views: Message[][] = [];
    let t = 0;
    // Up to the preparation level, and the model's answer back.
    while (server!.requests.length === 0) {
      await turn(ctx, t++, views);
      await idle();
    }
    expect(receipts).toEqual([]);
    const stored = await ctx.getMessages();
    // The same messages, with each user text changed: the prepared range no longer holds them.
    await ctx.setMessages(
      stored.map((m) =>
        m.role === 'user' && typeof m.content === 'string' ? { ...m, content: `${m.content} (edited)` } : m,
      ),
      { replace: true },
    );
    gate.close();
    while (receipts.length === 0) await turn(ctx, t++, views);
    expect(receipts[0]!.prepared).not.toBe('used');
    expect(receipts[0]!.summary?.tools).toBe('offline');
    expect(JSON.stringify(views.at(-1))).not.toContain('MODEL SUMMARY');
    gate.open();
  });

  it('two processes on one store: a summary prepared in one is never used for what the other changed', async () => {
    const gate = gatedFetch();
    gate.open();
    server = await startFakeLLMServer({ provider, apiKey: 'sk-test', reply: modelReply });
    const dir = await mkdtemp(join(tmpdir(), 'contextkit-ahead-'));
    try {
      const options = {
        model: 'gpt-4o',
        store: `file:${dir}`,
        conversationId: 'shared',
        llm: { provider, baseURL: server.baseURL, apiKey: 'sk-test', model: 'small', fetch: gate.fetch },
      };
      const a = new ContextManager(options);
      const receipts: CompactionReceipt[] = [];
      a.on('context:post_compact', (e) => receipts.push(e.receipt));
      await a.addMessage({ role: 'system', content: 'sys' });
      const views: Message[][] = [];
      let t = 0;
      // Up to the preparation level: the range asked of the model (once settled, and at `at` for
      // what it gained), with messages after it still in the view at the trigger.
      while (server.requests.length === 0 || a.usage().pct < 0.76) {
        await turn(a, t++, views);
        await idle();
      }
      expect(receipts).toEqual([]);
      // Another worker rewrites the conversation the range was prepared from.
      const b = new ContextManager(options);
      const stored = await b.getMessages();
      await b.setMessages(
        stored.map((m) =>
          m.role === 'user' && typeof m.content === 'string'
            ? { ...m, content: `${m.content} (rewritten)` }
            : m,
        ),
        { replace: true },
      );
      await b.close();
      gate.close();
      while (receipts.length === 0) await turn(a, t++, views);
      expect(receipts[0]!.prepared).not.toBe('used');
      expect(JSON.stringify(views.at(-1))).not.toContain('MODEL SUMMARY');
      expect(JSON.stringify(views.at(-1))).toContain('(rewritten)');
      gate.open();
      await a.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  /** Turns until `until`, each served by `worker(t)` (a new manager per turn, or one kept), with time for what runs after it. */
  async function runTurns(
    worker: (t: number) => ContextManager,
    stateless: boolean,
    until: () => boolean,
    views: Message[][] = [],
  ): Promise<Message[][]> {
    // Turns go on from the views given: each turn's messages are new.
    for (let t = views.length; !until() && t < 200; t++) {
      const ctx = worker(t);
      await turn(ctx, t, views);
      await idle();
      if (stateless) await ctx.close();
    }
    return views;
  }

  /**
   * Managers on `store` asking `server` through `gate` (a new one per `open()`), the compactions
   * they make, and one opened already, which stored the system prompt.
   */
  async function workersOn(
    store: ConversationStore,
    model: FakeLLMServer,
    gate: ReturnType<typeof gatedFetch>,
    more: { storedView?: boolean; compactAfterRequest?: boolean } = {},
  ): Promise<{ receipts: CompactionReceipt[]; open: () => ContextManager; kept: ContextManager }> {
    const options = {
      model: 'gpt-4o',
      store,
      conversationId: 'c',
      protectTask: false,
      ...more,
      llm: { provider, baseURL: model.baseURL, apiKey: 'sk-test', model: 'small', fetch: gate.fetch },
    };
    const receipts: CompactionReceipt[] = [];
    const open = () => {
      const ctx = new ContextManager(options);
      ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
      return ctx;
    };
    const kept = open();
    await kept.addMessage({ role: 'system', content: 'sys' });
    return { receipts, open, kept };
  }

  it('stateless workers (a new manager each turn) ask the model as a long-lived manager does, and compact with its summary: what is prepared is stored state', async () => {
    const gate = gatedFetch();
    gate.open();
    const figures: Record<string, { asked: number; loads: number; receipts: string[] }> = {};
    const dir = await mkdtemp(join(tmpdir(), 'contextkit-ahead-stored-'));
    for (const stateless of [false, true]) {
      server = await startFakeLLMServer({ provider, apiKey: 'sk-test', reply: modelReply });
      // On SQLite: the stored state goes through a real driver's metadata.
      const sqlite = await openSqliteStore(join(dir, `${stateless}.db`));
      const store = countingLoads(sqlite);
      const { receipts, open, kept } = await workersOn(store, server, gate);
      await runTurns(
        (_) => (stateless ? open() : kept),
        stateless,
        () => receipts.length >= 4,
      );
      await kept.close();
      await idle();
      await sqlite.close();
      figures[String(stateless)] = {
        asked: server.requests.length,
        loads: store.wholeReads,
        receipts: receipts.map((r) => `${r.prepared}/${r.summary?.tools}`),
      };
      await server.close();
      server = undefined;
    }
    await rm(dir, { recursive: true, force: true });
    const [longLived, fresh] = [figures.false!, figures.true!];
    // Every compaction takes the model's summary on either, and the model is not asked more often
    // by workers that never saw the preparation (before: asked at almost every turn, its answers
    // lost with the worker, every compaction offline).
    expect(longLived.receipts).toEqual(Array(4).fill(`used/${provider}`));
    expect(fresh.receipts).toEqual(longLived.receipts);
    expect(fresh.asked).toBeLessThanOrEqual(longLived.asked);
    // The whole history is loaded to compact and to prepare once per compaction, not at every turn.
    expect(fresh.loads).toBeLessThanOrEqual(2 * 4 + 2);
  });

  it('a stateless worker serves the request that finds the next summary due from the stored record: it loads the history after the request, to prepare it', async () => {
    const gate = gatedFetch();
    gate.open();
    const figures: Record<
      string,
      { requestLoads: number[]; loads: number; receipts: string[]; views: string }
    > = {};
    for (const stateless of [false, true]) {
      server = await startFakeLLMServer({ provider, apiKey: 'sk-test', reply: modelReply });
      const store = countingLoads(new MemoryStore());
      const { receipts, open, kept } = await workersOn(store, server, gate);
      const views: Message[][] = [];
      // The whole-history reads each request made before it resolved (what the request waited for).
      const requestLoads: number[] = [];
      for (let t = 0; receipts.length < 3 && t < 200; t++) {
        const ctx = stateless ? open() : kept;
        await ctx.addMessage({
          role: 'user',
          content: `Please update src/mod${t}.ts for ticket T-${100 + t}. ${filler(40, t)}`,
        });
        const before = store.wholeReads;
        views.push(await ctx.getMessagesForRequest({ tokenBudget: BUDGET }));
        requestLoads.push(store.wholeReads - before);
        await ctx.addMessage({ role: 'assistant', content: `Updated src/mod${t}.ts. ${filler(20, t)}` });
        await idle();
        if (stateless) await ctx.close();
      }
      await kept.close();
      figures[String(stateless)] = {
        requestLoads,
        loads: store.wholeReads,
        receipts: receipts.map((r) => `${r.prepared}/${r.summary?.tools}`),
        views: JSON.stringify(views),
      };
      await server.close();
      server = undefined;
    }
    const [longLived, fresh] = [figures.false!, figures.true!];
    // The same views and compactions, with the model's summary, whichever way the turns are served.
    expect(fresh.views).toBe(longLived.views);
    expect(fresh.receipts).toEqual(Array(3).fill(`used/${provider}`));
    // On the request path, a stateless worker reads the whole history only to compact: before, also
    // at each request that found the next summary due (as often again).
    const onRequestPath = fresh.requestLoads.filter((n) => n > 0).length;
    expect(onRequestPath).toBeLessThanOrEqual(3);
    // The preparations still read it, after their requests.
    expect(fresh.loads).toBeGreaterThan(onRequestPath);
  });

  it('a worker that closes right after its turn has prepared the next summary before close() resolves (served from the record or loaded)', async () => {
    for (const storedView of [true, false]) {
      // The model never answers: nothing is written after a turn but what the preparation writes.
      const gate = gatedFetch();
      server = await startFakeLLMServer({ provider, apiKey: 'sk-test', reply: modelReply });
      const base = new MemoryStore();
      let callsAfterClose = 0;
      let marked = false;
      const receipts: CompactionReceipt[] = [];
      for (let t = 0; receipts.length === 0 && t < 200; t++) {
        // This worker's view of the store: any call once it closed is counted (close is not passed on).
        let closed = false;
        const store = new Proxy(base, {
          get(target, key) {
            if (key === 'close')
              return async () => {
                closed = true;
              };
            const value: unknown = Reflect.get(target, key, target);
            if (typeof value !== 'function') return value;
            return (...args: unknown[]) => {
              if (closed) callsAfterClose++;
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          },
        });
        const ctx = new ContextManager({
          model: 'gpt-4o',
          store,
          conversationId: 'c',
          protectTask: false,
          storedView,
          llm: { provider, baseURL: server.baseURL, apiKey: 'sk-test', model: 'small', fetch: gate.fetch },
        });
        ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
        if (t === 0) await ctx.addMessage({ role: 'system', content: 'sys' });
        await turn(ctx, t, []);
        await ctx.close();
        marked ||= (await base.getMeta('c')).value?.ahead !== undefined;
        // Time for anything scheduled after the turn to run (it would be counted).
        await idle();
      }
      expect(receipts).toHaveLength(1);
      // The preparation ran (its mark is stored) and all of it before close() resolved.
      expect(marked).toBe(true);
      expect(callsAfterClose).toBe(0);
      gate.open();
      await server.close();
      server = undefined;
    }
  });

  /**
   * The views and compactions of `sizes` turns (the words of the user's message and of the reply)
   * at `budget`, on one long-lived manager and on a new manager each turn (`worker`: loaded, or
   * served from the stored view record), every model call answered before the next turn.
   */
  async function workersAgree(
    worker: 'loaded' | 'served',
    sizes: ReadonlyArray<readonly [number, number]>,
    budget: number,
    more: { compactAfterRequest?: boolean } = {},
  ) {
    const gate = gatedFetch();
    gate.open();
    const runs: Array<{ views: string[]; receipts: string[] }> = [];
    for (const stateless of [false, true]) {
      server = await startFakeLLMServer({ provider, apiKey: 'sk-test', reply: modelReply });
      const store = keepOpen(new MemoryStore());
      const { receipts, open, kept } = await workersOn(store, server, gate, {
        storedView: worker === 'served',
        ...more,
      });
      const views: string[] = [];
      for (const [t, [asked, answered]] of sizes.entries()) {
        const ctx = stateless ? open() : kept;
        await ctx.addMessage({
          role: 'user',
          content: `Please update src/mod${t}.ts for ticket T-${100 + t}. ${filler(asked, t)}`,
        });
        views.push(JSON.stringify(await ctx.getMessagesForRequest({ tokenBudget: budget })));
        await ctx.addMessage({
          role: 'assistant',
          content: `Updated src/mod${t}.ts. ${filler(answered, t)}`,
        });
        await idle();
        if (stateless) await ctx.close();
      }
      await kept.close();
      runs.push({ views, receipts: receipts.map((r) => `${r.prepared}/${r.summary?.tools}`) });
      await server.close();
      server = undefined;
    }
    const [longLived, workers] = runs as [(typeof runs)[0], (typeof runs)[0]];
    expect(longLived.receipts.length).toBeGreaterThan(0);
    // The compactions of the long-lived manager, with the model's summary where it had it (before,
    // a worker that did not prepare planned afresh: a range other than the one the model summarized
    // took an offline summary, 'stale' or 'partial' where the long-lived manager had 'used').
    expect(workers.receipts).toEqual(longLived.receipts);
    const differs = workers.views.findIndex((v, i) => v !== longLived.views[i]);
    expect(differs, 'the first turn whose view differs').toBe(-1);
    return longLived.receipts;
  }

  /** Turns of `words` words at most (message, reply), `count` of them. */
  const turnsOf = (count: number, words: readonly [number, number]) =>
    fc.array(fc.tuple(fc.integer({ min: 5, max: words[0] }), fc.integer({ min: 5, max: words[1] })), {
      minLength: count,
      maxLength: count,
    });

  // Each run is 90 to 140 turns: a counterexample is reported as found, not shrunk.
  const agreeRuns = { numRuns: Math.max(2, Math.floor(RUNS / 15)), endOnFailure: true };

  it('workers that load the conversation at each turn (a new manager each) serve the views a long-lived manager serves, turns of any size: the plan made ahead and the range it stands for are stored state', async () => {
    // Turns of up to ~1,000 tokens: leaps of up to a quarter of the budget.
    await fc.assert(
      fc.asyncProperty(
        turnsOf(45, [120, 200]),
        fc.integer({ min: 4_000, max: 8_000 }),
        async (sizes, budget) => {
          await workersAgree('loaded', sizes, budget);
        },
      ),
      agreeRuns,
    );
  }, 300_000);

  it('workers serving each turn from the stored view record serve the views a long-lived manager serves, where no turn leaps past the gap between `at` and the trigger', async () => {
    // A served worker prepares only from `at` on (preparing loads the whole history): a turn that
    // leaps from below `at` past the trigger finds nothing prepared there, where a long-lived
    // manager prepared from `from`. Turns here stay within that gap (a tenth of the budget): up to
    // ~350 tokens at a budget of 6,000 or more.
    await fc.assert(
      fc.asyncProperty(
        turnsOf(70, [40, 60]),
        fc.integer({ min: 6_000, max: 7_000 }),
        async (sizes, budget) => {
          await workersAgree('served', sizes, budget);
        },
      ),
      agreeRuns,
    );
  }, 300_000);

  it('with compactAfterRequest, workers serving each turn from the stored view record serve the views a long-lived manager serves, compacting after their request with the model’s summary', async () => {
    await fc.assert(
      fc.asyncProperty(
        turnsOf(70, [40, 60]),
        fc.integer({ min: 6_000, max: 7_000 }),
        async (sizes, budget) => {
          const receipts = await workersAgree('served', sizes, budget, { compactAfterRequest: true });
          // The model's summary, prepared ahead, is what the compactions made after the request use.
          expect(receipts.filter((r) => r.startsWith('used/')).length).toBeGreaterThan(0);
        },
      ),
      agreeRuns,
    );
  }, 300_000);

  it('a stored answer is taken only for the messages it was asked of, as they were', async () => {
    for (const tamper of [false, true]) {
      server = await startFakeLLMServer({ provider, apiKey: 'sk-test', reply: modelReply });
      const store = keepOpen(new MemoryStore());
      const gate = gatedFetch();
      gate.open();
      const options = (fetch: typeof globalThis.fetch) => ({
        model: 'gpt-4o',
        store,
        conversationId: 'c',
        protectTask: false,
        llm: { provider, baseURL: server!.baseURL, apiKey: 'sk-test', model: 'small', fetch },
      });
      // A worker prepares the next compaction's range, and the model's answer is stored.
      const a = new ContextManager(options(gate.fetch));
      await a.addMessage({ role: 'system', content: 'sys' });
      const stored = async () =>
        (await store.getMeta('c')).value?.ahead as
          | { memory?: { entries: Array<[number, string]> } }
          | undefined;
      const views = await runTurns(
        () => a,
        false,
        () => server!.requests.length > 0,
      );
      for (let i = 0; i < 50 && !(await stored())?.memory; i++) await idle();
      await a.close();
      expect((await stored())?.memory?.entries.length).toBeGreaterThan(0);
      if (tamper) {
        // As if a message it covers read otherwise now: its digest no longer matches.
        const meta = await store.getMeta('c');
        const ahead = structuredClone(meta.value!.ahead) as { memory: { entries: Array<[number, string]> } };
        ahead.memory.entries[0]![1] = 'not-this-message';
        await store.setMeta('c', { ...meta.value, ahead }, { expectedVersion: meta.version });
      }
      // Another worker, whose model never answers, compacts.
      const silent = gatedFetch();
      const b = new ContextManager(options(silent.fetch));
      const receipts: CompactionReceipt[] = [];
      b.on('context:post_compact', (e) => receipts.push(e.receipt));
      await runTurns(
        () => b,
        false,
        () => receipts.length > 0,
        views,
      );
      const view = JSON.stringify(views.at(-1));
      if (tamper) {
        expect(receipts[0]!.prepared).not.toBe('used');
        expect(receipts[0]!.summary?.tools).toBe('offline');
        expect(view).not.toContain('MODEL SUMMARY');
      } else {
        expect(['used', 'partial']).toContain(receipts[0]!.prepared);
        expect(receipts[0]!.summary?.tools).toContain(provider);
        expect(view).toContain('MODEL SUMMARY');
      }
      silent.open();
      await b.close();
      await server.close();
      server = undefined;
    }
  });

  it('a failing endpoint is backed off: compactions go on offline, without asking it at each one', async () => {
    const gate = gatedFetch();
    gate.open();
    const { ctx, receipts, warnings, server } = await managerWith(gate);
    server.setMode('error500');
    const views: Message[][] = [];
    let t = 0;
    while (receipts.length < 3) {
      const ms = await turn(ctx, t++, views);
      expect(ms).toBeLessThan(2000);
      await idle();
    }
    expect(warnings).toContain('llm_fallback');
    expect(receipts.every((r) => r.summary?.tools === 'offline')).toBe(true);
    expect(receipts.some((r) => r.prepared === 'failed')).toBe(true);
    // The first failure backs the endpoint off for 30 s: the later compactions do not ask it.
    expect(server.requests.length).toBe(1);
    expect(ctx.usage().tokens).toBeLessThanOrEqual(BUDGET);
  });
});

it('summaryAhead.at must be below the compaction trigger', () => {
  expect(() => new ContextManager({ compactThreshold: 0.8, summaryAhead: { at: 0.9 } })).toThrow(
    /summaryAhead\.at.*below compactThreshold/,
  );
  expect(() => new ContextManager({ summaryAhead: { at: 0 } })).toThrow(/summaryAhead\.at/);
});

it('your own tools with prepareMemory are prepared ahead too, and never asked on the request path', async () => {
  let summarizeCalls = 0;
  const asked: number[] = [];
  const tools: PreparingTools = {
    kind: 'mine',
    summarize: () => {
      summarizeCalls++;
      return Promise.resolve('never used');
    },
    extractFacts: () => Promise.resolve([]),
    prepareMemory: (request) => {
      asked.push(request.summaryEntries.length);
      return Promise.resolve({
        summary: `MY SUMMARY of ${request.summaryEntries.length} messages`,
        facts: [],
      });
    },
  };
  const ctx = new ContextManager({ model: 'gpt-4o', tools });
  const receipts: CompactionReceipt[] = [];
  ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
  await ctx.addMessage({ role: 'system', content: 'sys' });
  const views: Message[][] = [];
  for (let t = 0; receipts.length < 2; t++) {
    await turn(ctx, t, views);
    await idle(3);
  }
  expect(asked.length).toBeGreaterThan(0);
  expect(receipts.map((r) => [r.prepared, r.summary?.tools])).toEqual([
    ['used', 'mine'],
    ['used', 'mine'],
  ]);
  expect(summarizeCalls).toBe(0);
  expect(JSON.stringify(views.at(-1))).toContain('MY SUMMARY of');
});

describe('summaries prepared ahead, on a model answering in 2 s of a virtual clock', () => {
  // Time is the virtual clock's: work in slices runs in place (a loaded machine would otherwise
  // spread it over more turns of the event loop than `settle` lets run).
  let restoreSlices: (() => void) | undefined;
  beforeEach(() => {
    restoreSlices = useSliceClock({ now: () => 0 });
  });
  afterEach(() => restoreSlices?.());
  const LATENCY = 2_000;
  /** The agent's own model call between two requests. */
  const AGENT_CALL = 1_000;

  function setup() {
    const clock = new VirtualClock();
    const asked: Array<{ seqs: number[]; previousSummary: string | undefined; at: number }> = [];
    let requesting = false;
    const onRequestPath: number[] = [];
    const tools: PreparingTools = {
      kind: 'mine',
      summarize: () => Promise.reject(new Error('the model is never asked on the request path')),
      extractFacts: () => Promise.resolve([]),
      async prepareMemory(request) {
        const seqs = request.summaryEntries.map((e) => e.seq);
        asked.push({ seqs, previousSummary: request.previousSummary, at: ctx.usage().pct });
        if (requesting) onRequestPath.push(asked.length);
        await clock.sleep(LATENCY);
        const before = request.previousSummary?.startsWith('MY SUMMARY')
          ? `${request.previousSummary} + `
          : '';
        return { summary: `MY SUMMARY[${before}#${Math.min(...seqs)}-#${Math.max(...seqs)}]`, facts: [] };
      },
    };
    const ctx = new ContextManager({ model: 'gpt-4o', tools });
    const receipts: CompactionReceipt[] = [];
    ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
    const views: Message[][] = [];
    // What was started runs: the work queued behind a request (the preparation, in slices that
    // yield for as long as a loaded machine makes them) is done once the queue is.
    const settle = async () => {
      await idle(2);
      await ctx.getEntries();
    };
    /** One request (counted as on the request path while it runs), then the agent's call. */
    const request = async () => {
      requesting = true;
      views.push(await ctx.getMessagesForRequest({ tokenBudget: BUDGET }));
      requesting = false;
      await clock.advance(AGENT_CALL, settle);
    };
    return { ctx, clock, asked, onRequestPath, receipts, views, request, settle };
  }

  /** A user message, the request, the reply. */
  async function step(s: ReturnType<typeof setup>, t: number): Promise<void> {
    await s.ctx.addMessage({
      role: 'user',
      content: `Please update src/mod${t}.ts for ticket T-${100 + t}. ${filler(40, t)}`,
    });
    await s.request();
    await s.ctx.addMessage({ role: 'assistant', content: `Updated src/mod${t}.ts. ${filler(20, t)}` });
  }

  it('a turn that leaps past the trigger: the model’s summary of what was prepared, the rest offline on top', async () => {
    const s = setup();
    await s.ctx.addMessage({ role: 'system', content: 'sys' });
    let t = 0;
    // Steady turns to 70% (below `at`, 0.76): the range is settled and the model asked by then.
    while (s.ctx.usage().pct < 0.7) await step(s, t++);
    expect(s.receipts).toEqual([]);
    expect(s.asked.length).toBeGreaterThan(0);
    expect(Math.max(...s.asked.map((a) => a.at))).toBeLessThan(0.76);
    await s.clock.advance(LATENCY, s.settle);
    // A tool result of about a third of the budget: past the budget in one turn.
    await s.ctx.addMessage({ role: 'user', content: `Show me the log of run ${t}.` });
    await s.ctx.addMessage({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_log', type: 'function', function: { name: 'read_log', arguments: '{}' } }],
    });
    await s.ctx.addMessage({
      role: 'tool',
      tool_call_id: 'call_log',
      content: Array.from({ length: 120 }, (_, i) => `line ${i}: job ${i * 7} finished`).join('\n'),
    });
    const before = s.asked.length;
    await s.request();
    expect(s.receipts).toHaveLength(1);
    const leap = s.receipts[0]!;
    expect(leap.reason).toBe('over_budget');
    expect(leap.prepared).toBe('partial');
    expect(leap.summary?.tools).toBe('mine+offline');
    expect(JSON.stringify(s.views.at(-1))).toContain('MY SUMMARY[#');
    // The model was not asked while the request ran; the rest of the range was asked after it.
    expect(s.onRequestPath).toEqual([]);
    expect(s.asked.length).toBeGreaterThan(before);
    const rest = s.asked[before]!;
    expect(rest.previousSummary).toMatch(/^MY SUMMARY\[#/);
    // The next compaction is the model's whole, built on its own summary of the leap's range.
    for (let i = 0; s.receipts.length < 2 && i < 200; i++) await step(s, t++);
    const next = s.receipts[1]!;
    expect(next.prepared).toBe('used');
    expect(next.summary?.tools).toBe('mine');
    expect(JSON.stringify(s.views.at(-1))).toContain('MY SUMMARY[MY SUMMARY[MY SUMMARY[#');
  });

  it('after a compaction the next range is prepared from the new plan, before usage reaches `at`; about one call per compaction', async () => {
    const s = setup();
    await s.ctx.addMessage({ role: 'system', content: 'sys' });
    const compactedAt = new Set<number>();
    let t = 0;
    while (s.receipts.length < 4) {
      const had = s.receipts.length;
      await step(s, t++);
      if (s.receipts.length > had) compactedAt.add(s.views.length - 1);
    }
    expect(s.receipts.map((r) => r.prepared)).toEqual(['used', 'used', 'used', 'used']);
    // Each compaction's range was asked of the model after the one before it, and below `at`.
    const firstAfter = s.asked.filter((a) => a.seqs[0]! > (s.receipts[0]!.summary?.toSeq ?? 0));
    expect(firstAfter.length).toBeGreaterThan(0);
    expect(firstAfter[0]!.at).toBeLessThan(0.76);
    // The rest of a range that grew by `at` is asked once more, at most.
    expect(s.asked.length).toBeLessThanOrEqual(2 * s.receipts.length + 1);
    expect(s.onRequestPath).toEqual([]);
    expect(prefixBreaks(s.views, compactedAt)).toEqual([]);
  });
});
