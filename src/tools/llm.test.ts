import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type FakeLLMServer,
  type FakeMode,
  type FakeProvider,
  startFakeLLMServer,
} from '../../test/support/fake-llm-server.js';
import { callingMessage, functionCall } from '../../test/support/openai-calls.js';
import type { HistoryEntry, Message } from '../messages/types.js';
import {
  canPrepare,
  createAnthropicTools,
  createOpenAITools,
  type LLMToolsOptions,
  type LLMWarning,
  type PreparingTools,
} from './llm.js';
import { extractFactsOffline } from './offline-facts.js';
import { summarizeOffline } from './offline-summarizer.js';
import { renderTranscript } from './transcript.js';
import type { ContextTools } from './types.js';

const API_KEY = 'sk-test-not-a-real-key';

const messages: Message[] = [
  { role: 'system', content: 'You are a careful airline agent.' },
  { role: 'user', content: 'Hi, my user id is mia_li_3668. I want to change reservation ZFA04Y to May 22.' },
  callingMessage(functionCall('c1', 'get_reservation_details', '{"reservation_id":"ZFA04Y"}')),
  {
    role: 'tool',
    tool_call_id: 'c1',
    content:
      '{"reservation_id":"ZFA04Y","flights":[{"flight_number":"HAT136","date":"2024-05-20"}],"total":523}',
  },
  {
    role: 'assistant',
    content: 'Flight HAT136 on 2024-05-20 can move to 2024-05-22 for $45. Shall I proceed?',
  },
  { role: 'user', content: 'Yes, proceed.' },
];
const entries: HistoryEntry[] = messages.map((message, seq) => ({
  seq,
  message,
  metadata: { timestamp: '2024-05-15T15:00:00.000Z' },
}));

/** A fetch that refuses anything but 127.0.0.1 and records every url it was asked for. */
function loopbackFetch(urls: string[]): typeof globalThis.fetch {
  return (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    urls.push(url.href);
    if (url.hostname !== '127.0.0.1') return Promise.reject(new Error(`blocked request to ${url.host}`));
    return globalThis.fetch(input, init);
  };
}

/**
 * How long the tools wait for the fake server: long enough that a loaded machine (CI runs many
 * test files at once) never turns a prompt reply into a timeout and a fallback.
 */
const REPLY_TIMEOUT_MS = 10_000;
/** The timeout of the tools facing a server that never answers. */
const HANG_TIMEOUT_MS = 300;

const create: Record<FakeProvider, (options: LLMToolsOptions) => ContextTools> = {
  openai: createOpenAITools,
  anthropic: createAnthropicTools,
};

describe.each(['openai', 'anthropic'] as const)('%s tools against a fake server', (provider) => {
  let server: FakeLLMServer;
  let warnings: LLMWarning[];
  let urls: string[];
  let tools: ContextTools;

  beforeAll(async () => {
    server = await startFakeLLMServer({ provider, apiKey: API_KEY });
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.setMode('ok');
    server.requests.length = 0;
    warnings = [];
    urls = [];
    tools = makeTools(REPLY_TIMEOUT_MS);
  });

  /** The tools under test, giving up on the fake server after `timeoutMs`. */
  function makeTools(timeoutMs: number): ContextTools {
    return create[provider]({
      baseURL: server.baseURL,
      apiKey: API_KEY,
      model: 'test-model',
      timeoutMs,
      fetch: loopbackFetch(urls),
      onWarn: (warning) => warnings.push(warning),
    });
  }

  it('sends the documented request shape and returns the reply text', async () => {
    server.setReply(
      () => 'user mia_li_3668 asked to move ZFA04Y (HAT136, 2024-05-20) to 2024-05-22 for $45; agreed.',
    );
    const summary = await tools.summarize(entries, {
      maxTokens: 300,
      previousSummary: 'Earlier: greeted the user.',
    });
    expect(summary).toBe(
      'user mia_li_3668 asked to move ZFA04Y (HAT136, 2024-05-20) to 2024-05-22 for $45; agreed.',
    );
    expect(tools.kind).toBe(provider);
    expect(warnings).toEqual([]);
    expect(server.requests).toHaveLength(1);
    const request = server.requests[0];
    expect(request?.problems).toEqual([]);
    expect(request?.method).toBe('POST');
    const body = request?.body as Record<string, unknown>;
    expect(body.model).toBe('test-model');
    expect(body.max_tokens).toBe(300);
    expect(body.temperature).toBe(0);
    if (provider === 'openai') {
      expect(request?.path).toBe('/v1/chat/completions');
      expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect((body.messages as Array<{ role: string }>).map((m) => m.role)).toEqual(['system', 'user']);
    } else {
      expect(request?.path).toBe('/v1/messages');
      expect(request?.headers['x-api-key']).toBe(API_KEY);
      expect(request?.headers['anthropic-version']).toBe('2023-06-01');
      expect(typeof body.system).toBe('string');
      expect((body.messages as Array<{ role: string }>).map((m) => m.role)).toEqual(['user']);
    }
    expect(request?.headers['content-type']).toBe('application/json');
  });

  it('asks to keep paths, ids, numbers and names verbatim and carries the summary and facts forward', async () => {
    let prompt = { system: '', user: '' };
    server.setReply((p) => {
      prompt = p;
      return 'ok';
    });
    await tools.summarize(entries, {
      maxTokens: 200,
      previousSummary: 'Earlier: user usr_0042 asked about bags.',
      focus: 'dates',
    });
    expect(prompt.system).toMatch(/exactly as written/);
    expect(prompt.system).toMatch(/file path, id, number/);
    expect(prompt.system).toContain('at most 160 tokens');
    expect(prompt.user).toContain('Earlier: user usr_0042 asked about bags.');
    expect(prompt.user).toContain('[identifier]: ZFA04Y (msg 1)');
    expect(prompt.user).toContain('- user_id [identifier]: mia_li_3668 (msg 1)');
    expect(prompt.user).toContain('Focus on: dates');
    expect(prompt.user).toContain(renderTranscript(entries));
    expect(prompt.user).toContain('[#3 tool get_reservation_details] {"reservation_id":"ZFA04Y"');
    expect(prompt.user).not.toContain('careful airline agent');
  });

  it('adds validated model facts to the offline ones and drops invented ones', async () => {
    server.setReply(() =>
      [
        'Here are the facts:',
        '```json',
        JSON.stringify([
          { key: 'New Date', value: '2024-05-22', category: 'date', seq: 4 },
          { key: 'fee', value: '$45', category: 'amount', seq: 4 },
          { key: 'answer', value: 'Yes, proceed', category: 'confirmation', seq: 99 },
          { key: 'invented', value: 'HAT999', category: 'identifier', seq: 3 },
          { key: 'bad', value: { nested: true }, category: 'other', seq: 1 },
          'not an object',
        ]),
        '```',
      ].join('\n'),
    );
    const facts = await tools.extractFacts(entries);
    const offline = extractFactsOffline(entries);
    expect(warnings).toEqual([]);
    for (const fact of offline) expect(facts).toContainEqual(fact);
    expect(facts).toContainEqual({ key: 'answer', value: 'Yes, proceed', category: 'other', seq: 5 });
    expect(facts.some((f) => f.value === 'HAT999')).toBe(false);
    expect(facts.filter((f) => f.value === '2024-05-22')).toHaveLength(1);
    expect(server.requests[0]?.problems).toEqual([]);
  });

  it('keeps previous facts when the model returns none', async () => {
    server.setReply(() => '[]');
    const previous = [{ key: 'email', value: 'old@example.com', category: 'email' as const, seq: 0 }];
    const facts = await tools.extractFacts(entries.slice(1), { previousFacts: previous });
    expect(facts[0]).toEqual(previous[0]);
    expect(facts).toEqual(extractFactsOffline(entries.slice(1), { previousFacts: previous }));
  });

  const failures: Array<[FakeMode, RegExp]> = [
    ['error500', /HTTP 500/],
    ['error429', /HTTP 429/],
    ['hang', new RegExp(`no reply within ${HANG_TIMEOUT_MS} ms`)],
    ['garbage', /not JSON/],
    ['empty', /empty/],
    ['truncated', /cut off|does not parse|no JSON array/],
  ];
  it.each(failures)('falls back to the offline tools with a warning on %s', async (mode, reason) => {
    server.setMode(mode);
    if (mode === 'hang') tools = makeTools(HANG_TIMEOUT_MS);
    server.setReply(() => '[{"key":"x","value":"ZFA04Y","category":"identifier","seq":1}');
    const summary = await tools.summarize(entries, { maxTokens: 120 });
    expect(summary).toBe(summarizeOffline(entries, { maxTokens: 120 }));
    const facts = await tools.extractFacts(entries);
    expect(facts).toEqual(extractFactsOffline(entries));
    expect(warnings).toHaveLength(2);
    for (const warning of warnings) {
      expect(warning.code).toBe('llm_fallback');
      expect(warning.message).toMatch(reason);
      expect(warning.message).toContain('used the offline tools instead');
      expect(warning.message).not.toContain(API_KEY);
    }
  });

  it('backs off a failing endpoint: later calls fall back at once, until the pause is over', async () => {
    server.setMode('error500');
    await tools.summarize(entries, { maxTokens: 120 });
    expect(server.requests).toHaveLength(1);
    // Every compaction would otherwise wait for the endpoint's error (or timeout) again.
    expect(await tools.summarize(entries, { maxTokens: 120 })).toBe(
      summarizeOffline(entries, { maxTokens: 120 }),
    );
    expect(await tools.extractFacts(entries)).toEqual(extractFactsOffline(entries));
    expect(server.requests).toHaveLength(1);
    expect(warnings).toHaveLength(3);
    expect(warnings[2]?.message).toMatch(/HTTP 500.*not asked again until/);
    server.setMode('ok');
    server.setReply(() => 'The model summary.');
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(now + 31_000);
    try {
      expect(await tools.summarize(entries, { maxTokens: 120 })).toBe('The model summary.');
      expect(server.requests).toHaveLength(2);
    } finally {
      clock.mockRestore();
    }
  });

  it('prepares a summary and its facts in one documented request, and throws (no fallback) on any fault', async () => {
    const preparing = tools as PreparingTools;
    expect(canPrepare(preparing)).toBe(true);
    let prompt = { system: '', user: '' };
    server.setReply((p) => {
      prompt = p;
      return `Here it is: ${JSON.stringify({
        summary: 'mia_li_3668 moves ZFA04Y from 2024-05-20 to 2024-05-22 for $45.',
        facts: [{ key: 'reservation', value: 'ZFA04Y', category: 'identifier', seq: 1 }],
      })}`;
    });
    const memory = await preparing.prepareMemory({
      summaryEntries: entries.slice(0, 3),
      factEntries: entries.slice(2, 4),
      maxTokens: 200,
      previousSummary: 'Earlier: greeted the user.',
      countText: (t) => Math.ceil(t.length / 4),
    });
    expect(memory.summary).toBe('mia_li_3668 moves ZFA04Y from 2024-05-20 to 2024-05-22 for $45.');
    expect(memory.facts).toEqual([{ key: 'reservation', value: 'ZFA04Y', category: 'identifier', seq: 1 }]);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.problems).toEqual([]);
    // Room for the summary and for the facts in the one reply.
    expect((server.requests[0]!.body as { max_tokens: number }).max_tokens).toBe(200 + 4096);
    expect(prompt.system).toMatch(/"summary"/);
    expect(prompt.system).toMatch(/word for word/);
    expect(prompt.user).toContain('Earlier: greeted the user.');
    // The cleared result leaves the view unsummarized: its facts are asked for, apart.
    expect(prompt.user).toMatch(/extract their facts only[\s\S]*#3/);
    expect(warnings).toEqual([]);

    const ask = () => preparing.prepareMemory({ summaryEntries: entries, factEntries: [], maxTokens: 20 });
    server.setReply(() => JSON.stringify({ summary: 'word '.repeat(200), facts: [] }));
    await expect(ask()).rejects.toThrow(/over the 20 allowed/);
    server.setReply(() => 'no object here');
    await expect(ask()).rejects.toThrow(/no JSON object/);
    server.setReply(() => JSON.stringify({ summary: '  ', facts: [] }));
    await expect(ask()).rejects.toThrow(/empty/);
    server.setMode('error500');
    await expect(ask()).rejects.toThrow(/HTTP 500/);
    const asked = server.requests.length;
    // Backed off like the other calls: not asked again at once.
    await expect(ask()).rejects.toThrow(/not asked again until/);
    expect(server.requests).toHaveLength(asked);
    expect(warnings).toEqual([]);
  });

  it('falls back when the summary is over budget', async () => {
    server.setReply(() => 'word '.repeat(400));
    const summary = await tools.summarize(entries, { maxTokens: 50 });
    expect(summary).toBe(summarizeOffline(entries, { maxTokens: 50 }));
    expect(warnings[0]?.message).toMatch(/over the 50 allowed/);
  });

  it('falls back on a wrong key (401) and on a network error', async () => {
    const wrongKey = create[provider]({
      baseURL: server.baseURL,
      apiKey: 'sk-wrong',
      model: 'test-model',
      fetch: loopbackFetch(urls),
      onWarn: (warning) => warnings.push(warning),
    });
    await wrongKey.summarize(entries, { maxTokens: 100 });
    expect(warnings[0]?.message).toMatch(/HTTP 401/);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const unreachable = create[provider]({
      baseURL: `http://127.0.0.1:${port}`,
      apiKey: API_KEY,
      model: 'test-model',
      fetch: loopbackFetch(urls),
      onWarn: (warning) => warnings.push(warning),
    });
    const facts = await unreachable.extractFacts(entries);
    expect(facts).toEqual(extractFactsOffline(entries));
    expect(warnings[1]?.message).toMatch(/network error/);
  });

  it('survives a throwing warning listener, and sends nothing for no entries', async () => {
    server.setMode('error500');
    const noisy = create[provider]({
      baseURL: server.baseURL,
      apiKey: API_KEY,
      model: 'test-model',
      fetch: loopbackFetch(urls),
      onWarn: () => {
        throw new Error('listener bug');
      },
    });
    await expect(noisy.summarize(entries, { maxTokens: 100 })).resolves.toBe(
      summarizeOffline(entries, { maxTokens: 100 }),
    );
    const before = server.requests.length;
    await expect(noisy.summarize([], { maxTokens: 100, previousSummary: 'kept' })).resolves.toBe('kept');
    await expect(noisy.extractFacts([])).resolves.toEqual([]);
    expect(server.requests.length).toBe(before);
  });

  it('never sends a request anywhere but 127.0.0.1', () => {
    for (const url of urls) expect(new URL(url).hostname).toBe('127.0.0.1');
    for (const request of server.requests) expect(request.remoteAddress).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
  });
});
