/**
 * Seed 002's three example tests (the context managers guide, "Testing"), in TypeScript against
 * `mount()` and `ContextManager`, with the seed's own parameters.
 */
import { describe, expect, it } from 'vitest';
import type { Message } from '../src/messages/types.js';
import { mount } from '../src/mount.js';

/** `MyContextManager(max_tokens=…, compaction_threshold=…)` as the seed's `mount()` builds it. */
const myContextManager = (config: { max_tokens: number; compaction_threshold?: number }) =>
  mount({ mount: (_point: string, _module: unknown, _options?: { name?: string }) => undefined }, config);

describe("seed 002's example tests", () => {
  it('test_context_manager', async () => {
    const context = await myContextManager({ max_tokens: 1000 });
    await context.addMessage({ role: 'user', content: 'Hello' });
    await context.addMessage({ role: 'assistant', content: 'Hi there!' });
    const messages = await context.getMessagesForRequest();
    expect(messages).toHaveLength(2);
    expect((messages[0] as { role: string }).role).toBe('user');
    expect(await context.getMessages()).toHaveLength(2);
    await context.clear();
    expect(await context.getMessages()).toHaveLength(0);
  });

  it('test_compaction_preserves_tool_pairs', async () => {
    const context = await myContextManager({ max_tokens: 100, compaction_threshold: 0.5 });
    await context.addMessage({ role: 'user', content: 'Read file.txt' });
    await context.addMessage({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_123',
          type: 'function',
          function: { name: 'read_file', arguments: '{"path":"file.txt"}' },
        },
      ],
    });
    await context.addMessage({ role: 'tool', tool_call_id: 'call_123', content: 'File contents...' });
    for (let i = 0; i < 50; i++) await context.addMessage({ role: 'user', content: `Message ${i}` });

    const messages = (await context.getMessagesForRequest()) as Message[];
    const toolUseIds = new Set<string>();
    const toolResultIds = new Set<string>();
    for (const msg of messages as Array<Record<string, unknown>>) {
      for (const tc of (msg.tool_calls as Array<{ id: string }> | undefined) ?? []) toolUseIds.add(tc.id);
      if (msg.role === 'tool') toolResultIds.add(msg.tool_call_id as string);
    }
    expect(
      [...toolResultIds].every((id) => toolUseIds.has(id)),
      'Orphaned tool results found!',
    ).toBe(true);
    // What the seed leaves implicit: it did compact, to within the budget, and kept the newest message.
    expect(context.usage()?.tokens).toBeLessThanOrEqual(100);
    expect(messages.length).toBeLessThan(53);
    expect(messages.at(-1)).toEqual({ role: 'user', content: 'Message 49' });
    expect(await context.getMessages()).toHaveLength(53);
  });

  it('test_session_resume', async () => {
    const context = await myContextManager({ max_tokens: 1000 });
    const savedMessages = [
      { role: 'user', content: 'Previous conversation' },
      { role: 'assistant', content: 'Previous response' },
    ];
    await context.setMessages(savedMessages);
    const messages = (await context.getMessages()) as Array<{ content: string }>;
    expect(messages).toHaveLength(2);
    expect(messages[0]!.content).toBe('Previous conversation');
  });
});
