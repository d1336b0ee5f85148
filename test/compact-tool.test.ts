/**
 * The `compact` tool the model can call (issue 25): its definition in every tool shape, and a
 * call handled by the manager plans a compaction whose receipt is the tool's result; the next
 * request sends the compacted view (call and result kept), stored history unchanged.
 */
import { describe, expect, it } from 'vitest';
import {
  anthropicCompactTool,
  bedrockCompactTool,
  COMPACT_TOOL_PARAMETERS,
  compactReceiptText,
  compactToolDefinition,
  geminiCompactTool,
  openAICompactTool,
  readCompactArguments,
  responsesCompactTool,
} from '../src/compaction/compact-tool.js';
import { compactTool as aiSdkCompactTool } from '../src/integrations/ai-sdk/compact-tool.js';
import { compactTool as langchainCompactTool } from '../src/integrations/langchain/compact-tool.js';
import { compactTool as agentsCompactTool } from '../src/integrations/openai-agents/compact-tool.js';
import { ContextManager } from '../src/manager.js';
import type { Message, MessageFormat } from '../src/messages/types.js';
import { messageText } from '../src/wire/content.js';
import { focusRecorder } from './support/focus-recorder.js';
import { providerProblems } from './support/provider-checks.js';

describe('compact tool definitions', () => {
  it('has each provider’s documented shape', () => {
    expect(openAICompactTool).toEqual({
      type: 'function',
      function: { name: 'compact', description: expect.any(String), parameters: COMPACT_TOOL_PARAMETERS },
    });
    expect(responsesCompactTool).toMatchObject({
      type: 'function',
      name: 'compact',
      parameters: COMPACT_TOOL_PARAMETERS,
    });
    expect(anthropicCompactTool).toEqual({
      name: 'compact',
      description: expect.any(String),
      input_schema: COMPACT_TOOL_PARAMETERS,
    });
    expect(geminiCompactTool).toEqual({
      name: 'compact',
      description: expect.any(String),
      parametersJsonSchema: COMPACT_TOOL_PARAMETERS,
    });
    expect(bedrockCompactTool.toolSpec).toEqual({
      name: 'compact',
      description: expect.any(String),
      inputSchema: { json: COMPACT_TOOL_PARAMETERS },
    });
    expect(compactToolDefinition('openai-responses')).toBe(responsesCompactTool);
    expect(compactToolDefinition('gemini')).toBe(geminiCompactTool);
  });

  it('is offered to the AI SDK, the Agents SDK (strict) and LangChain with the same schema', () => {
    const ctx = new ContextManager();
    const agents = agentsCompactTool(ctx) as unknown as {
      name: string;
      strict: boolean;
      parameters: { required: string[] };
    };
    expect(agents).toMatchObject({ name: 'compact', strict: true });
    expect(agents.parameters.required).toEqual(['focus']);
    const lc = langchainCompactTool(ctx) as unknown as { name: string; schema: unknown };
    expect(lc.name).toBe('compact');
    expect(lc.schema).toEqual(COMPACT_TOOL_PARAMETERS);
    expect(aiSdkCompactTool(ctx).description).toContain('Compact the conversation now');
  });

  it('reads its arguments, refusing what it does not take', () => {
    expect(readCompactArguments({})).toEqual({});
    expect(readCompactArguments({ focus: null })).toEqual({});
    expect(readCompactArguments({ focus: '  the open questions ' })).toEqual({ focus: 'the open questions' });
    expect(readCompactArguments({ focus: 'x'.repeat(2_000) })).toEqual({ focus: 'x'.repeat(500) });
    expect(readCompactArguments({ focus: 3 })).toEqual({
      error: expect.stringContaining('focus must be a string'),
    });
    expect(readCompactArguments({ level: 'hard' })).toEqual({ error: expect.stringContaining('"level"') });
    expect(readCompactArguments([1])).toEqual({ error: expect.any(String) });
  });
});

const MODELS: Record<'openai' | 'anthropic', string> = { openai: 'gpt-4o', anthropic: 'claude-sonnet-4-5' };

function callOf(
  format: 'openai' | 'anthropic',
  id: string,
  input: object,
): { call: unknown; message: Message } {
  if (format === 'anthropic') {
    const block = { type: 'tool_use', id, name: 'compact', input };
    return { call: block, message: { role: 'assistant', content: [block] } as Message };
  }
  const call = { id, type: 'function', function: { name: 'compact', arguments: JSON.stringify(input) } };
  return { call, message: { role: 'assistant', content: null, tool_calls: [call] } as Message };
}

async function longSession(ctx: ContextManager): Promise<void> {
  await ctx.addMessage({ role: 'system', content: 'You are a careful coding agent.' });
  for (let t = 0; t < 20; t++) {
    await ctx.addMessage({
      role: 'user',
      content: `Step ${t}: update src/mod${t}.ts to use the new parser, then run the tests ${'carefully '.repeat(25)}`,
    });
    await ctx.addMessage({
      role: 'assistant',
      content: `Updated src/mod${t}.ts (order W-${4400 + t}); tests pass ${'again '.repeat(25)}`,
    });
  }
}

describe.each(['openai', 'anthropic'] as const)('the compact tool through the manager (%s)', (format) => {
  it('plans the compaction when the call is handled; the result is its receipt; the next view is compacted', async () => {
    const { tools, focuses } = focusRecorder();
    const ctx = new ContextManager({ model: MODELS[format], tools, summaryInstructions: 'order numbers' });
    await longSession(ctx);
    const budget = 20_000;
    const before = await ctx.getMessagesForRequest({ tokenBudget: budget });
    expect(ctx.currentPlan()).toBeNull();
    const tokensBefore = ctx.usage().tokens;
    const { call, message } = callOf(format, 'call_compact_1', { focus: 'the file paths changed' });
    await ctx.addMessage(message);
    const result = (await ctx.handleToolCall(call)) as Message;
    const text = messageText(result);
    expect(text).toMatch(/^Compacted from your next turn: \d+ older messages summarized \(#/);
    expect(focuses.at(-1)).toBe('order numbers\nthe file paths changed');
    await ctx.addMessage(result);
    const stored = await ctx.getMessages();
    const after = await ctx.getMessagesForRequest({ tokenBudget: budget });
    expect(providerProblems(after, format as MessageFormat)).toEqual([]);
    expect(ctx.usage().tokens).toBeLessThan(tokensBefore);
    expect(after.length).toBeLessThan(before.length);
    // The call and its result close the view; the summary stands for the older turns.
    expect(JSON.stringify(after.slice(-2))).toBe(JSON.stringify(stored.slice(-2)));
    expect(after.some((m) => messageText(m).includes('[contextkit: summary of earlier messages'))).toBe(true);
    // Nothing stored changed, and the receipt matches the plan.
    expect(stored).toHaveLength(42 + 1);
    const plan = ctx.currentPlan()!;
    expect(plan.summarized?.length).toBeGreaterThan(0);
    // The next request does not compact again.
    await ctx.addMessage({ role: 'assistant', content: 'Compacted; moving on to the next subtask.' });
    await ctx.addMessage({ role: 'user', content: 'Go on.' });
    await ctx.getMessagesForRequest({ tokenBudget: budget });
    expect(ctx.currentPlan()).toEqual(plan);
  });

  it('answers bad arguments with an error result, compacting nothing', async () => {
    const ctx = new ContextManager({ model: MODELS[format] });
    await longSession(ctx);
    await ctx.getMessagesForRequest({ tokenBudget: 20_000 });
    const { call, message } = callOf(format, 'call_compact_2', { level: 'hard' });
    await ctx.addMessage(message);
    const result = (await ctx.handleToolCall(call)) as Message;
    expect(messageText(result)).toMatch(/^compact: unknown argument "level"/);
    if (format === 'anthropic') expect(JSON.stringify(result)).toContain('"is_error":true');
    expect(ctx.currentPlan()).toBeNull();
  });
});

describe('compactReceiptText', () => {
  it('says when nothing could leave the view', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.addMessage({ role: 'user', content: 'Hello' });
    const receipt = await ctx.requestCompaction({ tokenBudget: 10_000 });
    expect(compactReceiptText(receipt)).toMatch(/^Nothing to compact: every message still shown must stay/);
    expect(receipt?.reason).toBe('requested');
  });
});
