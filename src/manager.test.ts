import { describe, expect, it } from 'vitest';
import { anthropicRequestProblems, messagesBody } from '../test/support/fake-anthropic-server.js';
import {
  ConfigurationError,
  ContextOverflowError,
  FormatMismatchError,
  InvalidMessageError,
} from './errors.js';
import type { CompactionReceipt } from './events.js';
import { ContextManager } from './manager.js';
import type { Message, OpenAIMessage } from './messages/types.js';
import { mount } from './mount.js';
import { getModelInfo } from './tokens/catalog.js';
import { createTokenCounter } from './tokens/counter.js';
import { FACTS_OPEN } from './tools/facts-block.js';
import { validateRequest } from './wire/validate-request.js';

const words = (n: number, seed = 0) =>
  Array.from({ length: n }, (_, i) => `word${(i * 7 + seed) % 97} src/file${i % 13}.ts`).join(' ');

function toolRound(id: string, result: string): OpenAIMessage[] {
  return [
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id, type: 'function', function: { name: 'read_file', arguments: `{"path":"src/${id}.ts"}` } },
      ],
    },
    { role: 'tool', tool_call_id: id, content: result },
  ];
}

describe('the seed contract, as behaviour', () => {
  it('adds, returns, and clears messages (test_context_manager)', async () => {
    const ctx = new ContextManager({ maxTokens: 1000 });
    await ctx.addMessage({ role: 'user', content: 'Hello' });
    await ctx.addMessage({ role: 'assistant', content: 'Hi there!' });
    const view = await ctx.getMessagesForRequest();
    expect(view).toHaveLength(2);
    expect(view[0]!.role).toBe('user');
    expect(await ctx.getMessages()).toHaveLength(2);
    await ctx.clear();
    expect(await ctx.getMessages()).toHaveLength(0);
  });

  it('never orphans tool results when compacting (test_compaction_preserves_tool_pairs)', async () => {
    const ctx = new ContextManager({ maxTokens: 100, compactThreshold: 0.5, targetUsage: 0.4 });
    await ctx.addMessage({ role: 'user', content: 'Read file.txt' });
    for (const m of toolRound('call_123', 'File contents...')) await ctx.addMessage(m);
    for (let i = 0; i < 50; i++) await ctx.addMessage({ role: 'user', content: `Message ${i}` });
    const messages = await ctx.getMessagesForRequest();
    const useIds = new Set<string>();
    const resultIds = new Set<string>();
    for (const m of messages) {
      if (m.role === 'assistant' && 'tool_calls' in m) for (const c of m.tool_calls ?? []) useIds.add(c.id);
      if (m.role === 'tool') resultIds.add(m.tool_call_id);
    }
    for (const id of resultIds) expect(useIds.has(id)).toBe(true);
    expect(validateRequest(messages, 'openai').valid).toBe(true);
    expect(await ctx.getMessages()).toHaveLength(53);
  });

  it('restores a session with setMessages (test_session_resume)', async () => {
    const ctx = new ContextManager({ maxTokens: 1000 });
    await ctx.setMessages([
      { role: 'user', content: 'Previous conversation' },
      { role: 'assistant', content: 'Previous response' },
    ]);
    const messages = await ctx.getMessages();
    expect(messages).toHaveLength(2);
    expect(messages[0]!.content).toBe('Previous conversation');
  });

  it('mounts at "context" and returns the manager', async () => {
    const mounted: Array<[string, unknown]> = [];
    const manager = await mount(
      { mount: (name, module) => mounted.push([name, module]) },
      { max_tokens: 5000 },
    );
    expect(mounted).toEqual([['context', manager]]);
    expect(manager.options.maxTokens).toBe(5000);
  });
});

describe('addMessage', () => {
  it('never mutates the caller’s object and stamps a UTC timestamp', async () => {
    const ctx = new ContextManager({ now: () => new Date('2026-03-04T05:06:07.089Z') });
    const message = Object.freeze({ role: 'user', content: 'hi' });
    await ctx.addMessage(message);
    const [entry] = await ctx.getEntries();
    expect(entry!.metadata.timestamp).toBe('2026-03-04T05:06:07.089Z');
    expect(entry!.message).not.toBe(message);
    expect(entry!.message).toEqual({ role: 'user', content: 'hi' });
  });

  it('keeps a timestamp the caller gave', async () => {
    const ctx = new ContextManager();
    await ctx.addMessage(
      { role: 'user', content: 'hi' },
      { metadata: { timestamp: '2020-01-01T00:00:00.000Z' } },
    );
    expect((await ctx.getEntries())[0]!.metadata.timestamp).toBe('2020-01-01T00:00:00.000Z');
  });

  it('rejects a malformed message with the field path, storing nothing', async () => {
    const ctx = new ContextManager();
    await ctx.addMessage({ role: 'user', content: 'first' });
    const bad = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: { path: 'x' } } }],
    };
    const err = await ctx.addMessage(bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidMessageError);
    expect((err as Error).message).toMatch(
      /^messages\[1\]\.tool_calls\[0\]\.function\.arguments: expected a string/,
    );
    expect(await ctx.getMessages()).toHaveLength(1);
    await ctx.addMessage({ role: 'user', content: 'still works' });
    expect(await ctx.getMessages()).toHaveLength(2);
  });

  it('refuses a conversation that mixes the two formats', async () => {
    const ctx = new ContextManager();
    await ctx.addMessage({ role: 'user', content: 'hi' });
    await ctx.addMessage({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }],
    });
    const err = await ctx
      .addMessage({ role: 'tool', tool_call_id: 't1', content: 'x' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FormatMismatchError);
    expect((err as Error).message).toContain('messages[2]');
    expect(await ctx.getMessages()).toHaveLength(2);
  });

  it('keeps call order under concurrent adds', async () => {
    const ctx = new ContextManager();
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => ctx.addMessage({ role: 'user', content: `m${i}` })),
    );
    expect((await ctx.getMessages()).map((m) => m.content)).toEqual(
      Array.from({ length: 50 }, (_, i) => `m${i}`),
    );
  });
});

describe('configuration', () => {
  it.each([
    [{ compactThreshold: 0 }, /compactThreshold/],
    [{ compactThreshold: 1.5 }, /compactThreshold/],
    [{ maxTokens: 0 }, /maxTokens/],
    [{ maxTokens: -5 }, /maxTokens/],
    [{ targetUsage: 0.95, compactThreshold: 0.9 }, /targetUsage/],
    [{ keepToolResults: -1 }, /keepToolResults/],
  ])('rejects %j at construction', (options, pattern) => {
    expect(() => new ContextManager(options)).toThrow(ConfigurationError);
    expect(() => new ContextManager(options)).toThrow(pattern);
  });

  it('rejects a request budget of 0', async () => {
    const ctx = new ContextManager();
    await expect(ctx.getMessagesForRequest({ tokenBudget: 0 })).rejects.toThrow(ConfigurationError);
  });
});

describe('budget precedence', () => {
  it('explicit budget, then provider info, then the model, then maxTokens; reported on change', async () => {
    // maxTokens above the model's budget: as a cap it binds only below it (issue 23, item 5).
    const ctx = new ContextManager({ maxTokens: 120_000, model: 'gpt-4o' });
    const seen: Array<{ budget: number; source: string }> = [];
    ctx.on('context:budget', (e) => seen.push(e));
    await ctx.addMessage({ role: 'user', content: 'hi' });
    await ctx.getMessagesForRequest({ tokenBudget: 5000 });
    await ctx.getMessagesForRequest({ tokenBudget: 5000 });
    await ctx.getMessagesForRequest({
      provider: { getInfo: () => ({ defaults: { context_window: 50_000, max_output_tokens: 4_000 } }) },
    });
    await ctx.getMessagesForRequest();
    await ctx.getMessagesForRequest({ model: 'no-such-model-x' });
    expect(seen).toEqual([
      { budget: 5000, source: 'tokenBudget' },
      { budget: 45_000, source: 'provider' },
      { budget: 128_000 - 16_384 - 1000, source: 'model:gpt-4o' },
      { budget: 120_000, source: 'maxTokens' },
    ]);
  });

  it('warns once about an unknown model', async () => {
    const ctx = new ContextManager({ model: 'mystery-model-9000', maxTokens: 1234 });
    const warnings: string[] = [];
    ctx.on('context:warn', (w) => warnings.push(w.code));
    await ctx.addMessage({ role: 'user', content: 'hi' });
    await ctx.getMessagesForRequest();
    await ctx.getMessagesForRequest();
    expect(warnings).toEqual(['unknown_model']);
    expect(ctx.usage().budget).toBe(1234);
  });
});

describe('compaction', () => {
  async function longSession(ctx: ContextManager, rounds: number, resultWords = 300): Promise<void> {
    await ctx.addMessage({ role: 'system', content: 'You are a careful coding agent.' });
    for (let r = 0; r < rounds; r++) {
      await ctx.addMessage({ role: 'user', content: `Task ${r}: fix src/mod${r}.ts, ticket T-${1000 + r}` });
      for (const m of toolRound(`call_${r}`, words(resultWords, r))) await ctx.addMessage(m);
      await ctx.addMessage({ role: 'assistant', content: `Fixed src/mod${r}.ts.` });
    }
  }

  it('fits the budget, stays valid, keeps system and the latest user message, changes nothing stored', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await longSession(ctx, 40);
    const stored = structuredClone(await ctx.getMessages());
    const budget = 6000;
    const receipts: unknown[] = [];
    ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
    const view = await ctx.getMessagesForRequest({ tokenBudget: budget });
    expect(ctx.usage().tokens).toBeLessThanOrEqual(budget);
    expect(ctx.usage().tokens).toBeLessThanOrEqual(0.6 * budget);
    expect(validateRequest(view, 'openai')).toEqual({ valid: true, problems: [] });
    expect(view[0]).toEqual({ role: 'system', content: 'You are a careful coding agent.' });
    expect(view.at(-1)).toEqual(stored.at(-1));
    expect(view).toContainEqual(stored.at(-4));
    expect(await ctx.getMessages()).toEqual(stored);
    expect(receipts).toHaveLength(1);
  });

  it('clears old tool results before dropping anything', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o', keepToolResults: 2 });
    await longSession(ctx, 6, 800);
    const full = await ctx.getTokenCount();
    const receipt = await ctx.compact({ force: true, tokenBudget: Math.floor(full * 1.1) });
    // Target is 0.6 × 1.1 × full: clearing a few big results is enough, nothing is dropped.
    expect(receipt!.dropped).toEqual([]);
    expect(receipt!.cleared.length).toBeGreaterThan(0);
    expect(receipt!.cleared.every((c) => c.tool === 'read_file' && c.tokens > 100)).toBe(true);
    const view = await ctx.getMessagesForRequest({ tokenBudget: Math.floor(full * 1.1) });
    const cleared = view.filter((m) => m.role === 'tool' && String(m.content).includes('was cleared'));
    expect(cleared.length).toBe(receipt!.cleared.length);
    expect(String(cleared[0]!.content)).toMatch(/Call read_file again/);
    // The two newest results are never cleared.
    const results = view.filter((m) => m.role === 'tool');
    expect(results.slice(-2).every((m) => !String(m.content).includes('was cleared'))).toBe(true);
  });

  it('keeps the prefix byte-stable between compactions and does not compact again on the next turn', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await longSession(ctx, 30);
    const budget = 8000;
    let compactions = 0;
    ctx.on('context:post_compact', () => compactions++);
    let previous = JSON.stringify(await ctx.getMessagesForRequest({ tokenBudget: budget }));
    expect(compactions).toBe(1);
    for (let turn = 0; turn < 5; turn++) {
      await ctx.addMessage({ role: 'user', content: `follow-up ${turn}` });
      await ctx.addMessage({ role: 'assistant', content: `answer ${turn}` });
      const view = JSON.stringify(await ctx.getMessagesForRequest({ tokenBudget: budget }));
      expect(view.slice(0, previous.length - 1)).toBe(previous.slice(0, -1));
      previous = view;
    }
    expect(compactions).toBe(1);
  });

  it('is deterministic: the same history and options give the same view', async () => {
    const a = new ContextManager({ model: 'gpt-4o' });
    const b = new ContextManager({ model: 'gpt-4o' });
    await longSession(a, 20);
    await longSession(b, 20);
    expect(await a.getMessagesForRequest({ tokenBudget: 3000 })).toEqual(
      await b.getMessagesForRequest({ tokenBudget: 3000 }),
    );
  });

  it('cuts the middle of an oversized tool result in progress, head and tail kept', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.addMessage({ role: 'user', content: 'dump the log' });
    const huge = `HEAD-MARK ${words(20_000)} TAIL-MARK`;
    for (const m of toolRound('c1', huge)) await ctx.addMessage(m);
    const view = await ctx.getMessagesForRequest({ tokenBudget: 4000 });
    const result = String(view.at(-1)!.content);
    expect(result.startsWith('HEAD-MARK')).toBe(true);
    expect(result.endsWith('TAIL-MARK')).toBe(true);
    expect(result).toContain('characters cut from the middle');
    expect(ctx.usage().tokens).toBeLessThanOrEqual(4000);
    expect((await ctx.getMessages())[2]!.content).toBe(huge);
  });

  it('throws ContextOverflowError with a breakdown when what must be kept cannot fit', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.addMessage({ role: 'system', content: words(400) });
    await ctx.addMessage({ role: 'user', content: words(50) });
    const overflows: unknown[] = [];
    ctx.on('context:overflow', (e) => overflows.push(e));
    const err = await ctx.getMessagesForRequest({ tokenBudget: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContextOverflowError);
    const overflow = err as ContextOverflowError;
    expect(overflow.breakdown.system).toBeGreaterThan(300);
    expect(overflow.breakdown.latestTurn).toBeGreaterThan(0);
    expect(overflow.message).toMatch(/budget is 300/);
    expect(overflows).toHaveLength(1);
  });

  it('does not re-plan on every request when the protected floor is above the target', async () => {
    // The floor here is the system prompt and the latest turn, 15% under the budget; the task
    // (the first user message, kept by default) would raise it over the budget.
    const ctx = new ContextManager({ model: 'gpt-4o', protectTask: false });
    await ctx.addMessage({ role: 'system', content: words(300) }, {});
    const system = await ctx.getTokenCount();
    for (let i = 0; i < 10; i++) {
      await ctx.addMessage({ role: 'user', content: `q${i} ${words(40, i)}` });
      await ctx.addMessage({ role: 'assistant', content: `a${i}` });
    }
    const budget = Math.floor(system * 1.15);
    const receipts: CompactionReceipt[] = [];
    ctx.on('context:post_compact', (e) => receipts.push(e.receipt));
    await ctx.getMessagesForRequest({ tokenBudget: budget });
    expect(receipts).toHaveLength(1);
    // The floor now holds the current turn whole (the latest question and its answers): the
    // first replies fit in the room left, and only a view past the budget compacts again.
    for (let i = 0; i < 3; i++) {
      await ctx.addMessage({ role: 'assistant', content: `ok ${i}` });
      await ctx.getMessagesForRequest({ tokenBudget: budget });
      if (i < 2) expect(receipts).toHaveLength(1);
    }
    for (const r of receipts.slice(1)) {
      expect(r.reason).toBe('over_budget');
      expect(r.tokensBefore).toBeGreaterThan(budget);
    }
  });

  it('never compacts pinned and critical messages', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.addMessage(
      { role: 'user', content: 'The deploy key is DK-7731; never forget it.' },
      { pinned: true },
    );
    await ctx.addMessage({ role: 'assistant', content: 'Noted DK-7731.' }, { critical: true });
    await longSession(ctx, 20);
    const view = await ctx.getMessagesForRequest({ tokenBudget: 2500 });
    // Kept verbatim and first among the turns (after the system prompt and any facts block, which
    // is a user message since issue 30).
    const turns = view.filter((m) => m.role !== 'system' && !String(m.content).startsWith(FACTS_OPEN));
    expect(turns[0]).toEqual({ role: 'user', content: 'The deploy key is DK-7731; never forget it.' });
    expect(turns[1]).toEqual({ role: 'assistant', content: 'Noted DK-7731.' });
  });

  it('counts tool definitions in the budget', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.addMessage({ role: 'user', content: 'hi' });
    await ctx.getMessagesForRequest({ tokenBudget: 10_000 });
    const bare = ctx.usage().tokens;
    const tools = [
      {
        type: 'function' as const,
        function: {
          name: 'read_file',
          description: words(100),
          parameters: { type: 'object', properties: {} },
        },
      },
    ];
    await ctx.getMessagesForRequest({ tokenBudget: 10_000, tools });
    expect(ctx.usage().tokens).toBeGreaterThan(bare + 100);
  });

  it('includes ephemeral messages in views', async () => {
    const ctx = new ContextManager();
    await ctx.addMessage({ role: 'user', content: 'hi' });
    await ctx.addMessage({ role: 'system', content: 'The time is 12:00.' }, { ephemeral: true });
    expect(await ctx.getMessagesForRequest()).toHaveLength(2);
  });
});

describe('Anthropic views', () => {
  it('open with a user message even when the oldest kept message is the assistant’s', async () => {
    const ctx = new ContextManager({ model: 'claude-sonnet-4-5' });
    await ctx.addMessage({ role: 'system', content: 'sys' });
    for (let i = 0; i < 30; i++) {
      await ctx.addMessage({ role: 'user', content: `question ${i} ${words(60, i)}` });
      await ctx.addMessage({
        role: 'assistant',
        content: [
          { type: 'text', text: `looking ${i}` },
          { type: 'tool_use', id: `tu_${i}`, name: 'search', input: { q: `q${i}` } },
        ],
      });
      await ctx.addMessage({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: `tu_${i}`, content: words(80, i) }],
      });
      await ctx.addMessage({ role: 'assistant', content: [{ type: 'text', text: `answer ${i}` }] });
    }
    for (const budget of [1500, 2500, 4000]) {
      const view = await ctx.getMessagesForRequest({ tokenBudget: budget });
      expect(validateRequest(view, 'anthropic')).toEqual({ valid: true, problems: [] });
      expect(ctx.usage().tokens).toBeLessThanOrEqual(budget);
    }
  });
});

describe('events', () => {
  it('a listener that throws never breaks the manager', async () => {
    const ctx = new ContextManager();
    const errors: unknown[] = [];
    ctx.on('error', (e) => errors.push(e.event));
    ctx.on('context:message_added', () => {
      throw new Error('boom');
    });
    await ctx.addMessage({ role: 'user', content: 'hi' });
    expect(await ctx.getMessages()).toHaveLength(1);
    expect(errors).toEqual(['context:message_added']);
  });
});

describe('views are read-only copies', () => {
  it('returns frozen messages so a caller cannot change stored history through a view', async () => {
    const ctx = new ContextManager();
    await ctx.addMessage({ role: 'user', content: 'hi' });
    const view = (await ctx.getMessagesForRequest()) as Message[];
    expect(() => {
      (view[0] as { content: string }).content = 'changed';
    }).toThrow(TypeError);
    view.push({ role: 'user', content: 'extra' });
    expect(await ctx.getMessages()).toEqual([{ role: 'user', content: 'hi' }]);
  });
});

describe('counting a large history', () => {
  it('counts it in slices that yield to the event loop, with the counts made in place', async () => {
    const messages: OpenAIMessage[] = Array.from({ length: 20_000 }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `turn ${i}: ${words(40, i)}`,
    }));
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.setMessages(messages);
    // Before counting slices yielded, the whole request ran in microtasks: no timer, no I/O
    // callback (another conversation's request, say) could run until it returned.
    let immediateRan = false;
    setImmediate(() => {
      immediateRan = true;
    });
    const view = await ctx.getMessagesForRequest({ tokenBudget: 100_000_000 });
    expect(immediateRan).toBe(true);
    expect(view).toHaveLength(messages.length);
    const counter = createTokenCounter(getModelInfo('gpt-4o')!);
    let inPlace = 0;
    for (const m of messages) inPlace += counter.countMessage(m, 'openai');
    expect(await ctx.getTokenCount()).toBe(inPlace);
  });
});

describe('context:include (issue 23, item 1)', () => {
  it('is emitted when the facts block, summary or notice is put into a view, once each', async () => {
    const ctx = new ContextManager({ maxTokens: 2000, compactionNotice: true });
    const included: Array<{ source: string; content: string }> = [];
    ctx.on('context:include', (e) => included.push(e));
    await ctx.addMessage({ role: 'system', content: 'You are a booking agent.' });
    for (let i = 0; i < 61; i++) {
      await ctx.addMessage({
        role: i % 2 === 0 ? 'user' : 'assistant',
        content: `Booking ${i}: reservation ZX${100 + i} for user mia_li_${i} from Lisbon to Porto on 2024-05-${(i % 28) + 1}, paid $${i * 10}.`,
      });
    }
    const view = await ctx.getMessagesForRequest();
    const sources = included.map((e) => e.source).sort();
    expect(sources).toEqual(expect.arrayContaining(['compaction_notice', 'facts', 'summary']));
    for (const e of included) {
      expect(view.some((m) => JSON.stringify(m).includes(JSON.stringify(e.content).slice(1, 40)))).toBe(true);
    }
    const before = included.length;
    await ctx.addMessage({ role: 'user', content: 'And the next one?' });
    await ctx.getMessagesForRequest();
    // The same facts and summary again: nothing newly put in (the note was for one request).
    expect(included.length).toBe(before);
  });
});

describe('the overflow breakdown (issue 23, item 11)', () => {
  const sum = (b: Record<string, number>) => Object.values(b).reduce((a, n) => a + n, 0);

  it('adds up to the total it explains when the latest tool result had to be cut', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.addMessage({ role: 'system', content: words(380) });
    await ctx.addMessage({ role: 'user', content: 'Read the log' });
    for (const m of toolRound('call_1', words(3000))) await ctx.addMessage(m);
    const err = await ctx.getMessagesForRequest({ tokenBudget: 1300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContextOverflowError);
    const overflow = err as ContextOverflowError;
    expect(sum({ ...overflow.breakdown })).toBe(overflow.required);
  });

  it('adds up to the total when a stored message has fields the view does not send', async () => {
    // A tau-bench tool message carries `name`, which Chat Completions does not document for a
    // tool message: the view leaves it out, and so must the breakdown's count.
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.addMessage({ role: 'system', content: words(380) });
    await ctx.addMessage({ role: 'user', content: 'Transfer me' });
    const [call, result] = toolRound('call_1', 'Transfer successful');
    await ctx.addMessage(call!);
    await ctx.addMessage({ ...result!, name: 'transfer_to_human_agents' } as Message);
    const err = await ctx.getMessagesForRequest({ tokenBudget: 200 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContextOverflowError);
    const overflow = err as ContextOverflowError;
    expect(overflow.breakdown.rest).toBe(0);
    expect(sum({ ...overflow.breakdown })).toBe(overflow.required);
  });

  it('adds up to the total when older messages are in the view too', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o', autoCompact: false });
    await ctx.addMessage({ role: 'system', content: words(100) });
    for (let i = 0; i < 20; i++) {
      await ctx.addMessage({ role: i % 2 ? 'assistant' : 'user', content: words(40) });
    }
    const err = await ctx.getMessagesForRequest({ tokenBudget: 500 }).catch((e: unknown) => e);
    const overflow = err as ContextOverflowError;
    expect(overflow.breakdown.rest).toBeGreaterThan(0);
    expect(sum({ ...overflow.breakdown })).toBe(overflow.required);
    expect(overflow.message).toMatch(/rest \d+/);
  });
});

describe('the budget a model gives (issue 23, item 5)', () => {
  it('gpt-4, whose max output is its whole window, leaves a positive budget', async () => {
    const ctx = new ContextManager({ model: 'gpt-4' });
    await ctx.addMessage({ role: 'user', content: 'Hello' });
    await ctx.getMessagesForRequest();
    expect(ctx.usage().budget).toBe(8192 - 2048 - 1000);
  });

  it('treats maxTokens given with a model as a cap on its budget', async () => {
    const budgets: Array<{ budget: number; source: string }> = [];
    const ctx = new ContextManager({ model: 'gpt-4o', maxTokens: 30_000 });
    ctx.on('context:budget', (b) => budgets.push(b));
    await ctx.addMessage({ role: 'user', content: 'Hello' });
    await ctx.getMessagesForRequest();
    expect(ctx.usage().budget).toBe(30_000);
    expect(budgets).toEqual([{ budget: 30_000, source: 'maxTokens' }]);
    // Above the model's own budget it changes nothing.
    const wide = new ContextManager({ model: 'gpt-4o', maxTokens: 500_000 });
    await wide.addMessage({ role: 'user', content: 'Hello' });
    await wide.getMessagesForRequest();
    expect(wide.usage().budget).toBe(128_000 - 16_384 - 1000);
  });
});

describe('only the fields a format documents go to the wire (issue 23, item 7)', () => {
  it('keeps inline metadata in storage and leaves it out of the view', async () => {
    const ctx = new ContextManager({ model: 'claude-sonnet-4-5' });
    const stored = { role: 'user', content: 'Fix the date parser', metadata: { source: 'cli', turn: 1 } };
    await ctx.addMessage({ role: 'system', content: 'You are a coding agent.' });
    await ctx.addMessage(stored);
    await ctx.addMessage({
      role: 'assistant',
      content: 'On it.',
      id: 'msg_1',
      model: 'claude-sonnet-4-5',
      stop_reason: 'end_turn',
    });
    await ctx.addMessage({ role: 'user', content: 'Thanks' });
    const view = await ctx.getMessagesForRequest();
    expect(view[1]).toEqual({ role: 'user', content: 'Fix the date parser' });
    expect(view[2]).toEqual({ role: 'assistant', content: 'On it.' });
    expect((await ctx.getMessages())[1]).toEqual(stored);
    expect(anthropicRequestProblems(messagesBody(view), { signatures: false })).toEqual([]);
    // The same object every request: the view stays byte-stable for the prompt cache.
    expect((await ctx.getMessagesForRequest())[1]).toBe(view[1]);
  });

  it('sends an OpenAI message with only its role’s fields', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.addMessage({ role: 'user', content: 'Hi', metadata: { at: 1 }, name: 'ana' });
    const [m] = await ctx.getMessagesForRequest();
    expect(m).toEqual({ role: 'user', content: 'Hi', name: 'ana' });
  });
});

describe('the tool result just asked for (issue 23, item 3)', () => {
  it('is kept whole when older messages can leave instead', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.addMessage({ role: 'system', content: 'You are a coding agent.' });
    for (let i = 0; i < 70; i++) {
      await ctx.addMessage({ role: i % 2 ? 'assistant' : 'user', content: `Chat ${i}: ${words(100, i)}` });
    }
    await ctx.addMessage({ role: 'user', content: 'Read src/big.ts' });
    const file = words(11_667, 7); // 70k tokens, after 42k of chat: over the budget together
    for (const m of toolRound('call_read', file)) await ctx.addMessage(m);
    const view = await ctx.getMessagesForRequest({ tokenBudget: 110_000 });
    const result = view.find((m) => m.role === 'tool');
    expect(result?.content).toBe(file);
    expect(ctx.usage().tokens).toBeLessThanOrEqual(110_000);
  });

  it('is cut only when it alone is too large for the window', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.addMessage({ role: 'user', content: 'Read the log' });
    for (const m of toolRound('call_log', words(12_000, 3))) await ctx.addMessage(m);
    const view = await ctx.getMessagesForRequest({ tokenBudget: 8_000 });
    const result = view.find((m) => m.role === 'tool');
    expect(String(result?.content)).toContain('characters cut from the middle');
    expect(ctx.usage().tokens).toBeLessThanOrEqual(8_000);
  });
});
