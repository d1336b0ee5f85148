import { describe, expect, it } from 'vitest';
import { FormatMismatchError, InvalidMessageError } from '../errors.js';
import {
  detectConversationFormat,
  detectMessageFormat,
  formatEvidence,
  resolveConversationFormat,
} from './detect.js';

describe('detectMessageFormat', () => {
  const cases: Array<[string, unknown, 'openai' | 'anthropic' | 'either']> = [
    ['string content', { role: 'user', content: 'hi' }, 'either'],
    ['text parts only', { role: 'assistant', content: [{ type: 'text', text: 'a' }] }, 'either'],
    ['system string', { role: 'system', content: 'x' }, 'either'],
    ['role tool', { role: 'tool', tool_call_id: 'c', content: 'x' }, 'openai'],
    ['role developer', { role: 'developer', content: 'x' }, 'openai'],
    ['tool_calls', { role: 'assistant', content: null, tool_calls: [] }, 'openai'],
    ['tool_call_id', { role: 'user', content: 'x', tool_call_id: 'c' }, 'openai'],
    ['image_url', { role: 'user', content: [{ type: 'image_url', image_url: { url: 'u' } }] }, 'openai'],
    ['input_audio', { role: 'user', content: [{ type: 'input_audio' }] }, 'openai'],
    ['file', { role: 'user', content: [{ type: 'file', file: {} }] }, 'openai'],
    ['refusal part', { role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] }, 'openai'],
    [
      'tool_use',
      { role: 'assistant', content: [{ type: 'text', text: 'a' }, { type: 'tool_use' }] },
      'anthropic',
    ],
    ['tool_result', { role: 'user', content: [{ type: 'tool_result' }] }, 'anthropic'],
    ['image', { role: 'user', content: [{ type: 'image', source: {} }] }, 'anthropic'],
    ['document', { role: 'user', content: [{ type: 'document' }] }, 'anthropic'],
    ['thinking', { role: 'assistant', content: [{ type: 'thinking' }] }, 'anthropic'],
    ['redacted_thinking', { role: 'assistant', content: [{ type: 'redacted_thinking' }] }, 'anthropic'],
    ['not an object', 'hello', 'either'],
    // A type no format knows is a block a newer Anthropic API added (issue 11).
    ['unknown block type', { role: 'user', content: [{ type: 'video' }] }, 'anthropic'],
    ['server_tool_use', { role: 'assistant', content: [{ type: 'server_tool_use' }] }, 'anthropic'],
    ['search_result', { role: 'user', content: [{ type: 'search_result' }] }, 'anthropic'],
  ];
  for (const [name, message, expected] of cases) {
    it(`${name} → ${expected}`, () => expect(detectMessageFormat(message)).toBe(expected));
  }

  it('never lets an unknown block type contradict a conversation already in a format', () => {
    const future = { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'video' }] };
    expect(formatEvidence(future)).toMatchObject({
      format: 'anthropic',
      weak: true,
      field: 'content[1].type',
    });
    expect(resolveConversationFormat('openai', future, 3)).toBe('openai');
    expect(resolveConversationFormat(undefined, future, 0)).toBe('anthropic');
  });

  it('names the field that betrays the format', () => {
    expect(
      formatEvidence({ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'tool_result' }] }),
    ).toEqual({
      format: 'anthropic',
      field: 'content[1].type',
      found: 'a "tool_result" content block',
    });
    expect(formatEvidence({ role: 'tool', content: 'x' })).toEqual({
      format: 'openai',
      field: 'role',
      found: 'role "tool"',
    });
    expect(formatEvidence({ role: 'user', content: 'x' })).toBeUndefined();
  });
});

describe('detectConversationFormat', () => {
  it('is undefined when every message fits either format', () => {
    expect(detectConversationFormat([])).toBeUndefined();
    expect(
      detectConversationFormat([
        { role: 'system', content: 's' },
        { role: 'user', content: 'u' },
        { role: 'assistant', content: 'a' },
      ]),
    ).toBeUndefined();
  });

  it('takes the format of the first message that shows one', () => {
    expect(
      detectConversationFormat([
        { role: 'user', content: 'u' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] },
        { role: 'user', content: 'plain' },
      ]),
    ).toBe('anthropic');
    expect(
      detectConversationFormat([
        { role: 'user', content: 'u' },
        { role: 'assistant', content: null, tool_calls: [] },
      ]),
    ).toBe('openai');
  });

  it('refuses a conversation that mixes the formats, naming the field', () => {
    const mixed = [
      { role: 'system', content: 's' },
      { role: 'user', content: 'u' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c', content: 'r' },
      { role: 'assistant', content: 'a' },
      { role: 'user', content: 'u2' },
      { role: 'assistant', content: 'b' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'x' },
          { type: 'tool_use', id: 't', name: 'f', input: {} },
        ],
      },
    ];
    let error: unknown;
    try {
      detectConversationFormat(mixed);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FormatMismatchError);
    expect(error).toBeInstanceOf(InvalidMessageError);
    const mismatch = error as FormatMismatchError;
    expect(mismatch.code).toBe('format_mismatch');
    expect(mismatch.issues).toHaveLength(1);
    expect(mismatch.issues[0]?.path).toBe('messages[7].content[1].type');
    expect(mismatch.message).toBe(
      'messages[7].content[1].type: this conversation is in OpenAI format but the message is Anthropic (a "tool_use" content block); convert it first (see toOpenAI/toAnthropic)',
    );
  });
});

describe('resolveConversationFormat', () => {
  it('keeps the current format for messages that fit either', () => {
    expect(resolveConversationFormat(undefined, { role: 'user', content: 'x' }, 0)).toBeUndefined();
    expect(resolveConversationFormat('anthropic', { role: 'user', content: 'x' }, 3)).toBe('anthropic');
    expect(resolveConversationFormat('openai', { role: 'tool', tool_call_id: 'c', content: 'x' }, 3)).toBe(
      'openai',
    );
  });

  it('fixes the format on the first telling message', () => {
    expect(resolveConversationFormat(undefined, { role: 'developer', content: 'x' }, 0)).toBe('openai');
  });

  it('throws at the given index with the betraying field', () => {
    expect(() =>
      resolveConversationFormat('anthropic', { role: 'tool', tool_call_id: 'c', content: 'x' }, 12),
    ).toThrow(
      'messages[12].role: this conversation is in Anthropic format but the message is OpenAI (role "tool")',
    );
    expect(() =>
      resolveConversationFormat('anthropic', { role: 'assistant', content: null, tool_calls: [] }, 2),
    ).toThrow(/^messages\[2\]\.tool_calls: /);
  });
});
