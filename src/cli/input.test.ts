import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CliError } from './cli-error.js';
import { checkConversation, loadConversation, parseInput, readInput, suggestMessagesPath } from './input.js';

const user = { role: 'user', content: 'Fix src/date.ts' };
const call = {
  role: 'assistant',
  content: null,
  tool_calls: [
    { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"src/date.ts"}' } },
  ],
};
const result = { role: 'tool', tool_call_id: 'call_1', content: 'export const x = 1;' };
const anthropicCall = {
  role: 'assistant',
  content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'src/date.ts' } }],
};

function failure(fn: () => unknown): CliError {
  try {
    fn();
  } catch (error) {
    if (error instanceof CliError) return error;
    throw error;
  }
  throw new Error('expected a CliError');
}

describe('parseInput', () => {
  it('reads a JSON array, an object with messages, JSONL and a single message alike', () => {
    const messages = [user, call, result];
    expect(parseInput(JSON.stringify(messages), 'a.json').messages).toEqual(messages);
    expect(parseInput(JSON.stringify({ model: 'gpt-4o', messages }), 'b.json').messages).toEqual(messages);
    const jsonl = parseInput(`${messages.map((m) => JSON.stringify(m)).join('\n')}\n`, 'c.jsonl');
    expect(jsonl.messages).toEqual(messages);
    expect(jsonl.lines).toEqual([1, 2, 3]);
    expect(parseInput(JSON.stringify(user), 'd.json').messages).toEqual([user]);
  });

  it('skips blank lines and CRLF endings in JSONL and a byte-order mark, keeping line numbers', () => {
    const text = `\ufeff${JSON.stringify(user)}\r\n\r\n${JSON.stringify(call)}\r\n${JSON.stringify(result)}`;
    const parsed = parseInput(text, 'e.jsonl');
    expect(parsed.messages).toEqual([user, call, result]);
    expect(parsed.lines).toEqual([1, 3, 4]);
  });

  it("unwraps the file store's own log lines", () => {
    const text = [user, result]
      .map((message, seq) =>
        JSON.stringify({ seq, metadata: { timestamp: '2024-01-01T00:00:00.000Z' }, message }),
      )
      .join('\n');
    expect(parseInput(text, 'demo.jsonl').messages).toEqual([user, result]);
  });

  it('follows --messages-path through objects and arrays', () => {
    const runs = [{ task_id: 1, traj: [user, call, result] }];
    expect(parseInput(JSON.stringify(runs), 'runs.json', { messagesPath: '0.traj' }).messages).toEqual([
      user,
      call,
      result,
    ]);
    expect(
      parseInput(JSON.stringify({ data: { run: { messages: [user] } } }), 'x.json', {
        messagesPath: 'data.run',
      }).messages,
    ).toEqual([user]);
  });

  it('says where a --messages-path stops matching', () => {
    const runs = [{ task_id: 1, traj: [user] }];
    expect(
      failure(() => parseInput(JSON.stringify(runs), 'r.json', { messagesPath: '3.traj' })).message,
    ).toBe('r.json: --messages-path 3.traj: the top level has 1 elements, no index 3');
    expect(
      failure(() => parseInput(JSON.stringify(runs), 'r.json', { messagesPath: '0.trajectory' })).message,
    ).toMatch(/no "trajectory" in 0 \(an object with keys task_id, traj\)/);
    expect(
      failure(() => parseInput(JSON.stringify(runs), 'r.json', { messagesPath: '0.task_id' })).message,
    ).toMatch(/--messages-path 0.task_id leads to a number/);
  });

  it('suggests a --messages-path when the messages are nested', () => {
    const runs = [{ task_id: 1, info: {}, traj: [user] }];
    const error = failure(() => parseInput(JSON.stringify(runs), 'runs.json'));
    expect(error.exitCode).toBe(1);
    expect(error.message).toMatch(/try --messages-path 0\.traj$/);
    expect(suggestMessagesPath({ a: { b: [{ c: [user] }] } })).toBe('a.b.0.c');
    expect(suggestMessagesPath({ a: 1 })).toBeUndefined();
  });

  it('gives the line and column of a JSON syntax error, in JSON and in JSONL', () => {
    expect(failure(() => parseInput('[\n  {"role": "user",, "content": "x"}\n]', 'bad.json')).message).toBe(
      'bad.json:2:19: invalid JSON: unexpected ",", expected a property name in quotes',
    );
    const jsonl = `${JSON.stringify(user)}\n${JSON.stringify(result)}\n{"role": "user" "content": "x"}\n`;
    expect(failure(() => parseInput(jsonl, 'bad.jsonl')).message).toBe(
      'bad.jsonl:3:17: invalid JSON: unexpected "\\"", expected "," or "}"',
    );
  });

  it('refuses empty input and shapes without messages', () => {
    expect(failure(() => parseInput('  \n', 'empty.json')).message).toMatch(/^empty.json: empty input/);
    expect(failure(() => parseInput('{"model": "gpt-4o"}', 'o.json')).message).toMatch(
      /found an object with keys model; use --messages-path/,
    );
    expect(failure(() => parseInput('42', 'n.json')).message).toMatch(/found a number/);
  });
});

describe('checkConversation', () => {
  it('detects the format and accepts well-formed messages', () => {
    expect(checkConversation({ messages: [user, call, result], source: 'a' }).format).toBe('openai');
    expect(checkConversation({ messages: [user, anthropicCall], source: 'a' }).format).toBe('anthropic');
    expect(checkConversation({ messages: [user], source: 'a' }).format).toBeUndefined();
  });

  it('refuses a conversation that mixes the two formats, naming the message', () => {
    const error = failure(() =>
      checkConversation({ messages: [user, call, result, anthropicCall], source: 'mixed.json' }),
    );
    expect(error.exitCode).toBe(1);
    expect(error.message).toMatch(
      /^mixed.json: messages\[3\]\.content\[0\]\.type: this conversation is in OpenAI format/,
    );
  });

  it('names the field, and the line of a JSONL file, of a malformed message', () => {
    const bad = {
      ...call,
      tool_calls: [{ id: 'c', type: 'function', function: { name: 'grep', arguments: { q: 1 } } }],
    };
    const error = failure(() =>
      checkConversation({ messages: [user, bad], source: 'run.jsonl', lines: [1, 4] }),
    );
    expect(error.message).toBe(
      'run.jsonl:4: messages[1].tool_calls[0].function.arguments: expected a string',
    );
  });
});

describe('readInput and loadConversation', () => {
  it('reads standard input for -', async () => {
    const stdin = Readable.from([
      Buffer.from(JSON.stringify(user)),
      Buffer.from(`\n${JSON.stringify(call)}\n`),
    ]);
    const conversation = await loadConversation('-', {}, stdin);
    expect(conversation.source).toBe('stdin');
    expect(conversation.messages).toEqual([user, call]);
  });

  it('says when the file does not exist', async () => {
    await expect(readInput('/nonexistent/run.json')).rejects.toThrow('/nonexistent/run.json: no such file');
  });
});
