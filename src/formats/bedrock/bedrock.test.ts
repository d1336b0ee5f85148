import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bedrockConversationArb } from '../../../test/support/bedrock-arb.js';
import {
  bedrockRequestProblems,
  type FakeBedrockServer,
  signReasoning,
  startFakeBedrock,
} from '../../../test/support/fake-bedrock-server.js';
import { InvalidMessageError } from '../../errors.js';
import { ContextManager } from '../../manager.js';
import { layeredIds } from '../../messages/atom-kit.js';
import type { BedrockMessage } from '../../messages/bedrock-types.js';
import { freezeDeep } from '../../messages/freeze.js';
import type { HistoryEntry, Message } from '../../messages/types.js';
import { extractFactsOffline } from '../../tools/offline-facts.js';
import { messageText, toolCallIds, toolResultIds } from '../../wire/content.js';
import { validateRequest } from '../../wire/validate-request.js';
import { buildBedrock } from './atoms.js';
import { bedrockText } from './blocks.js';
import { anthropicToBedrock, bedrockDocumentName, bedrockToAnthropic } from './convert.js';
import { bedrockOverflow, bedrockReplyMessages, toBedrockRequest, usageFromBedrock } from './request.js';
import { bedrockProblems } from './request-problems.js';
import { bedrockMessageIssues } from './validate.js';

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

function entries(messages: readonly unknown[]): HistoryEntry[] {
  return messages.map((m, seq) => ({
    seq,
    message: freezeDeep(structuredClone(m)) as Message,
    metadata: { timestamp: '2026-11-26T00:00:00.000Z' },
  }));
}

function view(messages: readonly unknown[]): Message[] {
  return buildBedrock(entries(messages), 0, layeredIds(new Set())).atoms.flatMap((a) => [...a.messages]);
}

const user = (text: string) => ({ role: 'user', content: [{ text }] });
const assistant = (text: string) => ({ role: 'assistant', content: [{ text }] });
const call = (id: string, name = 'lookup', text?: string) => ({
  role: 'assistant',
  content: [...(text ? [{ text }] : []), { toolUse: { toolUseId: id, name, input: { q: id } } }],
});
const result = (id: string, text = `result of ${id}`) => ({
  role: 'user',
  content: [{ toolResult: { toolUseId: id, content: [{ text }], status: 'success' } }],
});

describe('Bedrock messages', () => {
  it('accepts every documented block and says what and where is wrong', () => {
    const good: BedrockMessage[] = [
      { role: 'system', content: [{ text: 'Be careful.' }, { cachePoint: { type: 'default' } }] },
      {
        role: 'user',
        content: [
          { text: 'Look' },
          { image: { format: 'png', source: { bytes: PNG } } },
          { document: { name: 'Report (2026)', format: 'pdf', source: { bytes: 'JVBERi0=' } } },
          { guardContent: { text: { text: 'guard this' } } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { reasoningContent: { reasoningText: { text: 'think', signature: 'sig' } } },
          { toolUse: { toolUseId: 't1', name: 'lookup', input: {} } },
        ],
      },
      {
        role: 'user',
        content: [{ toolResult: { toolUseId: 't1', content: [{ json: { a: 1 } }], status: 'error' } }],
      },
    ];
    for (const [i, m] of good.entries()) expect(bedrockMessageIssues(m, `messages[${i}]`)).toEqual([]);
    expect(
      bedrockMessageIssues({ role: 'user', content: [{ text: 'a', image: {} }] }, 'messages[0]'),
    ).toEqual([{ path: 'messages[0].content[0]', message: expect.stringContaining('exactly one member') }]);
    expect(
      bedrockMessageIssues(
        { role: 'user', content: [{ toolUse: { toolUseId: 'x', name: 'n', input: {} } }] },
        'm',
      ),
    ).toEqual([{ path: 'm.content[0].toolUse', message: 'toolUse belongs in an assistant message' }]);
    expect(
      bedrockMessageIssues(
        { role: 'user', content: [{ image: { format: 'bmp', source: { bytes: 'x' } } }] },
        'm',
      ),
    ).toEqual([{ path: 'm.content[0].image.format', message: 'expected one of png, jpeg, gif, webp' }]);
    expect(bedrockMessageIssues({ role: 'user', content: [{ type: 'text', text: 'x' }] }, 'm')[0]!.path).toBe(
      'm.content[0].type',
    );
  });

  it('reads the text recall and facts need, without reasoning or media', () => {
    expect(
      bedrockText({
        role: 'assistant',
        content: [
          { reasoningContent: { reasoningText: { text: 'secret thoughts' } } },
          { text: 'Order #W123 shipped.' },
          { toolUse: { toolUseId: 't', name: 'get_order', input: { id: 'W123' } } },
        ],
      }),
    ).toBe('Order #W123 shipped.\nget_order({"id":"W123"})');
  });

  it('converts to Anthropic and back without loss, reasoning and cache points included', () => {
    const messages: BedrockMessage[] = [
      { role: 'system', content: [{ text: 'sys' }, { cachePoint: { type: 'default' } }] },
      { role: 'user', content: [{ text: 'hi' }, { image: { format: 'png', source: { bytes: PNG } } }] },
      {
        role: 'assistant',
        content: [
          { reasoningContent: { reasoningText: { text: 'hmm', signature: 'S1' } } },
          { reasoningContent: { redactedContent: 'ZW5j' } },
          { toolUse: { toolUseId: 'a', name: 'f', input: { x: 1 } } },
        ],
      },
      {
        role: 'user',
        content: [{ toolResult: { toolUseId: 'a', content: [{ text: 'ok' }], status: 'error' } }],
      },
    ];
    const anthropic = bedrockToAnthropic(messages);
    expect(anthropic[2]!.content).toEqual([
      { type: 'thinking', thinking: 'hmm', signature: 'S1' },
      { type: 'redacted_thinking', data: 'ZW5j' },
      { type: 'tool_use', id: 'a', name: 'f', input: { x: 1 } },
    ]);
    expect(anthropicToBedrock(anthropic)).toEqual(messages);
  });

  it('lists every block that cannot go across, or leaves reasoning out when asked', () => {
    const messages: BedrockMessage[] = [
      {
        role: 'user',
        content: [{ video: { format: 'mp4', source: { s3Location: { uri: 's3://b/v.mp4' } } } }],
      },
      { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'unsigned' } } }] },
    ];
    expect(() => bedrockToAnthropic(messages)).toThrow(InvalidMessageError);
    try {
      bedrockToAnthropic(messages);
    } catch (err) {
      expect((err as InvalidMessageError).issues.map((i) => i.path)).toEqual([
        'messages[0].content[0]',
        'messages[1].content[0].reasoningContent',
      ]);
    }
    expect(bedrockToAnthropic([messages[1]!, user('x') as BedrockMessage], { dropThinking: true })).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'x' }] },
    ]);
    expect(bedrockDocumentName('q3_report.final.pdf', 'document 1')).toBe('q3 report final pdf');
  });
});

describe('conversion to Converse', () => {
  it('makes a system message after the conversation started a user message', () => {
    // Found by the conformance suite (openai to bedrock and back, seed -1991075037): it stayed a
    // system message between the turns, and the view held a system prompt Converse cannot take there.
    const converted = anthropicToBedrock([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Fix A.' },
      { role: 'assistant', content: 'Done A.' },
      { role: 'system', content: 'Reminder: read-only.' },
      { role: 'user', content: 'Fix B.' },
    ] as unknown as Parameters<typeof anthropicToBedrock>[0]);
    expect(converted.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'user']);
    expect(converted[3]).toEqual({ role: 'user', content: [{ text: 'Reminder: read-only.' }] });
    expect(validateRequest(converted as unknown as Message[], 'bedrock').problems).toEqual([]);
  });
});

describe('Bedrock atoms', () => {
  it('pairs parallel calls with results split over two messages, into one user turn after them', () => {
    const messages = [
      user('go'),
      {
        role: 'assistant',
        content: [
          { toolUse: { toolUseId: 'a', name: 'f', input: {} } },
          { toolUse: { toolUseId: 'b', name: 'g', input: {} } },
        ],
      },
      result('b'),
      result('a'),
      assistant('done'),
    ];
    const built = buildBedrock(entries(messages), 0, layeredIds(new Set()));
    const exchange = built.atoms[1]!;
    expect(exchange.kind).toBe('exchange');
    expect(exchange.seqs).toEqual([1, 2, 3]);
    expect(exchange.results.map((r) => r.callId)).toEqual(['b', 'a']);
    expect(bedrockRequestProblems({ ...toBedrockRequest(view(messages)) })).toEqual([]);
  });

  it('answers a call whose result never came, drops an orphan result, renames a reused id', () => {
    const messages = [user('go'), call('x'), user('interrupted'), result('ghost'), call('x'), result('x')];
    const built = buildBedrock(entries(messages), 0, layeredIds(new Set()));
    // The user turn between the call and its (never coming) result moves after the placeholder.
    expect(built.repairs.map((r) => r.kind).sort()).toEqual([
      'missing_result',
      'moved',
      'orphan_result',
      'renamed_id',
    ]);
    const v = view(messages);
    expect(bedrockRequestProblems({ ...toBedrockRequest(v) })).toEqual([]);
    const ids = v.flatMap((m) =>
      (m as BedrockMessage).content.flatMap((b) => ('toolUse' in b ? [b.toolUse.toolUseId] : [])),
    );
    expect(new Set(ids).size).toBe(2);
  });

  it('keeps signed reasoning byte for byte', () => {
    const signed = {
      role: 'assistant',
      content: [
        { reasoningContent: { reasoningText: { text: 'plan', signature: signReasoning('plan') } } },
        { toolUse: { toolUseId: 'r', name: 'f', input: {} } },
      ],
    };
    const v = view([user('go'), signed, result('r')]);
    expect(v[1]).toEqual(signed);
    expect(bedrockRequestProblems({ ...toBedrockRequest(v) })).toEqual([]);
  });

  it('every view of a generated conversation is accepted by the fake Converse API, stored messages unchanged', () => {
    const id = fc.constantFrom('a', 'b', 'c', 'bad id!', 'x'.repeat(70));
    const turn = fc.oneof(
      fc.string({ maxLength: 8 }).map((t) => user(t)),
      fc.string({ maxLength: 8 }).map((t) => assistant(t)),
      fc.array(id, { minLength: 1, maxLength: 3 }).map((ids) => ({
        role: 'assistant',
        content: ids.map((i) => ({ toolUse: { toolUseId: i, name: 'tool', input: {} } })),
      })),
      fc.array(id, { minLength: 1, maxLength: 3 }).map((ids) => ({
        role: 'user',
        content: ids.map((i) => ({ toolResult: { toolUseId: i, content: [{ text: 'r' }] } })),
      })),
    );
    fc.assert(
      fc.property(fc.array(turn, { maxLength: 14 }), (turns) => {
        const messages = [user('task'), ...turns];
        const stored = entries(messages);
        const before = JSON.stringify(stored);
        const v = buildBedrock(stored, 0, layeredIds(new Set())).atoms.flatMap((a) => [...a.messages]);
        expect(JSON.stringify(stored)).toBe(before);
        expect(bedrockRequestProblems({ ...toBedrockRequest(v) })).toEqual([]);
        const problems: unknown[] = [];
        bedrockProblems(v, problems as never);
        expect(problems).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});

describe('Converse requests and replies', () => {
  it('every view of a conversation with every block kind is accepted, signed reasoning unedited', () => {
    fc.assert(
      fc.property(bedrockConversationArb({ reuseIds: true }), (messages) => {
        for (const [i, m] of messages.entries())
          expect(bedrockMessageIssues(m, `messages[${i}]`)).toEqual([]);
        expect(bedrockRequestProblems({ ...toBedrockRequest(view(messages)) })).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it('keeps the latest four cache points where the caller put more', () => {
    const point = { cachePoint: { type: 'default' } };
    const request = toBedrockRequest([
      { role: 'system', content: [{ text: 's' }, point] },
      ...[1, 2, 3, 4, 5].flatMap((n) => [
        { role: 'user', content: [{ text: `u${n}` }, point] },
        assistant(`a${n}`),
      ]),
    ] as Message[]);
    expect(bedrockRequestProblems({ ...request })).toEqual([]);
    expect(request.messages.map((m) => m.content.length)).toEqual([1, 1, 1, 1, 2, 1, 2, 1, 2, 1]);
  });

  it('finds what Converse refuses in a whole conversation, with where', () => {
    const problems: Array<{ index: number; path: string; message: string }> = [];
    bedrockProblems(
      [
        assistant('hi'),
        call('a'),
        user('no result'),
        result('zz'),
        { role: 'user', content: [{ text: ' ' }] },
      ],
      problems,
    );
    expect(problems.map((p) => p.path).sort()).toEqual([
      'messages[0].role',
      'messages[1]',
      'messages[3].content[0].toolResult.toolUseId',
      'messages[4].content[0].text',
    ]);
  });

  it('lifts the system prompt out, joins turns of one role, declares the tools the history calls', () => {
    const request = toBedrockRequest([
      { role: 'system', content: [{ text: 'sys' }, { cachePoint: { type: 'default' } }] },
      user('a'),
      user('b'),
      call('t'),
      result('t'),
    ] as Message[]);
    expect(request.system).toEqual([{ text: 'sys' }, { cachePoint: { type: 'default' } }]);
    expect(request.messages[0]).toEqual({ role: 'user', content: [{ text: 'a' }, { text: 'b' }] });
    expect(request.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'lookup', inputSchema: { json: { type: 'object' } } } }],
    });
    const withTools = toBedrockRequest([user('a')] as Message[], {
      tools: [
        { name: 'f', description: 'F', input_schema: { type: 'object' } },
        { type: 'function', function: { name: 'g' } },
      ],
    });
    expect(withTools.toolConfig?.tools).toEqual([
      { toolSpec: { name: 'f', description: 'F', inputSchema: { json: { type: 'object' } } } },
      { toolSpec: { name: 'g', inputSchema: { json: { type: 'object' } } } },
    ]);
  });

  it('reads usage with cache reads and writes, and refuses a reply without it', () => {
    expect(
      usageFromBedrock({
        usage: {
          inputTokens: 10,
          outputTokens: 5,
          totalTokens: 315,
          cacheReadInputTokens: 200,
          cacheWriteInputTokens: 100,
        },
      }),
    ).toEqual({ inputTokens: 10, cacheReadTokens: 200, cacheWriteTokens: 100, totalInputTokens: 310 });
    expect(() => usageFromBedrock({ usage: { inputTokens: -1 } })).toThrow('usage.inputTokens');
    expect(() => bedrockReplyMessages({ content: [] })).toThrow(InvalidMessageError);
  });

  it('knows Bedrock saying the input is too long, and nothing else', () => {
    expect(
      bedrockOverflow({ name: 'ValidationException', message: 'Input is too long for requested model.' }),
    ).toEqual({});
    expect(
      bedrockOverflow({
        name: 'ValidationException',
        message:
          'The model returned the following errors: prompt is too long: 200049 tokens > 200000 maximum',
      }),
    ).toEqual({ actual: 200049, limit: 200000 });
    expect(
      bedrockOverflow({
        name: 'ValidationException',
        message: 'A conversation must alternate between user and assistant roles.',
      }),
    ).toBeUndefined();
    expect(
      bedrockOverflow({ name: 'ThrottlingException', message: 'Too many tokens, please wait' }),
    ).toBeUndefined();
  });
});

describe('the fake Converse server over HTTP', () => {
  let server: FakeBedrockServer;
  beforeAll(async () => {
    server = await startFakeBedrock({ contextWindow: 5_000 });
  });
  afterAll(() => server.close());

  const post = (body: unknown, model = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0') =>
    fetch(`${server.url}/model/${encodeURIComponent(model)}/converse`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('answers a view with a reply whose usage shows the cache written, then read', async () => {
    const prefix = 'You are careful. '.repeat(50);
    const body = toBedrockRequest([
      { role: 'system', content: [{ text: prefix }, { cachePoint: { type: 'default' } }] },
      user('hello'),
    ] as Message[]);
    const first = await post(body);
    expect(first.status).toBe(200);
    const reply = await first.json();
    expect(bedrockReplyMessages(reply)[0]!.role).toBe('assistant');
    const u1 = usageFromBedrock(reply);
    expect(u1.cacheWriteTokens).toBeGreaterThan(0);
    const u2 = usageFromBedrock(await (await post(body)).json());
    expect(u2.cacheReadTokens).toBe(u1.cacheWriteTokens);
    expect(u2.totalInputTokens).toBe(u1.totalInputTokens);
  });

  it('refuses what Bedrock refuses with a ValidationException, and a too long input', async () => {
    const bad = await post({ messages: [assistant('first')] });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('x-amzn-errortype')).toMatch(/^ValidationException/);
    expect(((await bad.json()) as { message: string }).message).toContain('must start with a user message');
    const long = await post({ messages: [user('word '.repeat(6_000))] });
    expect(long.status).toBe(400);
    const error = { name: 'ValidationException', ...((await long.json()) as object) };
    expect(bedrockOverflow(error)?.limit).toBe(5_000);
  });
});

describe('Converse messages read by recall, facts and summaries', () => {
  it('recall finds what a tool result and a text said; the offline facts read its ids', async () => {
    // Before the Bedrock reader, every Converse message read as "": recall found nothing.
    const ctx = new ContextManager({ model: 'claude-sonnet-4-5' });
    const messages: BedrockMessage[] = [
      { role: 'user', content: [{ text: 'Find order ORD-4411 for alice@example.com' }] },
      {
        role: 'assistant',
        content: [
          { text: 'Looking.' },
          { toolUse: { toolUseId: 't1', name: 'get_order', input: { id: 'ORD-4411' } } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            toolResult: {
              toolUseId: 't1',
              content: [{ text: 'order ORD-4411 shipped to Paris on 2024-05-02' }],
              status: 'success',
            },
          },
        ],
      },
      { role: 'assistant', content: [{ text: 'It shipped.' }] },
    ];
    for (const m of messages) await ctx.addMessage(m as Message);
    const hits = await ctx.recall('Paris');
    expect(hits.map((h) => h.seq)).toContain(2);
    expect(messageText(messages[2] as Message)).toBe('order ORD-4411 shipped to Paris on 2024-05-02');
    expect(toolCallIds(messages[1] as Message)).toEqual(['t1']);
    expect(toolResultIds(messages[2] as Message)).toEqual(['t1']);
    const facts = extractFactsOffline(
      messages.map((message, seq) => ({
        seq,
        message: message as Message,
        metadata: { timestamp: '2024-05-02T00:00:00.000Z' },
      })),
    );
    expect(facts.map((f) => f.value)).toContain('alice@example.com');
  });
});
