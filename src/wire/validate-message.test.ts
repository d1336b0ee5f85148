import { describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../errors.js';
import type { MessageFormat } from '../messages/types.js';
import { messageProblems, validateMessage } from './validate-message.js';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** The issues validateMessage throws for `message`, as `path: message` lines. */
function issuesOf(message: unknown, path = 'messages[0]', format?: MessageFormat): string[] {
  try {
    validateMessage(deepFreeze(message), path, format);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidMessageError);
    return (error as InvalidMessageError).issues.map((i) => `${i.path}: ${i.message}`);
  }
  return [];
}

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe('validateMessage: valid messages', () => {
  const valid: Array<[string, unknown, MessageFormat | undefined]> = [
    ['plain user', { role: 'user', content: 'hi' }, undefined],
    ['plain system', { role: 'system', content: 'be brief' }, undefined],
    ['developer', { role: 'developer', content: [{ type: 'text', text: 'rules' }] }, 'openai'],
    [
      'openai user parts',
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'https://x.test/a.png', detail: 'low' } },
          { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
          { type: 'file', file: { file_id: 'file-1' } },
        ],
      },
      'openai',
    ],
    [
      'openai assistant with calls and null content',
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      'openai',
    ],
    ['openai assistant refusal only', { role: 'assistant', content: null, refusal: 'no' }, 'openai'],
    ['openai assistant empty string', { role: 'assistant', content: '' }, 'openai'],
    ['openai tool', { role: 'tool', tool_call_id: 'c1', content: '' }, 'openai'],
    ['openai tool_calls null', { role: 'assistant', content: 'x', tool_calls: null }, 'openai'],
    [
      'anthropic user blocks',
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 't1',
            content: [{ type: 'text', text: 'ok' }],
            is_error: false,
          },
          { type: 'tool_result', tool_use_id: 't2' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          { type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' }, title: 'T' },
          { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'c' }] } },
          { type: 'text', text: 'and', cache_control: { type: 'ephemeral' } },
        ],
      },
      'anthropic',
    ],
    [
      'anthropic assistant blocks',
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          { type: 'redacted_thinking', data: 'xyz' },
          { type: 'text', text: 'calling' },
          { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} },
        ],
      },
      'anthropic',
    ],
    ['anthropic empty assistant', { role: 'assistant', content: [] }, 'anthropic'],
    ['extra fields', { role: 'user', content: 'hi', id: 'msg_1', metadata: { x: 1 } }, undefined],
  ];
  for (const [name, message, format] of valid) {
    it(`accepts ${name}`, () => {
      const frozen = deepFreeze(message);
      expect(validateMessage(frozen, 'messages[0]', format)).toBe(frozen);
      expect(messageProblems(frozen, 'messages[0]', format)).toEqual([]);
    });
  }

  it('detects the format from the message when none is given', () => {
    expect(
      issuesOf({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] }),
    ).toEqual([]);
    expect(issuesOf({ role: 'tool', tool_call_id: 'c', content: 'x' })).toEqual([]);
  });
});

describe('validateMessage: issues with paths', () => {
  it('names the spec example exactly', () => {
    const message = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: { a: 1 } } }],
    };
    expect(issuesOf(message, 'messages[12]')).toEqual([
      'messages[12].tool_calls[0].function.arguments: expected a string',
    ]);
    expect(() => validateMessage(message, 'messages[12]')).toThrow(
      'messages[12].tool_calls[0].function.arguments: expected a string',
    );
  });

  it('rejects non-objects', () => {
    for (const value of [null, 'hi', 3, [], undefined]) {
      expect(issuesOf(value, 'messages[4]')).toEqual([
        'messages[4]: expected a message object with "role" and "content"',
      ]);
    }
  });

  it('lists the accepted roles for the format', () => {
    expect(issuesOf({ role: 'bot', content: 'x' })).toEqual([
      'messages[0].role: expected one of "system", "developer", "user", "assistant", "tool"',
    ]);
    expect(issuesOf({ content: 'x' }, 'messages[0]', 'anthropic')).toEqual([
      'messages[0].role: expected one of "system", "user", "assistant"',
    ]);
    expect(issuesOf({ role: 'tool', tool_call_id: 'c', content: 'x' }, 'messages[0]', 'anthropic')).toEqual([
      'messages[0].role: expected one of "system", "user", "assistant" (role "tool" is OpenAI\'s; convert the conversation with toAnthropic)',
    ]);
  });

  it('checks every field of every tool call and reports them all', () => {
    const message = {
      role: 'assistant',
      tool_calls: [
        { id: '', type: 'function', function: { name: 'f', arguments: '{}' } },
        { id: 'c2', type: 'fn', function: { name: '', arguments: 3 } },
        { id: 'c3', type: 'function' },
        'nope',
      ],
    };
    expect(issuesOf(message, 'messages[3]')).toEqual([
      'messages[3].tool_calls[0].id: expected a non-empty string',
      'messages[3].tool_calls[1].type: expected one of "function"',
      'messages[3].tool_calls[1].function.name: expected a non-empty string',
      'messages[3].tool_calls[1].function.arguments: expected a string',
      'messages[3].tool_calls[2].function: expected an object',
      'messages[3].tool_calls[3]: expected an object',
    ]);
  });

  it('requires content or tool calls in an OpenAI assistant message', () => {
    expect(issuesOf({ role: 'assistant' })).toEqual([
      'messages[0].content: expected a string or an array of content parts (content may be null only when tool_calls is present)',
    ]);
    expect(
      issuesOf({ role: 'assistant', content: null, tool_calls: [] }, 'messages[0]', 'openai'),
    ).toHaveLength(1);
    expect(issuesOf({ role: 'assistant', content: 5 }, 'messages[0]', 'openai')).toEqual([
      'messages[0].content: expected a string, an array of content parts, or null',
    ]);
    expect(issuesOf({ role: 'assistant', tool_calls: {} }, 'messages[0]', 'openai')).toContain(
      'messages[0].tool_calls: expected an array of tool calls',
    );
  });

  it('checks OpenAI tool messages', () => {
    expect(issuesOf({ role: 'tool', content: 'x' })).toEqual([
      'messages[0].tool_call_id: expected a non-empty string',
    ]);
    expect(
      issuesOf({
        role: 'tool',
        tool_call_id: 'c',
        content: [{ type: 'image_url', image_url: { url: 'u' } }],
      }),
    ).toEqual(['messages[0].content[0].type: expected one of "text"']);
    expect(issuesOf({ role: 'tool', tool_call_id: 'c', content: null })).toEqual([
      'messages[0].content: expected a string or an array of text parts',
    ]);
  });

  it('checks OpenAI system and user content parts', () => {
    expect(
      issuesOf({ role: 'developer', content: [{ type: 'image_url', image_url: { url: 'u' } }] }),
    ).toEqual(['messages[0].content[0].type: expected one of "text"']);
    expect(
      issuesOf(
        {
          role: 'user',
          content: [
            { type: 'text', text: 1 },
            { type: 'image_url', image_url: { url: '', detail: 'max' } },
            { type: 'input_audio', input_audio: { data: 'AAAA' } },
            { type: 'file', file: {} },
            { type: 'video' },
            { type: 'image_url' },
          ],
        },
        'messages[1]',
        'openai',
      ),
    ).toEqual([
      'messages[1].content[0].text: expected a string',
      'messages[1].content[1].image_url.url: expected a non-empty string',
      'messages[1].content[1].image_url.detail: expected one of "auto", "low", "high"',
      'messages[1].content[2].input_audio.format: expected a non-empty string',
      'messages[1].content[3].file: expected "file_data" or "file_id"',
      'messages[1].content[4].type: expected one of "text", "image_url", "input_audio", "file"',
      'messages[1].content[5].image_url: expected an object',
    ]);
  });

  it('explains a block from the other format', () => {
    expect(
      issuesOf(
        { role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'u' } }] },
        'messages[2]',
        'openai',
      ),
    ).toEqual([
      'messages[2].content[0].type: expected one of "text", "image_url", "input_audio", "file" ("image" is an Anthropic content block; convert the conversation with toOpenAI)',
    ]);
    expect(
      issuesOf(
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'u' } }] },
        'messages[2]',
        'anthropic',
      ),
    ).toEqual([
      'messages[2].content[0].type: expected one of "text", "image", "document", "tool_result", "search_result", "container_upload" ("image_url" is an OpenAI content part; convert the conversation with toAnthropic)',
    ]);
  });

  it('checks image sources and base64 data', () => {
    const image = (source: unknown) => ({
      role: 'user',
      content: [
        { type: 'text', text: 'see' },
        { type: 'image', source },
      ],
    });
    expect(
      issuesOf(image({ type: 'base64', media_type: 'image/png', data: 'not base64!' }), 'messages[3]'),
    ).toEqual(['messages[3].content[1].source.data: expected a base64 string']);
    expect(
      issuesOf(image({ type: 'base64', media_type: 'image/png', data: `data:image/png;base64,${PNG}` })),
    ).toEqual([
      'messages[0].content[1].source.data: expected a base64 string (the bare data, without the "data:…;base64," prefix)',
    ]);
    expect(issuesOf(image({ type: 'base64', media_type: 'image/bmp', data: PNG }))).toEqual([
      'messages[0].content[1].source.media_type: expected one of "image/jpeg", "image/png", "image/gif", "image/webp"',
    ]);
    expect(issuesOf(image({ type: 'base64', media_type: 'image/png', data: 'abc' }))).toEqual([
      'messages[0].content[1].source.data: expected a base64 string',
    ]);
    expect(issuesOf(image({ type: 'path', path: '/x' }))).toEqual([
      'messages[0].content[1].source.type: expected one of "base64", "url", "file"',
    ]);
    expect(issuesOf(image(undefined))).toEqual(['messages[0].content[1].source: expected an object']);
    expect(issuesOf(image({ type: 'file' }))).toEqual([
      'messages[0].content[1].source.file_id: expected a non-empty string',
    ]);
  });

  it('checks documents', () => {
    const doc = (block: Record<string, unknown>) => ({
      role: 'user',
      content: [{ type: 'document', ...block }],
    });
    expect(issuesOf(doc({ source: { type: 'base64', media_type: 'application/pdf', data: '%%%' } }))).toEqual(
      ['messages[0].content[0].source.data: expected a base64 string'],
    );
    expect(issuesOf(doc({ source: { type: 'text', data: 'x' }, title: 3 }))).toEqual([
      'messages[0].content[0].source.media_type: expected a non-empty string',
      'messages[0].content[0].title: expected a string',
    ]);
    expect(issuesOf(doc({ source: { type: 'content', content: [{ type: 'tool_use' }] } }))).toEqual([
      'messages[0].content[0].source.content[0].type: expected one of "text", "image" (a "tool_use" block is only allowed in an assistant message)',
    ]);
    expect(issuesOf(doc({ source: { type: 'zip' } }))).toEqual([
      'messages[0].content[0].source.type: expected one of "base64", "text", "url", "content", "file"',
    ]);
  });

  it('checks tool_use and tool_result blocks and where they may appear', () => {
    expect(
      issuesOf(
        { role: 'assistant', content: [{ type: 'tool_use', id: '', name: 7, input: 'x' }] },
        'messages[5]',
      ),
    ).toEqual([
      'messages[5].content[0].id: expected a non-empty string',
      'messages[5].content[0].name: expected a non-empty string',
      'messages[5].content[0].input: expected an object',
    ]);
    expect(
      issuesOf({ role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: [] }] }),
    ).toEqual(['messages[0].content[0].input: expected an object']);
    expect(
      issuesOf({ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'f', input: {} }] }),
    ).toEqual([
      'messages[0].content[0].type: expected one of "text", "image", "document", "tool_result", "search_result", "container_upload" (a "tool_use" block is only allowed in an assistant message)',
    ]);
    expect(issuesOf({ role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 'a' }] })).toEqual([
      'messages[0].content[0].type: expected one of "text", "image", "document", "tool_use", "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result", "bash_code_execution_tool_result", "text_editor_code_execution_tool_result", "tool_search_tool_result", "mcp_tool_use", "mcp_tool_result", "compaction" (a "tool_result" block is only allowed in a user message)',
    ]);
    expect(
      issuesOf({
        role: 'user',
        content: [
          { type: 'tool_result', content: [{ type: 'text' }, { type: 'tool_use' }], is_error: 'yes' },
        ],
      }),
    ).toEqual([
      'messages[0].content[0].tool_use_id: expected a non-empty string',
      'messages[0].content[0].content[0].text: expected a string',
      'messages[0].content[0].content[1].type: expected one of "text", "image", "document", "search_result", "tool_reference" (a "tool_use" block is only allowed in an assistant message)',
      'messages[0].content[0].is_error: expected a boolean',
    ]);
    expect(
      issuesOf({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 5 }] }),
    ).toEqual([
      'messages[0].content[0].content: expected a string or an array of text, image, document and search_result blocks',
    ]);
  });

  it('checks thinking blocks', () => {
    expect(
      issuesOf({
        role: 'assistant',
        content: [{ type: 'thinking', thinking: 'x' }, { type: 'redacted_thinking' }],
      }),
    ).toEqual([
      'messages[0].content[0].signature: expected a string',
      'messages[0].content[1].data: expected a string',
    ]);
    expect(
      issuesOf({ role: 'user', content: [{ type: 'thinking', thinking: 'x', signature: 's' }] }),
    ).toEqual([
      'messages[0].content[0].type: expected one of "text", "image", "document", "tool_result", "search_result", "container_upload" (a "thinking" block is only allowed in an assistant message)',
    ]);
  });

  it('checks Anthropic system and message content', () => {
    expect(
      issuesOf({ role: 'system', content: [{ type: 'image', source: {} }] }, 'messages[0]', 'anthropic'),
    ).toEqual(['messages[0].content[0].type: expected one of "text"']);
    expect(issuesOf({ role: 'user', content: { text: 'x' } }, 'messages[0]', 'anthropic')).toEqual([
      'messages[0].content: expected a string or an array of content blocks',
    ]);
    expect(issuesOf({ role: 'assistant', content: null }, 'messages[0]', 'anthropic')).toEqual([
      'messages[0].content: expected a string or an array of content blocks',
    ]);
    expect(issuesOf({ role: 'user', content: ['hi'] }, 'messages[0]', 'anthropic')).toEqual([
      'messages[0].content[0]: expected an object',
    ]);
  });

  it('refuses a type no format knows in an OpenAI conversation, listing what OpenAI accepts', () => {
    expect(issuesOf({ role: 'user', content: [{ type: 'video' }] }, 'messages[0]', 'openai')).toEqual([
      'messages[0].content[0].type: expected one of "text", "image_url", "input_audio", "file"',
    ]);
  });

  it('keeps a block type no format knows as a future Anthropic block (issue 11)', () => {
    // Unknown format: the block makes the message Anthropic, and it is stored as it is.
    expect(issuesOf({ role: 'user', content: [{ type: 'video', clip: 'x' }] })).toEqual([]);
    expect(
      issuesOf({ role: 'assistant', content: [{ type: 'hologram', data: 1 }] }, 'messages[0]', 'anthropic'),
    ).toEqual([]);
    // A known block in the wrong place is still refused.
    expect(
      issuesOf({
        role: 'user',
        content: [{ type: 'server_tool_use', id: 'a', name: 'web_search', input: {} }],
      }),
    ).toEqual([
      `messages[0].content[0].type: expected one of "text", "image", "document", "tool_result", "search_result", "container_upload" (a "server_tool_use" block is only allowed in an assistant message)`,
    ]);
  });

  it('checks the optional name', () => {
    expect(issuesOf({ role: 'user', content: 'x', name: 5 })).toEqual([
      'messages[0].name: expected a string',
    ]);
  });

  it('counts the issues in the error message', () => {
    const message = { role: 'user', content: [{ type: 'text' }, { type: 'text' }] };
    expect(() => validateMessage(message, 'messages[1]')).toThrow(
      'messages[1].content[0].text: expected a string (and 1 more)',
    );
  });
});
