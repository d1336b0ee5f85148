import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../errors.js';
import type { OpenAIMessage } from '../messages/types.js';
import { toAnthropic } from './convert.js';
import { assertValidRequest, type RequestProblem, validateRequest } from './validate-request.js';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

function problemsOf(messages: unknown[], provider: 'openai' | 'anthropic'): RequestProblem[] {
  const snapshot = JSON.stringify(messages);
  const result = validateRequest(deepFreeze(messages), provider);
  expect(JSON.stringify(messages)).toBe(snapshot);
  expect(result.valid).toBe(result.problems.length === 0);
  return result.problems;
}

/** Problems as `index path: message`, for compact assertions. */
function lines(messages: unknown[], provider: 'openai' | 'anthropic'): string[] {
  return problemsOf(messages, provider).map((p) => `${p.index} ${p.path}: ${p.message}`);
}

const call = (id: string, name = 'f', args = '{}') => ({
  id,
  type: 'function',
  function: { name, arguments: args },
});
const asks = (...ids: string[]) => ({
  role: 'assistant',
  content: null,
  tool_calls: ids.map((id) => call(id)),
});
const answer = (id: string, content = 'ok') => ({ role: 'tool', tool_call_id: id, content });
const use = (id: string) => ({ type: 'tool_use', id, name: 'f', input: {} });
const result = (id: string, content: unknown = 'ok') => ({ type: 'tool_result', tool_use_id: id, content });

describe('validateRequest: OpenAI', () => {
  it('accepts a conversation with parallel calls answered in any order and reused ids', () => {
    const messages = [
      { role: 'system', content: 's' },
      { role: 'user', content: 'u' },
      asks('a', 'b'),
      answer('b'),
      answer('a', ''),
      { role: 'assistant', content: 'done', tool_calls: [call('a')] },
      answer('a'),
      { role: 'assistant', content: 'final' },
      { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
    ];
    expect(problemsOf(messages, 'openai')).toEqual([]);
    expect(validateRequest(messages, 'openai').valid).toBe(true);
  });

  it('accepts an assistant message first (OpenAI does not require a user first)', () => {
    expect(
      lines(
        [
          { role: 'assistant', content: 'hello' },
          { role: 'user', content: 'hi' },
        ],
        'openai',
      ),
    ).toEqual([]);
  });

  it('flags a call answered too late, after another message', () => {
    expect(
      lines(
        [
          { role: 'user', content: 'u' },
          asks('a', 'b'),
          answer('a'),
          { role: 'user', content: 'x' },
          answer('b'),
        ],
        'openai',
      ),
    ).toEqual([
      '1 messages[1].tool_calls[1].id: tool call "b" is never answered: expected a tool message with tool_call_id "b" right after messages[1] before messages[3], with only tool messages in between',
      '4 messages[4].tool_call_id: no tool call "b" is waiting for this result: a tool message must follow the assistant message whose tool_calls it answers, with only tool messages in between',
    ]);
  });

  it('flags a call never answered at the end of the request', () => {
    expect(lines([{ role: 'user', content: 'u' }, asks('a')], 'openai')).toEqual([
      '1 messages[1].tool_calls[0].id: tool call "a" is never answered: expected a tool message with tool_call_id "a" right after messages[1] but the request ends before one',
    ]);
  });

  it('flags orphan, mismatched and repeated tool messages', () => {
    expect(lines([{ role: 'user', content: 'u' }, answer('z')], 'openai')).toEqual([
      '1 messages[1].tool_call_id: no tool call "z" is waiting for this result: a tool message must follow the assistant message whose tool_calls it answers, with only tool messages in between',
    ]);
    expect(lines([{ role: 'user', content: 'u' }, asks('a'), answer('a'), answer('q')], 'openai')).toEqual([
      '3 messages[3].tool_call_id: no tool call "q" in messages[1] (its calls: "a")',
    ]);
    expect(lines([{ role: 'user', content: 'u' }, asks('a'), answer('a'), answer('a')], 'openai')).toEqual([
      '3 messages[3].tool_call_id: tool call "a" of messages[1] is already answered: each call is answered once',
    ]);
  });

  it('pairs duplicate ids in one message by position and flags them', () => {
    expect(
      lines([{ role: 'user', content: 'u' }, asks('a', 'a'), answer('a'), answer('a')], 'openai'),
    ).toEqual(['1 messages[1].tool_calls[1].id: duplicate tool call id "a" in one message']);
  });

  it('flags empty assistant messages, empty tool_calls and empty content arrays', () => {
    expect(
      lines(
        [
          { role: 'user', content: [] },
          { role: 'assistant', content: '' },
          { role: 'user', content: 'u' },
          { role: 'assistant', content: 'x', tool_calls: [] },
        ],
        'openai',
      ),
    ).toEqual([
      '0 messages[0].content: expected at least one content part',
      '1 messages[1].content: an assistant message needs content or tool_calls, and this one is empty',
      '3 messages[3].tool_calls: expected at least one tool call (omit tool_calls when there are none)',
    ]);
  });

  it('includes shape problems without throwing, with their index', () => {
    expect(
      lines(
        [
          { role: 'user', content: 'u' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: {} } }],
          },
          answer('a'),
        ],
        'openai',
      ),
    ).toEqual(['1 messages[1].tool_calls[0].function.arguments: expected a string']);
    expect(lines([null, { role: 'user', content: 'u' }], 'openai')).toEqual([
      '0 messages[0]: expected a message object with "role" and "content"',
    ]);
  });

  it('flags Anthropic messages sent to OpenAI', () => {
    const problems = lines([{ role: 'user', content: [result('t')] }], 'openai');
    expect(problems[0]).toMatch(
      /^0 messages\[0\]\.content\[0\]\.type: expected one of .*"tool_result" is an Anthropic content block/,
    );
  });

  it('flags an empty request', () => {
    expect(lines([], 'openai')).toEqual(['-1 messages: expected at least one message']);
    expect(validateRequest('nope' as unknown as unknown[], 'openai').problems).toEqual([
      { index: -1, path: 'messages', message: 'expected an array of messages' },
    ]);
  });
});

describe('validateRequest: Anthropic', () => {
  it('accepts a valid conversation with parallel tools, results before text and a prefill', () => {
    const messages = [
      { role: 'system', content: 's' },
      { role: 'system', content: [{ type: 'text', text: 's2' }] },
      { role: 'user', content: 'u' },
      { role: 'assistant', content: [{ type: 'text', text: 'looking' }, use('t1'), use('t2')] },
      {
        role: 'user',
        content: [result('t2'), result('t1', [{ type: 'text', text: 'r' }]), { type: 'text', text: 'and?' }],
      },
      { role: 'assistant', content: [use('t3')] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't3' }] },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'more' },
      { role: 'user', content: 'two users in a row are merged by the API' },
      { role: 'assistant', content: '' },
    ];
    expect(lines(messages, 'anthropic')).toEqual([]);
  });

  it('flags system messages after the conversation started', () => {
    expect(
      lines(
        [
          { role: 'user', content: 'u' },
          { role: 'system', content: 's' },
        ],
        'anthropic',
      ),
    ).toEqual([
      '1 messages[1].role: a system message must come before every user and assistant message: in Anthropic format system messages become the top-level system prompt',
    ]);
  });

  it('flags a first message that is not from the user', () => {
    expect(
      lines(
        [
          { role: 'system', content: 's' },
          { role: 'assistant', content: 'hi' },
          { role: 'user', content: 'u' },
        ],
        'anthropic',
      ),
    ).toEqual([
      '1 messages[1].role: expected "user": the first message after the system prompt must be from the user',
    ]);
  });

  it('flags a request with only a system prompt', () => {
    expect(lines([{ role: 'system', content: 's' }], 'anthropic')).toEqual([
      '-1 messages: expected at least one user message besides the system prompt',
    ]);
  });

  it('flags a tool_use whose result is not in the next message', () => {
    expect(
      lines(
        [
          { role: 'user', content: 'u' },
          { role: 'assistant', content: [use('t1'), use('t2')] },
          { role: 'user', content: [result('t1')] },
          { role: 'user', content: [result('t2')] },
        ],
        'anthropic',
      ),
    ).toEqual([
      '1 messages[1].content[1].id: tool_use "t2" is never answered: the next message, messages[2], has no tool_result for it; each tool_use needs a tool_result block in the user message right after it',
      '3 messages[3].content[0].tool_use_id: no tool_use "t2" in the previous message, messages[2]: each tool_result must answer a tool_use of the assistant message right before it',
    ]);
    expect(
      lines(
        [
          { role: 'user', content: 'u' },
          { role: 'assistant', content: [use('t1')] },
        ],
        'anthropic',
      ),
    ).toEqual([
      '1 messages[1].content[0].id: tool_use "t1" is never answered: the request ends after it; each tool_use needs a tool_result block in the user message right after it',
    ]);
  });

  it('flags results that answer nothing or answer twice', () => {
    expect(lines([{ role: 'user', content: [result('x')] }], 'anthropic')).toEqual([
      '0 messages[0].content[0].tool_use_id: no tool_use "x" in the previous message: each tool_result must answer a tool_use of the assistant message right before it',
    ]);
    expect(
      lines(
        [
          { role: 'user', content: 'u' },
          { role: 'assistant', content: [use('t')] },
          { role: 'user', content: [result('t'), result('t')] },
        ],
        'anthropic',
      ),
    ).toEqual([
      '2 messages[2].content[1].tool_use_id: tool_use "t" is already answered in this message: each tool_use gets one tool_result',
    ]);
  });

  it('flags text before tool results in a user message', () => {
    expect(
      lines(
        [
          { role: 'user', content: 'u' },
          { role: 'assistant', content: [use('t')] },
          { role: 'user', content: [{ type: 'text', text: 'here:' }, result('t')] },
        ],
        'anthropic',
      ),
    ).toEqual([
      '2 messages[2].content[1].type: tool_result blocks must come before any other block in a user message: move the text after the results',
    ]);
  });

  it('flags reused and malformed tool_use ids', () => {
    expect(
      lines(
        [
          { role: 'user', content: 'u' },
          { role: 'assistant', content: [use('t')] },
          { role: 'user', content: [result('t')] },
          { role: 'assistant', content: [use('t'), use('bad id')] },
          { role: 'user', content: [result('t'), result('bad id')] },
        ],
        'anthropic',
      ),
    ).toEqual([
      '3 messages[3].content[0].id: tool_use ids must be unique within a request: "t" is already used at messages[1].content[0].id',
      '3 messages[3].content[1].id: expected an id matching ^[a-zA-Z0-9_-]+$',
    ]);
  });

  it('flags empty text and empty messages', () => {
    expect(
      lines(
        [
          { role: 'system', content: [{ type: 'text', text: '' }] },
          { role: 'user', content: ' ' },
          { role: 'assistant', content: [] },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'x' },
              { type: 'text', text: '\n' },
            ],
          },
          { role: 'assistant', content: 'fine' },
        ],
        'anthropic',
      ),
    ).toEqual([
      '0 messages[0].content[0].text: expected non-empty text: Anthropic refuses empty and whitespace-only text blocks',
      '1 messages[1].content: expected non-empty content: only the final assistant message may be empty',
      '2 messages[2].content: expected non-empty content: only the final assistant message may be empty',
      '3 messages[3].content[1].text: expected non-empty text: Anthropic refuses empty and whitespace-only text blocks',
    ]);
  });

  it('flags a final assistant prefill that ends with whitespace', () => {
    expect(
      lines(
        [
          { role: 'user', content: 'u' },
          { role: 'assistant', content: 'The answer is ' },
        ],
        'anthropic',
      ),
    ).toEqual(['1 messages[1].content: the final assistant message (a prefill) may not end with whitespace']);
    expect(
      lines(
        [
          { role: 'user', content: 'u' },
          { role: 'assistant', content: [{ type: 'text', text: 'x\n' }] },
        ],
        'anthropic',
      ),
    ).toEqual([
      '1 messages[1].content[0].text: the final assistant message (a prefill) may not end with whitespace',
    ]);
  });

  it('flags empty tool result content', () => {
    expect(
      lines(
        [
          { role: 'user', content: 'u' },
          { role: 'assistant', content: [use('a'), use('b'), use('c')] },
          {
            role: 'user',
            content: [
              result('a', ''),
              { type: 'tool_result', tool_use_id: 'b', is_error: true },
              result('c', [{ type: 'text', text: '' }]),
            ],
          },
        ],
        'anthropic',
      ),
    ).toEqual([
      '2 messages[2].content[0].content: expected non-empty content: omit "content" for a tool that returned nothing',
      '2 messages[2].content[1].content: expected content: a tool_result with is_error true needs content',
      '2 messages[2].content[2].content[0].text: expected non-empty text: Anthropic refuses empty and whitespace-only text blocks',
    ]);
  });

  it('flags OpenAI messages sent to Anthropic', () => {
    expect(lines([{ role: 'user', content: 'u' }, asks('a'), answer('a')], 'anthropic')).toEqual([
      '1 messages[1].content: expected a string or an array of content blocks',
      '2 messages[2].role: expected one of "system", "user", "assistant" (role "tool" is OpenAI\'s; convert the conversation with toAnthropic)',
    ]);
  });
});

describe('assertValidRequest', () => {
  it('returns valid messages typed', () => {
    const messages = [{ role: 'user', content: 'hi' }];
    expect(assertValidRequest(messages, 'anthropic')).toBe(messages);
  });

  it('throws every problem as an InvalidMessageError', () => {
    let error: unknown;
    try {
      assertValidRequest([{ role: 'user', content: 'u' }, asks('a', 'b')], 'openai');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidMessageError);
    const invalid = error as InvalidMessageError;
    expect(invalid.code).toBe('invalid_request');
    expect(invalid.issues.map((i) => i.path)).toEqual([
      'messages[1].tool_calls[0].id',
      'messages[1].tool_calls[1].id',
    ]);
    expect(invalid.message).toMatch(
      /^messages\[1\]\.tool_calls\[0\]\.id: tool call "a" is never answered.*\(and 1 more\)$/,
    );
  });
});

const TAU = '/work/shared/data/tau-bench/airline-gpt4o.json';
if (!existsSync(TAU)) console.log(`skipping the tau-bench request checks: ${TAU} is absent`);

describe.skipIf(!existsSync(TAU))('validateRequest on the 200 tau-bench airline runs', () => {
  const runs = existsSync(TAU)
    ? (JSON.parse(readFileSync(TAU, 'utf8')) as Array<{ traj: OpenAIMessage[] }>)
    : [];

  it('accepts every run as an OpenAI request', () => {
    expect(runs).toHaveLength(200);
    const failing = runs.flatMap((run, i) => {
      const { problems } = validateRequest(run.traj, 'openai');
      return problems.length > 0 ? [{ run: i, first: problems[0] }] : [];
    });
    expect(failing).toEqual([]);
  });

  it('accepts every run converted to Anthropic, including the 49 that reuse call ids', () => {
    let reusing = 0;
    const failing = runs.flatMap((run, i) => {
      const ids = run.traj.flatMap((m) =>
        m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : [],
      );
      if (new Set(ids).size < ids.length) reusing++;
      const { problems } = validateRequest(toAnthropic(run.traj), 'anthropic');
      return problems.length > 0 ? [{ run: i, first: problems[0] }] : [];
    });
    expect(reusing).toBe(49);
    expect(failing).toEqual([]);
  });
});
