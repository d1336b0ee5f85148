/**
 * contextkit + the Vercel AI SDK: a middleware fits the prompt of every model call, each step of a
 * multi-step tool loop included, to the budget. Runs offline against a fake OpenAI model on
 * 127.0.0.1:  node --import tsx examples/ai-sdk.ts
 *
 * In your project, import from 'contextkit/ai-sdk' instead of '../src/integrations/ai-sdk.js'.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, type ModelMessage, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { createTokenCounter, getModelInfo, type Message } from '../src/index.js';
import { contextMiddleware, fromModelMessages } from '../src/integrations/ai-sdk.js';
import { startFakeOpenAI, toolLoopReply } from '../test/support/fake-openai-server.js';

const BUDGET = 2_000;
const server = await startFakeOpenAI({ reply: toolLoopReply(3) });
const counter = createTokenCounter(getModelInfo('gpt-4o')!);

try {
  const openai = createOpenAI({ baseURL: server.baseURL, apiKey: 'not-needed-offline' });
  // One line: every call through `model` is fitted to BUDGET tokens.
  const model = wrapLanguageModel({
    model: openai.chat('gpt-4o'),
    middleware: contextMiddleware({ maxTokens: BUDGET }),
  });

  const lookup = tool({
    description: 'Searches the project notes.',
    inputSchema: jsonSchema<{ query: string; step: number }>({
      type: 'object',
      properties: { query: { type: 'string' }, step: { type: 'number' } },
      required: ['query', 'step'],
    }),
    // A long result, as real tools return: about 250 tokens each.
    execute: async ({ query, step }) =>
      `Notes ${step} on "${query}": ${Array.from({ length: 160 }, (_, i) => `note${(i * 13 + step) % 101}`).join(' ')}`,
  });

  const messages: ModelMessage[] = [];
  for (const question of [
    'Where is the config loaded?',
    'Which tests fail on CI?',
    'Who owns the billing module?',
    'What changed in release 4.2?',
  ]) {
    messages.push({ role: 'user', content: question });
    const before = server.requests.length;
    const result = await generateText({
      model,
      system: 'You are a research agent. Use lookup before answering.',
      messages,
      tools: { lookup },
      stopWhen: stepCountIs(8),
    });
    messages.push(...result.response.messages);
    const full = await counter.measure(fromModelMessages(messages).messages);
    console.log(`\n> ${question}`);
    for (const [i, request] of server.requests.slice(before).entries()) {
      const sent = await counter.measure(request.body.messages as Message[]);
      console.log(
        `  step ${i + 1}: sent ${request.transcript.length} messages, ${sent} tokens (budget ${BUDGET})`,
      );
    }
    console.log(`  answer: ${result.text}`);
    console.log(`  the whole conversation is now ${messages.length} messages, ${full} tokens`);
  }
  const problems = server.requests.flatMap((r) => r.problems);
  console.log(
    `\n${server.requests.length} model calls, ${problems.length} refused for orphaned tool results.`,
  );
  if (problems.length > 0) process.exitCode = 1;
} finally {
  await server.close();
}
