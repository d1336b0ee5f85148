import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LOCOMO_DIR } from '../../test/support/locomo.js';
import { evaluateChat, evaluateChats } from './chat-eval.js';
import { type ChatConversation, readEvalInput } from './chat-file.js';

const hasLocomo = existsSync(LOCOMO_DIR);
if (!hasLocomo) console.warn(`the chat evaluation on LoCoMo is not checked: ${LOCOMO_DIR} is absent`);

/** Early facts, then small talk that pushes them out of any view of a third of the chat. */
function smallChat(): ChatConversation {
  const messages: ChatConversation['messages'] = [
    {
      role: 'user',
      content: '[9:00 am on 3 March, 2024] Ana: I adopted a grey cat named Pixel from the shelter.',
    },
    {
      role: 'assistant',
      content: '[9:01 am on 3 March, 2024] Ben: I am moving to Lisbon in June for a job at the aquarium.',
    },
  ];
  for (let i = 0; i < 60; i++) {
    messages.push({
      role: 'user',
      content: `[10:00 am on ${(i % 27) + 4} March, 2024] Ana: Hi again! How was your day?`,
    });
    messages.push({
      role: 'assistant',
      content: `[10:01 am on ${(i % 27) + 4} March, 2024] Ben: Fine, thanks for asking!`,
    });
  }
  return {
    name: 'small',
    messages,
    questions: [
      { question: 'What is the name of the cat Ana adopted?', answer: 'pixel', evidence: [0] },
      { question: 'Where is Ben moving in June?', answer: 'lisbon', evidence: [1] },
      { question: 'What is Ana allergic to?', answer: 'peanuts', evidence: [] },
    ],
  };
}

describe('the chat evaluation', () => {
  it('counts only answers the chat states; the memory keeps what truncation loses', async () => {
    const result = await evaluateChat(smallChat(), { budgetRatio: 0.3 });
    expect(result.present).toEqual([0, 1]);
    expect(result.truncation.inView).toEqual([]);
    expect(result.contextkit!.inView).toEqual([0, 1]);
    expect(result.contextkit!.recalled).toEqual([0, 1]);
    expect(result.contextkit!.valid && result.contextkit!.withinBudget).toBe(true);
    expect(result.summarized).toBeGreaterThan(0);
  });

  it('refuses a budget ratio outside (0, 1]', async () => {
    await expect(evaluateChat(smallChat(), { budgetRatio: 0 })).rejects.toThrow(/budgetRatio/);
  });
});

describe.skipIf(!hasLocomo)('the chat evaluation on the LoCoMo dev chats at R = 0.25', () => {
  it.each(['openai', 'anthropic'] as const)(
    'in %s format: ≥ 40% of the answers in the view, ≥ 85% by recall, every view valid and within budget',
    async (format) => {
      const input = await readEvalInput(LOCOMO_DIR);
      if (input.kind !== 'chats') throw new Error('expected chats');
      const { summary } = await evaluateChats(input.chats, { budgetRatio: 0.25, format });
      expect(summary.questions).toBe(154);
      expect(summary.contextkit.inView / summary.questions).toBeGreaterThanOrEqual(0.4);
      expect(summary.contextkit.recalled / summary.questions).toBeGreaterThanOrEqual(0.85);
      expect(summary.contextkit.valid).toBe(summary.compared);
      expect(summary.contextkit.withinBudget).toBe(summary.compared);
    },
    60_000,
  );
});
