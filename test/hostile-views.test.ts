/**
 * Issue 20's goal: every input `addMessage` (or `setMessages`) accepts gives views the provider
 * accepts at every budget, or is refused with a path. Hostile conversations in every format (see
 * hostile-conversation-arb.ts) go in message by message or all at once; each refusal must be an
 * `InvalidMessageError` naming the message, and every view, from a tiny budget to a generous one,
 * must pass `validateRequest` and the independent reading of the provider's rules, or the request
 * must be refused with `ContextOverflowError` (what must be kept does not fit).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContextOverflowError, InvalidMessageError } from '../src/errors.js';
import { ContextManager } from '../src/manager.js';
import type { Message, MessageFormat } from '../src/messages/types.js';
import { type HostileConversation, hostileConversationArb } from './support/hostile-conversation-arb.js';
import { providerProblems } from './support/provider-checks.js';

const MODEL: Record<MessageFormat, string> = {
  openai: 'gpt-4o',
  anthropic: 'claude-sonnet-4-5',
  'openai-responses': 'gpt-4o',
  gemini: 'gemini-2.5-flash',
};
const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);
const BUDGETS = [120, 600, 2_500, 12_000, 200_000];
const FORMATS = ['openai', 'anthropic', 'openai-responses', 'gemini'] as const;

/** Adds the conversation; returns what was accepted. A refusal must name its message. */
async function fill(ctx: ContextManager, conv: HostileConversation, whole: boolean): Promise<Message[]> {
  const accepted: Message[] = [];
  const refused = (error: unknown): void => {
    expect(error).toBeInstanceOf(InvalidMessageError);
    expect((error as InvalidMessageError).issues[0]?.path).toMatch(/^messages\[\d+\]/);
  };
  if (whole) {
    try {
      await ctx.setMessages(conv.messages, { replace: true });
      return conv.messages.slice();
    } catch (error) {
      refused(error);
      return [];
    }
  }
  for (const message of conv.messages) {
    try {
      await ctx.addMessage(message);
      accepted.push(message);
    } catch (error) {
      refused(error);
    }
  }
  return accepted;
}

describe.each(FORMATS)('hostile %s conversations', (format) => {
  it('every accepted input gives views the provider accepts at every budget', async () => {
    let views = 0;
    await fc.assert(
      fc.asyncProperty(hostileConversationArb(format), fc.boolean(), async (conv, whole) => {
        const ctx = new ContextManager({ model: MODEL[format] });
        const accepted = await fill(ctx, conv, whole);
        for (const tokenBudget of BUDGETS) {
          let view: Message[];
          try {
            view = await ctx.getMessagesForRequest({ tokenBudget });
          } catch (error) {
            expect(error).toBeInstanceOf(ContextOverflowError);
            continue;
          }
          views++;
          if (view.length > 0) expect(providerProblems(view, ctx.messageFormat ?? format)).toEqual([]);
        }
        expect(await ctx.getMessages()).toEqual(accepted);
      }),
      { numRuns: RUNS },
    );
    expect(views).toBeGreaterThan(RUNS);
  }, 120_000);
});
