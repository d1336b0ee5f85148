/**
 * contextkit + LangChain.js: a chat message history kept in a contextkit store, and `fitMessages`,
 * a runnable step that fits `BaseMessage[]` to a budget where `trimMessages` would cut a tool call
 * from its result. Runs offline against a fake OpenAI model on 127.0.0.1:
 *   node --import tsx examples/langchain.ts
 *
 * In your project, import from 'contextkit/langchain' instead of '../src/integrations/langchain.js'.
 */
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  trimMessages,
} from '@langchain/core/messages';
import { createTokenCounter, getModelInfo, type ToolDefinition } from '../src/index.js';
import {
  ContextkitChatMessageHistory,
  fitMessages,
  fromBaseMessages,
} from '../src/integrations/langchain.js';
import { FakeOpenAIChatModel } from '../test/support/fake-chat-model.js';
import { startFakeOpenAI, toolLoopReply } from '../test/support/fake-openai-server.js';

const BUDGET = 1_200;
const server = await startFakeOpenAI({ reply: toolLoopReply(2) });
const counter = createTokenCounter(getModelInfo('gpt-4o')!);
const countTokens = (messages: BaseMessage[]) => counter.measure(fromBaseMessages(messages));

const tools: ToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: 'forecast',
      description: 'Weather forecast.',
      parameters: { type: 'object', properties: {} },
    },
  },
];
const forecast = (city: string) =>
  `Forecast for ${city}: ${Array.from({ length: 120 }, (_, i) => `${city.toLowerCase()}${i}`).join(' ')}`;

try {
  const model = new FakeOpenAIChatModel({ baseURL: server.baseURL, tools });
  const history = new ContextkitChatMessageHistory({ store: 'memory:', conversationId: 'weather' });
  await history.addMessage(new SystemMessage('You forecast the weather.'));
  const chain = fitMessages({ maxTokens: BUDGET, model: 'gpt-4o', tools }).pipe(model);

  for (const city of ['Oslo', 'Paris', 'Rome', 'Madrid']) {
    await history.addMessage(new HumanMessage(`Weather in ${city}?`));
    console.log(`\n> Weather in ${city}?`);
    for (let step = 1; step <= 5; step++) {
      const all = await history.getMessages();
      const sent = await fitMessages({ maxTokens: BUDGET, model: 'gpt-4o', tools }).invoke(all);
      console.log(
        `  step ${step}: history ${all.length} messages, sent ${sent.length} (${await countTokens(sent)} tokens)`,
      );
      const reply = await chain.invoke(all);
      await history.addMessage(reply);
      const calls = reply instanceof AIMessage ? (reply.tool_calls ?? []) : [];
      if (calls.length === 0) {
        console.log(`  answer: ${String(reply.content)}`);
        break;
      }
      for (const call of calls) {
        await history.addMessage(
          new ToolMessage({ tool_call_id: call.id ?? '', name: call.name, content: forecast(city) }),
        );
      }
    }
  }

  // The same history through trimMessages: the cut can fall between a call and its results.
  const all = await history.getMessages();
  for (let maxTokens = 300; maxTokens <= 1_200; maxTokens += 10) {
    const trimmed = await trimMessages(all, {
      maxTokens,
      strategy: 'last',
      tokenCounter: countTokens,
      includeSystem: true,
    });
    const first = trimmed.find((m) => m.type !== 'system');
    if (first instanceof ToolMessage) {
      console.log(
        `\ntrimMessages at ${maxTokens} tokens starts with a ToolMessage whose call it cut off (${first.tool_call_id}).`,
      );
      const fitted = await fitMessages({ maxTokens, model: 'gpt-4o' }).invoke(all);
      console.log(
        `fitMessages at ${maxTokens} tokens starts with: ${fitted.filter((m) => m.type !== 'system').map((m) => m.type)[0]}`,
      );
      break;
    }
  }
  const problems = server.requests.flatMap((r) => r.problems);
  console.log(
    `\n${server.requests.length} model calls, ${problems.length} refused for orphaned tool results.`,
  );
  if (problems.length > 0) process.exitCode = 1;
} finally {
  await server.close();
}
