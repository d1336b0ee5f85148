import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ContextManager } from './manager.js';
import type { Message } from './messages/types.js';
import { anthropicRecallTool, openAIRecallTool } from './recall/recall-tool.js';
import { openSqliteStore } from './stores/sqlite.js';
import { validateRequest } from './wire/validate-request.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ck-recall-'));
  dirs.push(dir);
  return join(dir, 'store.db');
}

const CHAT = [
  'Hi! I just got back from Lisbon.',
  'How was it?',
  'Great. We booked the 9:40 train to Porto for Friday, seat 42A.',
  'Nice. Did you try the pastries?',
  'Yes, pastel de nata every morning.',
  'Sounds lovely.',
];

async function chatManager(
  options: ConstructorParameters<typeof ContextManager>[0] = {},
): Promise<ContextManager> {
  const ctx = new ContextManager({ model: 'gpt-4o', ...options });
  for (const [i, content] of CHAT.entries())
    await ctx.addMessage({ role: i % 2 ? 'assistant' : 'user', content });
  return ctx;
}

describe('ContextManager.recall', () => {
  it('finds what was said anywhere in the history, with its neighbours, within the budget', async () => {
    const ctx = await chatManager();
    const [hit] = await ctx.recall('which train to Porto?');
    expect(hit).toMatchObject({ seq: 2, role: 'user' });
    expect(hit?.text).toContain('9:40 train to Porto');
    expect(hit?.text).toContain('#1 assistant: How was it?');
    expect(await ctx.recall('')).toEqual([]);
    const small = await ctx.recall('train pastries', { maxTokens: 30 });
    expect(small.reduce((n, h) => n + h.text.length, 0)).toBeGreaterThan(0);
  });

  it('keeps up with messages added after the first recall, and with setMessages and clear', async () => {
    const ctx = await chatManager({ recall: true });
    expect(await ctx.recall('museum')).toEqual([]);
    await ctx.addMessage({ role: 'user', content: 'Tomorrow we visit the tile museum.' });
    expect((await ctx.recall('museum'))[0]?.seq).toBe(6);
    await ctx.setMessages([{ role: 'user', content: 'A new story about a museum of clocks.' }]);
    expect((await ctx.recall('museum')).map((h) => h.seq)).toEqual([0]);
    expect(await ctx.recall('Porto')).toEqual([]);
    await ctx.clear();
    expect(await ctx.recall('museum')).toEqual([]);
  });

  it('changes nothing stored', async () => {
    const ctx = await chatManager();
    const before = JSON.stringify(await ctx.getEntries());
    await ctx.recall('Lisbon train');
    await ctx.handleToolCall({
      id: 'c',
      type: 'function',
      function: { name: 'recall', arguments: '{"query":"x"}' },
    });
    expect(JSON.stringify(await ctx.getEntries())).toBe(before);
  });
});

describe('ContextManager.handleToolCall', () => {
  it('answers an OpenAI recall call with a tool message the API accepts', async () => {
    const ctx = await chatManager();
    const call = {
      id: 'call_9',
      type: 'function' as const,
      function: { name: 'recall', arguments: '{"query":"seat Porto"}' },
    };
    const result = await ctx.handleToolCall(call);
    expect(result).toMatchObject({ role: 'tool', tool_call_id: 'call_9' });
    expect(String(result?.content)).toContain('seat 42A');
    const request: Message[] = [
      { role: 'user', content: 'Which seat did I book?' },
      { role: 'assistant', content: null, tool_calls: [call] },
      result as Message,
    ];
    expect(validateRequest(request, 'openai').valid).toBe(true);
  });

  it('answers an Anthropic tool_use block with a tool_result the API accepts', async () => {
    const ctx = new ContextManager({ model: 'claude-sonnet-4-5' });
    await ctx.addMessage({
      role: 'user',
      content: [{ type: 'text', text: 'The wifi password is tangerine-77.' }],
    });
    await ctx.addMessage({ role: 'assistant', content: [{ type: 'text', text: 'Noted.' }] });
    const block = {
      type: 'tool_use' as const,
      id: 'toolu_1',
      name: 'recall',
      input: { query: 'wifi password' },
    };
    const result = await ctx.handleToolCall(block);
    expect(result).toMatchObject({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1' }],
    });
    expect(JSON.stringify(result)).toContain('tangerine-77');
    const request: Message[] = [
      { role: 'user', content: 'What is the wifi password?' },
      { role: 'assistant', content: [block] },
      result as Message,
    ];
    expect(validateRequest(request, 'anthropic').valid).toBe(true);
  });

  it('answers a Responses function_call item with a function_call_output item the API accepts', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.addMessage({ type: 'message', role: 'user', content: 'The locker code is 5521.' } as Message);
    await ctx.addMessage({ type: 'message', role: 'assistant', content: 'Noted.' } as Message);
    const call = {
      type: 'function_call',
      call_id: 'call_r1',
      name: 'recall',
      arguments: '{"query":"locker code"}',
    };
    const result = await ctx.handleToolCall(call);
    expect(result).toMatchObject({ type: 'function_call_output', call_id: 'call_r1' });
    expect(JSON.stringify(result)).toContain('5521');
    const request = [
      { type: 'message', role: 'user', content: 'What is the locker code?' },
      call,
      result,
    ] as unknown as Message[];
    expect(validateRequest(request, 'openai-responses').valid).toBe(true);
  });

  it('gives null for another tool, and tells the model what is wrong with bad arguments', async () => {
    const ctx = await chatManager();
    expect(
      await ctx.handleToolCall({ id: 'c', type: 'function', function: { name: 'weather', arguments: '{}' } }),
    ).toBeNull();
    expect(await ctx.handleToolCall({ type: 'tool_use', id: 't', name: 'weather', input: {} })).toBeNull();
    expect(await ctx.handleToolCall('nonsense')).toBeNull();
    const bad = await ctx.handleToolCall({
      id: 'c',
      type: 'function',
      function: { name: 'recall', arguments: '{not json' },
    });
    expect(bad).toMatchObject({ role: 'tool', tool_call_id: 'c' });
    expect(String(bad?.content)).toMatch(/not valid JSON/);
    const empty = await ctx.handleToolCall({
      id: 'c',
      type: 'function',
      function: { name: 'recall', arguments: '{"query":"zzz"}' },
    });
    expect(String(empty?.content)).toMatch(/Nothing in this conversation matches "zzz"/);
  });

  it('exports the tool in both formats', () => {
    expect(openAIRecallTool).toMatchObject({ type: 'function', function: { name: 'recall' } });
    expect(anthropicRecallTool).toMatchObject({ name: 'recall', input_schema: { required: ['query'] } });
  });
});

describe('ContextManager.recall on a store that searches (SQLite)', () => {
  it('searches the store’s index, maps store seqs past ephemeral messages, and sees other writers', async () => {
    const path = tempDb();
    const store = await openSqliteStore(path);
    const ctx = new ContextManager({ model: 'gpt-4o', store, conversationId: 'trip' });
    await ctx.addMessage({ role: 'system', content: 'Be brief.' });
    await ctx.addMessage({ role: 'user', content: 'a note only this process sees' }, { ephemeral: true });
    for (const [i, content] of CHAT.entries())
      await ctx.addMessage({ role: i % 2 ? 'assistant' : 'user', content });
    const [hit] = await ctx.recall('seat on the Porto train');
    expect(hit?.seq).toBe(4);
    expect(hit?.text).toContain('#4 user: Great. We booked');
    const other = new ContextManager({
      model: 'gpt-4o',
      store: await openSqliteStore(path),
      conversationId: 'trip',
    });
    await other.addMessage({ role: 'user', content: 'Change of plan: the ferry to Madeira.' });
    await ctx.sync();
    expect((await ctx.recall('Madeira ferry'))[0]?.text).toContain('ferry to Madeira');
    await other.close();
    await ctx.close();
  });

  it('rebuilds a broken store index with a warning and still answers', async () => {
    const path = tempDb();
    const ctx = await chatManager({ store: await openSqliteStore(path), conversationId: 'c' });
    const raw = new Database(path);
    raw.exec('DROP TABLE entries_fts');
    raw.close();
    const warnings: string[] = [];
    ctx.on('context:warn', ({ code }) => warnings.push(code));
    expect((await ctx.recall('pastries'))[0]?.seq).toBe(3);
    expect(warnings).toEqual(['recall_index_rebuilt']);
    expect((await ctx.recall('Lisbon'))[0]?.seq).toBe(0);
    await ctx.close();
  });
});

describe('recall does not find itself (issue 23, item 9)', () => {
  it.each(['memory', 'sqlite'] as const)(
    'leaves recall calls and their results out of what it searches (%s store)',
    async (kind) => {
      const ctx = await chatManager(
        kind === 'sqlite' ? { recall: true, store: `sqlite:${tempDb()}` } : { recall: true },
      );
      await ctx.addMessage({ role: 'user', content: 'Which seat did we book to Porto again?' });
      await ctx.addMessage({
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'r1',
            type: 'function',
            function: { name: 'recall', arguments: '{"query":"seat booked Porto train"}' },
          },
        ],
      });
      const hits = await ctx.recall('seat booked Porto train');
      expect(hits.map((h) => h.seq)).not.toContain(7);
      expect(hits.some((h) => h.text.includes('call recall'))).toBe(false);
      expect(hits.map((h) => h.seq)).toContain(2);
      // The answer the tool gave is stored as a result: it is not searched either.
      const result = await ctx.handleToolCall({
        id: 'r1',
        type: 'function',
        function: { name: 'recall', arguments: '{"query":"seat booked Porto train"}' },
      });
      expect(JSON.stringify(result)).toContain('seat 42A');
      await ctx.addMessage(result);
      const again = await ctx.recall('seat booked Porto train');
      expect(again.map((h) => h.seq)).not.toContain(8);
      expect(again.some((h) => h.text.includes('from earlier in this conversation'))).toBe(false);
      await ctx.close();
    },
  );
});
