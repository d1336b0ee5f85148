import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../../errors.js';
import { ContextManager } from '../../manager.js';
import { FileStore } from '../../stores/file.js';
import { MemoryStore } from '../../stores/memory.js';
import { fromBaseMessages } from './base-messages.js';
import { ContextkitChatMessageHistory } from './chat-message-history.js';

function messages(): BaseMessage[] {
  return [
    new SystemMessage('You are terse.'),
    new HumanMessage({
      id: 'h1',
      content: [
        { type: 'text', text: 'What is in this image?' },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
      ],
    }),
    new AIMessage({
      id: 'a1',
      content: 'Checking.',
      tool_calls: [
        { id: 'call_1', name: 'vision', args: { url: 'https://example.com/cat.png' }, type: 'tool_call' },
      ],
      additional_kwargs: { reasoning: 'look first' },
      response_metadata: { model_name: 'gpt-4o', finish_reason: 'tool_calls' },
      usage_metadata: { input_tokens: 12, output_tokens: 5, total_tokens: 17 },
    }),
    new ToolMessage({
      id: 't1',
      tool_call_id: 'call_1',
      name: 'vision',
      content: 'a cat',
      status: 'success',
    }),
    new AIMessage({ id: 'a2', content: 'A cat.' }),
  ];
}

/** What identifies a message for the round trip: its serialized form. */
function serialized(list: readonly BaseMessage[]): unknown[] {
  return list.map((m) => JSON.parse(JSON.stringify(m.toDict())) as unknown);
}

describe('ContextkitChatMessageHistory', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('round-trips messages through a memory store and a file store, ids and tool calls included', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ck-lc-'));
    dirs.push(dir);
    for (const store of [new MemoryStore(), new FileStore(dir)]) {
      const history = new ContextkitChatMessageHistory({ store, conversationId: 'chat' });
      const given = messages();
      await history.addMessages(given.slice(0, 3));
      await history.addMessage(given[3]!);
      await history.addAIMessage('A cat.');
      const again = new ContextkitChatMessageHistory({ store, conversationId: 'chat' });
      const read = await again.getMessages();
      expect(serialized(read.slice(0, 4))).toEqual(serialized(given.slice(0, 4)));
      expect(read[2]).toBeInstanceOf(AIMessage);
      expect((read[2] as AIMessage).tool_calls).toEqual((given[2] as AIMessage).tool_calls);
      expect((read[3] as ToolMessage).tool_call_id).toBe('call_1');
      expect(read[4]?.content).toBe('A cat.');
      await again.clear();
      expect(await history.getMessages()).toEqual([]);
    }
  });

  it('shares its conversation with a ContextManager on the same store', async () => {
    const store = new MemoryStore();
    const history = new ContextkitChatMessageHistory({ store, conversationId: 'shared' });
    await history.addMessages(messages());
    const manager = new ContextManager({ store, conversationId: 'shared' });
    expect(await manager.getMessages()).toEqual(fromBaseMessages(messages()));
    // What the manager adds, the history reads as LangChain messages.
    await manager.addMessage({ role: 'user', content: 'And a dog?' });
    await manager.addMessage({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_2', type: 'function', function: { name: 'vision', arguments: '{"q":"dog"}' } },
      ],
    });
    await manager.addMessage({ role: 'tool', tool_call_id: 'call_2', content: 'no dog' });
    const read = await history.getMessages();
    expect(read).toHaveLength(8);
    expect(read[5]).toBeInstanceOf(HumanMessage);
    expect((read[6] as AIMessage).tool_calls).toEqual([
      { id: 'call_2', name: 'vision', args: { q: 'dog' }, type: 'tool_call' },
    ]);
    expect(read[7]).toBeInstanceOf(ToolMessage);
    expect((read[7] as ToolMessage).tool_call_id).toBe('call_2');
  });

  it('refuses at the door, storing nothing: a ToolMessage without its call id, numbers JSON changes, deep kwargs', async () => {
    const history = new ContextkitChatMessageHistory({ conversationId: 'door' });
    await history.addMessage(new HumanMessage('kept'));
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = { k: deep };
    const cases: Array<[BaseMessage, RegExp]> = [
      [new ToolMessage({ content: 'x', tool_call_id: '' }), /^messages\[1\]\.tool_call_id: /],
      [
        new HumanMessage({ content: 'x', additional_kwargs: { n: Number.NaN } }),
        /^messages\[1\]\.additional_kwargs\.n: NaN/,
      ],
      [
        new AIMessage({ content: 'x', response_metadata: { neg: -0 } }),
        /^messages\[1\]\.response_metadata\.neg: -0/,
      ],
      [
        new HumanMessage({ content: 'x', additional_kwargs: { deep } }),
        /^messages\[1\]\.additional_kwargs\.deep(\.k)+: nested more than/,
      ],
    ];
    for (const [message, pattern] of cases) {
      const error = await history.addMessages([new HumanMessage('ok'), message]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidMessageError);
      expect((error as Error).message).toMatch(pattern);
    }
    expect((await history.getMessages()).map((m) => m.content)).toEqual(['kept']);
    // The conversation stays readable by a manager.
    const manager = new ContextManager({
      store: (history as unknown as { store: MemoryStore }).store,
      conversationId: 'door',
    });
    expect(await manager.getMessagesForRequest()).toHaveLength(1);
  });

  it('refuses an empty session id', () => {
    expect(() => new ContextkitChatMessageHistory({ conversationId: '' })).toThrow(/conversationId/);
  });
});
