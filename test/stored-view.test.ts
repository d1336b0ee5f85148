/**
 * Issue 32 item 1: a worker that has never loaded a conversation serves its request from the
 * stored view record and the rows the view holds. Whatever the conversation (both provider
 * formats, parallel tool calls, huge results, images, reused ids, pinned and critical messages,
 * broken logs) and whatever the budget, that view is byte for byte the view a worker that loads the
 * whole history serves, or both refuse the request alike; and a record that is corrupt, changed,
 * from another version, or stale is never used.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContextManager } from '../src/manager.js';
import type { Message, MessageFormat } from '../src/messages/types.js';
import type { ContextManagerOptions } from '../src/options.js';
import { MemoryStore } from '../src/stores/memory.js';
import type { ConversationStore } from '../src/stores/types.js';
import { encodeStoredView } from '../src/view/stored-view.js';
import { conversationArb, longSessionMessages } from './support/arbitraries.js';
import { countingLoads, keepOpen, type WorkerOutcome, workerStep } from './support/workers.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);
const MODEL: Record<string, string> = { openai: 'gpt-4o', anthropic: 'claude-sonnet-4-5' };

type Outcome = { view: string; tokens: number } | { error: string };

/** A fresh worker's answer to one request (its view as JSON, or the error it refused with). */
async function freshWorker(
  store: ConversationStore,
  format: MessageFormat,
  storedView: boolean,
  budget: number,
  warnings: string[] = [],
): Promise<Outcome> {
  const ctx = new ContextManager({ model: MODEL[format]!, store, conversationId: 'c', storedView });
  ctx.on('context:warn', (w) => warnings.push(w.code));
  try {
    const view = JSON.stringify(await ctx.getMessagesForRequest({ tokenBudget: budget }));
    // The view's tokens too: a stored count that was wrong never leaves a view counted under its size.
    return { view, tokens: ctx.usage().tokens };
  } catch (err) {
    return { error: `${(err as Error).name}: ${(err as Error).message}` };
  } finally {
    await ctx.close();
  }
}

/**
 * Runs `longSessionMessages(length, format, seed)` with a request after every message twice: on one
 * manager kept all along, and on a fresh worker per message (another store with the same input).
 * Expects the same view (or the same refusal) at every step; resolves with the compactions made.
 */
async function longLivedAgainstFresh(
  format: MessageFormat,
  seed: number,
  length: number,
  budget: number,
  more: Partial<ContextManagerOptions> = {},
): Promise<number> {
  const messages = longSessionMessages(length, format, seed);
  const options = {
    model: MODEL[format]!,
    conversationId: 'c',
    now: () => new Date(Date.UTC(2026, 10, 29)),
    ...more,
  };
  const kept = new ContextManager({ ...options, store: keepOpen(new MemoryStore()) });
  const freshStore = keepOpen(new MemoryStore());
  let compactions = 0;
  kept.on('context:post_compact', () => {
    compactions++;
  });
  try {
    for (const message of messages) {
      const fresh = await workerStep(
        { ...options, store: freshStore },
        (ctx) => ctx.addMessage(message),
        budget,
      );
      let longLived: WorkerOutcome;
      try {
        await kept.addMessage(message);
        longLived = { view: JSON.stringify(await kept.getMessagesForRequest({ tokenBudget: budget })) };
      } catch (err) {
        longLived = { error: `${(err as Error).name}: ${(err as Error).message}` };
      }
      expect(fresh).toEqual(longLived);
    }
  } finally {
    await kept.close();
  }
  return compactions;
}

describe('a view served from the stored record', () => {
  it('is byte for byte the view of a worker that loads the whole history (openai and anthropic: parallel calls, huge results, images, reused ids, pinned messages, broken logs)', async () => {
    let served = 0;
    let servedWithPlan = 0;
    let requests = 0;
    await fc.assert(
      fc.asyncProperty(
        conversationArb({ minTurns: 2, maxTurns: 6, huge: true }),
        fc.boolean(),
        fc.integer({ min: 600, max: 6_000 }),
        async (conv, broken, budget) => {
          void broken;
          const format = conv.format;
          const store = countingLoads(new MemoryStore());
          const writer = new ContextManager({ model: MODEL[format]!, store, conversationId: 'c' });
          // The writer serves a request after each assistant message (and at the end), as an agent
          // loop does; after each, two workers that never saw the conversation serve the next.
          for (let i = 0; i < conv.messages.length; i++) {
            await writer.addMessage(conv.messages[i]!, conv.options[i]);
            const last = i === conv.messages.length - 1;
            if (!last && conv.messages[i + 1]!.role !== 'assistant') continue;
            await writer.getMessagesForRequest({ tokenBudget: budget }).catch(() => undefined);
            const before = store.wholeReads;
            const fast = await freshWorker(store, format, true, budget);
            const fromRecord = store.wholeReads === before;
            const whole = await freshWorker(store, format, false, budget);
            expect(fast).toEqual(whole);
            requests++;
            if (fromRecord) served++;
            if (fromRecord && (await store.getMeta('c')).value?.plan) servedWithPlan++;
          }
          await writer.close();
        },
      ),
      { numRuns: RUNS },
    );
    // Most requests are served from the record (the rest needed a compaction or a decline), many
    // of them under a plan (summaries, cleared results, the facts block in the record).
    expect(served).toBeGreaterThan(requests / 3);
    expect(servedWithPlan).toBeGreaterThan(requests / 10);
  }, 600_000);

  it('serves an agent loop run by workers that never keep a conversation (each turn a new manager: its messages appended unread, its view from the record) as a loop that loads the history each turn does', async () => {
    let unread = 0;
    let turns = 0;
    await fc.assert(
      fc.asyncProperty(
        conversationArb({ minTurns: 2, maxTurns: 6, huge: true }),
        fc.integer({ min: 600, max: 6_000 }),
        async (conv, budget) => {
          const format = conv.format;
          const stores = [countingLoads(new MemoryStore()), countingLoads(new MemoryStore())] as const;
          const clock = () => new Date(Date.UTC(2026, 10, 29));
          const step = (store: ConversationStore, storedView: boolean, from: number, to: number) =>
            workerStep(
              { model: MODEL[format]!, store, conversationId: 'c', storedView, now: clock },
              async (ctx) => {
                for (let i = from; i < to; i++) await ctx.addMessage(conv.messages[i]!, conv.options[i]);
              },
              budget,
            );
          let from = 0;
          for (let i = 0; i < conv.messages.length; i++) {
            const last = i === conv.messages.length - 1;
            if (!last && conv.messages[i + 1]!.role !== 'assistant') continue;
            const before = stores[0].wholeReads;
            const served = await step(stores[0], true, from, i + 1);
            if (stores[0].wholeReads === before) unread++;
            expect(served).toEqual(await step(stores[1], false, from, i + 1));
            turns++;
            from = i + 1;
          }
          expect(await stores[0].read('c')).toEqual(await stores[1].read('c'));
        },
      ),
      // At least 200 sessions, whatever PROPERTY_RUNS says: the share below is a figure of the
      // sample. Over 40 sessions it was 0.33-0.48 from seed to seed (1 run in 12 here fell on its
      // bound), over 100 0.37-0.42; 200 hold it clear.
      { numRuns: Math.max(RUNS, 200) },
    );
    // Most turns never read the whole history.
    expect(unread).toBeGreaterThan(turns / 3);
  }, 600_000);

  it('serves the views a long-lived worker serves, whichever worker serves each step: the flag that the request before compacted is stored state', async () => {
    // Sessions where the flag decided a view before it was stored (found by search: a fresh worker
    // compacted again on the request right after a compaction, above the trigger and under the budget).
    expect(await longLivedAgainstFresh('openai', 8, 80, 1_500)).toBeGreaterThan(0);
    expect(await longLivedAgainstFresh('anthropic', 9, 80, 1_500)).toBeGreaterThan(0);
    let compactions = 0;
    await fc.assert(
      fc.asyncProperty(
        // Agent sessions (long turns of tool calls, huge results) at budgets that compact within a turn.
        fc.constantFrom<MessageFormat>('openai', 'anthropic'),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 30, max: 100 }),
        fc.integer({ min: 1_200, max: 4_000 }),
        async (format, seed, length, budget) => {
          compactions += await longLivedAgainstFresh(format, seed, length, budget);
        },
      ),
      {
        numRuns: Math.max(10, RUNS / 2),
      },
    );
    expect(compactions).toBeGreaterThan(0);
  }, 600_000);

  it("serves the views a long-lived worker serves under strategy 'layered': a leap is read from the view, not from the request before", async () => {
    // Sessions where a fresh worker escalated apart from a long-lived one while a leap was measured
    // against the previous request's usage, which only the long-lived worker knew (found by search:
    // 18 of 120 session/budget pairs).
    const layered = { strategy: 'layered' as const };
    expect(await longLivedAgainstFresh('openai', 21, 60, 1_200, layered)).toBeGreaterThan(0);
    expect(await longLivedAgainstFresh('anthropic', 6, 60, 1_200, layered)).toBeGreaterThan(0);
    expect(await longLivedAgainstFresh('anthropic', 16, 60, 2_600, layered)).toBeGreaterThan(0);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<MessageFormat>('openai', 'anthropic'),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 30, max: 80 }),
        fc.integer({ min: 1_200, max: 4_000 }),
        fc.constantFrom(0.1, 0.3),
        async (format, seed, length, budget, jumpEscalation) => {
          await longLivedAgainstFresh(format, seed, length, budget, {
            ...layered,
            guard: { jumpEscalation },
          });
        },
      ),
      {
        numRuns: Math.max(10, RUNS / 4),
      },
    );
  }, 600_000);

  it('reads the rows the view holds, not the history: 3,000 stored messages, a view of a few hundred', async () => {
    const store = countingLoads(new MemoryStore());
    const reads: Array<{ fromSeq?: number; limit?: number }> = [];
    const watched = new Proxy(store, {
      get(target, key) {
        if (key === 'read')
          return (id: string, options?: { fromSeq?: number; limit?: number }) => {
            reads.push(options ?? {});
            return target.read(id, options);
          };
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const writer = new ContextManager({ model: 'gpt-4o', store, conversationId: 'c' });
    await writer.setMessages(longSessionMessages(3_000, 'openai', 7), { replace: true });
    const view = await writer.getMessagesForRequest({ tokenBudget: 30_000 });
    await writer.close();
    const ctx = new ContextManager({ model: 'gpt-4o', store: watched, conversationId: 'c' });
    expect(await ctx.getMessagesForRequest({ tokenBudget: 30_000 })).toEqual(view);
    const rows = (await Promise.all(reads.map((o) => store.read('c', o)))).reduce((n, r) => n + r.length, 0);
    expect(reads.some((o) => o.fromSeq === undefined)).toBe(false);
    expect(rows).toBeLessThan(view.length * 2);
    // Later calls that need the history load it then.
    expect(await ctx.getMessages()).toHaveLength(3_000);
    await ctx.close();
  });

  it('serves a stateless agent step (add, view, usage recorded, reply added) without reading the history whole', async () => {
    const store = countingLoads(new MemoryStore());
    const writer = new ContextManager({ model: 'gpt-4o', store, conversationId: 'c' });
    await writer.setMessages(longSessionMessages(1_500, 'openai', 12), { replace: true });
    await writer.getMessagesForRequest({ tokenBudget: 20_000 });
    await writer.close();
    const before = store.wholeReads;
    const ctx = new ContextManager({ model: 'gpt-4o', store, conversationId: 'c' });
    const added = await ctx.addMessage({ role: 'user', content: 'Next: run the tests.' });
    expect(added).toEqual({ seq: 1_500, duplicate: false });
    const view = await ctx.getMessagesForRequest({ tokenBudget: 20_000 });
    expect(view.at(-1)).toEqual({ role: 'user', content: 'Next: run the tests.' });
    expect(ctx.messageFormat).toBe('openai');
    await ctx.recordUsage({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      model: 'gpt-4o',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'Running them.' }, finish_reason: 'stop' },
      ],
      usage: {
        prompt_tokens: 15_000,
        completion_tokens: 4,
        total_tokens: 15_004,
        prompt_tokens_details: { cached_tokens: 12_000 },
      },
    });
    const usage = ctx.usage();
    expect(usage.messages).toBe(view.length);
    expect(usage.cost?.reported?.reportedCached).toBe(12_000);
    await ctx.addMessage({ role: 'assistant', content: 'Running them.' });
    expect(store.wholeReads).toBe(before);
    // Later calls that need the history read it then, and find both messages stored once.
    expect((await ctx.getMessages()).slice(-2).map((m) => m.content)).toEqual([
      'Next: run the tests.',
      'Running them.',
    ]);
    expect(store.wholeReads).toBe(before + 1);
    await ctx.close();
  });

  it('serves getAnthropicRequest too: the same body, the history not read whole', async () => {
    const store = countingLoads(new MemoryStore());
    const writer = new ContextManager({ model: MODEL.anthropic!, store, conversationId: 'c' });
    await writer.setMessages(longSessionMessages(1_200, 'anthropic', 13), { replace: true });
    await writer.getAnthropicRequest({ tokenBudget: 20_000 });
    await writer.close();
    const before = store.wholeReads;
    const served = new ContextManager({ model: MODEL.anthropic!, store, conversationId: 'c' });
    const body = await served.getAnthropicRequest({ tokenBudget: 20_000 });
    expect(store.wholeReads).toBe(before);
    const whole = new ContextManager({
      model: MODEL.anthropic!,
      store,
      conversationId: 'c',
      storedView: false,
    });
    expect(body).toEqual(await whole.getAnthropicRequest({ tokenBudget: 20_000 }));
    expect(body.system).toBeDefined();
    await served.close();
    await whole.close();
  });

  it('is never used when corrupt, changed, from another version or stale: the whole history is loaded, with a warning where the record was unreadable', async () => {
    const store = countingLoads(new MemoryStore());
    const writer = new ContextManager({ model: 'gpt-4o', store, conversationId: 'c' });
    await writer.setMessages(longSessionMessages(1_500, 'openai', 9), { replace: true });
    const expected = await freshWorker(store, 'openai', false, 20_000);
    await writer.getMessagesForRequest({ tokenBudget: 20_000 });
    await writer.close();
    const meta = await store.getMeta('c');
    const kept = meta.value!.storedView as { body: string; sum: string };
    const record = JSON.parse(kept.body) as Record<string, unknown>;
    const cases: Array<[string, unknown, string | undefined]> = [
      [
        'a changed byte',
        { ...kept, body: kept.body.replace('"items":[', '"items":[[0,0],') },
        'stored_view_unreadable',
      ],
      ['not an object', 'tampered', 'stored_view_unreadable'],
      ['another version', encodeStoredView({ ...record, v: 2 } as never), 'stored_view_unreadable'],
      [
        'runs that do not ascend',
        encodeStoredView({
          ...record,
          items: [
            [5, 5],
            [1, 1],
          ],
        } as never),
        'stored_view_unreadable',
      ],
      [
        'counts that do not match',
        encodeStoredView({ ...record, counts: [1] } as never),
        'stored_view_unreadable',
      ],
      ['another generation', encodeStoredView({ ...record, epoch: 'elsewhere' } as never), undefined],
      ['another plan', encodeStoredView({ ...record, plan: 'another' } as never), undefined],
      ['another tokenizer', encodeStoredView({ ...record, counterId: 'other' } as never), undefined],
      [
        // Checked as counts stored with rows are (issue 31): each against what its message can hold
        // (at least an eighth of its UTF-8 bound), all together against the view's.
        'counts each a tenth of what they are (re-signed)',
        encodeStoredView({
          ...record,
          counts: (record.counts as number[]).map((n) => Math.floor(n / 10)),
        } as never),
        undefined,
      ],
      [
        'counts lowered (re-signed)',
        encodeStoredView({ ...record, counts: (record.counts as number[]).map(() => 0) } as never),
        undefined,
      ],
    ];
    for (const [name, value, warning] of cases) {
      await store.setMeta('c', { ...meta.value, storedView: value });
      const before = store.wholeReads;
      const warnings: string[] = [];
      const outcome = await freshWorker(store, 'openai', true, 20_000, warnings);
      expect(outcome, name).toEqual(expected);
      if (warning) {
        expect(warnings, name).toContain(warning);
        expect(store.wholeReads, name).toBe(before + 1);
      }
    }
    // A conversation replaced since: the record names the old generation and is not used.
    await store.setMeta('c', meta.value!);
    const other = new ContextManager({ model: 'gpt-4o', store, conversationId: 'c' });
    await other.setMessages(longSessionMessages(200, 'openai', 10), { replace: true });
    await other.close();
    const before = store.wholeReads;
    const replaced = await freshWorker(store, 'openai', true, 20_000);
    expect(store.wholeReads).toBe(before + 1);
    expect(replaced).toEqual(await freshWorker(store, 'openai', false, 20_000));
  });

  it('takes a served row of another format as a load does: under invalidStored skip, left out with a warning, not thrown', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'stored-view-format-'));
    try {
      const url = `sqlite:${join(dir, 'db.sqlite')}`;
      const writer = new ContextManager({ model: 'gpt-4o', store: url, conversationId: 'c' });
      await writer.setMessages(longSessionMessages(1_500, 'openai', 9), { replace: true });
      await writer.getMessagesForRequest({ tokenBudget: 20_000 });
      await writer.close();
      // A row the view holds, changed by hand to an Anthropic message (the generation unchanged).
      const db = new Database(join(dir, 'db.sqlite'));
      const anthropic = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'hi' }] };
      db.prepare("UPDATE entries SET message = ? WHERE conversation_id = 'c' AND seq = 1497").run(
        JSON.stringify(anthropic),
      );
      db.close();
      const views: Message[][] = [];
      for (const storedView of [true, false]) {
        const warnings: string[] = [];
        const ctx = new ContextManager({
          model: 'gpt-4o',
          store: url,
          conversationId: 'c',
          storedView,
          invalidStored: 'skip',
        });
        ctx.on('context:warn', (event) => warnings.push(event.code));
        views.push(await ctx.getMessagesForRequest({ tokenBudget: 20_000 }));
        await ctx.close();
        expect(warnings, `storedView ${storedView}`).toContain('invalid_stored_message');
      }
      expect(views[0]).toEqual(views[1]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('takes in the rows appended after the record, by any writer, and keeps serving them', async () => {
    const store = countingLoads(new MemoryStore());
    const messages = longSessionMessages(1_200, 'anthropic', 11);
    const writer = new ContextManager({ model: MODEL.anthropic!, store, conversationId: 'c' });
    await writer.setMessages(messages.slice(0, 1_000), { replace: true });
    await writer.getMessagesForRequest({ tokenBudget: 20_000 });
    await writer.close();
    for (let at = 1_000; at < 1_200; at += 40) {
      const appender = new ContextManager({
        model: MODEL.anthropic!,
        store,
        conversationId: 'c',
        storedView: false,
      });
      await appender.addMessages(messages.slice(at, at + 40) as Message[]);
      await appender.close();
      const before = store.wholeReads;
      const fast = await freshWorker(store, 'anthropic', true, 20_000);
      const whole = await freshWorker(store, 'anthropic', false, 20_000);
      expect(fast).toEqual(whole);
      void before;
    }
  });
});
