import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  trimMessages,
} from '@langchain/core/messages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAIChatModel } from '../../../test/support/fake-chat-model.js';
import {
  type FakeOpenAIServer,
  startFakeOpenAI,
  toolLoopReply,
} from '../../../test/support/fake-openai-server.js';
import type { ToolDefinition } from '../../messages/types.js';
import { getModelInfo } from '../../tokens/catalog.js';
import { createTokenCounter } from '../../tokens/counter.js';
import { fromBaseMessages } from './base-messages.js';
import { ContextkitChatMessageHistory } from './chat-message-history.js';
import { fitMessages } from './fit-messages.js';

const counter = createTokenCounter(getModelInfo('gpt-4o')!);
const countTokens = (messages: BaseMessage[]) => counter.measure(fromBaseMessages(messages));

function weather(city: string): string {
  return `Forecast for ${city}: ${Array.from({ length: 120 }, (_, i) => `${city.toLowerCase()}-${i}`).join(' ')}`;
}

/** ToolMessages whose AIMessage (the one with the matching tool call) is not before them. */
function orphans(messages: readonly BaseMessage[]): string[] {
  const calls = new Set<string>();
  const out: string[] = [];
  for (const m of messages) {
    if (m instanceof AIMessage) for (const c of m.tool_calls ?? []) if (c.id) calls.add(c.id);
    if (m instanceof ToolMessage && !calls.has(m.tool_call_id)) out.push(m.tool_call_id);
  }
  return out;
}

/** Tool calls with no ToolMessage after them. */
function unanswered(messages: readonly BaseMessage[]): string[] {
  const answered = new Set(messages.flatMap((m) => (m instanceof ToolMessage ? [m.tool_call_id] : [])));
  return messages
    .flatMap((m) => (m instanceof AIMessage ? (m.tool_calls ?? []).map((c) => c.id ?? '') : []))
    .filter((id) => !answered.has(id));
}

function conversation(): BaseMessage[] {
  return [
    new SystemMessage('You are a helpful assistant.'),
    new HumanMessage('What is the weather in Oslo and Paris?'),
    new AIMessage({
      content: '',
      tool_calls: [
        { id: 'call_oslo', name: 'weather', args: { city: 'Oslo' }, type: 'tool_call' },
        { id: 'call_paris', name: 'weather', args: { city: 'Paris' }, type: 'tool_call' },
      ],
    }),
    new ToolMessage({ tool_call_id: 'call_oslo', name: 'weather', content: weather('Oslo') }),
    new ToolMessage({ tool_call_id: 'call_paris', name: 'weather', content: weather('Paris') }),
    new AIMessage('Oslo is cold and Paris is mild.'),
    new HumanMessage('And tomorrow?'),
  ];
}

describe('fitMessages against trimMessages', () => {
  let server: FakeOpenAIServer;
  beforeAll(async () => {
    server = await startFakeOpenAI({ reply: () => ({ text: 'Tomorrow is sunny in both.' }) });
  });
  afterAll(async () => {
    await server.close();
  });

  it('trimMessages leaves a ToolMessage without its call; fitMessages keeps the pairs and the budget', async () => {
    const messages = conversation();
    // Room for the system message and the last three: the cut falls between the call and its results.
    const maxTokens = await countTokens([messages[0]!, ...messages.slice(4)]);

    const trimmed = await trimMessages(messages, {
      maxTokens,
      strategy: 'last',
      tokenCounter: countTokens,
      includeSystem: true,
    });
    expect(orphans(trimmed)).toEqual(['call_paris']);

    const fitted = await fitMessages({ maxTokens, model: 'gpt-4o' }).invoke(messages);
    expect(orphans(fitted)).toEqual([]);
    expect(unanswered(fitted)).toEqual([]);
    expect(await countTokens(fitted)).toBeLessThanOrEqual(maxTokens);
    expect(fitted[0]).toBe(messages[0]);
    expect(fitted[fitted.length - 1]).toBe(messages[6]);

    // A model behind an API that checks the pairing accepts one and refuses the other.
    const model = new FakeOpenAIChatModel({ baseURL: server.baseURL });
    const ok = await fitMessages({ maxTokens, model: 'gpt-4o' }).pipe(model).invoke(messages);
    expect(ok.content).toBe('Tomorrow is sunny in both.');
    await expect(
      trimMessages({ maxTokens, strategy: 'last', tokenCounter: countTokens, includeSystem: true })
        .pipe(model)
        .invoke(messages),
    ).rejects.toThrow(/call_paris answers no earlier call/);
  });

  it('returns the messages as given when they fit, and clears an old output on its own ToolMessage', async () => {
    const messages = conversation();
    const roomy = await fitMessages({ maxTokens: 10_000, model: 'gpt-4o' }).invoke(messages);
    expect(roomy).toHaveLength(messages.length);
    for (const [i, m] of roomy.entries()) expect(m).toBe(messages[i]);

    const longer = [
      ...messages,
      new AIMessage('Tomorrow looks similar.'),
      new HumanMessage('Thanks. One more: Rome?'),
      new AIMessage({
        content: '',
        tool_calls: [{ id: 'call_rome', name: 'weather', args: { city: 'Rome' }, type: 'tool_call' }],
      }),
      new ToolMessage({ tool_call_id: 'call_rome', name: 'weather', content: weather('Rome') }),
      new AIMessage('Rome is warm.'),
      new HumanMessage('Great, and Madrid?'),
      new AIMessage({
        content: '',
        tool_calls: [{ id: 'call_madrid', name: 'weather', args: { city: 'Madrid' }, type: 'tool_call' }],
      }),
      new ToolMessage({ tool_call_id: 'call_madrid', name: 'weather', content: weather('Madrid') }),
      new AIMessage('Madrid is hot.'),
      new HumanMessage('Summarize all four cities.'),
    ];
    const budget = Math.floor((await countTokens(longer)) * 0.7);
    const fitted = await fitMessages({
      maxTokens: budget,
      model: 'gpt-4o',
      options: { keepToolResults: 1 },
    }).invoke(longer);
    expect(await countTokens(fitted)).toBeLessThanOrEqual(budget);
    expect(orphans(fitted)).toEqual([]);
    expect(unanswered(fitted)).toEqual([]);
    const rewritten = fitted.filter((m) => !longer.includes(m));
    expect(rewritten.length).toBeGreaterThan(0);
    for (const m of rewritten) {
      if (m instanceof ToolMessage) {
        // A cleared output keeps its call id and tool name.
        expect(m.name).toBe('weather');
        expect(String(m.content)).toContain('contextkit');
      } else expect(String(m.content)).toContain('contextkit');
    }
  });
});

describe('a LangChain tool loop with the history and fitMessages, over a fake model on 127.0.0.1', () => {
  let server: FakeOpenAIServer;
  beforeAll(async () => {
    server = await startFakeOpenAI({ reply: toolLoopReply(3) });
  });
  afterAll(async () => {
    await server.close();
  });

  it('sends every step within budget and with no orphans, while the history keeps everything', async () => {
    const tools: ToolDefinition[] = [
      {
        type: 'function',
        function: {
          name: 'weather',
          description: 'Forecast for a city.',
          parameters: { type: 'object', properties: { query: { type: 'string' } } },
        },
      },
    ];
    const budget = 1_500;
    const model = new FakeOpenAIChatModel({ baseURL: server.baseURL, tools });
    const chain = fitMessages({ maxTokens: budget, model: 'gpt-4o', tools }).pipe(model);
    const history = new ContextkitChatMessageHistory({ conversationId: 'loop' });
    await history.addMessage(new SystemMessage('You forecast the weather.'));
    const first = server.requests.length;
    for (const city of ['Oslo', 'Paris', 'Rome', 'Madrid', 'Berlin']) {
      await history.addMessage(new HumanMessage(`Weather in ${city}?`));
      for (let step = 0; step < 10; step++) {
        const reply = await chain.invoke(await history.getMessages());
        await history.addMessage(reply);
        if (!(reply instanceof AIMessage) || (reply.tool_calls ?? []).length === 0) break;
        for (const call of reply.tool_calls ?? []) {
          await history.addMessage(
            new ToolMessage({ tool_call_id: call.id ?? '', name: call.name, content: weather(city) }),
          );
        }
      }
    }
    const requests = server.requests.slice(first);
    expect(requests).toHaveLength(20);
    for (const request of requests) {
      expect(request.problems).toEqual([]);
      const wire = request.body.messages as Parameters<typeof counter.measure>[0];
      expect(await counter.measure(wire, { tools })).toBeLessThanOrEqual(budget);
      expect(request.transcript[0]).toEqual({ kind: 'system', text: 'You forecast the weather.' });
    }
    const all = await history.getMessages();
    expect(all.filter((m) => m instanceof ToolMessage)).toHaveLength(15);
    expect(await countTokens(all)).toBeGreaterThan(budget * 2);
  });
});
