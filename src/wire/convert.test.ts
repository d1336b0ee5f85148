import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FormatMismatchError, InvalidMessageError } from '../errors.js';
import type {
  AnthropicMessage,
  Message,
  OpenAIContentPart,
  OpenAIMessage,
  OpenAITextPart,
} from '../messages/types.js';
import { convertMessages, toAnthropic, toOpenAI } from './convert.js';
import { validateRequest } from './validate-request.js';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const call = (id: string, name: string, args: string) => ({
  id,
  type: 'function' as const,
  function: { name, arguments: args },
});

describe('toAnthropic', () => {
  it('turns system and developer messages at the top into system messages', () => {
    const out = toAnthropic(
      deepFreeze([
        { role: 'system', content: 'be brief' },
        { role: 'developer', content: [{ type: 'text', text: 'dev rules' }] },
        { role: 'user', content: 'hi' },
      ]),
    );
    expect(out).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'system', content: [{ type: 'text', text: 'dev rules' }] },
      { role: 'user', content: 'hi' },
    ]);
  });

  it('turns a system message in mid-conversation into a user message', () => {
    const out = toAnthropic([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'system', content: 'the user is on mobile' },
    ]);
    expect(out[2]).toEqual({ role: 'user', content: 'the user is on mobile' });
  });

  it('turns tool calls into tool_use blocks and a run of tool messages into one user message', () => {
    const input: OpenAIMessage[] = deepFreeze([
      { role: 'user', content: 'weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'checking both',
        tool_calls: [
          call('call_1', 'weather', '{"city":"Paris"}'),
          call('call_2', 'weather', '{"city":"Rome"}'),
        ],
      },
      { role: 'tool', tool_call_id: 'call_2', content: '21C' },
      { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '18C' }] },
      { role: 'user', content: 'and tomorrow?' },
    ]);
    expect(toAnthropic(input)).toEqual([
      { role: 'user', content: 'weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'checking both' },
          { type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'weather', input: { city: 'Rome' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_2', content: '21C' },
          { type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: '18C' }] },
          { type: 'text', text: 'and tomorrow?' },
        ],
      },
    ]);
  });

  it('keeps arguments that are not a JSON object raw, and empty arguments as {}', () => {
    const out = toAnthropic([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [call('a', 'f', '{"broken":'), call('b', 'g', ''), call('c', 'h', '[1,2]')],
      },
    ]);
    expect(out[1]?.content).toEqual([
      { type: 'tool_use', id: 'a', name: 'f', input: { _raw: '{"broken":' } },
      { type: 'tool_use', id: 'b', name: 'g', input: {} },
      { type: 'tool_use', id: 'c', name: 'h', input: { _raw: '[1,2]' } },
    ]);
    const back = toOpenAI(out);
    expect(back[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [call('a', 'f', '{"broken":'), call('b', 'g', '{}'), call('c', 'h', '[1,2]')],
    });
  });

  it('gives reused and invalid call ids fresh valid ones, and results follow by position', () => {
    const out = toAnthropic([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call('call_1', 'f', '{}')] },
      { role: 'tool', tool_call_id: 'call_1', content: 'one' },
      { role: 'assistant', content: null, tool_calls: [call('call_1', 'f', '{}'), call('fn:0', 'g', '{}')] },
      { role: 'tool', tool_call_id: 'fn:0', content: 'zero' },
      { role: 'tool', tool_call_id: 'call_1', content: 'two' },
    ]);
    expect(out[3]?.content).toEqual([
      { type: 'tool_use', id: 'call_1_2', name: 'f', input: {} },
      { type: 'tool_use', id: 'fn_0', name: 'g', input: {} },
    ]);
    expect(out[4]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'fn_0', content: 'zero' },
      { type: 'tool_result', tool_use_id: 'call_1_2', content: 'two' },
    ]);
    expect(validateRequest(out, 'anthropic').problems).toEqual([]);
  });

  it('converts images, files and audio', () => {
    const out = toAnthropic([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'see' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'high' } },
          { type: 'image_url', image_url: { url: 'https://x.test/cat.jpg' } },
          { type: 'file', file: { file_data: `data:application/pdf;base64,${PNG}`, filename: 'a.pdf' } },
          { type: 'file', file: { file_id: 'file-123' } },
          { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
          { type: 'text', text: '' },
        ],
      },
    ]);
    expect(out[0]?.content).toEqual([
      { type: 'text', text: 'see' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      { type: 'image', source: { type: 'url', url: 'https://x.test/cat.jpg' } },
      {
        type: 'document',
        source: { type: 'base64', media_type: 'application/pdf', data: PNG },
        title: 'a.pdf',
      },
      { type: 'text', text: '[file file-123 omitted: an OpenAI file is not available to Anthropic]' },
      { type: 'text', text: '[audio input (wav) omitted: Anthropic messages cannot carry audio]' },
    ]);
  });

  it('leaves content out of a result for empty tool output, and refusals become text', () => {
    const out = toAnthropic([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call('a', 'f', '{}')] },
      { role: 'tool', tool_call_id: 'a', content: '' },
      { role: 'assistant', content: null, refusal: 'I cannot help with that' },
    ]);
    expect(out[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a' }] });
    expect(out[3]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'I cannot help with that' }],
    });
    expect(toOpenAI(out)[2]).toEqual({ role: 'tool', tool_call_id: 'a', content: '' });
  });
});

describe('toOpenAI', () => {
  it('splits a user message of results into tool messages, then a user message with the rest', () => {
    const input: AnthropicMessage[] = deepFreeze([
      { role: 'system', content: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }] },
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'plan', signature: 'sig' },
          { type: 'tool_use', id: 't1', name: 'search', input: { q: 'x', n: [1, 2] } },
          { type: 'tool_use', id: 't2', name: 'noop', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'found' }] },
          { type: 'tool_result', tool_use_id: 't2', content: 'bad input', is_error: true },
          { type: 'text', text: 'also look at this' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        ],
      },
    ]);
    expect(toOpenAI(input)).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'sys' }] },
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [call('t1', 'search', '{"q":"x","n":[1,2]}'), call('t2', 'noop', '{}')],
      },
      { role: 'tool', tool_call_id: 't1', content: [{ type: 'text', text: 'found' }] },
      { role: 'tool', tool_call_id: 't2', content: 'Error: bad input' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'also look at this' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        ],
      },
    ]);
  });

  it('moves images out of tool results into a following user message', () => {
    const out = toOpenAI([
      { role: 'user', content: 'shot?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'screenshot', input: {} }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 't',
            content: [
              { type: 'text', text: 'here' },
              { type: 'image', source: { type: 'url', url: 'https://x.test/s.png' } },
            ],
          },
        ],
      },
    ]);
    expect(out.slice(2)).toEqual([
      {
        role: 'tool',
        tool_call_id: 't',
        content: [
          { type: 'text', text: 'here' },
          { type: 'text', text: '[image in the next user message]' },
        ],
      },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.test/s.png' } }] },
    ]);
    expect(validateRequest(out, 'openai').problems).toEqual([]);
  });

  const withThinking: AnthropicMessage[] = [
    { role: 'user', content: 'q' },
    {
      role: 'assistant',
      content: [
        { type: 'redacted_thinking', data: 'zzz' },
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
    },
    { role: 'user', content: 'q2' },
    { role: 'assistant', content: [{ type: 'thinking', thinking: 'only thoughts', signature: 's' }] },
  ];

  /** The not_convertible issues `convert` throws (fails the test when it does not throw them). */
  function refused(convert: () => unknown): InvalidMessageError['issues'] {
    let caught: unknown;
    try {
      convert();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidMessageError);
    expect((caught as InvalidMessageError).code).toBe('not_convertible');
    return (caught as InvalidMessageError).issues;
  }

  it('refuses thinking by default, listing every thinking block for both OpenAI formats', () => {
    for (const to of ['openai', 'openai-responses'] as const) {
      const issues = refused(() => convertMessages(withThinking, to));
      expect(issues.map((i) => i.path)).toEqual(['messages[1].content[0]', 'messages[3].content[0]']);
      expect(issues[0]?.message).toMatch(/"redacted_thinking".*dropThinking/);
      expect(issues[1]?.message).toMatch(/"thinking".*dropThinking/);
    }
  });

  it('lists thinking with the other blocks that cannot go across; dropThinking lets only thinking by', () => {
    const mixed = [
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 't', signature: 's' },
          { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } },
        ],
      },
    ] as unknown as AnthropicMessage[];
    expect(refused(() => convertMessages(mixed, 'openai')).map((i) => i.path)).toEqual([
      'messages[1].content[0]',
      'messages[1].content[1]',
    ]);
    expect(
      refused(() => convertMessages(mixed, 'openai', { dropThinking: true })).map((i) => i.path),
    ).toEqual(['messages[1].content[1]']);
  });

  it('drops thinking with dropThinking, and an assistant message left with nothing', () => {
    const out = convertMessages(withThinking, 'openai', { dropThinking: true });
    expect(toOpenAI(withThinking)).toEqual(out);
    expect(out).toEqual([
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
      { role: 'user', content: 'q2' },
    ]);
  });

  it('converts documents', () => {
    const out = toOpenAI([
      {
        role: 'user',
        content: [
          {
            type: 'document',
            source: { type: 'base64', media_type: 'application/pdf', data: PNG },
            title: 'r.pdf',
          },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain doc' } },
          { type: 'document', source: { type: 'url', url: 'https://x.test/d.pdf' } },
        ],
      },
    ]);
    expect(out).toEqual([
      {
        role: 'user',
        content: [
          { type: 'file', file: { file_data: `data:application/pdf;base64,${PNG}`, filename: 'r.pdf' } },
          { type: 'text', text: 'plain doc' },
          { type: 'text', text: '[document https://x.test/d.pdf at https://x.test/d.pdf]' },
        ],
      },
    ]);
  });
});

describe('convertMessages', () => {
  const openai: OpenAIMessage[] = [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: null, tool_calls: [call('c', 'f', '{"a":1}')] },
    { role: 'tool', tool_call_id: 'c', content: 'r' },
  ];

  it('detects the source format and converts', () => {
    const anthropic = convertMessages(openai, 'anthropic');
    expect(anthropic).toEqual(toAnthropic(openai));
    expect(convertMessages(anthropic, 'openai')).toEqual(openai);
  });

  it('returns a copy of the same messages when nothing needs converting', () => {
    const same = convertMessages(openai, 'openai');
    expect(same).not.toBe(openai);
    expect(same).toEqual(openai);
    expect(same[1]).toBe(openai[1]);
    const plain: Message[] = [{ role: 'user', content: 'hi' }];
    expect(convertMessages(plain, 'anthropic')).toEqual(plain);
  });

  it('turns text-only messages that fit both Chat and Anthropic into Responses items', () => {
    // Found by the format conformance suite: they were returned as they were, in Chat's shape.
    const both: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'q' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'a' }] },
    ];
    const items = convertMessages(both, 'openai-responses');
    expect(items).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'q' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a' }] },
    ]);
    expect(validateRequest(items, 'openai-responses').problems).toEqual([]);
    const gemini = [
      { role: 'user', parts: [{ text: 'q' }] },
      { role: 'model', parts: [{ text: 'a' }] },
    ] as unknown as Message[];
    expect(convertMessages(gemini, 'openai-responses')).toEqual(items);
  });

  it('makes a system message after the conversation started a Gemini user content', () => {
    // Found by the format conformance suite: it stayed a system content between the others,
    // which Gemini refuses (the system instruction stands before the contents).
    const late: Message[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a' },
      { role: 'system', content: 'read-only from now on' },
      { role: 'user', content: 'next' },
    ];
    for (const from of [late, convertMessages(late, 'anthropic')]) {
      const gemini = convertMessages(from, 'gemini');
      expect(gemini[0]).toEqual({ role: 'system', parts: [{ text: 'be brief' }] });
      expect(gemini[3]).toEqual({ role: 'user', parts: [{ text: 'read-only from now on' }] });
      expect(validateRequest(gemini, 'gemini').problems).toEqual([]);
    }
  });

  it('pairs Gemini responses split over two user contents with the calls they answer', () => {
    // Found by the format conformance suite: the second response lost its call's id.
    const gemini = [
      { role: 'user', parts: [{ text: 'q' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'search', args: { q: 1 } } },
          { functionCall: { name: 'lookup', args: { q: 2 } } },
        ],
      },
      { role: 'user', parts: [{ functionResponse: { name: 'search', response: { content: 'one' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { content: 'two' } } }] },
      { role: 'model', parts: [{ text: 'done' }] },
    ] as unknown as Message[];
    const chat = convertMessages(gemini, 'openai');
    const ids = (chat[1] as OpenAIMessage & { tool_calls: Array<{ id: string }> }).tool_calls.map(
      (c) => c.id,
    );
    expect(chat.slice(2, 4).map((m) => (m as { tool_call_id: string }).tool_call_id)).toEqual(ids);
    expect(validateRequest(chat, 'openai').problems).toEqual([]);
  });

  it('refuses mixed input', () => {
    const mixed = [
      ...openai,
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c' }] },
    ] as Message[];
    expect(() => convertMessages(mixed, 'anthropic')).toThrow(FormatMismatchError);
  });
});

// ---------------------------------------------------------------------------------- properties

/** Text that is never blank and never ends in whitespace (a final prefill may not). */
const textArb = fc.string({ maxLength: 24 }).map((s) => `t${s}.`);
const textPartArb = textArb.map((text): OpenAITextPart => ({ type: 'text', text }));
const imagePartArb = fc
  .oneof(
    fc
      .uint8Array({ minLength: 1, maxLength: 24 })
      .map((b) => `data:image/png;base64,${Buffer.from(b).toString('base64')}`),
    fc.webUrl(),
  )
  .map((url): OpenAIContentPart => ({ type: 'image_url', image_url: { url } }));
const userContentArb: fc.Arbitrary<string | OpenAIContentPart[]> = fc.oneof(
  textArb,
  fc.array(fc.oneof(textPartArb, imagePartArb), { minLength: 2, maxLength: 3 }),
  imagePartArb.map((p) => [p]),
);
const argsArb = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
const toolOutputArb: fc.Arbitrary<string | OpenAITextPart[]> = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.array(textPartArb, { minLength: 1, maxLength: 2 }),
);

interface Round {
  content: string | null;
  calls: Array<{ name: string; args: string }>;
  order: number[];
  outputs: Array<string | OpenAITextPart[]>;
}

const roundArb: fc.Arbitrary<Round> = fc.integer({ min: 1, max: 3 }).chain((n) =>
  fc.record({
    content: fc.option(textArb, { nil: null }),
    calls: fc.array(
      fc.record({
        name: fc.constantFrom('search', 'get_user', 'book_flight'),
        args: argsArb.map((a) => JSON.stringify(a)),
      }),
      { minLength: n, maxLength: n },
    ),
    order: fc.shuffledSubarray(
      Array.from({ length: n }, (_, i) => i),
      { minLength: n, maxLength: n },
    ),
    outputs: fc.array(toolOutputArb, { minLength: n, maxLength: n }),
  }),
);

const turnArb = fc.record({
  user: userContentArb,
  rounds: fc.array(roundArb, { maxLength: 2 }),
  reply: fc.option(textArb, { nil: undefined }),
});

/**
 * A valid OpenAI conversation: optional system prompt, turns of a user message, rounds of
 * parallel tool calls answered in a shuffled order, and an optional reply. With `reuseIds`, every
 * round names its calls `call_0`, `call_1`… as some real logs do; otherwise ids are unique.
 */
const conversationArb = fc
  .record({
    system: fc.option(textArb, { nil: undefined }),
    turns: fc.array(turnArb, { minLength: 1, maxLength: 4 }),
    reuseIds: fc.boolean(),
  })
  .map(({ system, turns, reuseIds }) => {
    const messages: OpenAIMessage[] = [];
    if (system !== undefined) messages.push({ role: 'system', content: system });
    let next = 0;
    for (const turn of turns) {
      messages.push({ role: 'user', content: turn.user });
      for (const round of turn.rounds) {
        const ids = round.calls.map((_, j) => (reuseIds ? `call_${j}` : `call_${next++}`));
        messages.push({
          role: 'assistant',
          content: round.content,
          tool_calls: round.calls.map((c, j) => call(ids[j] ?? '', c.name, c.args)),
        });
        for (const j of round.order)
          messages.push({ role: 'tool', tool_call_id: ids[j] ?? '', content: round.outputs[j] ?? '' });
      }
      if (turn.reply !== undefined) messages.push({ role: 'assistant', content: turn.reply });
    }
    return { messages, reuseIds };
  });

/** Replaces call ids by their position (`assistant index:call index`), pairing results by position. */
function positionalIds(messages: readonly OpenAIMessage[]): OpenAIMessage[] {
  let pending: Array<{ id: string; label: string; answered: boolean }> = [];
  return messages.map((message, i) => {
    if (message.role === 'assistant' && message.tool_calls) {
      pending = message.tool_calls.map((c, j) => ({ id: c.id, label: `${i}:${j}`, answered: false }));
      return { ...message, tool_calls: message.tool_calls.map((c, j) => ({ ...c, id: `${i}:${j}` })) };
    }
    if (message.role === 'tool') {
      const match = pending.find((p) => p.id === message.tool_call_id && !p.answered);
      if (match) match.answered = true;
      return { ...message, tool_call_id: match ? match.label : `orphan:${message.tool_call_id}` };
    }
    pending = [];
    return message;
  });
}

/** Shifts message indexes out of the labels so two lists can be compared independently of them. */
function sequenceLabels(messages: readonly OpenAIMessage[]): OpenAIMessage[] {
  let exchange = -1;
  const byIndex = new Map<string, string>();
  return messages.map((message) => {
    if (message.role === 'assistant' && message.tool_calls) {
      exchange++;
      return {
        ...message,
        tool_calls: message.tool_calls.map((c) => {
          const label = `x${exchange}:${c.id.split(':')[1]}`;
          byIndex.set(c.id, label);
          return { ...c, id: label };
        }),
      };
    }
    if (message.role === 'tool')
      return { ...message, tool_call_id: byIndex.get(message.tool_call_id) ?? message.tool_call_id };
    return message;
  });
}

describe('conversion properties', () => {
  it('OpenAI → Anthropic is a valid Anthropic request, and back gives the same conversation', () => {
    fc.assert(
      fc.property(conversationArb, ({ messages, reuseIds }) => {
        deepFreeze(messages);
        expect(validateRequest(messages, 'openai').problems).toEqual([]);
        const anthropic = toAnthropic(messages);
        expect(validateRequest(anthropic, 'anthropic').problems).toEqual([]);
        const back = toOpenAI(deepFreeze(anthropic));
        expect(validateRequest(back, 'openai').problems).toEqual([]);
        if (reuseIds) {
          // Reused ids are renamed for Anthropic; everything else, and the pairing, survives.
          expect(sequenceLabels(positionalIds(back))).toEqual(sequenceLabels(positionalIds(messages)));
        } else {
          expect(back).toEqual(messages);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('Anthropic → OpenAI → Anthropic gives the same conversation', () => {
    fc.assert(
      fc.property(conversationArb, ({ messages }) => {
        const anthropic = deepFreeze(toAnthropic(messages));
        expect(toAnthropic(toOpenAI(anthropic))).toEqual(anthropic);
      }),
      { numRuns: 100 },
    );
  });
});
