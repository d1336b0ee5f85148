import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContextManager } from './manager.js';
import { FileStore } from './stores/file.js';
import { MemoryStore } from './stores/memory.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ck-manager-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const words = (n: number, seed = 0) =>
  Array.from({ length: n }, (_, i) => `w${(i * 13 + seed) % 101}`).join(' ');

async function session(ctx: ContextManager, rounds: number): Promise<void> {
  await ctx.addMessage({ role: 'system', content: 'You are an agent.' });
  for (let r = 0; r < rounds; r++) {
    await ctx.addMessage({ role: 'user', content: `step ${r}: ${words(80, r)}` });
    await ctx.addMessage({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `c${r}`, type: 'function', function: { name: 'grep', arguments: `{"q":"${r}"}` } }],
    });
    await ctx.addMessage({ role: 'tool', tool_call_id: `c${r}`, content: words(200, r) });
    await ctx.addMessage({ role: 'assistant', content: `done ${r}` });
  }
}

describe('a manager with the file store', () => {
  it('resumes the stored history in a new manager (a restart)', async () => {
    const a = new ContextManager({ store: `file:${dir}`, conversationId: 'run/42 ünï', model: 'gpt-4o' });
    await session(a, 5);
    const before = await a.getMessages();
    await a.close();
    const b = new ContextManager({ store: `file:${dir}`, conversationId: 'run/42 ünï', model: 'gpt-4o' });
    expect(await b.getMessages()).toEqual(before);
    await b.addMessage({ role: 'user', content: 'and now?' });
    expect(await b.getMessages()).toHaveLength(before.length + 1);
    await b.close();
  });

  it('is flushed to disk before addMessage resolves', async () => {
    const ctx = new ContextManager({ store: new FileStore(dir), conversationId: 'c1' });
    await ctx.addMessage({ role: 'user', content: 'durable' });
    const files = await readdir(dir);
    const log = files.find((f) => f.endsWith('.jsonl'))!;
    expect(await readFile(join(dir, log), 'utf8')).toContain('durable');
    await ctx.close();
  });

  it('never writes ephemeral messages', async () => {
    const a = new ContextManager({ store: `file:${dir}`, conversationId: 'eph' });
    await a.addMessage({ role: 'user', content: 'keep me' });
    await a.addMessage({ role: 'system', content: 'now is 12:00' }, { ephemeral: true });
    expect(await a.getMessagesForRequest()).toHaveLength(2);
    await a.close();
    const b = new ContextManager({ store: `file:${dir}`, conversationId: 'eph' });
    expect(await b.getMessages()).toEqual([{ role: 'user', content: 'keep me' }]);
    await b.close();
  });

  it('after a resume, setMessages leaves the authoritative file alone unless told to replace', async () => {
    const a = new ContextManager({ store: `file:${dir}`, conversationId: 's' });
    await a.addMessage({ role: 'system', content: 'sys' });
    await a.addMessage({ role: 'user', content: 'hello' });
    await a.close();
    const b = new ContextManager({ store: `file:${dir}`, conversationId: 's' });
    const warnings: string[] = [];
    b.on('context:warn', (w) => warnings.push(w.code));
    await b.setMessages([{ role: 'user', content: 'filtered transcript' }]);
    expect(await b.getMessages()).toHaveLength(2);
    expect(warnings).toEqual(['set_messages_ignored']);
    await b.setMessages([{ role: 'user', content: 'replacement' }], { replace: true });
    await b.close();
    const c = new ContextManager({ store: `file:${dir}`, conversationId: 's' });
    expect(await c.getMessages()).toEqual([{ role: 'user', content: 'replacement' }]);
    await c.close();
  });

  it('keeps the compaction plan in the store, so another process gets the same view', async () => {
    const a = new ContextManager({ store: `file:${dir}`, conversationId: 'plan', model: 'gpt-4o' });
    await session(a, 12);
    const view = await a.getMessagesForRequest({ tokenBudget: 2500 });
    expect(a.currentPlan()).not.toBeNull();
    await a.close();
    const b = new ContextManager({ store: `file:${dir}`, conversationId: 'plan', model: 'gpt-4o' });
    let compactions = 0;
    b.on('context:post_compact', () => compactions++);
    expect(await b.getMessagesForRequest({ tokenBudget: 2500 })).toEqual(view);
    expect(compactions).toBe(0);
    await b.close();
  });

  it('clear removes the stored conversation', async () => {
    const a = new ContextManager({ store: `file:${dir}`, conversationId: 'gone' });
    await a.addMessage({ role: 'user', content: 'x' });
    await a.clear();
    await a.close();
    const b = new ContextManager({ store: `file:${dir}`, conversationId: 'gone' });
    expect(await b.getMessages()).toEqual([]);
    await b.close();
  });
});

describe('two managers on one conversation', () => {
  it('interleaved writers store every message once, in one order both then see', async () => {
    const store = new MemoryStore();
    const a = new ContextManager({ store, conversationId: 'shared' });
    const b = new ContextManager({ store, conversationId: 'shared' });
    for (let i = 0; i < 10; i++) {
      await a.addMessage({ role: 'user', content: `a${i}` });
      await b.addMessage({ role: 'user', content: `b${i}` });
    }
    const stored = (await store.read('shared')).map((e) => e.message.content);
    expect(stored).toHaveLength(20);
    expect(new Set(stored).size).toBe(20);
    // b's stale head made it reload a's tail before appending: both hold the store's order.
    expect((await b.getMessages()).map((m) => m.content)).toEqual(stored);
  });
});

describe('a stored Responses conversation begun with a developer message', () => {
  // `addMessage` takes a developer message first as either OpenAI API's, then the Responses items
  // after it: found by the hostile property test through `conversations import`.
  const developer = { role: 'developer', content: 'Be brief.' };
  const reply = {
    type: 'message',
    role: 'assistant',
    content: [{ type: 'output_text', text: 'Hi.' }],
  };
  it('loads again in a new manager, and takes in such items appended by another writer', async () => {
    const store = new MemoryStore();
    const a = new ContextManager({ store, conversationId: 'dev' });
    await a.addMessage(developer);
    await a.addMessage({ role: 'user', content: 'Hello' });
    const b = new ContextManager({ store, conversationId: 'dev' });
    expect(await b.getMessages()).toHaveLength(2);
    await a.addMessage(reply);
    expect(await b.sync()).toBe(1);
    const c = new ContextManager({ store, conversationId: 'dev' });
    expect(await c.getMessages()).toEqual([developer, { role: 'user', content: 'Hello' }, reply]);
    expect(c.messageFormat).toBe('openai-responses');
    expect(b.messageFormat).toBe('openai-responses');
  });
});

describe('sync', () => {
  it('takes in what another writer appended, without a re-read per request', async () => {
    const store = new MemoryStore();
    const a = new ContextManager({ store, conversationId: 'x' });
    await a.addMessage({ role: 'user', content: 'one' });
    const b = new ContextManager({ store, conversationId: 'x' });
    await b.getMessages();
    await a.addMessage({ role: 'assistant', content: 'two' });
    expect(await b.getMessages()).toHaveLength(1);
    expect(await b.sync()).toBe(1);
    expect((await b.getMessages()).map((m) => m.content)).toEqual(['one', 'two']);
  });
});

describe('a torn last line after a crash', () => {
  it('is recovered on resume, with a context:warn', async () => {
    const { appendFile } = await import('node:fs/promises');
    const a = new ContextManager({ store: `file:${dir}`, conversationId: 'torn' });
    await a.addMessage({ role: 'user', content: 'first' });
    await a.addMessage({ role: 'assistant', content: 'second' });
    await a.close();
    const log = (await readdir(dir)).find((f) => f.endsWith('.jsonl'))!;
    await appendFile(join(dir, log), '{"seq":2,"metadata":{"timest');
    const b = new ContextManager({ store: `file:${dir}`, conversationId: 'torn' });
    const warnings: string[] = [];
    b.on('context:warn', (w) => warnings.push(w.code));
    expect((await b.getMessages()).map((m) => m.content)).toEqual(['first', 'second']);
    await b.addMessage({ role: 'user', content: 'third' });
    expect(warnings).toContain('store_warning');
    await b.close();
    const c = new ContextManager({ store: `file:${dir}`, conversationId: 'torn' });
    expect((await c.getMessages()).map((m) => m.content)).toEqual(['first', 'second', 'third']);
    await c.close();
  });
});
