import { createOpenAI } from '@ai-sdk/openai';
import {
  generateText,
  jsonSchema,
  type ModelMessage,
  simulateReadableStream,
  stepCountIs,
  streamText,
  tool,
  wrapLanguageModel,
} from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aiSdkAnthropicBody } from '../../../test/support/ai-sdk-anthropic-body.js';
import {
  anthropicRequestProblems,
  type FakeAnthropicServer,
  startFakeAnthropic,
} from '../../../test/support/fake-anthropic-server.js';
import {
  type FakeOpenAIServer,
  type FakeRequest,
  startFakeOpenAI,
  toolLoopReply,
} from '../../../test/support/fake-openai-server.js';
import { OMITTED_START_TEXT } from '../../compaction/placeholders.js';
import { ConfigurationError } from '../../errors.js';
import { ContextManager } from '../../manager.js';
import type { Message } from '../../messages/types.js';
import { MemoryStore } from '../../stores/memory.js';
import { getModelInfo } from '../../tokens/catalog.js';
import { createTokenCounter } from '../../tokens/counter.js';
import { contextMiddleware, contextPrepareStep } from './middleware.js';
import { fromModelMessages } from './model-messages.js';

const counter = createTokenCounter(getModelInfo('gpt-4o')!);
const SYSTEM = 'You are a research agent. Use lookup for every question.';

/** A tool result of about 250 tokens, different per call. */
function longResult(query: string, step: number): string {
  const words = Array.from({ length: 160 }, (_, i) => `${query.split(' ')[0] ?? 'x'}${(i * 7 + step) % 97}`);
  return `Result ${step} for "${query}": ${words.join(' ')}`;
}

const lookup = tool({
  description: 'Looks something up.',
  inputSchema: jsonSchema<{ query: string; step: number }>({
    type: 'object',
    properties: { query: { type: 'string' }, step: { type: 'number' } },
    required: ['query', 'step'],
    additionalProperties: false,
  }),
  execute: async ({ query, step }) => longResult(query, step),
});

/** Tokens of what the model was sent, counted as contextkit counts a request. */
async function wireTokens(request: FakeRequest): Promise<number> {
  const messages = request.body.messages as Message[];
  const tools = request.body.tools as Parameters<typeof counter.measure>[1] extends infer O
    ? O extends { tools?: infer T }
      ? T
      : never
    : never;
  return counter.measure(messages, { tools });
}

function lastUserText(request: FakeRequest): string | undefined {
  const users = request.transcript.filter((e) => e.kind === 'user');
  const last = users[users.length - 1];
  return last && 'text' in last ? last.text : undefined;
}

describe('contextMiddleware with generateText over a fake OpenAI model on 127.0.0.1', () => {
  let server: FakeOpenAIServer;
  beforeAll(async () => {
    server = await startFakeOpenAI({ reply: toolLoopReply(4) });
  });
  afterAll(async () => {
    await server.close();
  });

  it('fits every step of every multi-step tool loop: in budget, no orphans, system and latest user kept', async () => {
    const budget = 2_000;
    const provider = createOpenAI({ baseURL: server.baseURL, apiKey: 'test-key' });
    const model = wrapLanguageModel({
      model: provider.chat('gpt-4o'),
      middleware: contextMiddleware({ maxTokens: budget }),
    });
    const questions = [
      'alpha: where is the config loaded',
      'bravo: which tests fail on CI',
      'charlie: who owns the billing module',
      'delta: what changed in release 4.2',
      'echo: how large is the cache',
      'foxtrot: why is the build slow',
    ];
    const messages: ModelMessage[] = [];
    const first = server.requests.length;
    const fullTokens: number[] = [];
    for (const question of questions) {
      messages.push({ role: 'user', content: question });
      const result = await generateText({
        model,
        system: SYSTEM,
        messages,
        tools: { lookup },
        stopWhen: stepCountIs(10),
      });
      expect(result.steps).toHaveLength(5);
      expect(result.text).toContain(question.slice(0, 20));
      messages.push(...result.response.messages);
      fullTokens.push(await counter.measure(fromModelMessages(messages).messages));
    }
    const requests = server.requests.slice(first);
    expect(requests).toHaveLength(questions.length * 5);
    // The unfitted conversation ends far above the budget: fitting had work to do.
    expect(fullTokens[fullTokens.length - 1]).toBeGreaterThan(budget * 3);
    for (const [i, request] of requests.entries()) {
      expect(request.problems, `request ${i}`).toEqual([]);
      expect(await wireTokens(request), `request ${i}`).toBeLessThanOrEqual(budget);
      expect(request.transcript[0]).toEqual({ kind: 'system', text: SYSTEM });
      expect(lastUserText(request)).toBe(questions[Math.floor(i / 5)]);
    }
    // The exchange in progress is whole: the model sees the result of the call it just made.
    const last = requests[requests.length - 1]!;
    const [call, result] = last.transcript.slice(-2);
    expect(call).toMatchObject({ kind: 'call', arguments: expect.stringContaining('"step":4') });
    expect(result).toMatchObject({ kind: 'result', callId: call?.kind === 'call' ? call.callId : '' });
    expect(result?.kind === 'result' && result.text.startsWith('Result 4 for "foxtrot')).toBe(true);
  });

  it('stores the whole conversation in a manager of your own, and refuses a prompt that does not extend it', async () => {
    const store = new MemoryStore();
    const manager = new ContextManager({ store, conversationId: 'chat-1', model: 'gpt-4o' });
    const provider = createOpenAI({ baseURL: server.baseURL, apiKey: 'test-key' });
    const model = wrapLanguageModel({
      model: provider.chat('gpt-4o'),
      middleware: contextMiddleware({ manager, maxTokens: 1_500 }),
    });
    const messages: ModelMessage[] = [];
    const first = server.requests.length;
    for (const question of ['one: first question', 'two: second question', 'three: third question']) {
      messages.push({ role: 'user', content: question });
      const result = await generateText({
        model,
        system: SYSTEM,
        messages,
        tools: { lookup },
        stopWhen: stepCountIs(10),
      });
      messages.push(...result.response.messages);
    }
    for (const request of server.requests.slice(first)) {
      expect(request.problems).toEqual([]);
      expect(await wireTokens(request)).toBeLessThanOrEqual(1_500);
    }
    // Everything but the last reply (which no call has sent yet) is stored, tool results whole.
    const stored = await store.read('chat-1');
    expect(stored.length).toBe(1 + messages.length - 1);
    const storedResults = stored.filter((e) => e.message.role === 'tool');
    expect(storedResults).toHaveLength(12);
    for (const e of storedResults) expect(String(e.message.content)).toMatch(/^Result \d for/);

    await expect(
      generateText({ model, system: 'A different system prompt', prompt: 'hello' }),
    ).rejects.toThrow(ConfigurationError);
  });

  it('fits the messages of each step through prepareStep', async () => {
    const provider = createOpenAI({ baseURL: server.baseURL, apiKey: 'test-key' });
    const budget = 1_400;
    const messages: ModelMessage[] = [];
    const first = server.requests.length;
    // The SDK does not pass the tools to prepareStep, though every step sends them: given here,
    // they are counted in the budget.
    const prepareStep = contextPrepareStep({ maxTokens: budget, tools: { lookup } });
    for (const question of ['golf: a question', 'hotel: another one', 'india: and a third']) {
      messages.push({ role: 'user', content: question });
      const result = await generateText({
        model: provider.chat('gpt-4o'),
        messages,
        tools: { lookup },
        stopWhen: stepCountIs(10),
        prepareStep,
      });
      messages.push(...result.response.messages);
    }
    const requests = server.requests.slice(first);
    expect(requests).toHaveLength(15);
    for (const request of requests) {
      expect(request.problems).toEqual([]);
      expect(await wireTokens(request)).toBeLessThanOrEqual(budget);
    }
  });
});

describe('contextMiddleware on the prompt a model receives', () => {
  it('passes provider options and images through to the model, fitted or not', async () => {
    const seen: Array<Parameters<MockLanguageModelV3['doGenerate']>[0]['prompt']> = [];
    const mock = new MockLanguageModelV3({
      modelId: 'gpt-4o',
      doGenerate: async (options) => {
        seen.push(options.prompt);
        return {
          content: [{ type: 'text', text: 'ok' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage: {
            inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: 1, text: 1, reasoning: 0 },
          },
          warnings: [],
        };
      },
    });
    const cache = { anthropic: { cacheControl: { type: 'ephemeral' } } };
    const pixel = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    );
    const history: ModelMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'old question '.repeat(300) }] },
      { role: 'assistant', content: 'old answer '.repeat(300) },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?', providerOptions: cache },
          { type: 'image', image: pixel, mediaType: 'image/png' },
        ],
      },
    ];
    // The old turn must be able to leave: its first user message (the task) is not kept here.
    const model = wrapLanguageModel({
      model: mock,
      middleware: contextMiddleware({ maxTokens: 600, options: { protectTask: false } }),
    });
    await generateText({ model, system: 'Be brief.', messages: history, providerOptions: {} });
    const prompt = seen[0]!;
    // The old turn is gone (or summarized); the system prompt and the latest user message are whole.
    expect(prompt[0]).toMatchObject({ role: 'system', content: 'Be brief.' });
    const lastUser = prompt[prompt.length - 1]!;
    expect(lastUser.role).toBe('user');
    expect(lastUser.content).toEqual([
      { type: 'text', text: 'What is this?', providerOptions: cache },
      { type: 'file', data: expect.anything(), mediaType: 'image/png' },
    ]);
    expect(JSON.stringify(prompt)).not.toContain('old answer old answer');

    // Within the budget, the prompt is passed on as the SDK built it.
    const roomy = wrapLanguageModel({ model: mock, middleware: contextMiddleware({ maxTokens: 50_000 }) });
    await generateText({ model: roomy, system: 'Be brief.', messages: history });
    await generateText({ model: mock, system: 'Be brief.', messages: history });
    expect(seen[1]).toHaveLength(4);
    expect(seen[1]).toEqual(seen[2]);
  });

  it('fits the prompt of a streamed call too', async () => {
    const prompts: Array<Parameters<MockLanguageModelV3['doStream']>[0]['prompt']> = [];
    const mock = new MockLanguageModelV3({
      modelId: 'gpt-4o',
      doStream: async (options) => {
        prompts.push(options.prompt);
        return {
          stream: simulateReadableStream({
            chunks: [
              { type: 'stream-start' as const, warnings: [] },
              { type: 'text-start' as const, id: 't' },
              { type: 'text-delta' as const, id: 't', delta: 'streamed' },
              { type: 'text-end' as const, id: 't' },
              {
                type: 'finish' as const,
                finishReason: { unified: 'stop' as const, raw: 'stop' },
                usage: {
                  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
                  outputTokens: { total: 1, text: 1, reasoning: 0 },
                },
              },
            ],
          }),
        };
      },
    });
    const history: ModelMessage[] = [];
    for (let i = 0; i < 20; i++) {
      history.push({ role: 'user', content: `question ${i}: ${'detail '.repeat(40)}` });
      history.push({ role: 'assistant', content: `answer ${i}: ${'reason '.repeat(40)}` });
    }
    history.push({ role: 'user', content: 'the latest question' });
    const model = wrapLanguageModel({ model: mock, middleware: contextMiddleware({ maxTokens: 800 }) });
    const result = streamText({ model, system: 'Be brief.', messages: history });
    expect(await result.text).toBe('streamed');
    const prompt = prompts[0]!;
    expect(await counter.measure(fromModelMessages(prompt).messages)).toBeLessThanOrEqual(800);
    expect(prompt[0]).toMatchObject({ role: 'system', content: 'Be brief.' });
    expect(prompt[prompt.length - 1]).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'the latest question' }],
    });
    expect(prompt.length).toBeLessThan(history.length);
  });
});

describe('contextMiddleware and Anthropic context management', () => {
  it("passes the call's providerOptions (context management edits) through untouched", async () => {
    const seen: unknown[] = [];
    const mock = new MockLanguageModelV3({
      modelId: 'claude-sonnet-4-6',
      doGenerate: async (options) => {
        seen.push(options.providerOptions);
        return {
          content: [{ type: 'text', text: 'ok' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage: {
            inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: 1, text: 1, reasoning: 0 },
          },
          warnings: [],
        };
      },
    });
    const contextManagement = {
      edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 60_000 } }],
    };
    const model = wrapLanguageModel({ model: mock, middleware: contextMiddleware({ maxTokens: 20_000 }) });
    await generateText({
      model,
      messages: [{ role: 'user', content: 'hello' }],
      providerOptions: { anthropic: { contextManagement } },
    });
    expect(seen).toEqual([{ anthropic: { contextManagement } }]);
  });
});

describe('contextMiddleware and Anthropic server compaction', () => {
  // @ai-sdk/anthropic returns a `compaction` block as a text part marked
  // `providerMetadata.anthropic.type: 'compaction'`, kept by the SDK as `providerOptions`, and sends
  // a text part so marked back as a `compaction` block (vercel/ai packages/anthropic/src:
  // anthropic-messages-language-model.ts, convert-to-anthropic-messages-prompt.ts). The API drops
  // what precedes the last compaction block
  // (https://platform.claude.com/docs/en/build-with-claude/compaction).
  const compactionPart = {
    type: 'text' as const,
    text: '## Summary\nThe user asked about turns 0 to 29; each answer was given.',
    providerOptions: { anthropic: { type: 'compaction' } },
  };
  const older: ModelMessage[] = Array.from({ length: 30 }, (_, i): ModelMessage[] => [
    { role: 'user', content: `question ${i}: ${longResult(`topic${i} detail`, i)}` },
    { role: 'assistant', content: `answer ${i}: ${longResult(`reply${i} detail`, i)}` },
  ]).flat();
  const compacted: ModelMessage = {
    role: 'assistant',
    content: [compactionPart, { type: 'text', text: 'Here is the answer to question 29.' }],
  };
  const latest: ModelMessage = { role: 'user', content: 'and now question 30?' };

  function recordingModel(prompts: unknown[][]): MockLanguageModelV3 {
    return new MockLanguageModelV3({
      modelId: 'claude-sonnet-4-6',
      doGenerate: async (options) => {
        prompts.push(options.prompt as unknown[]);
        return {
          content: [{ type: 'text', text: 'ok' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage: {
            inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: 1, text: 1, reasoning: 0 },
          },
          warnings: [],
        };
      },
    });
  }

  it('fits and counts from the last compaction part, which reaches the model unchanged', async () => {
    const prompts: unknown[][] = [];
    const model = wrapLanguageModel({
      model: recordingModel(prompts),
      middleware: contextMiddleware({ maxTokens: 2_000 }),
    });
    await generateText({ model, system: SYSTEM, messages: [...older, compacted, latest] });
    // What precedes the compaction (about 15k tokens) is what the API drops, not contextkit's to
    // summarize: the prompt that fits in 2,000 tokens is the system, the compaction reply, the question.
    expect(prompts[0]).toEqual([
      { role: 'system', content: SYSTEM },
      // The Messages API wants a user message first; it drops this one, before the compaction block.
      { role: 'user', content: [{ type: 'text', text: OMITTED_START_TEXT }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: compactionPart.text, providerOptions: compactionPart.providerOptions },
          { type: 'text', text: 'Here is the answer to question 29.' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'and now question 30?' }] },
    ]);
  });

  it('keeps the compaction reply verbatim when contextkit compacts what follows it', async () => {
    const later = older.slice(0, 20);
    const messages = [compacted, ...later, latest];
    const { messages: fitted } = await contextPrepareStep({ maxTokens: 1_500 })({ messages });
    // The server's summary stands for everything before it, like a compaction item in the core:
    // contextkit leaves it out of its own compaction and gives the SDK's message back as it was.
    const [opening, reply] = fitted.filter((m) => m.role !== 'system');
    expect(opening).toEqual({ role: 'user', content: [{ type: 'text', text: OMITTED_START_TEXT }] });
    expect(reply).toBe(compacted);
    expect(fitted.length).toBeLessThan(messages.length);
    expect(fitted[fitted.length - 1]).toBe(latest);
  });

  it('with a manager of your own, stores it all and sends a prompt the Messages API accepts', async () => {
    const manager = new ContextManager({ model: 'claude-sonnet-4-6' });
    const messages = [...older, compacted, latest];
    for (const budget of [2_000, 4_000, 40_000]) {
      const { messages: fitted } = await contextPrepareStep({ manager, maxTokens: budget })({ messages });
      const body = aiSdkAnthropicBody(fitted, 'claude-sonnet-4-6');
      expect(anthropicRequestProblems(body)).toEqual([]);
      expect(fitted).toContain(compacted);
    }
    expect(await manager.getMessages()).toHaveLength(messages.length);
  });

  it('finds the compaction part in ModelMessages too (prepareStep), the last one winning', async () => {
    const again: ModelMessage = {
      role: 'assistant',
      content: [
        { ...compactionPart, text: 'second summary' },
        { type: 'text', text: 'more' },
      ],
    };
    const failed: ModelMessage = { role: 'assistant', content: [{ ...compactionPart, text: '' }] };
    const messages = [...older, compacted, { role: 'user', content: 'go on' } as ModelMessage, again, latest];
    const { messages: fitted } = await contextPrepareStep({ maxTokens: 2_000 })({ messages });
    const opening = { role: 'user', content: [{ type: 'text', text: OMITTED_START_TEXT }] };
    expect(fitted).toEqual([opening, again, latest]);
    // A failed compaction (no content) is a no-op for the server: the last real one still starts.
    const withFailed = [...messages.slice(0, -1), failed, latest];
    const { messages: refitted } = await contextPrepareStep({ maxTokens: 2_000 })({ messages: withFailed });
    expect(refitted).toEqual([opening, again, failed, latest]);
  });
});

describe('contextMiddleware and Anthropic server compaction, against the fake Messages API on 127.0.0.1', () => {
  let fake: FakeAnthropicServer;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(() => fake.close());

  const MODEL = 'claude-sonnet-4-6';
  const contextManagement = {
    edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 50_000 } }],
  };

  /**
   * A model that sends its prompt as @ai-sdk/anthropic would (ai-sdk-anthropic-body.ts) with the
   * compaction edit and beta, and gives back the fake's reply as @ai-sdk/anthropic reads it: a
   * `compaction` block as a text part marked `providerMetadata.anthropic.type: 'compaction'`.
   */
  function fakeBackedModel(statuses: number[]): MockLanguageModelV3 {
    return new MockLanguageModelV3({
      modelId: MODEL,
      provider: 'anthropic.messages',
      doGenerate: async (options) => {
        const body = aiSdkAnthropicBody(options.prompt, MODEL, { context_management: contextManagement });
        const res = await fetch(`${fake.url}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'anthropic-beta': 'compact-2026-01-12' },
          body: JSON.stringify(body),
        });
        statuses.push(res.status);
        const json = (await res.json()) as {
          content?: Array<{ type: string; text?: string; content?: string }>;
          usage?: { input_tokens: number; output_tokens: number };
          error?: { message: string };
        };
        if (!res.ok) throw new Error(`fake Messages API: ${res.status} ${json.error?.message}`);
        const content = (json.content ?? []).map((b) =>
          b.type === 'compaction'
            ? {
                type: 'text' as const,
                text: b.content ?? '',
                providerMetadata: { anthropic: { type: 'compaction' } },
              }
            : { type: 'text' as const, text: b.text ?? '' },
        );
        const input = json.usage?.input_tokens ?? 0;
        const output = json.usage?.output_tokens ?? 0;
        return {
          content,
          finishReason: { unified: 'stop', raw: 'end_turn' },
          usage: {
            inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: output, text: output, reasoning: 0 },
          },
          warnings: [],
        };
      },
    });
  }

  it('every prompt after the server compacted is accepted, and only what follows the compaction is sent', async () => {
    const statuses: number[] = [];
    const model = wrapLanguageModel({
      model: fakeBackedModel(statuses),
      middleware: contextMiddleware({ maxTokens: 150_000 }),
    });
    let messages: ModelMessage[] = [];
    let compactedAt = -1;
    for (let turn = 0; turn < 16; turn++) {
      messages.push({
        role: 'user',
        content: `question ${turn}: ${longResult(`topic${turn} detail`, turn).repeat(24)}`,
      });
      const result = await generateText({ model, system: SYSTEM, messages });
      messages = [...messages, ...result.response.messages];
      const parts = result.response.messages.flatMap((m) =>
        Array.isArray(m.content) ? (m.content as unknown[]) : [],
      );
      if (compactedAt < 0 && parts.some((p) => JSON.stringify(p).includes('"compaction"')))
        compactedAt = turn;
    }
    // The fake compacted once the input passed 50,000 tokens, and accepted every request after it.
    expect(compactedAt).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const after = fake.requests.slice(compactedAt + 1);
    expect(after.length).toBeGreaterThan(0);
    for (const request of after) {
      expect(request.problems).toEqual([]);
      const sent = request.body.messages as Array<{ role: string; content: Array<{ type: string }> }>;
      // A user message opens the request, then the reply holding the compaction block.
      expect(sent[0]!.role).toBe('user');
      expect(sent[1]!.content[0]!.type).toBe('compaction');
      // Nothing from before the compaction is sent but the compaction block itself (the fake's summary).
      expect(JSON.stringify([sent[0], ...sent.slice(2)])).not.toContain('question 0:');
    }
  }, 60_000);
});
