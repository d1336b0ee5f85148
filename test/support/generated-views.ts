/**
 * The agent loop over a generated conversation: each message added, then a view asked for; every
 * view within its budget and accepted by the provider's rules, the stored history unchanged by
 * asking. A view that cannot fit what must be kept may be refused (`ContextOverflowError`).
 */
import { expect } from 'vitest';
import type { ContextManager } from '../../src/manager.js';
import type { Message } from '../../src/messages/types.js';
import type { GeneratedConversation } from './arbitraries.js';
import { providerProblems } from './provider-checks.js';

export async function checkEachView(
  ctx: ContextManager,
  conv: GeneratedConversation,
  budget: number,
  check: (view: Message[]) => void = () => {},
): Promise<void> {
  for (const [i, m] of conv.messages.entries()) {
    await ctx.addMessage(m, conv.options[i]);
    const stored = JSON.stringify(await ctx.getMessages());
    try {
      const view = await ctx.getMessagesForRequest({ tokenBudget: budget });
      expect(ctx.usage().tokens).toBeLessThanOrEqual(budget);
      // (A view of a system prompt alone is no request any provider takes.)
      if (conv.messages.slice(0, i + 1).some((x) => x.role !== 'system'))
        expect(providerProblems(view, conv.format)).toEqual([]);
      check(view);
    } catch (error) {
      if (!(error instanceof Error) || !/Context(Overflow|Declined)Error/.test(error.name)) throw error;
    }
    expect(JSON.stringify(await ctx.getMessages())).toBe(stored);
  }
}
