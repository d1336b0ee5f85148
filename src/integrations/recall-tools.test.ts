/**
 * The recall tool in each integration, end to end: a fake model on 127.0.0.1 calls `recall` with
 * the user's question, then answers with what the tool returned; the answer must hold a fact said
 * long before, which the fitted view no longer shows.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { Agent, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { generateText, type ModelMessage, stepCountIs, wrapLanguageModel } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeOpenAIServer,
  type FakeRequest,
  type FakeTurn,
  startFakeOpenAI,
} from '../../test/support/fake-openai-server.js';
import { ContextManager } from '../manager.js';
import { contextMiddleware } from './ai-sdk/middleware.js';
import { recallTool as aiSdkRecallTool } from './ai-sdk/recall-tool.js';
import { ContextkitChatMessageHistory } from './langchain/chat-message-history.js';
import { recallTool as langchainRecallTool } from './langchain/recall-tool.js';
import { recallTool as agentsRecallTool } from './openai-agents/recall-tool.js';
import { ContextkitSession } from './openai-agents/session.js';

setTracingDisabled(true);

const FACT = 'the spare key is hidden under the blue flowerpot by the door.';
const QUESTION = 'where is the spare key hidden?';

/** Small talk long enough that a small budget cannot show the fact any more. */
function filler(n: number): string[] {
  return Array.from(
    { length: n },
    (_, i) => `Turn ${i}: we talked about the weather, the garden and a film we saw, nothing more.`,
  );
}

/** Calls recall with the user's last words, then answers with the tool's result. */
function recallReply(request: FakeRequest): FakeTurn {
  const last = request.transcript[request.transcript.length - 1];
  if (last?.kind === 'result') return { text: `From memory: ${last.text}` };
  const user = [...request.transcript].reverse().find((e) => e.kind === 'user') as
    | { text: string }
    | undefined;
  return { toolCalls: [{ name: 'recall', arguments: { query: user?.text ?? '' } }] };
}

let server: FakeOpenAIServer;
beforeAll(async () => {
  server = await startFakeOpenAI({ reply: recallReply });
});
afterAll(async () => {
  await server.close();
});

describe('AI SDK recallTool', () => {
  const history = (): ModelMessage[] => [
    { role: 'user', content: FACT },
    { role: 'assistant', content: 'Noted.' },
    ...filler(40).flatMap((text): ModelMessage[] => [
      { role: 'user', content: text },
      { role: 'assistant', content: 'I see.' },
    ]),
    { role: 'user', content: QUESTION },
  ];

  it('without a manager, searches the whole conversation the SDK holds, beyond what the middleware sent', async () => {
    const openai = createOpenAI({ apiKey: 'test-key', baseURL: server.baseURL });
    const model = wrapLanguageModel({
      model: openai.chat('gpt-4o'),
      // The early turns must be able to leave the view: the first user message (the task) is not kept here.
      middleware: contextMiddleware({ maxTokens: 600, options: { protectTask: false } }),
    });
    const first = server.requests.length;
    const result = await generateText({
      model,
      messages: history(),
      tools: { recall: aiSdkRecallTool() },
      stopWhen: stepCountIs(3),
    });
    const sent = server.requests.slice(first);
    expect(sent[0]?.tools).toEqual(['recall']);
    expect(JSON.stringify(sent[0]?.body.messages)).not.toContain('blue flowerpot');
    expect(result.text).toContain('blue flowerpot');
    for (const request of sent) expect(request.problems).toEqual([]);
  });

  it('with a manager, searches its stored history', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    for (const m of history()) await ctx.addMessage({ role: m.role, content: m.content as string });
    const openai = createOpenAI({ apiKey: 'test-key', baseURL: server.baseURL });
    const result = await generateText({
      model: openai.chat('gpt-4o'),
      messages: [{ role: 'user', content: QUESTION }],
      tools: { recall: aiSdkRecallTool(ctx) },
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toContain('blue flowerpot');
  });
});

describe('OpenAI Agents recallTool', () => {
  it('lets an agent look up what its session stored long ago', async () => {
    const session = new ContextkitSession({
      conversationId: 'recall-run',
      maxTokens: 400,
      model: 'gpt-4o',
      recall: true,
    });
    await session.addItems([
      { role: 'user', content: FACT },
      ...filler(30).map((text) => ({ role: 'user' as const, content: text })),
    ]);
    const runner = new Runner({
      modelProvider: new OpenAIProvider({ apiKey: 'test-key', baseURL: server.baseURL, useResponses: true }),
      tracingDisabled: true,
    });
    const agent = new Agent({
      name: 'Helper',
      instructions: 'Use recall.',
      model: 'gpt-4o',
      tools: [agentsRecallTool(session)],
    });
    const first = server.requests.length;
    const result = await runner.run(agent, QUESTION, { session });
    expect(server.requests[first]?.tools).toEqual(['recall']);
    expect(String(result.finalOutput)).toContain('blue flowerpot');
    expect((await session.recall('spare key'))[0]?.text).toContain('blue flowerpot');
  });
});

describe('LangChain recallTool', () => {
  it('searches a chat message history and answers a tool call with a ToolMessage', async () => {
    const history = new ContextkitChatMessageHistory({ conversationId: 'lc' });
    await history.addMessages([new HumanMessage(FACT), new AIMessage('Noted.')]);
    const recall = langchainRecallTool(history);
    expect(recall.name).toBe('recall');
    expect(String(await recall.invoke({ query: 'spare key' }))).toContain('blue flowerpot');
    // Messages added later are found too, and a cleared history forgets.
    await history.addMessage(new HumanMessage('The bike lock is 9090.'));
    const message = await recall.invoke({
      id: 'call_1',
      name: 'recall',
      args: { query: 'bike lock' },
      type: 'tool_call',
    });
    expect(message).toBeInstanceOf(ToolMessage);
    expect(String((message as ToolMessage).content)).toContain('9090');
    await history.clear();
    expect(String(await recall.invoke({ query: 'spare key' }))).toMatch(
      /^Nothing in this conversation matches/,
    );
  });
});
