import { describe, expect, it } from 'vitest';
import type { AnthropicMessage, Message, OpenAIMessage } from '../messages/types.js';
import {
  hasNonToolResultContent,
  hasToolCalls,
  isToolResultMessage,
  messageText,
  toolCallIds,
  toolResultIds,
} from './content.js';

const openaiCall: OpenAIMessage = {
  role: 'assistant',
  content: 'checking',
  tool_calls: [
    { id: 'c1', type: 'function', function: { name: 'a', arguments: '{"x":1}' } },
    { id: 'c2', type: 'function', function: { name: 'b', arguments: '{}' } },
    { id: 'c1', type: 'function', function: { name: 'a', arguments: '{}' } },
  ],
};
const openaiTool: OpenAIMessage = { role: 'tool', tool_call_id: 'c2', content: 'result two' };
const anthropicCall: AnthropicMessage = {
  role: 'assistant',
  content: [
    { type: 'thinking', thinking: 'private', signature: 's' },
    { type: 'text', text: 'let me look' },
    { type: 'tool_use', id: 't1', name: 'a', input: { q: 1 } },
    { type: 'tool_use', id: 't2', name: 'b', input: {} },
  ],
};
const anthropicResults: AnthropicMessage = {
  role: 'user',
  content: [
    { type: 'tool_result', tool_use_id: 't1', content: 'first' },
    { type: 'tool_result', tool_use_id: 't2', content: [{ type: 'text', text: 'second' }] },
  ],
};
const anthropicResultsAndText: AnthropicMessage = {
  role: 'user',
  content: [
    { type: 'tool_result', tool_use_id: 't1' },
    { type: 'text', text: 'also this' },
  ],
};

describe('messageText', () => {
  it('reads string content and text parts', () => {
    expect(messageText({ role: 'user', content: 'hello' })).toBe('hello');
    expect(
      messageText({
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          { type: 'text', text: 'b' },
        ],
      }),
    ).toBe('a\nb');
  });

  it('includes tool results and refusals but not arguments or thinking', () => {
    expect(messageText(openaiCall)).toBe('checking');
    expect(messageText(openaiTool)).toBe('result two');
    expect(messageText(anthropicCall)).toBe('let me look');
    expect(messageText(anthropicResults)).toBe('first\nsecond');
    expect(messageText({ role: 'assistant', content: null, refusal: 'I cannot' })).toBe('I cannot');
    expect(messageText({ role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] })).toBe('no');
  });

  it('reads text documents', () => {
    const message: Message = {
      role: 'user',
      content: [
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc body' } },
        { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'part' }] } },
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'AAAA' } },
      ],
    };
    expect(messageText(message)).toBe('doc body\npart');
  });

  it('is empty for content-less assistant calls', () => {
    expect(
      messageText({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
      }),
    ).toBe('');
  });
});

describe('tool call and result ids', () => {
  it('lists call ids in order, duplicates kept', () => {
    expect(toolCallIds(openaiCall)).toEqual(['c1', 'c2', 'c1']);
    expect(toolCallIds(anthropicCall)).toEqual(['t1', 't2']);
    expect(toolCallIds({ role: 'user', content: 'x' })).toEqual([]);
    expect(toolCallIds({ role: 'assistant', content: 'x' })).toEqual([]);
  });

  it('lists result ids in order', () => {
    expect(toolResultIds(openaiTool)).toEqual(['c2']);
    expect(toolResultIds(anthropicResults)).toEqual(['t1', 't2']);
    expect(toolResultIds({ role: 'user', content: 'x' })).toEqual([]);
    expect(toolResultIds(anthropicCall)).toEqual([]);
  });

  it('knows which messages call tools and which return results', () => {
    expect(hasToolCalls(openaiCall)).toBe(true);
    expect(hasToolCalls(anthropicCall)).toBe(true);
    expect(hasToolCalls({ role: 'assistant', content: null, tool_calls: [] })).toBe(false);
    expect(hasToolCalls({ role: 'assistant', content: 'x' })).toBe(false);
    expect(isToolResultMessage(openaiTool)).toBe(true);
    expect(isToolResultMessage(anthropicResults)).toBe(true);
    expect(isToolResultMessage({ role: 'user', content: 'x' })).toBe(false);
    expect(isToolResultMessage(openaiCall)).toBe(false);
  });
});

describe('hasNonToolResultContent', () => {
  it('tells a real user turn from a message of results', () => {
    expect(hasNonToolResultContent({ role: 'user', content: 'hi' })).toBe(true);
    expect(hasNonToolResultContent({ role: 'user', content: '' })).toBe(false);
    expect(hasNonToolResultContent(anthropicResults)).toBe(false);
    expect(hasNonToolResultContent(anthropicResultsAndText)).toBe(true);
    expect(
      hasNonToolResultContent({
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't' },
          { type: 'image', source: { type: 'url', url: 'https://x.test/i.png' } },
        ],
      }),
    ).toBe(true);
    expect(
      hasNonToolResultContent({
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't' },
          { type: 'text', text: '' },
        ],
      }),
    ).toBe(false);
  });

  it('is false for every role but user', () => {
    expect(hasNonToolResultContent(openaiTool)).toBe(false);
    expect(hasNonToolResultContent(anthropicCall)).toBe(false);
    expect(hasNonToolResultContent({ role: 'system', content: 's' })).toBe(false);
  });
});
