import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeCountServer, startFakeCountServer } from '../../test/support/fake-count-server.js';
import { callingMessage, functionCall } from '../../test/support/openai-calls.js';
import { ConfigurationError, ContextkitError } from '../errors.js';
import type { AnthropicMessage, OpenAIMessage, ToolDefinition } from '../messages/types.js';
import { Cache } from '../stores/cache.js';
import { MemoryPersistence } from '../stores/persistence.js';
import {
  CountFailedError,
  type CountProvider,
  countRequestBody,
  createCountClient,
  EXACT_COUNT_CACHE,
} from './count-endpoints.js';

const KEY = 'sk-test-secret-123';

const openaiView: OpenAIMessage[] = [
  { role: 'system', content: 'You are a careful coding agent.' },
  { role: 'user', content: 'Fix the failing test in src/date.ts' },
  callingMessage(functionCall('call_1', 'read_file', '{"path":"src/date.ts"}')),
  { role: 'tool', tool_call_id: 'call_1', content: 'export const epoch = 0;' },
];

const anthropicView: AnthropicMessage[] = [
  { role: 'system', content: 'You are a careful coding agent.' },
  { role: 'user', content: 'Fix the failing test in src/date.ts' },
  {
    role: 'assistant',
    content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'src/date.ts' } }],
  },
  {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'export const epoch = 0;' }],
  },
];

const tools: ToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Reads a file from the workspace',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
];

let server: FakeCountServer;
beforeEach(async () => {
  server = await startFakeCountServer({ apiKey: KEY });
});
afterEach(async () => {
  await server.close();
});

function client(provider: CountProvider, extra: Partial<Parameters<typeof createCountClient>[0]> = {}) {
  return createCountClient({ provider, apiKey: KEY, baseURL: `${server.url}/`, ...extra });
}

async function failure(promise: Promise<unknown>): Promise<CountFailedError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CountFailedError);
  expect(error).toBeInstanceOf(ContextkitError);
  expect((error as CountFailedError).code).toBe('count_failed');
  expect((error as Error).message).not.toContain(KEY);
  return error as CountFailedError;
}

describe('Anthropic count_tokens', () => {
  it('sends the documented request, system and tools included, and returns input_tokens', async () => {
    const tokens = await client('anthropic').count({
      model: 'claude-sonnet-4-5',
      messages: openaiView,
      tools,
    });
    expect(server.rejections).toEqual([]);
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v1/messages/count_tokens');
    expect(request?.headers['x-api-key']).toBe(KEY);
    expect(request?.headers['anthropic-version']).toBe('2023-06-01');
    expect(request?.headers['content-type']).toBe('application/json');
    const body = request?.body as Record<string, unknown>;
    expect(body.model).toBe('claude-sonnet-4-5');
    expect(body.system).toBe('You are a careful coding agent.');
    expect(body.tools).toEqual([
      {
        name: 'read_file',
        description: 'Reads a file from the workspace',
        input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      },
    ]);
    expect((body.messages as Array<{ role: string }>).map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
    ]);
    expect(tokens).toBe(server.countOf(body));
  });

  it('sends Anthropic views as they are, the system message lifted to `system`', async () => {
    await client('anthropic').count({ model: 'claude-haiku-4-5', messages: anthropicView });
    const body = server.requests[0]?.body as Record<string, unknown>;
    expect(body.system).toBe('You are a careful coding agent.');
    expect(body.messages).toEqual(anthropicView.slice(1));
    expect(body).not.toHaveProperty('tools');
  });

  it('puts a system prompt given apart before the view’s own, as blocks when any are blocks', () => {
    const body = countRequestBody('anthropic', {
      model: 'm',
      system: [{ type: 'text', text: 'Rules.', cache_control: { type: 'ephemeral' } }],
      messages: anthropicView,
    });
    expect(body.system).toEqual([
      { type: 'text', text: 'Rules.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'You are a careful coding agent.' },
    ]);
  });

  it('counts more for the same messages with a system prompt and tools', async () => {
    const c = client('anthropic');
    const turns = anthropicView.slice(1);
    const bare = await c.count({ model: 'm', messages: turns });
    const withSystem = await c.count({ model: 'm', messages: anthropicView });
    const withTools = await c.count({ model: 'm', messages: anthropicView, tools });
    expect(withSystem).toBeGreaterThan(bare);
    expect(withTools).toBeGreaterThan(withSystem);
  });
});

describe('Gemini countTokens', () => {
  it('sends a generateContentRequest with systemInstruction and tools, and returns totalTokens', async () => {
    const tokens = await client('google').count({ model: 'gemini-2.5-flash', messages: openaiView, tools });
    expect(server.rejections).toEqual([]);
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v1beta/models/gemini-2.5-flash:countTokens');
    expect(request?.headers['x-goog-api-key']).toBe(KEY);
    const gcr = (request?.body as { generateContentRequest: Record<string, unknown> } | undefined)
      ?.generateContentRequest as Record<string, unknown>;
    expect(gcr.model).toBe('models/gemini-2.5-flash');
    expect(gcr.systemInstruction).toEqual({ parts: [{ text: 'You are a careful coding agent.' }] });
    expect(gcr.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'read_file',
            description: 'Reads a file from the workspace',
            parametersJsonSchema: {
              type: 'object',
              properties: { path: { type: 'string' } },
              required: ['path'],
            },
          },
        ],
      },
    ]);
    expect(gcr.contents).toEqual([
      { role: 'user', parts: [{ text: 'Fix the failing test in src/date.ts' }] },
      { role: 'model', parts: [{ functionCall: { name: 'read_file', args: { path: 'src/date.ts' } } }] },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'read_file', response: { content: 'export const epoch = 0;' } } },
        ],
      },
    ]);
    expect(tokens).toBe(server.countOf(request?.body));
  });

  it('accepts the model with its models/ prefix', async () => {
    await client('google').count({ model: 'models/gemini-2.5-pro', messages: anthropicView });
    expect(server.rejections).toEqual([]);
    expect(server.requests[0]?.path).toBe('/v1beta/models/gemini-2.5-pro:countTokens');
  });
});

describe('caching', () => {
  it('answers an identical request from memory, and a changed one from the endpoint', async () => {
    const c = client('anthropic');
    const first = await c.count({ model: 'm', messages: anthropicView, tools });
    const again = await c.count({ model: 'm', messages: structuredClone(anthropicView), tools: [...tools] });
    expect(again).toBe(first);
    expect(server.requests).toHaveLength(1);
    await c.count({
      model: 'm',
      messages: [...anthropicView, { role: 'assistant', content: 'Fixed.' }],
      tools,
    });
    expect(server.requests).toHaveLength(2);
    await c.count({ model: 'other-model', messages: anthropicView, tools });
    expect(server.requests).toHaveLength(3);
  });

  it('shares one call between identical requests in flight', async () => {
    const c = client('google');
    const counts = await Promise.all([1, 2, 3].map(() => c.count({ model: 'g', messages: openaiView })));
    expect(new Set(counts).size).toBe(1);
    expect(server.requests).toHaveLength(1);
  });

  it('keeps counts in a shared Cache under exact-count, so another client need not ask', async () => {
    const persistence = new MemoryPersistence();
    const cache = new Cache(persistence);
    const first = await client('anthropic', { cache }).count({ model: 'm', messages: anthropicView });
    const keys = await persistence.list(`cache:${EXACT_COUNT_CACHE}:`);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^cache:exact-count:[0-9a-f]{64}$/);
    const second = await client('anthropic', { cache }).count({ model: 'm', messages: anthropicView });
    expect(second).toBe(first);
    expect(server.requests).toHaveLength(1);
  });

  it('still counts when the shared cache fails', async () => {
    const broken = new MemoryPersistence();
    const failing = {
      get: () => Promise.reject(new Error('disk gone')),
      set: () => Promise.reject(new Error('disk gone')),
      delete: () => broken.delete('x'),
      list: () => broken.list(),
      has: () => Promise.resolve(false),
    };
    const tokens = await client('anthropic', { cache: new Cache(failing) }).count({
      model: 'm',
      messages: anthropicView,
    });
    expect(tokens).toBeGreaterThan(0);
  });
});

describe('failures', () => {
  it('rejects with the HTTP status on a 500 and a 429, and does not cache the failure', async () => {
    const c = client('anthropic');
    server.failNext('server-error');
    const e500 = await failure(c.count({ model: 'm', messages: anthropicView }));
    expect(e500.reason).toBe('http');
    expect(e500.status).toBe(500);
    expect(e500.message).toContain('internal error');
    server.failNext('rate-limit');
    const e429 = await failure(c.count({ model: 'm', messages: anthropicView }));
    expect(e429.status).toBe(429);
    expect(e429.message).toContain('Rate limited');
    await expect(c.count({ model: 'm', messages: anthropicView })).resolves.toBeGreaterThan(0);
    expect(server.requests).toHaveLength(3);
  });

  it('rejects with the provider’s message when the request is refused', async () => {
    const e = await failure(
      createCountClient({ provider: 'anthropic', apiKey: 'wrong', baseURL: server.url }).count({
        model: 'm',
        messages: anthropicView,
      }),
    );
    expect(e.status).toBe(400);
    expect(e.message).toContain('x-api-key');
  });

  it('times out when the endpoint does not answer', async () => {
    server.failNext('hang');
    const started = Date.now();
    const e = await failure(
      client('google', { timeoutMs: 150 }).count({ model: 'g', messages: anthropicView }),
    );
    expect(e.reason).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('rejects an answer that is not JSON or has no count', async () => {
    const c = client('google');
    server.failNext('garbage');
    expect((await failure(c.count({ model: 'g', messages: anthropicView }))).reason).toBe('response');
    server.failNext('no-count');
    expect((await failure(c.count({ model: 'g', messages: anthropicView }))).reason).toBe('response');
  });

  it('rejects when the endpoint cannot be reached', async () => {
    const closed = await startFakeCountServer();
    await closed.close();
    const c = createCountClient({ provider: 'anthropic', apiKey: KEY, baseURL: closed.url });
    expect((await failure(c.count({ model: 'm', messages: anthropicView }))).reason).toBe('network');
  });

  it('rejects a request it cannot build without calling the endpoint', async () => {
    const mixed = [openaiView[2], anthropicView[2]] as never[];
    const e = await failure(client('anthropic').count({ model: 'm', messages: mixed }));
    expect(e.reason).toBe('request');
    expect((await failure(client('anthropic').count({ model: '', messages: [] }))).reason).toBe('request');
    expect(server.requests).toHaveLength(0);
  });

  it('refuses bad options at construction', () => {
    expect(() => createCountClient({ provider: 'anthropic', apiKey: '' })).toThrow(ConfigurationError);
    expect(() => createCountClient({ provider: 'openai' as never, apiKey: KEY })).toThrow(ConfigurationError);
    expect(() => createCountClient({ provider: 'google', apiKey: KEY, timeoutMs: 0 })).toThrow(
      ConfigurationError,
    );
  });
});
