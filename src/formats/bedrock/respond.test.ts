import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeBedrockServer, startFakeBedrock } from '../../../test/support/fake-bedrock-server.js';
import { ContextManager } from '../../manager.js';
import type { Message } from '../../messages/types.js';
import { toBedrockRequest } from './request.js';
import { addBedrockResponse } from './respond.js';

describe('a Converse agent loop through the manager', () => {
  let server: FakeBedrockServer;
  beforeAll(async () => {
    server = await startFakeBedrock();
  });
  afterAll(() => server.close());

  it('sends each view to the fake Converse API and adds its replies with their usage', async () => {
    const model = 'global.anthropic.claude-sonnet-4-5-20250929-v1:0';
    const ctx = new ContextManager({ model });
    await ctx.addMessage({
      role: 'system',
      content: [{ text: 'You are careful. '.repeat(80) }, { cachePoint: { type: 'default' } }],
    } as unknown as Message);
    const usages: number[] = [];
    for (let turn = 0; turn < 3; turn++) {
      await ctx.addMessage({ role: 'user', content: [{ text: `Question ${turn}` }] } as unknown as Message);
      const view = await ctx.getMessagesForRequest();
      const res = await fetch(`${server.url}/model/${encodeURIComponent(model)}/converse`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(toBedrockRequest(view)),
      });
      expect(res.status).toBe(200);
      const reply = (await res.json()) as { usage: { cacheReadInputTokens: number } };
      usages.push(reply.usage.cacheReadInputTokens);
      const added = await addBedrockResponse(ctx, reply);
      expect(added).toEqual({ role: 'assistant', content: [{ text: `Reply ${turn + 1}.` }] });
    }
    expect(ctx.messageFormat).toBe('bedrock');
    expect((await ctx.getMessages()).length).toBe(7);
    // The system prompt's cache point: written on the first request, read on the next ones.
    expect(usages[0]).toBe(0);
    expect(usages[1]).toBeGreaterThan(0);
  });
});
