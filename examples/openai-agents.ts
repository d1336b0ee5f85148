/**
 * contextkit + the OpenAI Agents SDK: a Session that keeps every item in a contextkit store and
 * gives the agent a history fitted to the budget, never with a tool call split from its result.
 * Runs offline against a fake Responses endpoint on 127.0.0.1:
 *   node --import tsx examples/openai-agents.ts
 *
 * In your project, import from 'contextkit/openai-agents' instead of '../src/integrations/openai-agents.js'.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { createTokenCounter, getModelInfo } from '../src/index.js';
import { agentItemsToResponses, ContextkitSession } from '../src/integrations/openai-agents.js';
import { startFakeOpenAI, toolLoopReply } from '../test/support/fake-openai-server.js';

// Offline: no traces are sent anywhere.
setTracingDisabled(true);

const BUDGET = 1_500;
const server = await startFakeOpenAI({ reply: toolLoopReply(2) });
const dir = mkdtempSync(join(tmpdir(), 'contextkit-agents-'));
const counter = createTokenCounter(getModelInfo('gpt-4o')!);

try {
  const runner = new Runner({
    modelProvider: new OpenAIProvider({
      apiKey: 'not-needed-offline',
      baseURL: server.baseURL,
      useResponses: true,
    }),
    tracingDisabled: true,
  });
  const search = tool({
    name: 'search',
    description: 'Searches the issue tracker.',
    parameters: {
      type: 'object',
      properties: { query: { type: 'string' }, step: { type: 'number' } },
      required: ['query', 'step'],
      additionalProperties: false,
    },
    strict: true,
    execute: async (input) => {
      const { query, step } = input as { query: string; step: number };
      return `Issues ${step} for "${query}": ${Array.from({ length: 150 }, (_, i) => `#${(i * 17 + step) % 997}`).join(' ')}`;
    },
  });
  const agent = new Agent({
    name: 'Triage',
    instructions: 'Search before you answer.',
    model: 'gpt-4o',
    tools: [search],
  });
  // The items live in a file store: a restarted process picks the conversation up where it was.
  const session = new ContextkitSession({
    store: `file:${dir}`,
    conversationId: 'triage-1',
    maxTokens: BUDGET,
    model: 'gpt-4o',
  });

  for (const question of [
    'Open crash reports?',
    'Anything about login?',
    'Slow pages?',
    'What about exports?',
  ]) {
    const given = await session.getItems();
    const result = await runner.run(agent, question, { session });
    const stored = await session.getStoredItems();
    const givenTokens = await counter.measure(agentItemsToResponses(given), { format: 'openai-responses' });
    const storedTokens = await counter.measure(agentItemsToResponses(stored), { format: 'openai-responses' });
    console.log(`\n> ${question}`);
    console.log(
      `  history given to the agent: ${given.length} items, ${givenTokens} tokens (budget ${BUDGET})`,
    );
    console.log(`  answer: ${String(result.finalOutput)}`);
    console.log(`  stored: ${stored.length} items, ${storedTokens} tokens`);
  }
  const problems = server.requests.flatMap((r) => r.problems);
  console.log(`\n${server.requests.length} model calls, ${problems.length} refused for orphaned tool calls.`);
  if (problems.length > 0) process.exitCode = 1;
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
