import type { ModelMessage } from 'ai';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContextManager } from '../../manager.js';
import type { OpenAIMessage } from '../../messages/types.js';
import { toAnthropic } from '../../wire/convert.js';
import { validateRequest } from '../../wire/validate-request.js';
import { fromModelMessages, toModelMessages } from './model-messages.js';

// A 1×1 PNG: the image type is read from its bytes when the SDK leaves it open.
const PNG = Uint8Array.from(
  Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  ),
);
const PDF_BASE64 = Buffer.from('%PDF-1.4\n1 0 obj<</Type/Page>>endobj\n%%EOF').toString('base64');

const anthropicCache = { anthropic: { cacheControl: { type: 'ephemeral' } } };

function richConversation(): ModelMessage[] {
  return [
    { role: 'system', content: 'You are a careful agent.', providerOptions: anthropicCache },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this picture and this file?' },
        { type: 'image', image: PNG },
        { type: 'file', data: PDF_BASE64, mediaType: 'application/pdf', filename: 'spec.pdf' },
      ],
      providerOptions: anthropicCache,
    },
    {
      role: 'assistant',
      content: [
        {
          type: 'reasoning',
          text: 'I should look it up.',
          providerOptions: { anthropic: { signature: 'sig-1' } },
        },
        { type: 'text', text: 'Let me check.' },
        {
          type: 'tool-call',
          toolCallId: 'call_1',
          toolName: 'lookup',
          input: { q: 'picture' },
          providerOptions: { openai: { itemId: 'fc_1' } },
        },
        { type: 'tool-call', toolCallId: 'call_2', toolName: 'weather', input: { city: 'Oslo' } },
        {
          type: 'tool-call',
          toolCallId: 'ws_1',
          toolName: 'web_search',
          input: { q: 'x' },
          providerExecuted: true,
        },
        {
          type: 'tool-result',
          toolCallId: 'ws_1',
          toolName: 'web_search',
          output: { type: 'json', value: { hits: 3 } },
        },
      ],
    },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_1',
          toolName: 'lookup',
          output: { type: 'json', value: { found: 'a cat', score: 0.93 } },
          providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
        },
        {
          type: 'tool-result',
          toolCallId: 'call_2',
          toolName: 'weather',
          output: { type: 'error-text', value: 'service down' },
        },
      ],
    },
    { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'ap_1', approved: true }] },
    { role: 'assistant', content: 'It is a cat; the weather service is down.' },
    { role: 'user', content: 'Thanks!' },
  ];
}

describe('fromModelMessages', () => {
  it('makes valid OpenAI messages with the tool calls, results, image and file', () => {
    const { messages } = fromModelMessages(richConversation());
    expect(validateRequest(messages, 'openai').valid).toBe(true);
    const [system, user, assistant, result1, result2, reply, last] = messages as [
      OpenAIMessage,
      OpenAIMessage,
      OpenAIMessage,
      OpenAIMessage,
      OpenAIMessage,
      OpenAIMessage,
      OpenAIMessage,
    ];
    expect(system).toEqual({ role: 'system', content: 'You are a careful agent.' });
    expect(user.content).toEqual([
      { type: 'text', text: 'What is in this picture and this file?' },
      {
        type: 'image_url',
        image_url: { url: `data:image/png;base64,${Buffer.from(PNG).toString('base64')}` },
      },
      {
        type: 'file',
        file: { file_data: `data:application/pdf;base64,${PDF_BASE64}`, filename: 'spec.pdf' },
      },
    ]);
    expect(assistant).toMatchObject({
      role: 'assistant',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"picture"}' } },
        { id: 'call_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
      ],
    });
    // The provider-run search is counted as text, not as a call waiting for a client result.
    expect(assistant.content).toContain('web_search run by the provider');
    expect(result1).toEqual({
      role: 'tool',
      tool_call_id: 'call_1',
      content: '{"found":"a cat","score":0.93}',
    });
    expect(result2).toEqual({ role: 'tool', tool_call_id: 'call_2', content: 'service down' });
    expect(reply).toEqual({ role: 'assistant', content: 'It is a cat; the weather service is down.' });
    expect(last).toEqual({ role: 'user', content: 'Thanks!' });
    expect(messages).toHaveLength(7);
  });
});

describe('toModelMessages', () => {
  it('gives every message back as the very object it was, through the side map', () => {
    const original = richConversation();
    const { messages, sideMap } = fromModelMessages(original);
    const back = toModelMessages(messages, sideMap);
    expect(back).toHaveLength(original.length);
    for (const [i, m] of back.entries()) expect(m).toBe(original[i]);
  });

  it('finds the originals by content after the messages were copied (stored and read back)', () => {
    const original = richConversation();
    const { messages, sideMap } = fromModelMessages(original);
    const back = toModelMessages(structuredClone(messages), sideMap);
    for (const [i, m] of back.entries()) expect(m).toBe(original[i]);
  });

  it('keeps the parts a view leaves: a dropped turn goes, the rest come back whole', () => {
    const original = richConversation();
    const { messages, sideMap } = fromModelMessages(original);
    // A view without the tool exchange (dropped whole, as an atom) and the reply.
    const view = [messages[0]!, messages[1]!, messages[6]!];
    expect(toModelMessages(view, sideMap)).toEqual([original[0], original[1], original[6]]);
  });

  it('rebuilds a cleared result on its own part: tool name and provider options kept, error-ness kept', () => {
    const original = richConversation();
    const { messages, sideMap } = fromModelMessages(original);
    const cleared = messages.map((m) =>
      m.role === 'tool' ? { ...m, content: `[contextkit: the result was cleared]` } : m,
    );
    const back = toModelMessages(cleared, sideMap);
    expect(back).toHaveLength(original.length);
    expect(back[2]).toBe(original[2]);
    expect(back[3]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_1',
          toolName: 'lookup',
          output: { type: 'text', value: '[contextkit: the result was cleared]' },
          providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
        },
        {
          type: 'tool-result',
          toolCallId: 'call_2',
          toolName: 'weather',
          output: { type: 'error-text', value: '[contextkit: the result was cleared]' },
        },
      ],
    });
    // The approval-only tool message rides with the result before it.
    expect(back[4]).toBe(original[4]);
  });

  it('rebuilds a cut assistant text with its reasoning and tool calls, options intact', () => {
    const original = richConversation();
    const { messages, sideMap } = fromModelMessages(original);
    const cut = messages.map((m, i) => (i === 2 ? { ...m, content: 'Let me [cut]' } : m)) as OpenAIMessage[];
    const back = toModelMessages(cut, sideMap);
    const source = original[2]!.content as Array<{ type: string }>;
    expect(back[2]).toEqual({
      role: 'assistant',
      content: [
        source[0],
        { type: 'text', text: 'Let me [cut]' },
        source[2],
        source[3],
        source[4],
        source[5],
      ],
    });
  });

  it('keeps the text parts as they were when only the call inputs were cleared', () => {
    const original = richConversation();
    const { messages, sideMap } = fromModelMessages(original);
    const assistant = messages[2] as OpenAIMessage & { role: 'assistant' };
    const cleared = {
      ...assistant,
      tool_calls: assistant.tool_calls?.map((c) => ({ ...c, function: { ...c.function, arguments: '{}' } })),
    };
    const back = toModelMessages([messages[0]!, messages[1]!, cleared, messages[3]!, messages[4]!], sideMap);
    const source = original[2]!.content as Array<{ type: string }>;
    expect(back[2]).toEqual({
      role: 'assistant',
      content: [
        source[0],
        source[1],
        { ...source[2], input: {} },
        { ...source[3], input: {} },
        source[4],
        source[5],
      ],
    });
  });

  it('writes a system message contextkit adds mid-conversation as a user message', () => {
    const original = richConversation();
    const { messages, sideMap } = fromModelMessages(original);
    const summary: OpenAIMessage = { role: 'system', content: '[contextkit: summary of earlier messages]' };
    const back = toModelMessages([messages[0]!, messages[1]!, summary, messages[6]!], sideMap);
    expect(back[2]).toEqual({
      role: 'user',
      content: [{ type: 'text', text: '[contextkit: summary of earlier messages]' }],
    });
    const top = toModelMessages([summary, messages[6]!], sideMap);
    expect(top[0]).toEqual({ role: 'system', content: '[contextkit: summary of earlier messages]' });
  });

  it('converts plain contextkit messages (either format) without a side map', () => {
    const openai: OpenAIMessage[] = [
      { role: 'system', content: 'sys' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":1}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'found' },
      { role: 'assistant', content: 'done' },
    ];
    const expected = [
      { role: 'system', content: 'sys' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'file', data: new URL('https://example.com/cat.png'), mediaType: 'image/*' },
          { type: 'file', data: '/9j/4AAQ', mediaType: 'image/jpeg' },
        ],
      },
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: { q: 1 } }],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'lookup',
            output: { type: 'text', value: 'found' },
          },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
    ];
    expect(toModelMessages(openai)).toEqual(expected);
    expect(toModelMessages(toAnthropic(openai))).toEqual(expected);
  });

  it('round-trips any generated conversation to the same objects, through a manager and back', async () => {
    const text = fc.string({ minLength: 1, maxLength: 20 });
    const options = fc.option(fc.constant({ test: { flag: true } }), { nil: undefined });
    const turn = fc.record({
      user: text,
      userOptions: options,
      calls: fc.array(fc.record({ name: fc.constantFrom('a', 'b'), arg: fc.integer() }), { maxLength: 3 }),
      reply: text,
    });
    await fc.assert(
      fc.asyncProperty(fc.array(turn, { minLength: 1, maxLength: 5 }), async (turns) => {
        const conversation: ModelMessage[] = [{ role: 'system', content: 'sys' }];
        let id = 0;
        for (const t of turns) {
          conversation.push(
            t.userOptions
              ? { role: 'user', content: [{ type: 'text', text: t.user }], providerOptions: t.userOptions }
              : { role: 'user', content: t.user },
          );
          if (t.calls.length > 0) {
            const ids = t.calls.map(() => `id${id++}`);
            conversation.push({
              role: 'assistant',
              content: t.calls.map((c, k) => ({
                type: 'tool-call' as const,
                toolCallId: ids[k]!,
                toolName: c.name,
                input: { arg: c.arg },
              })),
            });
            conversation.push({
              role: 'tool',
              content: t.calls.map((c, k) => ({
                type: 'tool-result' as const,
                toolCallId: ids[k]!,
                toolName: c.name,
                output: { type: 'json' as const, value: c.arg },
              })),
            });
          }
          conversation.push({ role: 'assistant', content: t.reply });
        }
        const { messages, sideMap } = fromModelMessages(conversation);
        const manager = new ContextManager();
        for (const m of messages) await manager.addMessage(m);
        const stored = await manager.getMessages();
        const back = toModelMessages(stored, sideMap);
        expect(back).toHaveLength(conversation.length);
        for (const [i, m] of back.entries()) expect(m).toBe(conversation[i]);
      }),
      { numRuns: 60 },
    );
  });
});
