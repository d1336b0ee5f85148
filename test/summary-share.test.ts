/**
 * The memory of what left the view (the summary and the facts block) takes at most `summaryShare`
 * of the budget, and the view stays within the budget, on generated conversations of every kind
 * and on generated chats, with and without the recall note.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { memoryRoom, RECALL_NOTE } from '../src/compaction/summary-message.js';
import { ContextOverflowError } from '../src/errors.js';
import { ContextManager } from '../src/manager.js';
import type { Message, MessageFormat } from '../src/messages/types.js';
import { getModelInfo } from '../src/tokens/catalog.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { FACTS_OPEN } from '../src/tools/facts-block.js';
import { messageText } from '../src/wire/content.js';
import {
  answerTextArb,
  conversationArb,
  type GeneratedConversation,
  userTextArb,
} from './support/arbitraries.js';

const MODEL: Record<MessageFormat, string> = {
  openai: 'gpt-4o',
  anthropic: 'claude-sonnet-4-5',
  'openai-responses': 'gpt-4o',
  gemini: 'gemini-2.5-flash',
  bedrock: 'claude-sonnet-4-5',
};
const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);

/** A long dated chat between two people, built from the generator's prose. */
const chatArb = fc
  .record({
    turns: fc.array(fc.tuple(userTextArb, answerTextArb), { minLength: 20, maxLength: 60 }),
    format: fc.constantFrom<MessageFormat>('openai', 'anthropic'),
  })
  .map(({ turns, format }): GeneratedConversation => {
    const messages: Message[] = turns.flatMap(([a, b], i) => {
      const day = `${(i % 28) + 1} March, 2024`;
      return [
        { role: 'user', content: `[10:00 am on ${day}] Ana: ${a.text}` },
        { role: 'assistant', content: `[10:01 am on ${day}] Ben: ${b.text}` },
      ];
    });
    return {
      format,
      messages,
      options: messages.map(() => ({})),
      facts: [],
      reusesIds: false,
      breakage: { unfinishedTail: false, orphanResult: false, interleaved: false },
    };
  });

function isMemory(message: Message): 'summary' | 'facts' | null {
  const text = messageText(message);
  if (text.startsWith('[contextkit: summary of earlier messages')) return 'summary';
  if (text.includes(FACTS_OPEN)) return 'facts';
  return null;
}

async function checkMemory(
  conv: GeneratedConversation,
  budgetShare: number,
  summaryShare: number,
  recall: boolean,
): Promise<number> {
  const ctx = new ContextManager({ model: MODEL[conv.format], summaryShare, recall });
  for (let i = 0; i < conv.messages.length; i++) await ctx.addMessage(conv.messages[i], conv.options[i]);
  const counter = createTokenCounter(getModelInfo(MODEL[conv.format])!);
  const full = await counter.measure(conv.messages, { format: conv.format });
  const budget = Math.max(64, Math.floor(full * budgetShare));
  let view: Message[];
  try {
    view = await ctx.getMessagesForRequest({ tokenBudget: budget });
  } catch (err) {
    expect(err).toBeInstanceOf(ContextOverflowError);
    return 0;
  }
  expect(await counter.measure(view, { format: conv.format })).toBeLessThanOrEqual(budget);
  let memory = 0;
  for (const m of view) {
    const kind = isMemory(m);
    if (kind === null) continue;
    memory += counter.countMessage(m, conv.format);
    expect(messageText(m).includes(RECALL_NOTE)).toBe(recall);
  }
  expect(memory).toBeLessThanOrEqual(memoryRoom(budget, summaryShare));
  return memory;
}

describe('the memory of what left the view', () => {
  it('never takes more than summaryShare of the budget, and the view stays within it (any conversation)', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb(),
        fc.double({ min: 0.1, max: 0.9, noNaN: true }),
        fc.double({ min: 0.05, max: 0.6, noNaN: true }),
        fc.boolean(),
        async (...args) => {
          await checkMemory(...args);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('never takes more than summaryShare of the budget on long dated chats, where it is used', async () => {
    let withMemory = 0;
    await fc.assert(
      fc.asyncProperty(
        chatArb,
        fc.double({ min: 0.15, max: 0.5, noNaN: true }),
        fc.double({ min: 0.2, max: 0.6, noNaN: true }),
        fc.boolean(),
        async (...args) => {
          if ((await checkMemory(...args)) > 0) withMemory++;
        },
      ),
      { numRuns: RUNS },
    );
    // The chats are cut to at most half their size: most views hold a memory of what left.
    expect(withMemory).toBeGreaterThan(RUNS / 2);
  });
});
