import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { longSessionMessages } from '../test/support/arbitraries.js';
import { StoreError } from './errors.js';
import { ContextManager } from './manager.js';
import { ContextPool } from './pool.js';
import { FileStore } from './stores/file.js';
import { MemoryStore } from './stores/memory.js';
import type { ConversationStore, StoreSearch } from './stores/types.js';

/** A memory store that says whether it was closed. */
class CountingStore extends MemoryStore {
  closes = 0;
  override async close(): Promise<void> {
    this.closes++;
    await super.close();
  }
}

const say = (text: string) => ({ role: 'user' as const, content: text });

describe('ContextPool', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ck-pool-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('makes a manager on first use and gives the same one after, concurrent gets included', async () => {
    const pool = new ContextPool({ store: new MemoryStore(), options: { model: 'gpt-4o' } });
    const [a, b] = [pool.get('a'), pool.get('a')];
    expect(a).toBe(b);
    expect(a).toBeInstanceOf(ContextManager);
    expect(a.conversationId).toBe('a');
    await Promise.all([a.addMessage(say('one')), pool.get('a').addMessage(say('two'))]);
    expect(await pool.get('a').getMessages()).toHaveLength(2);
    expect(pool.get('b')).not.toBe(a);
    expect(pool.size).toBe(2);
    await pool.close();
  });

  it('keeps the most recently used first and closes the least recently used past maxManagers', async () => {
    const store = new CountingStore();
    const pool = new ContextPool({ store, maxManagers: 2 });
    const a = pool.get('a');
    await a.addMessage(say('in a'));
    pool.get('b');
    pool.get('a'); // a is now the most recently used
    expect(pool.conversations()).toEqual(['b', 'a']);
    pool.get('c'); // b goes
    expect(pool.conversations()).toEqual(['a', 'c']);
    expect(pool.has('b')).toBe(false);
    pool.get('d'); // a goes
    expect(pool.conversations()).toEqual(['c', 'd']);
    await pool.trim();
    expect(store.closes).toBe(0);
    // The store stayed open for the others, and a is loaded again from it.
    const again = pool.get('a');
    expect(again).not.toBe(a);
    expect(await again.getMessages()).toEqual([expect.objectContaining({ content: 'in a' })]);
    await pool.close();
    expect(store.closes).toBe(1);
  });

  it('an evicted manager is closed: its store calls reject, the shared store is open', async () => {
    const store = new CountingStore();
    const pool = new ContextPool({ store, maxManagers: 1 });
    const a = pool.get('a');
    await a.addMessage(say('kept'));
    pool.get('b');
    await pool.trim();
    await expect(a.addMessage(say('late'))).rejects.toBeInstanceOf(StoreError);
    await expect(a.addMessage(say('late'))).rejects.toMatchObject({ code: 'closed' });
    expect(store.closes).toBe(0);
    expect(await store.read('a')).toHaveLength(1);
    await pool.get('b').addMessage(say('b works'));
    expect(await store.head('b')).toBe(1);
    await pool.close();
  });

  it('waits for an evicted manager’s operations, and a manager made again reads after them', async () => {
    const store = new MemoryStore();
    const pool = new ContextPool({ store, maxManagers: 1 });
    const a = pool.get('a');
    const adds = [a.addMessage(say('1')), a.addMessage(say('2')), a.addMessage(say('3'))];
    pool.get('b'); // evicts a with its adds queued
    const again = pool.get('a'); // evicts b; loads a once the first a is closed
    await Promise.all(adds);
    expect((await again.getMessages()).map((m) => (m as { content: string }).content)).toEqual([
      '1',
      '2',
      '3',
    ]);
    await pool.close();
  });

  it('a conversation loaded again after eviction gives the same view', async () => {
    const messages = longSessionMessages(400, 'openai', 7);
    const options = { model: 'gpt-4o', maxTokens: 6_000 };
    const pool = new ContextPool({ store: new FileStore(dir), maxManagers: 1, options });
    const a = pool.get('long');
    await a.setMessages(messages);
    const view = await a.getMessagesForRequest();
    expect(view.length).toBeLessThan(messages.length);
    pool.get('other');
    await pool.trim();
    const again = pool.get('long');
    expect(again).not.toBe(a);
    expect(await again.getMessages()).toEqual(messages);
    expect(await again.getMessagesForRequest()).toEqual(view);
    await pool.close();
  });

  it('closes the least recently used beyond maxBytes, never the most recently used', async () => {
    const text = 'x'.repeat(1_000);
    const pool = new ContextPool({ store: new MemoryStore(), maxBytes: 2_500 });
    await pool.get('a').addMessage(say(text));
    await pool.get('b').addMessage(say(text));
    await pool.trim();
    expect(pool.conversations()).toEqual(['a', 'b']);
    expect(pool.bytes).toBeGreaterThan(2_000);
    expect(pool.bytes).toBeLessThan(2_500);
    await pool.get('c').addMessage(say(text));
    await pool.trim();
    expect(pool.conversations()).toEqual(['b', 'c']);
    // One conversation larger than the cap stays, being the one in use.
    await pool.get('big').addMessage(say('y'.repeat(5_000)));
    await pool.trim();
    expect(pool.conversations()).toEqual(['big']);
    expect(pool.bytes).toBeGreaterThan(5_000);
    await pool.close();
  });

  it('measures appends incrementally and a replaced history whole', async () => {
    const pool = new ContextPool({ store: new MemoryStore(), maxBytes: 1_000_000 });
    const m = pool.get('a');
    await m.addMessage(say('a'.repeat(100)));
    await pool.trim();
    const one = pool.bytes;
    await m.addMessage(say('b'.repeat(100)));
    await pool.trim();
    expect(pool.bytes).toBe(2 * one);
    await m.setMessages([say('c'.repeat(10))], { replace: true });
    await pool.trim();
    expect(pool.bytes).toBe(JSON.stringify((await m.getMessages())[0]).length);
  });

  it('forwards the store’s kind, search and watch, and release leaves the store open', async () => {
    const seen: ConversationStore[] = [];
    const store = new CountingStore();
    const pool = new ContextPool({
      store,
      create: (conversationId, s) => {
        seen.push(s);
        return new ContextManager({ store: s, conversationId, model: 'gpt-4o' });
      },
    });
    const m = pool.get('a');
    await m.addMessage(say('hello'));
    expect(seen).toHaveLength(1);
    expect(seen[0]!.kind).toBe('memory');
    const shared: ConversationStore = store;
    expect(seen[0]!.search === undefined).toBe(shared.search === undefined);
    expect(seen[0]!.watch === undefined).toBe(shared.watch === undefined);
    await pool.release('a');
    expect(pool.has('a')).toBe(false);
    expect(store.closes).toBe(0);
    expect(await pool.get('a').getMessages()).toHaveLength(1);
    await pool.close();
    expect(() => pool.get('a')).toThrow(StoreError);
  });

  it('passes search (with its filter) and watch to the shared store', async () => {
    const calls: unknown[][] = [];
    const store = new MemoryStore() as MemoryStore & {
      search: StoreSearch;
      watch: ConversationStore['watch'];
    };
    store.search = {
      find: async (...args) => {
        calls.push(['find', ...args]);
        return { hits: [], indexed: 0, head: 0 };
      },
      catchUp: async (id) => {
        calls.push(['catchUp', id]);
        return 0;
      },
      rebuild: async (id) => {
        calls.push(['rebuild', id]);
        return 0;
      },
    };
    store.watch = (id) => {
      calls.push(['watch', id]);
      return { live: true, close: () => calls.push(['unwatch', id]) };
    };
    let handle: ConversationStore | undefined;
    const pool = new ContextPool({
      store,
      create: (conversationId, s) => {
        handle = s;
        return new ContextManager({ store: s, conversationId });
      },
    });
    pool.get('a');
    const within = { fromSeq: 0, toSeq: 3, seqs: [1, 2] };
    await handle!.search!.find('a', ['word'], 5, within);
    await handle!.search!.catchUp('a');
    await handle!.search!.rebuild('a');
    const watch = handle!.watch!('a', () => undefined);
    expect(watch.live).toBe(true);
    watch.close();
    expect(calls).toEqual([
      ['find', 'a', ['word'], 5, within],
      ['catchUp', 'a'],
      ['rebuild', 'a'],
      ['watch', 'a'],
      ['unwatch', 'a'],
    ]);
    await pool.close();
  });

  it('refuses a create that makes the manager of another conversation', () => {
    const pool = new ContextPool({
      store: new MemoryStore(),
      create: (_id, store) => new ContextManager({ store, conversationId: 'elsewhere' }),
    });
    expect(() => pool.get('a')).toThrow(/create/);
  });
});
