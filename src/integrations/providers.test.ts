import { describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../errors.js';
import { toAnthropicRequest } from '../formats/anthropic/request.js';
import { ContextManager } from '../manager.js';
import { createCalibration } from '../measure/calibration.js';
import { addAnthropicResponse, addOpenAIResponse } from './providers.js';

/** Shaped as `openai.chat.completions.create()` returns it (openai v6). */
function chatCompletion(message: Record<string, unknown>, promptTokens: number) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-4o-2024-08-06',
    choices: [{ index: 0, message, logprobs: null, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: 9,
      total_tokens: promptTokens + 9,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
    service_tier: 'default',
    system_fingerprint: 'fp_1',
  };
}

/** Shaped as `anthropic.messages.create()` returns it. */
function anthropicMessage(content: unknown[], inputTokens: number) {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content,
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: {
      input_tokens: inputTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 20,
      output_tokens: 15,
    },
  };
}

describe('addOpenAIResponse', () => {
  it('adds the reply and records the billed usage against the request that produced it', async () => {
    const calibration = createCalibration();
    const manager = new ContextManager({ model: 'gpt-4o', calibration });
    await manager.addMessage({ role: 'system', content: 'You are terse.' });
    await manager.addMessage({ role: 'user', content: 'What is 2 + 2?' });
    await manager.getMessagesForRequest();
    const message = {
      role: 'assistant',
      content: null,
      refusal: null,
      annotations: [],
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":2}' } }],
    };
    const added = await addOpenAIResponse(manager, chatCompletion(message, 40));
    expect(added).toEqual(message);
    const history = await manager.getMessages();
    expect(history[2]).toEqual(message);
    expect(calibration.snapshot()['gpt-4o']?.samples).toBe(1);
    await manager.addMessage({ role: 'tool', tool_call_id: 'call_1', content: '4' });
    // The reply is sent back with the fields a request message takes (`annotations` is a
    // response field only: it stays in storage; issue 23, item 7), and the view is valid.
    const view = await manager.getMessagesForRequest();
    const { annotations: _, ...sent } = message;
    expect(view[2]).toEqual(sent);
  });

  it('stores an empty reply as empty text, and refuses a response without a message', async () => {
    const manager = new ContextManager({ model: 'gpt-4o', calibration: false });
    await manager.addMessage({ role: 'user', content: 'hi' });
    const added = await addOpenAIResponse(manager, {
      choices: [{ message: { role: 'assistant', content: null, refusal: null } }],
    });
    expect(added.content).toBe('');
    await expect(addOpenAIResponse(manager, { output: [] })).rejects.toThrow(InvalidMessageError);
    expect(await manager.getMessages()).toHaveLength(2);
  });
});

describe('addAnthropicResponse', () => {
  it('adds the content as an assistant message and records usage with the cache counted', async () => {
    const calibration = createCalibration();
    const manager = new ContextManager({ model: 'claude-sonnet-4-5', calibration });
    await manager.addMessage({ role: 'system', content: 'You are terse.' });
    await manager.addMessage({ role: 'user', content: 'Weather in Oslo?' });
    await manager.getMessagesForRequest();
    const content = [
      { type: 'text', text: 'Let me check.', citations: null },
      { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo' } },
    ];
    const added = await addAnthropicResponse(manager, anthropicMessage(content, 30));
    expect(added).toEqual({ role: 'assistant', content });
    expect(calibration.snapshot()['claude-sonnet-4-5']?.samples).toBe(1);
    await manager.addMessage({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'cold' }],
    });
    const { system, messages } = toAnthropicRequest(await manager.getMessagesForRequest());
    expect(system).toBe('You are terse.');
    expect(messages[1]).toEqual({ role: 'assistant', content });
  });

  it('refuses a response without content', async () => {
    const manager = new ContextManager();
    await expect(addAnthropicResponse(manager, { id: 'msg_1' })).rejects.toThrow(InvalidMessageError);
  });
});

// Issue 34: one call adds any provider's reply; the API is told by the fields each documents.
describe('addResponse', () => {
  it('adds each API reply as its own helper does, and refuses what is no response', async () => {
    const { addResponse } = await import('./providers.js');
    const { ContextManager } = await import('../manager.js');
    const cases: Array<{ response: unknown; added: unknown[] }> = [
      {
        response: {
          choices: [{ message: { role: 'assistant', content: 'hi' } }],
          usage: { prompt_tokens: 12, completion_tokens: 1 },
        },
        added: [{ role: 'assistant', content: 'hi' }],
      },
      {
        response: {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'text', text: 'hi' }],
          usage: { input_tokens: 12, output_tokens: 1 },
        },
        added: [{ role: 'assistant', content: [{ type: 'text', text: 'hi' }] }],
      },
      {
        response: {
          candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] } }],
          usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 1 },
        },
        added: [{ role: 'model', parts: [{ text: 'hi' }] }],
      },
      {
        response: {
          output: { message: { role: 'assistant', content: [{ text: 'hi' }] } },
          usage: { inputTokens: 12, outputTokens: 1, totalTokens: 13 },
        },
        added: [{ role: 'assistant', content: [{ text: 'hi' }] }],
      },
      {
        response: {
          object: 'response',
          output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi' }] }],
          usage: { input_tokens: 12, output_tokens: 1, input_tokens_details: { cached_tokens: 0 } },
        },
        added: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi' }] }],
      },
    ];
    for (const { response, added } of cases) {
      const ctx = new ContextManager({ model: 'gpt-4o' });
      await ctx.addMessage(
        'contents' in (response as object) || 'candidates' in (response as object)
          ? { role: 'user', parts: [{ text: 'hello' }] }
          : { role: 'user', content: 'hello' },
      );
      await ctx.getMessagesForRequest();
      expect(await addResponse(ctx, response)).toEqual(added);
      expect((await ctx.getMessages()).slice(1)).toEqual(added);
    }
    const ctx = new ContextManager();
    await expect(addResponse(ctx, { text: 'hi' })).rejects.toThrow(/not a provider response/);
    await expect(addResponse(ctx, null)).rejects.toThrow(/not a provider response/);
    expect(await ctx.getMessages()).toEqual([]);
  });
});
