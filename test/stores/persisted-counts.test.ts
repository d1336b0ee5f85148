/**
 * Counts that persist (issue 24 item 3): a message is counted once, as it is added or set, and
 * the count goes to the store with it; resuming, or reopening with the same model, counts
 * nothing again; a count made with another tokenizer, or of a message whose stored bytes
 * changed, is made again (and kept for next time), never trusted; history stored before counts
 * existed still opens. On every driver, and as a property over generated conversations.
 */

import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ContextManager } from '../../src/manager.js';
import type { Message } from '../../src/messages/types.js';
import { MemoryStore } from '../../src/stores/memory.js';
import type { ConversationStore } from '../../src/stores/types.js';
import { getModelInfo } from '../../src/tokens/catalog.js';
import { countKey } from '../../src/tokens/count-key.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import type { TokenCounter } from '../../src/tokens/types.js';
import { conversationArb } from '../support/arbitraries.js';
import { skipFor } from '../support/requirements.js';
import { sharedDrivers } from './fixtures/drivers.js';
import { openSpec } from './fixtures/open-store.js';

const ID = 'persisted counts';
const MODEL = 'gpt-4o';

/** gpt-4o's counter, with the messages it counted (by content) recorded. */
function countingCounter(model = MODEL): { counter: TokenCounter; counted: string[] } {
  const real = createTokenCounter(getModelInfo(model)!);
  const counted: string[] = [];
  const counter: TokenCounter = {
    ...real,
    countMessage(message, format) {
      counted.push(JSON.stringify(message.content ?? message));
      return real.countMessage(message, format);
    },
  };
  return { counter, counted };
}

const user = (content: string): Message => ({ role: 'user', content });
const reply = (content: string): Message => ({ role: 'assistant', content });
const HISTORY: Message[] = [
  { role: 'system', content: 'You are a careful agent.' },
  user('Find the invoice INV-2024-0042 in /srv/billing.'),
  reply('It is in /srv/billing/2024/INV-2024-0042.pdf, dated 2024-03-05.'),
  user('Send it to ana@example.com.'),
  reply('Sent.'),
];

/** A manager on `store` counting with `counter`, its warnings recorded. */
function manager(store: ConversationStore, counter: TokenCounter) {
  return new ContextManager({ store, conversationId: ID, model: MODEL, tokenCounter: counter });
}

/** The store, except that closing it does nothing: the memory store outlives its managers here. */
function unclosable(store: ConversationStore): ConversationStore {
  return new Proxy(store, {
    get: (target, key) => {
      if (key === 'close') return async () => undefined;
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

interface Case {
  name: string;
  missing?: string | undefined;
  /** Opens the same store again (as another process would); memory hands back its one instance. */
  opener: () => Promise<() => Promise<ConversationStore>>;
}

const cases: Case[] = [
  {
    name: 'memory',
    opener: async () => {
      const store = new MemoryStore();
      // Closing a manager closes its store: the memory store outlives it here.
      const kept = unclosable(store);
      return async () => kept;
    },
  },
  ...sharedDrivers(cleanups, [ID]).map((d) => ({
    name: d.name,
    missing: d.missing,
    opener: async () => {
      const spec = await d.spec();
      return () => openSpec(spec);
    },
  })),
];

/** What a new manager on the stored conversation counts for its first request. */
async function countedOnResume(store: ConversationStore, model = MODEL): Promise<string[]> {
  const { counter, counted } = countingCounter(model);
  const ctx = new ContextManager({ store, conversationId: ID, tokenCounter: counter });
  await ctx.getMessagesForRequest();
  await ctx.close();
  return counted;
}

describe.each(cases)('$name: counts that persist', ({ name, missing: reason, opener }) => {
  it(
    'a read that asks for no counts (`counts: false`) gives the same entries without them, bounded or not',
    skipFor(reason),
    async () => {
      const open = await opener();
      const a = manager(await open(), countingCounter().counter);
      await a.setMessages(HISTORY, { replace: true });
      await a.close();
      const store = await open();
      for (const range of [{}, { fromSeq: 1 }, { fromSeq: 1, limit: 2 }]) {
        const counted = await store.read(ID, range);
        expect(counted.some((e) => e.counts !== undefined)).toBe(true);
        const bare = await store.read(ID, { ...range, counts: false });
        // Drivers may leave the counts out; whatever they give is the entries, the counts aside.
        expect(bare.map(({ counts: _, ...e }) => e)).toEqual(counted.map(({ counts: _, ...e }) => e));
        // The drivers that store text leave them out, neither reading nor checking them.
        if (name !== 'memory') expect(bare.every((e) => e.counts === undefined)).toBe(true);
      }
      await store.close();
    },
  );

  it(
    'resuming with the same model counts nothing again, and gives the same view and count',
    skipFor(reason),
    async () => {
      const open = await opener();
      const first = countingCounter();
      const a = manager(await open(), first.counter);
      for (const m of HISTORY) await a.addMessage(m);
      const view = await a.getMessagesForRequest();
      const tokens = await a.getTokenCount();
      // Each message was counted once, when it was added.
      expect(first.counted).toHaveLength(HISTORY.length);
      await a.close();

      const again = countingCounter();
      const b = manager(await open(), again.counter);
      expect(await b.getMessagesForRequest()).toEqual(view);
      expect(await b.getTokenCount()).toBe(tokens);
      expect(again.counted).toEqual([]);
      // A steady turn counts its new message only.
      await b.addMessage(user('And the receipt?'));
      await b.getMessagesForRequest();
      expect(again.counted).toEqual([JSON.stringify('And the receipt?')]);
      await b.close();
    },
  );

  it(
    'setMessages (an import) counts once, and a reopened manager counts nothing',
    skipFor(reason),
    async () => {
      const open = await opener();
      const first = countingCounter();
      const a = manager(await open(), first.counter);
      await a.setMessages(HISTORY, { replace: true });
      await a.getMessagesForRequest();
      expect(first.counted).toHaveLength(HISTORY.length);
      await a.close();
      expect(await countedOnResume(await open())).toEqual([]);
    },
  );

  it(
    'another tokenizer recounts once, keeps its counts, and both are then kept',
    skipFor(reason),
    async () => {
      const open = await opener();
      const gpt = countingCounter();
      const a = manager(await open(), gpt.counter);
      for (const m of HISTORY) await a.addMessage(m);
      await a.close();
      // A model with another encoding: the stored counts are not its own.
      const claude = 'claude-sonnet-4-5';
      expect(await countedOnResume(await open(), claude)).toHaveLength(HISTORY.length);
      const store = await open();
      const claudeKey = countKey(countingCounter(claude).counter);
      for (const entry of await store.read(ID)) {
        expect(Object.keys(entry.counts ?? {}).sort()).toEqual([countKey(gpt.counter), claudeKey].sort());
      }
      expect(await countedOnResume(store, claude)).toEqual([]);
    },
  );

  // Issue 31, item 7: with every stored count set to 1 (the message digest intact), a new manager
  // sent a 108,243-token view against a 20,000 budget, on every store.
  it.each([
    ['set to 1', () => 1],
    // Within what each message alone allows (an eighth of its bound), too little for the view.
    ['just over an eighth of its bound', (bound: number) => Math.ceil(bound / 7.9)],
  ])(
    'a stored count %s is not trusted: the view fits, the count is redone, kept, and a warning says so',
    async (_, wrong) => {
      if (reason) return;
      const open = await opener();
      const writer = new ContextManager({ store: await open(), conversationId: ID, model: MODEL });
      const words = ['invoice', 'parcel', 'refund', 'route', 'ticket', 'window', 'agent', 'ledger'];
      const long = (i: number) =>
        Array.from(
          { length: 220 },
          (_, j) => `${words[(i * 5 + j * 3) % words.length]}-${(i * 31 + j) % 997}`,
        ).join(' ');
      await writer.addMessage({ role: 'system', content: 'You are a careful agent.' });
      for (let i = 0; i < 60; i++) await writer.addMessage(i % 2 === 0 ? user(long(i)) : reply(long(i)));
      await writer.addMessage(user('What is the total of the refunds?'));
      await writer.close();

      const store = await open();
      const real = createTokenCounter(getModelInfo(MODEL)!);
      const key = countKey(real);
      const entries = await store.read(ID);
      expect(entries.every((e) => (e.counts?.[key] ?? 0) > 1)).toBe(true);
      await store.saveCounts(
        ID,
        entries.map((e) => ({
          seq: e.seq,
          counts: { [key]: wrong(real.boundMessage!(e.message, 'openai')) },
        })),
        { epoch: await store.epoch(ID) },
      );
      expect(
        (await store.read(ID)).every((e) => e.counts?.[key] !== real.countMessage(e.message, 'openai')),
      ).toBe(true);

      // Views aimed at three quarters of the budget: a count half the real one sends it over.
      const reader = new ContextManager({ store, conversationId: ID, model: MODEL, economy: 'rich' });
      const warnings: string[] = [];
      reader.on('context:warn', (w) => warnings.push(`${w.code}: ${w.message}`));
      const view = await reader.getMessagesForRequest({ tokenBudget: 20_000 });
      expect(await real.measure(view, { format: 'openai' }), 'the view sent').toBeLessThanOrEqual(20_000);
      expect(
        warnings.some((w) => w.startsWith('stored_count_mismatch: ')),
        'the warning',
      ).toBe(true);
      await reader.close();
      // The counts redone are kept in place of the wrong ones (those of the view at least).
      const kept = new Map(
        (await (await open()).read(ID)).map((e) => [JSON.stringify(e.message), e.counts?.[key]]),
      );
      for (const m of view) {
        const n = kept.get(JSON.stringify(m));
        if (n !== undefined) expect(n).toBe(real.countMessage(m, 'openai'));
      }
    },
  );

  it('history stored without counts opens, is counted once, and then is not', skipFor(reason), async () => {
    const open = await opener();
    const store = await open();
    await store.append(
      ID,
      HISTORY.map((message) => ({ message, metadata: { timestamp: '2025-01-02T03:04:05.678Z' } })),
    );
    const first = countingCounter();
    const a = manager(store, first.counter);
    expect(await a.getMessages()).toEqual(HISTORY);
    await a.getMessagesForRequest();
    expect(first.counted).toHaveLength(HISTORY.length);
    await a.close();
    expect(await countedOnResume(await open())).toEqual([]);
  });
});

describe('a count is never trusted blindly', () => {
  it("a count under another key, or a wrong-shaped one, is not read as this tokenizer's", async () => {
    const store = new MemoryStore();
    const { counter, counted } = countingCounter();
    const key = countKey(counter);
    await store.append(ID, [
      // Counts another tokenizer made (and one of an older counting version): not this one's.
      { message: HISTORY[1]!, metadata: { timestamp: 't' }, counts: { [key.replace('/v1', '/v0')]: 1 } },
      {
        message: HISTORY[2]!,
        metadata: { timestamp: 't' },
        counts: { 'anthropic:cl100k_base*1.2/v1': 2 },
      },
    ]);
    const ctx = new ContextManager({ store, conversationId: ID, model: MODEL, tokenCounter: counter });
    const fresh = new ContextManager({ model: MODEL });
    await fresh.setMessages(HISTORY.slice(1, 3));
    expect(await ctx.getTokenCount()).toBe(await fresh.getTokenCount());
    await ctx.getMessagesForRequest();
    expect(counted).toHaveLength(2);
  });
});

/** A new manager on the conversation `store` holds, counting with a counter that records what it counts. */
function resumed(store: ConversationStore): { b: ContextManager; again: ReturnType<typeof countingCounter> } {
  const again = countingCounter();
  return {
    b: new ContextManager({ store, conversationId: ID, model: MODEL, tokenCounter: again.counter }),
    again,
  };
}

describe('counts that persist: honest text past six bytes a token', () => {
  // Found by the property below (seed 36160898): two messages of long common words, 912 bytes in
  // 147 tokens, whose honest stored counts the view-level check took for counts set too low.
  it('is not counted again on resume: its counts are not under its pieces', async () => {
    const store = new MemoryStore();
    const kept = unclosable(store);
    const context =
      'export cursor buffer invoice replica offset session shard retry payload lease summary timezone snapshot window locale rollback request config commit cache deploy flush budget queue render token worker metric';
    const more = 'parse schema handler encoder record import batch stream';
    const a = new ContextManager({ store: kept, conversationId: ID, model: MODEL });
    await a.addMessage(
      user(`Please email ana.1@example.com once src/parse.ts passes lint and tests. Context: ${context}.`),
    );
    await a.addMessage(
      reply(
        `Done. Record usr_0000 now points to ana.100@example.com. Context: ${more} ${context} date index router ${more} ${context} date index.`,
      ),
    );
    await a.close();
    const { b, again } = resumed(kept);
    await b.getMessagesForRequest({ tokenBudget: 200 }).catch(() => undefined);
    expect(again.counted.filter((c) => c.includes('Context: '))).toEqual([]);
  });
});

describe('counts that persist: property', () => {
  it('a resumed manager counts what a fresh one counts, and builds the same view, without counting again', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb({ maxTurns: 4 }),
        fc.integer({ min: 200, max: 4_000 }),
        async (conv, budget) => {
          const store = new MemoryStore();
          const kept = unclosable(store);
          const first = countingCounter();
          const a = new ContextManager({
            store: kept,
            conversationId: ID,
            model: MODEL,
            tokenCounter: first.counter,
          });
          for (const [i, m] of conv.messages.entries()) await a.addMessage(m, conv.options[i]);
          await a.close();
          const { b, again } = resumed(kept);
          const fresh = new ContextManager({
            model: MODEL,
            tokenCounter: createTokenCounter(getModelInfo(MODEL)!),
          });
          for (const [i, m] of conv.messages.entries()) await fresh.addMessage(m, conv.options[i]);
          expect(await b.getTokenCount()).toBe(await fresh.getTokenCount());
          const request = { tokenBudget: budget };
          const [got, want] = await Promise.all([
            b.getMessagesForRequest(request).catch((e: Error) => e.name),
            fresh.getMessagesForRequest(request).catch((e: Error) => e.name),
          ]);
          expect(got).toEqual(want);
          // Only what the view itself made (summaries, notices, placeholders) was counted.
          const stored = new Set(conv.messages.map((m) => JSON.stringify(m.content ?? m)));
          expect(again.counted.filter((c) => stored.has(c))).toEqual([]);
        },
      ),
      { numRuns: 40 },
    );
  });
});
