import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from './errors.js';
import { toAnthropicRequest } from './formats/anthropic/request.js';
import { toBedrockRequest } from './formats/bedrock/request.js';
import { toGeminiRequest } from './formats/gemini/request.js';
import type { Message } from './messages/types.js';
import { toRequest } from './provider-request.js';
import { convertMessages } from './wire/convert.js';

const openaiView: Message[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Weather in Paris?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
    ],
  },
  { role: 'tool', tool_call_id: 'c1', content: '18°C, clear' },
  { role: 'assistant', content: 'It is 18°C and clear.' },
];

// Issue 34: one request builder that takes a format, instead of a twin per format.
describe('toRequest', () => {
  it('gives each API its request parts, as the per-format builders did', () => {
    expect(toRequest(openaiView, 'openai')).toEqual({ messages: openaiView });
    const anthropic = convertMessages(openaiView, 'anthropic');
    expect(toRequest(anthropic, 'anthropic')).toEqual(toAnthropicRequest(anthropic));
    const gemini = convertMessages(openaiView, 'gemini');
    expect(toRequest(gemini, 'gemini')).toEqual(toGeminiRequest(gemini as never));
    const bedrock = convertMessages(openaiView, 'bedrock');
    const tools = [{ name: 'weather', input_schema: { type: 'object' } }];
    expect(toRequest(bedrock, 'bedrock', { tools })).toEqual(toBedrockRequest(bedrock, { tools }));
    const responses = convertMessages(openaiView, 'openai-responses');
    expect(toRequest(responses, 'openai-responses')).toEqual({ input: responses });
  });

  it('converts a view in another format first', () => {
    const anthropic = toRequest(openaiView, 'anthropic');
    expect(anthropic).toEqual(toAnthropicRequest(convertMessages(openaiView, 'anthropic')));
    expect(anthropic.system).toBeDefined();
    expect(anthropic.messages[0]?.role).toBe('user');
    const back = toRequest(convertMessages(openaiView, 'anthropic'), 'openai');
    expect(back.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
  });

  it('refuses a format it has no request for, naming the ones it has', () => {
    expect(() => toRequest(openaiView, 'mistral' as never)).toThrow(InvalidArgumentError);
    expect(() => toRequest(openaiView, 'mistral' as never)).toThrow(
      /expected one of openai, openai-responses/,
    );
  });
});
