/**
 * `ContextManager.storedSeqOf`: which stored message a view's message is, told from the object
 * alone (what the AI SDK middleware on a store gives back its SDK objects by), on a manager that
 * loaded the history and on one that served the view from the stored view record.
 */
import { describe, expect, it } from 'vitest';
import { ContextManager } from '../src/manager.js';
import type { Message } from '../src/messages/types.js';
import { MemoryStore } from '../src/stores/memory.js';
import { longSessionMessages } from './support/arbitraries.js';
import { countingLoads } from './support/workers.js';

const BUDGET = 20_000;

async function stored(): Promise<{
  store: ReturnType<typeof countingLoads<MemoryStore>>;
  history: Message[];
}> {
  const store = countingLoads(new MemoryStore());
  const history = longSessionMessages(1_500, 'openai', 12);
  const writer = new ContextManager({ model: 'gpt-4o', store, conversationId: 'c' });
  await writer.setMessages(history, { replace: true });
  await writer.getMessagesForRequest({ tokenBudget: BUDGET });
  await writer.close();
  return { store, history };
}

describe('storedSeqOf', () => {
  it('names the stored message each unchanged view message is, and nothing for what the plan made', async () => {
    const { store, history } = await stored();
    const ctx = new ContextManager({ model: 'gpt-4o', store, conversationId: 'c', storedView: false });
    const view = await ctx.getMessagesForRequest({ tokenBudget: BUDGET });
    const entries = await ctx.getEntries();
    const seqs = view.map((m) => ctx.storedSeqOf(m));
    const named = seqs.filter((s) => s !== undefined);
    // The view keeps a tail of stored messages as they are, and makes some of its own.
    expect(named.length).toBeGreaterThan(100);
    expect(named.length).toBeLessThan(view.length);
    view.forEach((message, i) => {
      const seq = seqs[i];
      if (seq === undefined) return;
      expect(entries[seq]!.message).toBe(message);
      expect(message).toEqual(history[seq]);
      // Nothing is added to the message for it.
      expect(Reflect.ownKeys(message)).toEqual(Object.keys(message));
    });
    // What the plan made or edited is no stored message: the view's first summary, a cleared result.
    for (const [i, message] of view.entries())
      if (seqs[i] === undefined) expect(JSON.stringify(history)).not.toContain(JSON.stringify(message));
    // A copy is another object; another manager's objects are not its own.
    const last = view.at(-1)!;
    expect(ctx.storedSeqOf({ ...last })).toBeUndefined();
    expect(ctx.storedSeqOf(structuredClone(last))).toBeUndefined();
    const other = new ContextManager({ model: 'gpt-4o', store, conversationId: 'c', storedView: false });
    expect(other.storedSeqOf(last)).toBeUndefined();
    await other.close();
    // An ephemeral message is not stored.
    await ctx.addMessage({ role: 'user', content: 'just now' }, { ephemeral: true });
    const withEphemeral = await ctx.getMessagesForRequest({ tokenBudget: BUDGET });
    expect(withEphemeral.at(-1)).toEqual({ role: 'user', content: 'just now' });
    expect(ctx.storedSeqOf(withEphemeral.at(-1)!)).toBeUndefined();
    await ctx.close();
  });

  it('names no message of a generation another writer replaced', async () => {
    const { store } = await stored();
    const ctx = new ContextManager({ model: 'gpt-4o', store, conversationId: 'c', storedView: false });
    const old = await ctx.getMessagesForRequest({ tokenBudget: BUDGET });
    const last = old.at(-1)!;
    expect(ctx.storedSeqOf(last)).toBe(1_499);
    const other = new ContextManager({ model: 'gpt-4o', store, conversationId: 'c', storedView: false });
    await other.setMessages(longSessionMessages(300, 'openai', 5), { replace: true });
    await other.close();
    const warnings: string[] = [];
    ctx.on('context:warn', (w) => warnings.push(w.code));
    const view = await ctx.getMessagesForRequest({ tokenBudget: BUDGET });
    expect(warnings).toContain('history_replaced');
    // Seq 1,499 is no more, and what the old view showed is no stored message of this history.
    expect(old.map((m) => ctx.storedSeqOf(m)).filter((s) => s !== undefined)).toEqual([]);
    expect(ctx.storedSeqOf(view.at(-1)!)).toBe(299);
    await ctx.close();
  });

  it('names the same seqs on a worker that served the view without loading the history', async () => {
    const { store } = await stored();
    const loaded = new ContextManager({ model: 'gpt-4o', store, conversationId: 'c', storedView: false });
    const expected = await loaded.getMessagesForRequest({ tokenBudget: BUDGET });
    const before = store.wholeReads;
    const worker = new ContextManager({ model: 'gpt-4o', store, conversationId: 'c' });
    const view = await worker.getMessagesForRequest({ tokenBudget: BUDGET });
    expect(store.wholeReads).toBe(before);
    expect(JSON.stringify(view)).toBe(JSON.stringify(expected));
    const seqs = view.map((m) => worker.storedSeqOf(m));
    expect(seqs).toEqual(expected.map((m) => loaded.storedSeqOf(m)));
    expect(seqs.filter((s) => s !== undefined).length).toBeGreaterThan(100);
    // Loaded later, its history's objects are named too; the served view's still are.
    const entries = await worker.getEntries();
    expect(store.wholeReads).toBe(before + 1);
    expect(worker.storedSeqOf(entries[1_499]!.message)).toBe(1_499);
    expect(view.map((m) => worker.storedSeqOf(m))).toEqual(seqs);
    // Replaced, the conversation's seqs name other messages: the served view's are named no more.
    await worker.setMessages(longSessionMessages(300, 'openai', 5), { replace: true });
    expect(view.map((m) => worker.storedSeqOf(m)).filter((s) => s !== undefined)).toEqual([]);
    await loaded.close();
    await worker.close();
  });
});
