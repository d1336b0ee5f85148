import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/messages/types.js';
import { referenceProblems } from './reference-validator.js';

const call = (id: string, name = 'read_file') => ({
  id,
  type: 'function' as const,
  function: { name, arguments: '{"path":"src/date.ts"}' },
});
const toolUse = (id: string) => ({
  type: 'tool_use' as const,
  id,
  name: 'read_file',
  input: { path: 'src/a.ts' },
});
const toolResult = (id: string, content = 'ok') => ({
  type: 'tool_result' as const,
  tool_use_id: id,
  content,
});

describe('referenceProblems — OpenAI', () => {
  const good: Array<[string, Message[]]> = [
    [
      'parallel calls answered out of order',
      [
        { role: 'system', content: 'Be careful.' },
        { role: 'user', content: 'Fix src/date.ts' },
        { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] },
        { role: 'tool', tool_call_id: 'b', content: 'B' },
        { role: 'tool', tool_call_id: 'a', content: 'A' },
        { role: 'assistant', content: 'Fixed.' },
      ],
    ],
    [
      'an id reused by a later round',
      [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [call('call_1')] },
        { role: 'tool', tool_call_id: 'call_1', content: 'first' },
        { role: 'assistant', content: 'Checking again.', tool_calls: [call('call_1')] },
        { role: 'tool', tool_call_id: 'call_1', content: 'second' },
        { role: 'assistant', content: 'Done.' },
      ],
    ],
    [
      'system messages mid-conversation and empty user text (OpenAI accepts both)',
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
        { role: 'developer', content: 'Switch to staging.' },
        { role: 'user', content: '' },
      ],
    ],
    ['no messages', []],
  ];
  it.each(good)('accepts %s', (_name, messages) => {
    expect(referenceProblems(messages, 'openai')).toEqual([]);
  });

  it('rejects a tool message with no call before it', () => {
    const messages: Message[] = [
      { role: 'user', content: 'hi' },
      { role: 'tool', tool_call_id: 'x', content: 'late' },
    ];
    expect(referenceProblems(messages, 'openai')).toEqual([
      'messages[1]: tool result for x does not follow an assistant message with tool calls',
    ]);
  });

  it('rejects a parallel call left without its result', () => {
    const messages: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] },
      { role: 'tool', tool_call_id: 'a', content: 'A' },
      { role: 'user', content: 'and?' },
    ];
    expect(referenceProblems(messages, 'openai')).toEqual([
      'messages[1].tool_calls[1]: call b has no tool result in the messages right after it',
    ]);
  });

  it('rejects a message between a call and its result (both ends are reported)', () => {
    const messages: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call('a')] },
      { role: 'user', content: '[hook] files changed' },
      { role: 'tool', tool_call_id: 'a', content: 'A' },
    ];
    const problems = referenceProblems(messages, 'openai');
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^messages\[1\]\.tool_calls\[0\]: call a has no tool result/);
    expect(problems[1]).toMatch(/^messages\[3\]: tool result for a does not follow/);
  });

  it('pairs reused ids by position: an old answer does not cover a new call', () => {
    const messages: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call('call_1')] },
      { role: 'tool', tool_call_id: 'call_1', content: 'first' },
      { role: 'assistant', content: null, tool_calls: [call('call_1')] },
    ];
    expect(referenceProblems(messages, 'openai')).toEqual([
      'messages[3].tool_calls[0]: call call_1 has no tool result in the messages right after it',
    ]);
  });

  it('rejects a duplicate answer, an answer to an id not called, and duplicate ids in one message', () => {
    const messages: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call('a'), call('a')] },
      { role: 'tool', tool_call_id: 'a', content: 'A' },
      { role: 'tool', tool_call_id: 'a', content: 'A again' },
      { role: 'tool', tool_call_id: 'zzz', content: '?' },
    ];
    expect(referenceProblems(messages, 'openai')).toEqual([
      'messages[1].tool_calls[1]: id a is used twice',
      'messages[3]: tool call a of messages[1] is answered twice',
      'messages[4]: tool result for zzz answers no tool call of messages[1]',
    ]);
  });

  it('rejects an empty tool_calls array and an assistant message with nothing in it', () => {
    const messages: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'Thinking.', tool_calls: [] },
      { role: 'assistant', content: null },
    ];
    expect(referenceProblems(messages, 'openai')).toEqual([
      'messages[1].tool_calls: empty array (omit it instead)',
      'messages[2]: assistant message has neither content nor tool calls',
    ]);
  });
});

describe('referenceProblems — Anthropic', () => {
  const good: Array<[string, Message[]]> = [
    [
      'thinking, parallel tool use, results in any order with text after them',
      [
        { role: 'system', content: 'Be careful.' },
        { role: 'user', content: 'Fix src/date.ts' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'look first', signature: 'sig' },
            { type: 'text', text: 'Let me look.' },
            toolUse('a'),
            toolUse('b'),
          ],
        },
        { role: 'user', content: [toolResult('b'), toolResult('a'), { type: 'text', text: 'hurry' }] },
        { role: 'assistant', content: 'Fixed.' },
      ],
    ],
    [
      'reused ids and a result without content',
      [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [toolUse('toolu_1')] },
        { role: 'user', content: [toolResult('toolu_1')] },
        { role: 'assistant', content: [toolUse('toolu_1')] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
      ],
    ],
    [
      'an empty final assistant message (a prefill)',
      [
        { role: 'user', content: 'Answer in JSON.' },
        { role: 'assistant', content: '' },
      ],
    ],
    [
      'two user messages in a row',
      [
        { role: 'user', content: 'one' },
        { role: 'user', content: 'two' },
      ],
    ],
  ];
  it.each(good)('accepts %s', (_name, messages) => {
    expect(referenceProblems(messages, 'anthropic')).toEqual([]);
  });

  it('rejects a conversation that starts with the assistant', () => {
    const messages: Message[] = [
      { role: 'system', content: 'sys' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'hi' },
    ];
    expect(referenceProblems(messages, 'anthropic')).toEqual([
      'messages[1]: the first non-system message must be from the user',
    ]);
  });

  it('rejects a system message after the conversation started', () => {
    const messages: Message[] = [
      { role: 'user', content: 'hi' },
      { role: 'system', content: 'late rule' },
    ];
    expect(referenceProblems(messages, 'anthropic')).toEqual([
      'messages[1]: system message after the conversation started',
    ]);
  });

  it('rejects tool use with no result in the next message, including at the end', () => {
    const interrupted: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [toolUse('a')] },
      { role: 'user', content: 'never mind' },
    ];
    expect(referenceProblems(interrupted, 'anthropic')).toEqual([
      'messages[1]: tool_use a has no tool_result in the next message',
    ]);
    const crashed: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'text', text: 'Looking.' }, toolUse('a'), toolUse('b')] },
    ];
    expect(referenceProblems(crashed, 'anthropic')).toEqual([
      'messages[1]: tool_use a has no tool_result in the next message',
      'messages[1]: tool_use b has no tool_result in the next message',
    ]);
  });

  it('rejects a result two messages after its call and one whose id only matches an older call', () => {
    const messages: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [toolUse('t1')] },
      { role: 'user', content: [toolResult('t1')] },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: [toolResult('t1')] },
    ];
    expect(referenceProblems(messages, 'anthropic')).toEqual([
      'messages[4]: tool_result for t1 answers no tool_use of the message just before',
    ]);
  });

  it('rejects tool results after other blocks and a result answered twice', () => {
    const messages: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [toolUse('a'), toolUse('b')] },
      {
        role: 'user',
        content: [toolResult('a'), { type: 'text', text: 'note' }, toolResult('b'), toolResult('a')],
      },
    ];
    expect(referenceProblems(messages, 'anthropic')).toEqual([
      'messages[2].content[2]: tool_result after another block (results must come first)',
      'messages[2].content[3]: tool_result after another block (results must come first)',
      'messages[2]: tool_use a is answered twice',
    ]);
  });

  it('rejects empty text in every form', () => {
    const messages: Message[] = [
      { role: 'system', content: [{ type: 'text', text: '' }] },
      { role: 'user', content: '' },
      { role: 'assistant', content: [{ type: 'text', text: '  \n' }] },
      { role: 'user', content: [] },
      { role: 'assistant', content: [toolUse('a')] },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text', text: '' }] }],
      },
      { role: 'assistant', content: 'fine' },
    ];
    expect(referenceProblems(messages, 'anthropic')).toEqual([
      'messages[0].content[0]: empty text block',
      'messages[1].content: empty text',
      'messages[2].content[0]: empty text block',
      'messages[3].content: no content blocks',
      'messages[5].content[0].content[0]: empty text block',
    ]);
  });

  it('rejects blocks on the wrong side and OpenAI roles', () => {
    const messages: Message[] = [
      { role: 'user', content: [toolUse('a')] },
      { role: 'assistant', content: [toolResult('a')] },
      { role: 'tool', tool_call_id: 'a', content: 'x' },
    ];
    expect(referenceProblems(messages, 'anthropic')).toEqual([
      'messages[0].content[0]: tool_use in a user message',
      'messages[1].content[0]: tool_result in an assistant message',
      'messages[2]: role tool is not an Anthropic role',
    ]);
  });
});
