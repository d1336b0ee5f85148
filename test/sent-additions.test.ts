/**
 * What a view adds once it is fitted is counted where it is fitted: in formats whose requests open
 * with a user turn (Anthropic, Gemini, Bedrock Converse), the notice put first where the view opens
 * with the model's turn (a conversation that opens with a greeting, say). Before, the guard decided
 * and planned without it, and a view it took past the budget was refused with a
 * `ContextOverflowError` saying the messages that must be kept needed the whole view, where a
 * compaction had room to make. (Converse's turn breaks: src/formats/bedrock/converse-rules.test.ts.)
 */

import { describe, expect, it } from 'vitest';
import { ContextManager } from '../src/manager.js';
import { validateRequest } from '../src/wire/validate-request.js';

const text = (t: number) => `question ${t} ${'word '.repeat(300)}`;
const answer = 'answer '.repeat(600);

/** Per format: a model of that provider and the conversation's messages in its own shape. */
const FORMATS = [
  {
    format: 'anthropic' as const,
    model: 'claude-sonnet-4-5',
    user: (content: string) => ({ role: 'user', content: [{ type: 'text', text: content }] }),
    model_: (content: string) => ({ role: 'assistant', content: [{ type: 'text', text: content }] }),
  },
  {
    format: 'gemini' as const,
    model: 'gemini-2.5-flash',
    user: (content: string) => ({ role: 'user', parts: [{ text: content }] }),
    model_: (content: string) => ({ role: 'model', parts: [{ text: content }] }),
  },
  {
    format: 'bedrock' as const,
    model: 'claude-sonnet-4-5',
    user: (content: string) => ({ role: 'user', content: [{ text: content }] }),
    model_: (content: string) => ({ role: 'assistant', content: [{ text: content }] }),
  },
];

describe('what a view adds once fitted counts where it is fitted', () => {
  for (const f of FORMATS) {
    it(`${f.format}: a view that opens with the model's turn is compacted where its start notice would take it past the budget`, async () => {
      const messages: unknown[] = [f.model_('Hello! How can I help you today?')];
      for (let t = 0; t < 6; t++) messages.push(f.user(text(t)), f.model_(answer));
      messages.push(f.user('And now?'));
      // Compacting only past the budget: the whole view, its notice included, is what a request sends.
      const options = { model: f.model, compactThreshold: 1 };
      const roomy = new ContextManager(options);
      await roomy.addMessages(messages);
      const whole = await roomy.getMessagesForRequest({ tokenBudget: 1_000_000 });
      // The notice first, then every message.
      expect(whole).toHaveLength(messages.length + 1);
      expect(JSON.stringify(whole[0])).toContain('contextkit: start of the conversation');
      const { tokens, budget } = roomy.usage();
      // One token short of the whole view with its notice: the messages alone fit it.
      const ctx = new ContextManager(options);
      await ctx.addMessages(messages);
      const view = await ctx.getMessagesForRequest({ tokenBudget: tokens - 1 + (1_000_000 - budget) });
      const sent = ctx.usage();
      expect(sent.budget).toBe(tokens - 1);
      expect(sent.tokens).toBeLessThanOrEqual(sent.budget);
      expect(view.length).toBeLessThan(whole.length);
      expect(JSON.stringify(view.at(-1))).toBe(JSON.stringify(messages.at(-1)));
      expect(validateRequest(view, f.format).problems).toEqual([]);
      expect(await ctx.getMessages()).toEqual(messages);
    });
  }
});
