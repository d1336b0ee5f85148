import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Agent,
  type AgentInputItem,
  OpenAIProvider,
  OpenAIResponsesCompactionSession,
  Runner,
  setTracingDisabled,
  tool,
} from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeOpenAIServer,
  type FakeRequest,
  startFakeOpenAI,
  toolLoopReply,
} from '../../../test/support/fake-openai-server.js';
import { type FakeResponsesServer, startFakeResponses } from '../../../test/support/fake-responses-server.js';
import { InvalidMessageError } from '../../errors.js';
import { FileStore } from '../../stores/file.js';
import { MemoryStore } from '../../stores/memory.js';
import { getModelInfo } from '../../tokens/catalog.js';
import { createTokenCounter } from '../../tokens/counter.js';
import { validateRequest } from '../../wire/validate-request.js';
import { agentItemsToResponses } from './agent-items.js';
import { ContextkitSession } from './session.js';

// Traces would be sent to OpenAI: this test talks to 127.0.0.1 only.
setTracingDisabled(true);

const counter = createTokenCounter(getModelInfo('gpt-4o')!);

function longResult(query: string, step: number): string {
  const words = Array.from({ length: 160 }, (_, i) => `${query.split(' ')[0] ?? 'x'}${(i * 7 + step) % 97}`);
  return `Result ${step} for "${query}": ${words.join(' ')}`;
}

const lookup = tool({
  name: 'lookup',
  description: 'Looks something up.',
  parameters: {
    type: 'object',
    properties: { query: { type: 'string' }, step: { type: 'number' } },
    required: ['query', 'step'],
    additionalProperties: false,
  },
  strict: true,
  execute: async (input) => {
    const { query, step } = input as { query: string; step: number };
    return longResult(query, step);
  },
});

/** Tokens of items as contextkit counts them. */
function itemTokens(items: readonly AgentInputItem[]): Promise<number> {
  return counter.measure(agentItemsToResponses(items), { format: 'openai-responses' });
}

/** The problems the API would find with the pairing of calls and results in items. */
function pairingProblems(items: readonly AgentInputItem[]): string[] {
  if (items.length === 0) return [];
  return validateRequest(agentItemsToResponses(items), 'openai-responses').problems.map(
    (p) => `${p.path}: ${p.message}`,
  );
}

describe('ContextkitSession with an Agent over a fake Responses endpoint on 127.0.0.1', () => {
  let server: FakeOpenAIServer;
  let runner: Runner;
  beforeAll(async () => {
    server = await startFakeOpenAI({ reply: toolLoopReply(3) });
    runner = new Runner({
      modelProvider: new OpenAIProvider({ apiKey: 'test-key', baseURL: server.baseURL, useResponses: true }),
      tracingDisabled: true,
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it('gives the model a fitted history with no orphaned calls over many turns; the store keeps all', async () => {
    const store = new MemoryStore();
    const budget = 1_800;
    const session = new ContextkitSession({
      store,
      conversationId: 'agent-run',
      maxTokens: budget,
      model: 'gpt-4o',
    });
    const given: AgentInputItem[][] = [];
    const getItems = session.getItems.bind(session);
    session.getItems = async (limit?: number) => {
      const items = await getItems(limit);
      given.push(items);
      return items;
    };
    const agent = new Agent({
      name: 'Researcher',
      instructions: 'Use lookup.',
      model: 'gpt-4o',
      tools: [lookup],
    });
    const questions = [
      'alpha question',
      'bravo question',
      'charlie question',
      'delta question',
      'echo question',
    ];
    const first = server.requests.length;
    for (const question of questions) {
      const result = await runner.run(agent, question, { session });
      expect(result.finalOutput).toBe(`Done after 3 tool calls: ${question}`);
    }
    // What the session gave the model: within budget, calls and results paired.
    expect(given).toHaveLength(questions.length);
    for (const items of given) {
      expect(await itemTokens(items)).toBeLessThanOrEqual(budget);
      expect(pairingProblems(items)).toEqual([]);
    }
    // The model got no orphan either, in any step of any turn.
    const requests: FakeRequest[] = server.requests.slice(first);
    expect(requests).toHaveLength(questions.length * 4);
    for (const request of requests) expect(request.problems).toEqual([]);

    // The store has every item: per turn the user input, 3 calls, 3 results and the answer.
    const all = await session.getAllItems();
    expect(all).toHaveLength(questions.length * 8);
    expect(all.filter((i) => i.type === 'function_call_result')).toHaveLength(15);
    for (const item of all) {
      if (item.type !== 'function_call_result') continue;
      const output = typeof item.output === 'string' ? item.output : JSON.stringify(item.output);
      expect(output).toMatch(/Result \d for/);
    }
    // And it was more than the budget: fitting had work to do.
    expect(await itemTokens(all)).toBeGreaterThan(budget * 2);
    const last = given[given.length - 1]!;
    expect(last.length).toBeLessThan(all.length - 8);
  });

  it('survives a restart: a new session on the same file store fits the same history', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ck-agents-'));
    try {
      const agent = new Agent({
        name: 'Researcher',
        instructions: 'Use lookup.',
        model: 'gpt-4o',
        tools: [lookup],
      });
      const a = new ContextkitSession({
        store: new FileStore(dir),
        conversationId: 's1',
        maxTokens: 1_500,
        model: 'gpt-4o',
      });
      await runner.run(agent, 'first question', { session: a });
      await runner.run(agent, 'second question', { session: a });
      const b = new ContextkitSession({
        store: new FileStore(dir),
        conversationId: 's1',
        maxTokens: 1_500,
        model: 'gpt-4o',
      });
      expect(await b.getAllItems()).toEqual(await a.getAllItems());
      expect(await b.getItems()).toEqual(await a.getItems());
      const result = await runner.run(agent, 'third question', { session: b });
      expect(result.finalOutput).toBe('Done after 3 tool calls: third question');
      expect(await b.getAllItems()).toHaveLength(24);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ContextkitSession as a Session', () => {
  const call = (id: string, step: number): AgentInputItem => ({
    type: 'function_call',
    callId: id,
    name: 'lookup',
    arguments: JSON.stringify({ step }),
    status: 'completed',
  });
  const result = (id: string, text: string): AgentInputItem => ({
    type: 'function_call_result',
    callId: id,
    name: 'lookup',
    status: 'completed',
    output: text,
  });

  it('adds, pops and clears items, and keeps them as given', async () => {
    const session = new ContextkitSession({ conversationId: 'basic' });
    expect(await session.getSessionId()).toBe('basic');
    const items: AgentInputItem[] = [
      { role: 'user', content: 'hi' },
      {
        type: 'reasoning',
        content: [{ type: 'input_text', text: 'thinking' }],
        providerData: { encrypted: 'x' },
      },
      call('c1', 1),
      result('c1', 'one'),
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'done' }],
      },
    ];
    await session.addItems(items);
    expect(await session.getItems()).toEqual(items);
    expect(await session.popItem()).toEqual(items[4]);
    expect(await session.getAllItems()).toEqual(items.slice(0, 4));
    expect(await session.getItems(1)).toEqual([]);
    expect(await session.getItems(2)).toEqual(items.slice(2, 4));
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    expect(await session.popItem()).toBeUndefined();
  });

  it('refuses items JSON would change (NaN, -0, Infinity: what 1e400 is) with their path, storing nothing', async () => {
    const store = new MemoryStore();
    const session = new ContextkitSession({ store, conversationId: 'numbers' });
    await session.addItems([{ role: 'user', content: 'kept' }]);
    for (const value of [Number.NaN, -0, Number.POSITIVE_INFINITY]) {
      const item = {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'x' }],
        providerData: { score: value },
      } as AgentInputItem;
      const error = await session.addItems([{ role: 'user', content: 'ok' }, item]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidMessageError);
      expect((error as Error).message).toMatch(/^items\[1\]\.providerData\.score: /);
    }
    expect(await session.getAllItems()).toEqual([{ role: 'user', content: 'kept' }]);
  });

  it('refuses Responses API items in their own spelling with their path, so getItems never sends an orphan output', async () => {
    const session = new ContextkitSession({ conversationId: 'raw-responses', model: 'gpt-4o' });
    await session.addItems([{ role: 'user', content: 'kept' }]);
    const raw: Array<[unknown, RegExp]> = [
      // Before: stored as it came, and getItems returned this output with no call before it.
      [{ type: 'function_call_output', call_id: 'call_nobody', output: 'late' }, /^items\[1\]\.type: /],
      [{ type: 'computer_call_output', call_id: 'cu_1', output: {} }, /^items\[1\]\.type: /],
      [{ type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, /^items\[1\]\.call_id: /],
      [
        { type: 'function_call_result', callId: '', name: 'f', status: 'completed', output: 'x' },
        /^items\[1\]\.callId: /,
      ],
    ];
    for (const [item, path] of raw) {
      const error = await session
        .addItems([{ role: 'user', content: 'ok' }, item as AgentInputItem])
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidMessageError);
      expect((error as Error).message).toMatch(path);
    }
    expect(await session.getAllItems()).toEqual([{ role: 'user', content: 'kept' }]);
    const items = await session.getItems();
    expect(validateRequest(agentItemsToResponses(items), 'openai-responses').valid).toBe(true);
  });

  it('two calls sharing a callId: getItems gives the renamed one as an SDK function_call, each answered once', async () => {
    const session = new ContextkitSession({ conversationId: 'repeated-call-id', model: 'gpt-4o' });
    await session.addItems([
      { role: 'user', content: 'weather in Paris and Rome?' },
      call('c1', 1),
      call('c1', 2),
      result('c1', 'sunny'),
      result('c1', 'rain'),
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'done' }],
      },
    ]);
    const items = (await session.getItems()) as Array<Record<string, unknown>>;
    // Before: the renamed call came back in the Responses API's spelling (`call_id`, no `callId`).
    for (const item of items.filter((i) => i.type === 'function_call'))
      expect(item.callId, JSON.stringify(item)).toEqual(expect.any(String));
    const calls = items.filter((i) => i.type === 'function_call').map((i) => i.callId);
    const results = items.filter((i) => i.type === 'function_call_result').map((i) => i.callId);
    expect(new Set(calls).size).toBe(2);
    expect(results.sort()).toEqual([...calls].sort());
    expect(validateRequest(agentItemsToResponses(items as AgentInputItem[]), 'openai-responses').valid).toBe(
      true,
    );
  });

  it('a session kept between calls reads and converts only the items stored since (issue 32: a call costs the new items), and fits what a new session fits; another writer, a pop and a clear are taken in', async () => {
    const store = new MemoryStore();
    const reads: Array<number | undefined> = [];
    const watched = new Proxy(store, {
      get(target, key) {
        if (key === 'read')
          return (id: string, options?: { fromSeq?: number; limit?: number }) => {
            reads.push(options?.fromSeq);
            return target.read(id, options);
          };
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const kept = new ContextkitSession({
      store: watched,
      conversationId: 'kept',
      maxTokens: 900,
      model: 'gpt-4o',
    });
    const other = new ContextkitSession({ store, conversationId: 'kept', maxTokens: 900, model: 'gpt-4o' });
    // The reference reads and converts every item on every call, as sessions did before: its
    // kept items are forgotten before each call (a kept session's plan grows with its calls, so the
    // reference is kept too).
    const whole = new ContextkitSession({ store, conversationId: 'kept', maxTokens: 900, model: 'gpt-4o' });
    const reference = () => {
      (whole as unknown as { held: unknown }).held = null;
      return whole.getItems();
    };
    let stored = 0;
    for (let turn = 0; turn < 8; turn++) {
      const items: AgentInputItem[] = [
        { role: 'user', content: `question ${turn}` },
        call(`k${turn}`, turn),
        result(`k${turn}`, longResult(`k${turn}`, turn)),
      ];
      // Every other turn is stored by another writer.
      await (turn % 2 === 0 ? kept : other).addItems(items);
      stored += items.length;
      reads.length = 0;
      const view = await kept.getItems();
      // One read, from the first item it has not seen.
      expect(reads).toEqual([stored - items.length]);
      expect(view).toEqual(await reference());
    }
    await kept.popItem();
    expect(await kept.getItems()).toEqual(await reference());
    await other.clearSession();
    await other.addItems([{ role: 'user', content: 'after the clear' }]);
    expect(await kept.getItems()).toEqual([{ role: 'user', content: 'after the clear' }]);
  });

  it('clears old outputs on their own items and never splits a call from its result', async () => {
    // Just above the last turn (question, two calls, two long results, answer: 693 tokens as
    // Responses items, each call and result framed on its own), far below the whole history.
    const session = new ContextkitSession({ conversationId: 'fit', maxTokens: 720, model: 'gpt-4o' });
    const items: AgentInputItem[] = [{ role: 'system', content: 'sys' }];
    for (let turn = 0; turn < 6; turn++) {
      items.push({ role: 'user', content: `question ${turn}` });
      items.push(call(`c${turn}a`, 1), call(`c${turn}b`, 2));
      items.push(
        result(`c${turn}a`, longResult(`q${turn}`, 1)),
        result(`c${turn}b`, longResult(`q${turn}`, 2)),
      );
      items.push({
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: `answer ${turn}` }],
      });
    }
    await session.addItems(items);
    const fitted = await session.getItems();
    expect(await itemTokens(fitted)).toBeLessThanOrEqual(720);
    expect(await itemTokens(items)).toBeGreaterThan(720 * 4);
    expect(pairingProblems(fitted)).toEqual([]);
    expect(fitted[0]).toEqual({ role: 'system', content: 'sys' });
    expect(fitted).toContainEqual({ role: 'user', content: 'question 5' });
    // Every item but what contextkit wrote (a summary, a cleared or cut output) is the stored one.
    const stored = JSON.stringify(items);
    for (const item of fitted) {
      const text = JSON.stringify(item);
      if (!stored.includes(text)) {
        const generated =
          (item.type === 'function_call_result' && String(item.output).includes('contextkit:')) ||
          ('role' in item && item.role === 'system');
        expect(generated, text).toBe(true);
      }
    }
    // Parallel calls stay together: both calls of a turn, or neither.
    const callIds = new Set(fitted.flatMap((i) => (i.type === 'function_call' ? [i.callId] : [])));
    for (let turn = 0; turn < 6; turn++) expect(callIds.has(`c${turn}a`)).toBe(callIds.has(`c${turn}b`));
    // The items, as the Responses API input they are sent as, are a valid request.
    expect(validateRequest(agentItemsToResponses(fitted), 'openai-responses').valid).toBe(true);
  });
});

describe('ContextkitSession under OpenAIResponsesCompactionSession (fake Responses API on 127.0.0.1)', () => {
  let fake: FakeResponsesServer;
  beforeAll(async () => {
    fake = await startFakeResponses();
  });
  afterAll(async () => {
    await fake.close();
  });

  it('keeps every stored item when the wrapper clears it and writes the compacted items back', async () => {
    const runner = new Runner({
      modelProvider: new OpenAIProvider({
        apiKey: 'test-key',
        baseURL: `${fake.url}/v1`,
        useResponses: true,
      }),
      tracingDisabled: true,
    });
    const store = new MemoryStore();
    const inner = new ContextkitSession({ store, conversationId: 'compacted', model: 'gpt-5' });
    const session = new OpenAIResponsesCompactionSession({
      client: new OpenAI({ apiKey: 'test-key', baseURL: `${fake.url}/v1` }),
      underlyingSession: inner,
      model: 'gpt-5',
      compactionMode: 'input',
      shouldTriggerCompaction: ({ compactionCandidateItems }) => compactionCandidateItems.length >= 4,
    });
    const agent = new Agent({ name: 'Helper', instructions: 'Answer briefly.', model: 'gpt-5' });
    const questions = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf'];
    for (const question of questions) await runner.run(agent, `${question} question`, { session });
    expect(fake.bills.some((b) => b.path === '/v1/responses/compact')).toBe(true);
    const all = await inner.getStoredItems();
    // Nothing was lost: every question and every answer is still stored, and the compaction too.
    for (const question of questions)
      expect(all.some((i) => JSON.stringify(i).includes(`${question} question`))).toBe(true);
    expect(all.filter((i) => (i as { role?: string }).role === 'assistant').length).toBe(questions.length);
    expect(all.some((i) => (i as { type?: string }).type === 'compaction')).toBe(true);
    // What the model is given starts from the latest compaction's window, and recall reaches back.
    const given = await session.getItems();
    expect(given.some((i) => (i as { type?: string }).type === 'compaction')).toBe(true);
    expect((await inner.recall('alpha question')).length).toBeGreaterThan(0);
    // The session's items start at the last write-back: the compaction item and what followed it.
    const items = await inner.getAllItems();
    expect((items[0] as { role?: string }).role).toBe('user');
    expect(items.filter((i) => (i as { type?: string }).type === 'compaction')).toHaveLength(1);
    expect(items.length).toBeLessThan(all.length);
    // A plain clearSession clears the session, and deletes nothing: recall still reaches it all.
    await inner.clearSession();
    expect(await inner.getAllItems()).toEqual([]);
    expect(await inner.getItems()).toEqual([]);
    expect(await inner.getStoredItems()).toEqual(all);
    expect((await inner.recall('golf question')).length).toBeGreaterThan(0);
    await inner.deleteSession();
    expect(await inner.getStoredItems()).toEqual([]);
  });
});

describe('ContextkitSession.clearSession across a process restart (file store)', () => {
  it('is durable at once, deletes nothing, and the write-back after it starts the session', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ck-agents-restart-'));
    try {
      const script = fileURLToPath(new URL('../../../test/support/agents-session-clear.ts', import.meta.url));
      await new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', script, dir], {
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`exited ${code}: ${stderr}`))));
      });
      // A new process opens the session: the clear held, and every item is still stored.
      const session = new ContextkitSession({
        store: `file:${dir}`,
        conversationId: 'restart',
        model: 'gpt-5',
      });
      expect(await session.getItems()).toEqual([]);
      expect(await session.getAllItems()).toEqual([]);
      expect(await session.popItem()).toBeUndefined();
      const stored = await session.getStoredItems();
      expect(stored).toHaveLength(6);
      // What OpenAIResponsesCompactionSession writes back (the user messages and one compaction
      // item) lands after the stored items and starts the session's history; the rest stays searchable.
      const writeBack = [
        { role: 'user', content: 'question 2: where is parcel PX-4412?' },
        { type: 'compaction', encrypted_content: 'gAAAA-opaque-summary' },
      ] as unknown as AgentInputItem[];
      await session.addItems(writeBack);
      const next: AgentInputItem = { role: 'user', content: 'and the first one?' };
      await session.addItems([next]);
      expect(await session.getAllItems()).toEqual([...writeBack, next]);
      expect(await session.getItems()).toEqual([...writeBack, next]);
      expect(await session.getStoredItems()).toEqual([...stored, ...writeBack, next]);
      const hits = await session.recall('parcel PX-4410');
      expect(hits.some((h) => h.text.includes('PX-4410'))).toBe(true);
      // A later session on the same store sees the same.
      const again = new ContextkitSession({
        store: new FileStore(dir),
        conversationId: 'restart',
        model: 'gpt-5',
      });
      expect(await again.getItems()).toEqual([...writeBack, next]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
