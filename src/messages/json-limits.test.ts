import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../errors.js';
import { ContextManager } from '../manager.js';
import { FileStore } from '../stores/file.js';
import { jsonFacts, parseJsonText } from '../tools/json-facts.js';
import { createOfflineTools } from '../tools/offline.js';
import { toAnthropic } from '../wire/convert.js';
import { jsonTextDepth, jsonValueIssues, MAX_JSON_DEPTH } from './json-limits.js';
import type { Message } from './types.js';

const DEEP_TEXT = '['.repeat(1e5) + ']'.repeat(1e5);

/** An object nested `n` levels deep, built without recursion. */
function nested(n: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
}

function deepArray(n: number): unknown {
  return JSON.parse('['.repeat(n) + ']'.repeat(n));
}

describe('jsonValueIssues and jsonTextDepth', () => {
  it('reports depth, non-finite numbers and -0 with their paths, at any depth', () => {
    expect(jsonValueIssues({ a: [1, { b: 'x' }] }, 'm')).toEqual([]);
    expect(jsonValueIssues(nested(MAX_JSON_DEPTH - 1), 'm')).toEqual([]);
    const deep = jsonValueIssues(nested(1e5), 'm');
    expect(deep).toHaveLength(1);
    expect(deep[0]!.path).toBe(`m${'.a'.repeat(MAX_JSON_DEPTH)}`);
    expect(deep[0]!.message).toMatch(/more than 100 levels/);
    expect(jsonValueIssues(deepArray(1e5), 'm')[0]!.path).toBe(`m${'[0]'.repeat(MAX_JSON_DEPTH)}`);
    const numbers = jsonValueIssues(
      { x: Number.NaN, y: [0, -0], 'odd key': Number.POSITIVE_INFINITY, z: -Infinity },
      'm',
    );
    expect(numbers.map((i) => i.path)).toEqual(['m.x', 'm.y[1]', 'm["odd key"]', 'm.z']);
    expect(numbers[1]!.message).toMatch(/-0/);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(jsonValueIssues(cycle, 'm')[0]!.message).toMatch(/cycle/);
    expect(jsonValueIssues({ x: Number.NaN, d: new Date(0) }, 'm', { depthOnly: true })).toEqual([]);
    expect(
      jsonValueIssues(
        { d: new Date(0), m: new Map(), b: 1n, f: () => 1, u: [undefined], ok: undefined },
        'm',
      ).map((i) => i.message.match(/\((\S+) is/)?.[1]),
    ).toEqual(['m.d', 'm.m', 'm.b', 'm.f', 'm.u[0]']);
  });

  it('finds each single flaw at the edge of what is allowed, wherever it sits (the quick check lets none by)', () => {
    // Each flaw alone: in an object, in an array, and at the deepest level allowed.
    const flaws: Array<[string, unknown]> = [
      ['NaN', Number.NaN],
      ['Infinity', Number.POSITIVE_INFINITY],
      ['-Infinity', Number.NEGATIVE_INFINITY],
      ['-0', -0],
      ['a Date', new Date(0)],
      ['a Map', new Map()],
      ['a class instance', new (class Thing {})()],
      ['a BigInt', 1n],
      ['a function', () => 1],
      ['a symbol', Symbol('s')],
      ['too deep', nested(MAX_JSON_DEPTH)],
    ];
    const wrapped = (v: unknown, levels: number): unknown => {
      let out = v;
      for (let i = 0; i < levels; i++) out = { a: out };
      return out;
    };
    for (const [name, flaw] of flaws) {
      for (const value of [{ ok: 1, a: flaw }, [1, flaw], wrapped(flaw, MAX_JSON_DEPTH)]) {
        expect(jsonValueIssues(value, 'm').length, name).toBeGreaterThan(0);
        // The depth alone: only what is nested too deep.
        const depthOnly = jsonValueIssues(value, 'm', { depthOnly: true });
        if (name === 'too deep') expect(depthOnly.length, name).toBeGreaterThan(0);
        else expect(depthOnly, name).toEqual([]);
      }
    }
    // Undefined: dropped by JSON as a property (allowed), changed to null in an array (refused).
    expect(jsonValueIssues({ a: undefined, b: [1] }, 'm')).toEqual([]);
    expect(jsonValueIssues(undefined, 'm')).toEqual([]);
    expect(jsonValueIssues([1, undefined], 'm')).toHaveLength(1);
    // biome-ignore lint/suspicious/noSparseArray: a hole is what is checked
    expect(jsonValueIssues([1, , 2], 'm')).toHaveLength(1);
    expect(jsonValueIssues([1, undefined], 'm', { depthOnly: true })).toEqual([]);
    // An object without a prototype is plain; the deepest level allowed passes, one more does not.
    expect(jsonValueIssues(Object.assign(Object.create(null), { a: 1 }), 'm')).toEqual([]);
    expect(jsonValueIssues(deepArray(MAX_JSON_DEPTH), 'm')).toEqual([]);
    expect(jsonValueIssues(deepArray(MAX_JSON_DEPTH + 1), 'm')).toHaveLength(1);
    expect(jsonValueIssues(deepArray(MAX_JSON_DEPTH + 1), 'm', { depthOnly: true })).toHaveLength(1);
    // A getter that throws is reported, not thrown.
    const trap = {
      get x(): number {
        throw new Error('no');
      },
    };
    expect(jsonValueIssues(trap, 'm')[0]!.message).toMatch(/cannot be read as JSON \(no\)/);
  });

  it('measures the depth of JSON text in one pass, ignoring brackets inside strings', () => {
    expect(jsonTextDepth('{"a":[1,{"b":"]]]["}]}')).toBe(3);
    expect(jsonTextDepth('"[[[[\\"[["')).toBe(0);
    expect(jsonTextDepth(DEEP_TEXT)).toBe(MAX_JSON_DEPTH + 1);
  });

  it('reads deeply nested JSON text as prose in the fact extractor and the converter', async () => {
    expect(parseJsonText(DEEP_TEXT)).toBeUndefined();
    expect(jsonFacts(parseJsonText('{"booking_id":"ZFA04Y"}'))[0]?.value).toBe('ZFA04Y');
    const tools = createOfflineTools();
    const entries = [
      {
        seq: 0,
        message: { role: 'tool', tool_call_id: 'c1', content: DEEP_TEXT } as Message,
        metadata: { timestamp: 't' },
      },
    ];
    await expect(tools.extractFacts(entries)).resolves.toBeDefined();
    await expect(tools.summarize(entries, { maxTokens: 100 })).resolves.toBeTypeOf('string');
    const converted = toAnthropic([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: DEEP_TEXT },
    ]);
    expect(converted.length).toBeGreaterThan(0);
  });
});

describe('addMessage bounds depth and keeps numbers faithful', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ck-hostile-depth-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const call = (args: string): Message => ({
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: args } }],
  });

  it('keeps a tool result of deeply nested JSON text, compacts it, and does so again after a reload', async () => {
    const store = join(dir, 'store');
    const make = () =>
      new ContextManager({ model: 'gpt-4o', store: new FileStore(store), conversationId: 'deep' });
    const manager = make();
    await manager.addMessage({ role: 'user', content: 'Look up booking ZFA04Y please.' });
    await manager.addMessage(call('{"id":"ZFA04Y"}'));
    await manager.addMessage({ role: 'tool', tool_call_id: 'c1', content: DEEP_TEXT });
    for (let i = 0; i < 6; i++) {
      await manager.addMessage({ role: 'user', content: `Question ${i} about flight HAT13${i}?` });
      await manager.addMessage({
        role: 'assistant',
        content: `Answer ${i}: flight HAT13${i} departs at 10:0${i}.`,
      });
    }
    const receipt = await manager.compact({ force: true, tokenBudget: 400 });
    expect(receipt).not.toBeNull();
    const view = await manager.getMessagesForRequest({ tokenBudget: 400 });
    expect(view.length).toBeGreaterThan(0);
    await manager.close();

    const resumed = make();
    expect((await resumed.getMessages())[2]!.content).toBe(DEEP_TEXT);
    await expect(resumed.compact({ force: true, tokenBudget: 400 })).resolves.not.toBeNull();
    await expect(resumed.getMessagesForRequest({ tokenBudget: 400 })).resolves.toBeDefined();
    await resumed.close();
  });

  it('refuses content, tool inputs and extra fields nested 1e5 deep, with the path, storing nothing', async () => {
    const store = new FileStore(join(dir, 'store'));
    const manager = new ContextManager({ model: 'gpt-4o', store, conversationId: 'c' });
    await manager.addMessage({ role: 'user', content: 'hi' });
    const attempts: Array<[unknown, RegExp]> = [
      [{ role: 'user', content: 'x', extra: nested(1e5) }, /^messages\[1\]\.extra\.a\.a/],
      [{ role: 'user', content: 'x', extra: deepArray(1e5) }, /^messages\[1\]\.extra\[0\]\[0\]/],
      [call(DEEP_TEXT), /^messages\[1\]\.tool_calls\[0\]\.function\.arguments/],
      [call(JSON.stringify(nested(150))), /function\.arguments: JSON nested more than 100/],
    ];
    for (const [message, path] of attempts) {
      const error = await manager.addMessage(message).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidMessageError);
      expect((error as Error).message).toMatch(path);
    }
    const anthropic = new ContextManager({ model: 'claude-sonnet-4-5', conversationId: 'a' });
    const error = await anthropic
      .addMessage({
        role: 'assistant',
        content: [{ type: 'tool_use', id: 't', name: 'f', input: nested(1e5) }],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidMessageError);
    expect((error as Error).message).toMatch(/^messages\[0\]\.content\[0\]\.input\.a/);
    const metadataError = await manager
      .addMessage({ role: 'user', content: 'x' }, { metadata: { deep: nested(1e5) } as never })
      .catch((e: unknown) => e);
    expect(metadataError).toBeInstanceOf(InvalidMessageError);
    expect((metadataError as Error).message).toMatch(/^messages\[1\]\.metadata\.deep\.a/);
    expect(await store.head('c')).toBe(1);
    expect(await manager.getMessages()).toHaveLength(1);
    await manager.close();
  });

  it('refuses NaN, ±Infinity and -0 in extra fields and metadata with the path, storing nothing', async () => {
    const store = new FileStore(join(dir, 'store'));
    const manager = new ContextManager({ model: 'gpt-4o', store, conversationId: 'n' });
    const cases: Array<[unknown, object | undefined, string]> = [
      [{ role: 'user', content: 'x', score: Number.NaN }, undefined, 'messages[0].score: NaN'],
      [
        { role: 'user', content: 'x', extra: { v: [1, Number.POSITIVE_INFINITY] } },
        undefined,
        'messages[0].extra.v[1]: Infinity',
      ],
      [{ role: 'user', content: 'x', offset: -0 }, undefined, 'messages[0].offset: -0'],
      [
        { role: 'user', content: 'x' },
        { rank: Number.NEGATIVE_INFINITY },
        'messages[0].metadata.rank: -Infinity',
      ],
      [{ role: 'user', content: 'x' }, { nested: { zero: -0 } }, 'messages[0].metadata.nested.zero: -0'],
    ];
    for (const [message, metadata, expected] of cases) {
      const error = await manager
        .addMessage(message, metadata === undefined ? {} : { metadata: metadata as never })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidMessageError);
      expect((error as Error).message.startsWith(expected)).toBe(true);
    }
    expect(await store.head('n')).toBe(0);
    // What JSON can hold is kept exactly, live and after a reload.
    await manager.addMessage({ role: 'user', content: 'x', extra: { big: 1e308, small: 5e-324, zero: 0 } });
    await manager.close();
    const resumed = new ContextManager({
      model: 'gpt-4o',
      store: new FileStore(join(dir, 'store')),
      conversationId: 'n',
    });
    expect((await resumed.getMessages())[0]).toEqual({
      role: 'user',
      content: 'x',
      extra: { big: 1e308, small: 5e-324, zero: 0 },
    });
    await resumed.close();
  });
});
