/**
 * Issue 20, items 5 to 8: inputs `addMessage` accepts whose views the provider refused. Each
 * view is repaired in the view only (the stored history stays as it came) and is checked by
 * `validateRequest` and by the independent reading of the provider's rules.
 */
import { describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../src/errors.js';
import { toGeminiRequest } from '../src/formats/gemini/request.js';
import { addGeminiResponse } from '../src/integrations/providers.js';
import { ContextManager } from '../src/manager.js';
import type { GeminiMessage } from '../src/messages/gemini-types.js';
import type { Message, MessageFormat } from '../src/messages/types.js';
import { sealReasoning } from './support/fake-responses-server.js';
import { providerProblems } from './support/provider-checks.js';

const MODEL: Record<MessageFormat, string> = {
  openai: 'gpt-4o',
  anthropic: 'claude-sonnet-4-5',
  'openai-responses': 'gpt-4o',
  gemini: 'gemini-2.5-flash',
  bedrock: 'claude-sonnet-4-5',
};

/** The view of `messages` at a generous and a tight budget, each checked; returns the generous one. */
async function checkedView(messages: readonly unknown[], format: MessageFormat): Promise<Message[]> {
  const ctx = new ContextManager({ model: MODEL[format] });
  for (const m of messages) await ctx.addMessage(m as Message);
  expect(ctx.messageFormat).toBe(format);
  const view = await ctx.getMessagesForRequest({ tokenBudget: 100_000 });
  expect(providerProblems(view, format)).toEqual([]);
  expect(providerProblems(await ctx.getMessagesForRequest({ tokenBudget: 400 }), format)).toEqual([]);
  expect(await ctx.getMessages()).toEqual(messages);
  return view;
}

const texts = (view: readonly Message[]): string => JSON.stringify(view);

describe('5. assistant narration between a call and its result', () => {
  it('Chat Completions: moves after the result, and the stored result is sent', async () => {
    const view = await checkedView(
      [
        { role: 'user', content: 'Check the build' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ci', arguments: '{}' } }],
        },
        { role: 'assistant', content: 'Running the build now…' },
        { role: 'tool', tool_call_id: 'c1', content: 'build 812 green' },
        { role: 'assistant', content: 'The build is green.' },
      ],
      'openai',
    );
    expect(view.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'assistant']);
    expect(texts(view)).toContain('build 812 green');
    expect(texts(view)).not.toContain('no result was recorded');
  });

  it('Anthropic: moves after the tool_result message', async () => {
    const view = await checkedView(
      [
        { role: 'user', content: 'Check the build' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'ci', input: {} }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Running the build now…' }] },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'build 812 green' }],
        },
        { role: 'assistant', content: 'The build is green.' },
      ],
      'anthropic',
    );
    expect(texts(view)).toContain('build 812 green');
    expect(texts(view)).not.toContain('no result was recorded');
    expect(texts(view).indexOf('build 812 green')).toBeLessThan(texts(view).indexOf('Running the build'));
  });

  it('Responses: the message (with the reasoning before it) moves after the output', async () => {
    const view = await checkedView(
      [
        { role: 'user', content: 'Check the build' },
        { type: 'function_call', call_id: 'c1', name: 'ci', arguments: '{}' },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: sealReasoning('rs_1', []) },
        {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Running the build now…' }],
        },
        { type: 'function_call_output', call_id: 'c1', output: 'build 812 green' },
      ],
      'openai-responses',
    );
    expect(view.map((m) => (m as { type?: string }).type ?? 'message')).toEqual([
      'message',
      'function_call',
      'function_call_output',
      'reasoning',
      'message',
    ]);
    expect(texts(view)).not.toContain('no result was recorded');
  });

  it('Gemini: a model text between the call and its response moves after the response', async () => {
    const view = await checkedView(
      [
        { role: 'user', parts: [{ text: 'Check the build' }] },
        { role: 'model', parts: [{ functionCall: { name: 'ci', args: {} } }] },
        { role: 'model', parts: [{ text: 'Running the build now…' }] },
        {
          role: 'user',
          parts: [{ functionResponse: { name: 'ci', response: { content: 'build 812 green' } } }],
        },
      ],
      'gemini',
    );
    expect(texts(view)).toContain('build 812 green');
    expect(texts(view)).not.toContain('no result was recorded');
  });

  it('a narration with no result after it stays where it was, and a later result still pairs', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.addMessage({ role: 'user', content: 'Check the build' });
    await ctx.addMessage({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ci', arguments: '{}' } }],
    });
    await ctx.addMessage({ role: 'assistant', content: 'Running the build now…' });
    const waiting = await ctx.getMessagesForRequest();
    expect(providerProblems(waiting, 'openai')).toEqual([]);
    expect(texts(waiting)).toContain('no result was recorded');
    await ctx.addMessage({ role: 'tool', tool_call_id: 'c1', content: 'build 812 green' });
    const answered = await ctx.getMessagesForRequest();
    expect(providerProblems(answered, 'openai')).toEqual([]);
    expect(texts(answered)).toContain('build 812 green');
    expect(texts(answered)).not.toContain('no result was recorded');
  });
});

describe('6. repeated call ids', () => {
  it('Chat Completions: two calls with one id in one message are shown with distinct ids, results paired in order', async () => {
    const view = await checkedView(
      [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'Paris 18C' },
        { role: 'tool', tool_call_id: 'call_1', content: 'Rome 24C' },
        { role: 'assistant', content: 'Paris 18C, Rome 24C.' },
      ],
      'openai',
    );
    const calls = (view[1] as { tool_calls: Array<{ id: string }> }).tool_calls.map((c) => c.id);
    expect(new Set(calls).size).toBe(2);
    expect(view[2]).toMatchObject({ tool_call_id: calls[0], content: 'Paris 18C' });
    expect(view[3]).toMatchObject({ tool_call_id: calls[1], content: 'Rome 24C' });
  });

  it('Responses: two function_calls sharing a call_id each get their own output', async () => {
    const view = await checkedView(
      [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { type: 'function_call', call_id: 'c', name: 'weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'c', name: 'weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'c', output: 'Paris 18C' },
        { type: 'function_call_output', call_id: 'c', output: 'Rome 24C' },
      ],
      'openai-responses',
    );
    const ids = view.slice(1, 3).map((m) => (m as { call_id: string }).call_id);
    expect(new Set(ids).size).toBe(2);
    expect(view[3]).toMatchObject({ call_id: ids[0], output: 'Paris 18C' });
    expect(view[4]).toMatchObject({ call_id: ids[1], output: 'Rome 24C' });
  });
});

describe('7. plain messages, then a Gemini response', () => {
  it('the view is Gemini and toGeminiRequest takes it', async () => {
    const ctx = new ContextManager({ model: 'gemini-2.5-flash' });
    const plain = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'hello' }] },
      { role: 'user', content: 'what is 2+2?' },
    ] as Message[];
    for (const m of plain) await ctx.addMessage(m);
    await addGeminiResponse(ctx, {
      candidates: [{ content: { role: 'model', parts: [{ text: '4' }] } }],
      usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 1 },
    });
    expect(ctx.messageFormat).toBe('gemini');
    const view = await ctx.getMessagesForRequest();
    expect(providerProblems(view, 'gemini')).toEqual([]);
    expect(toGeminiRequest(view as GeminiMessage[])).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'hi' }] },
        { role: 'model', parts: [{ text: 'hello' }] },
        { role: 'user', parts: [{ text: 'what is 2+2?' }] },
        { role: 'model', parts: [{ text: '4' }] },
      ],
    });
    expect((await ctx.getMessages()).slice(0, 4)).toEqual(plain);
  });

  it('toGeminiRequest refuses a message that is not a Gemini content with a typed error and its path', () => {
    const call = () =>
      toGeminiRequest([
        { role: 'user', parts: [{ text: 'hi' }] },
        { role: 'system', content: 'x' },
      ] as unknown as GeminiMessage[]);
    expect(call).toThrow(InvalidMessageError);
    expect(call).toThrow(/messages\[1\]\.parts/);
  });
});

describe('8. more accepted inputs the provider refused', () => {
  it('Chat Completions: tool_calls: [] is left out of the view', async () => {
    const view = await checkedView(
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello', tool_calls: [] },
        { role: 'user', content: 'thanks' },
      ],
      'openai',
    );
    expect(view[1]).toEqual({ role: 'assistant', content: 'hello' });
  });

  it('Anthropic: a server_tool_use with no result before a user turn is left out of the view', async () => {
    const view = await checkedView(
      [
        { role: 'user', content: 'Search the news' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Searching.' },
            { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'news' } },
          ],
        },
        { role: 'user', content: 'Never mind.' },
      ],
      'anthropic',
    );
    expect(view[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Searching.' }] });
  });

  it('Responses: a trailing reasoning item waits out of the view for its item', async () => {
    const reasoning = {
      type: 'reasoning',
      id: 'rs_9',
      summary: [],
      encrypted_content: sealReasoning('rs_9', []),
    };
    const view = await checkedView([{ role: 'user', content: 'hi' }, reasoning], 'openai-responses');
    expect(view).toEqual([{ role: 'user', content: 'hi' }]);
    const ctx = new ContextManager({ model: 'gpt-4o' });
    for (const m of [{ role: 'user', content: 'hi' }, reasoning]) await ctx.addMessage(m as Message);
    await ctx.getMessagesForRequest();
    const answer = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hello' }] };
    await ctx.addMessage(answer as Message);
    expect(await ctx.getMessagesForRequest()).toEqual([{ role: 'user', content: 'hi' }, reasoning, answer]);
  });

  it('text blocks stored before Responses items are shown as Responses parts', async () => {
    const view = await checkedView(
      [
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'hello' }] },
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c', output: 'r' },
      ],
      'openai-responses',
    );
    expect(view.slice(0, 2)).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'output_text', text: 'hello' }] },
    ]);
  });
});

describe('found by the hostile-conversation property', () => {
  it('Responses: an orphan output between reasoning and its call is left out, the reasoning kept with the call', async () => {
    const reasoning = {
      type: 'reasoning',
      id: 'rs_1',
      summary: [{ type: 'summary_text', text: 'think' }],
      encrypted_content: sealReasoning('rs_1', ['think']),
    };
    const call = { type: 'function_call', id: 'fc_rs_1_0', call_id: 'call_1', name: 'f', arguments: '{}' };
    const view = await checkedView(
      [
        { role: 'user', content: 'go' },
        reasoning,
        { type: 'function_call_output', call_id: 'call_nobody', output: 'late' },
        call,
        { type: 'function_call_output', call_id: 'call_1', output: 'done' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] },
      ],
      'openai-responses',
    );
    // Before: the reasoning went with the orphan, and the API refused fc_rs_1_0 without rs_1.
    expect(view.slice(1, 3)).toEqual([reasoning, call]);
  });

  it("Anthropic: a server tool call reusing another call's id in its message is refused with its path, nothing stored", async () => {
    // Seed -1547010446: the view sent two server_tool_use blocks "srvtoolu_1" in one message, which
    // the API refuses (tool use ids are unique within a request).
    const ctx = new ContextManager({ model: MODEL.anthropic });
    await ctx.addMessage({ role: 'user', content: [{ type: 'text', text: 'question 1' }] });
    const search = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q1' } };
    const blocks = [
      search,
      { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
      { type: 'text', text: 'found 1' },
      { ...search, input: { query: 'x' } },
    ];
    const reply = { role: 'assistant', content: blocks } as unknown as Message;
    const added = ctx.addMessage(reply);
    await expect(added).rejects.toThrow(InvalidMessageError);
    await expect(ctx.addMessage(reply)).rejects.toThrow(
      /content\[3\]\.id.*already the id of a call at .*content\[0\]\.id/,
    );
    expect(await ctx.getMessages()).toHaveLength(1);
    // The same message with the call once is accepted.
    await ctx.addMessage({ role: 'assistant', content: blocks.slice(0, 3) } as unknown as Message);
    expect(await ctx.getMessages()).toHaveLength(2);
  });

  it('Gemini: an empty text part is left out of the view', async () => {
    const view = await checkedView(
      [
        { role: 'user', parts: [{ text: 'hi' }] },
        { role: 'user', parts: [{ text: '' }] },
        { role: 'model', parts: [{ text: 'hello' }, { text: '' }] },
      ],
      'gemini',
    );
    expect(view).toEqual([
      { role: 'user', parts: [{ text: 'hi' }] },
      { role: 'model', parts: [{ text: 'hello' }] },
    ]);
  });

  it('Gemini: narration between a call and its response, then more calls: the narration joins the call content', async () => {
    const view = await checkedView(
      [
        { role: 'user', parts: [{ text: 'go' }] },
        { role: 'model', parts: [{ functionCall: { name: 'a', args: {} } }] },
        { role: 'model', parts: [{ text: 'working' }] },
        { role: 'user', parts: [{ functionResponse: { name: 'a', response: { content: 'x' } } }] },
        { role: 'model', parts: [{ functionCall: { name: 'b', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'b', response: { content: 'y' } } }] },
      ],
      'gemini',
    );
    expect(view[1]).toEqual({
      role: 'model',
      parts: [{ functionCall: { name: 'a', args: {} } }, { text: 'working' }],
    });
  });

  it('plain messages for a Claude model: the view follows Anthropic’s rules (whitespace-only text left out)', async () => {
    const ctx = new ContextManager({ model: 'claude-sonnet-4-5' });
    const plain = [
      { role: 'user', content: 'Fix the test' },
      { role: 'assistant', content: [{ type: 'text', text: ' ' }] },
      { role: 'assistant', content: 'Fixed.' },
    ] as Message[];
    for (const m of plain) await ctx.addMessage(m);
    expect(ctx.messageFormat).toBeUndefined();
    const view = await ctx.getMessagesForRequest();
    expect(providerProblems(view, 'anthropic')).toEqual([]);
    expect(view).toEqual([plain[0], plain[2]]);
  });
});
