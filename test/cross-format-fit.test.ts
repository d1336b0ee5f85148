/**
 * A request in another format than the conversation's is fitted on the view as it is sent: the
 * view converted to the request's format is counted again there (`View.send`), and an agent
 * session in OpenAI's shape sent to Anthropic or Gemini is a little larger once converted (0.4–1.5%
 * on 400-message sessions). Before, the guard decided on the conversation's own count only, and a
 * view its conversion took past the budget was refused with a `ContextOverflowError` where a
 * compaction had room to make.
 */

import { describe, expect, it } from 'vitest';
import { ContextManager } from '../src/manager.js';
import { validateRequest } from '../src/wire/validate-request.js';
import { longSessionMessages } from './support/arbitraries.js';

const TARGETS = [
  { provider: 'anthropic' as const, model: 'claude-sonnet-4-5' },
  { provider: 'gemini' as const, model: 'gemini-2.5-flash' },
  { provider: 'bedrock' as const, model: 'claude-sonnet-4-5' },
];

describe('a request in another format is fitted as it is sent', () => {
  for (const t of TARGETS) {
    it(`an OpenAI-shaped agent session sent to ${t.provider} is compacted where its conversion would take it past the budget`, async () => {
      const messages = longSessionMessages(120, 'openai', 7);
      // Compacting only past the budget: the whole view is what a request sends.
      const options = { model: t.model, compactThreshold: 1 };
      const roomy = new ContextManager(options);
      await roomy.addMessages(messages);
      const whole = await roomy.getMessagesForRequest({ tokenBudget: 1_000_000, provider: t.provider });
      const { tokens, budget } = roomy.usage();
      // One token short of the whole view as sent.
      const ctx = new ContextManager(options);
      await ctx.addMessages(messages);
      let compacted = 0;
      ctx.on('context:post_compact', () => {
        compacted++;
      });
      const view = await ctx.getMessagesForRequest({
        tokenBudget: tokens - 1 + (1_000_000 - budget),
        provider: t.provider,
      });
      const sent = ctx.usage();
      expect(sent.budget).toBe(tokens - 1);
      expect(sent.tokens).toBeLessThanOrEqual(sent.budget);
      expect(compacted).toBe(1);
      expect(view.length).toBeLessThan(whole.length);
      expect(validateRequest(view, t.provider).problems).toEqual([]);
      expect(await ctx.getMessages()).toEqual(messages);
    });
  }
});
