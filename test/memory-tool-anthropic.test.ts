/**
 * The memory tool against the fake Messages API, which checks the tool's shape as the memory
 * tool's documentation gives it (https://platform.claude.com/docs/en/agents-and-tools/tool-use/memory-tool):
 * a conversation where the model uses the memory tool, answered by the handler on a store and
 * fitted by a `ContextManager`, is accepted with the native tool definition; a wrong definition
 * is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContextManager } from '../src/manager.js';
import { anthropicMemoryTool, memoryTool } from '../src/memory/memory-tool.js';
import type { Message } from '../src/messages/types.js';
import { MemoryStore } from '../src/stores/memory.js';
import {
  type FakeAnthropicServer,
  messagesBody,
  startFakeAnthropic,
} from './support/fake-anthropic-server.js';

let server: FakeAnthropicServer;
beforeAll(async () => {
  server = await startFakeAnthropic();
});
afterAll(async () => {
  await server.close();
});

async function post(body: Record<string, unknown>): Promise<number> {
  const res = await fetch(`${server.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.status;
}

describe('memory tool with the fake Messages API', () => {
  it('a conversation using the memory tool, fitted, is accepted with the native definition', async () => {
    const store = new MemoryStore();
    const memory = memoryTool({ store, scope: { conversation: 'run-1' } });
    const ctx = new ContextManager({ model: 'claude-sonnet-4-5', store, conversationId: 'run-1' });
    await ctx.addMessage({
      role: 'user',
      content: 'Remember that the deploy key lives in vault path ops/deploy.',
    });
    const commands = [
      { command: 'view', path: '/memories' },
      { command: 'create', path: '/memories/ops.md', file_text: 'deploy key: vault ops/deploy\n' },
      { command: 'str_replace', path: '/memories/ops.md', old_str: 'nothing', new_str: 'x' },
      { command: 'view', path: '/memories/../etc/passwd' },
    ];
    for (const [i, input] of commands.entries()) {
      const call = { type: 'tool_use', id: `toolu_${i}`, name: 'memory', input };
      await ctx.addMessage({
        role: 'assistant',
        content: [{ type: 'text', text: 'Checking memory.' }, call],
      } as Message);
      const result = await memory.handleToolCall(call);
      expect(result).not.toBeNull();
      await ctx.addMessage(result as Message);
    }
    await ctx.addMessage({ role: 'assistant', content: 'Saved.' });
    await ctx.addMessage({ role: 'user', content: 'Where is the deploy key?' });
    const view = await ctx.getMessagesForRequest({ tokenBudget: 2000 });
    expect(await post(messagesBody(view, { tools: [memory.definition('anthropic')] }))).toBe(200);
    expect(memory.definition('anthropic')).toEqual({ type: 'memory_20250818', name: 'memory' });
    expect(await memory.files()).toEqual({ '/memories/ops.md': 'deploy key: vault ops/deploy\n' });
  });

  it.each([
    ['another name', { type: 'memory_20250818', name: 'notes' }],
    ['a schema added', { ...anthropicMemoryTool, input_schema: { type: 'object' } }],
    ['a function tool without a schema', { name: 'memory', description: 'x' }],
  ])('refuses the memory tool with %s', async (_, tool) => {
    const body = messagesBody([{ role: 'user', content: 'hi' }], { tools: [tool] });
    expect(await post(body)).toBe(400);
  });
});
