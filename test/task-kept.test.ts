/**
 * The task kept: the conversation's first user message stays in every view verbatim (it is
 * protected like a pinned message, with `protectTask: true`), on generated conversations of
 * every format, strategy and budget; when it cannot fit, the overflow error reports it apart
 * (`breakdown.task`); `protectTask: false` lets compaction take it like any older turn.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContextOverflowError } from '../src/errors.js';
import { ContextManager } from '../src/manager.js';
import type { Message, MessageFormat } from '../src/messages/types.js';
import { getModelInfo } from '../src/tokens/catalog.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { messageText } from '../src/wire/content.js';
import { validateRequest } from '../src/wire/validate-request.js';
import { conversationArb } from './support/arbitraries.js';
import { anthropicRequestProblems, messagesBody } from './support/fake-anthropic-server.js';
import { viewAtShare } from './support/view-at-share.js';

const MODEL: Record<MessageFormat, string> = {
  openai: 'gpt-4o',
  anthropic: 'claude-sonnet-4-5',
  'openai-responses': 'gpt-4o',
  gemini: 'gemini-2.5-flash',
  bedrock: 'claude-sonnet-4-5',
};
const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);

/** A message the user wrote (not a tool result), read without the library. */
function isUserTurn(message: Message): boolean {
  const m = message as unknown as Record<string, unknown>;
  if (m.role !== 'user') return false;
  if (Array.isArray(m.parts)) return (m.parts as Array<Record<string, unknown>>).some((p) => 'text' in p);
  if (typeof m.content === 'string') return true;
  return (
    Array.isArray(m.content) && (m.content as Array<{ type: string }>).some((b) => b.type !== 'tool_result')
  );
}

const TASK = 'Task: migrate the billing service from cron jobs to the queue, keeping job ids stable.';

function filler(n: number): Message[] {
  return Array.from({ length: n }, (_, i): Message[] => [
    {
      role: 'user',
      content: `Step ${i}: here are the logs of run ${i}, ${'nothing unusual happened there. '.repeat(6).trim()}`,
    },
    {
      role: 'assistant',
      content: `Checked run ${i}; ${'all jobs finished on time and in order. '.repeat(6).trim()}`,
    },
  ]).flat();
}

describe('the task kept', () => {
  it('every view holds the first user message verbatim, or its head and tail past a quarter of the budget (all formats, strategies, budgets)', async () => {
    const formats: MessageFormat[] = ['openai', 'anthropic', 'openai-responses', 'gemini'];
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(...formats.map((format) => conversationArb({ format, minTurns: 3, maxTurns: 8 }))),
        fc.double({ min: 0.15, max: 0.9, noNaN: true }),
        fc.constantFrom('summarize', 'truncate', 'smart', 'layered' as const),
        async (conv, share, strategy) => {
          const task = conv.messages.find(isUserTurn);
          if (task === undefined) return;
          const ctx = new ContextManager({ model: MODEL[conv.format], strategy, protectTask: true });
          for (let i = 0; i < conv.messages.length; i++)
            await ctx.addMessage(conv.messages[i]!, conv.options[i]);
          const fitted = await viewAtShare(ctx, conv.messages, MODEL[conv.format], conv.format, share);
          if (!fitted) return;
          // Verbatim while it is within a quarter of the budget; past it, its head and tail.
          const counter = createTokenCounter(getModelInfo(MODEL[conv.format])!);
          const taskTokens = await counter.measure([task], { format: conv.format });
          if (taskTokens <= fitted.budget / 4 - 8) expect(fitted.view).toContainEqual(task);
          else {
            const text = messageText(task);
            const shown = fitted.view.map((m) => messageText(m));
            expect(shown.some((t) => t.startsWith(text.slice(0, 20)) && t.endsWith(text.slice(-20)))).toBe(
              true,
            );
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('keeps the task through compaction with protectTask, and lets it go with protectTask: false', async () => {
    for (const protectTask of [true, false]) {
      const ctx = new ContextManager({ model: 'gpt-4o', strategy: 'truncate', protectTask });
      await ctx.addMessage({ role: 'system', content: 'You are a careful engineer.' });
      await ctx.addMessage({ role: 'user', content: TASK });
      for (const m of filler(30)) await ctx.addMessage(m);
      const view = await ctx.getMessagesForRequest({ tokenBudget: 1500 });
      const kept = view.some((m) => m.content === TASK);
      expect(kept).toBe(protectTask);
      expect(await ctx.getMessages()).toHaveLength(62);
    }
  });

  it('an Anthropic view of a conversation of unknown format has no system message after the kept task', async () => {
    const ctx = new ContextManager({ model: 'claude-sonnet-4-5', strategy: 'summarize', protectTask: true });
    await ctx.addMessage({ role: 'system', content: 'You are a careful engineer.' });
    await ctx.addMessage({ role: 'user', content: TASK });
    for (const m of filler(30)) await ctx.addMessage(m);
    expect(ctx.messageFormat).toBeUndefined();
    const view = await ctx.getMessagesForRequest({ tokenBudget: 1500, provider: 'anthropic' });
    expect(view.some((m) => m.content === TASK)).toBe(true);
    expect(validateRequest(view, 'anthropic').problems).toEqual([]);
    expect(anthropicRequestProblems(messagesBody(view), { signatures: false })).toEqual([]);
  });

  it('reports the task apart in the overflow breakdown', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o', protectTask: true });
    await ctx.addMessage({ role: 'user', content: `${TASK} ${'Details follow. '.repeat(200)}` });
    for (const m of filler(3)) await ctx.addMessage(m);
    // A task over a quarter of the budget keeps its head and tail (at least 128 tokens of it):
    // a budget below even that overflows.
    const err = await ctx.getMessagesForRequest({ tokenBudget: 120 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContextOverflowError);
    const { breakdown } = err as ContextOverflowError;
    expect(breakdown.task).toBeGreaterThan(120);
    expect(breakdown.pinned).toBe(0);
    expect((err as Error).message).toMatch(/task \d+/);
  });
});
