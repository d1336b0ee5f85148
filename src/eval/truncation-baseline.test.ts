import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conversationArb } from '../../test/support/arbitraries.js';
import type { Message, MessageFormat } from '../messages/types.js';
import { getModelInfo } from '../tokens/catalog.js';
import { createTokenCounter } from '../tokens/counter.js';
import type { ModelInfo } from '../tokens/types.js';
import { validateRequest } from '../wire/validate-request.js';
import { truncationBaseline } from './truncation-baseline.js';

const counter = createTokenCounter(getModelInfo('gpt-4o') as ModelInfo);

function tokensOf(messages: readonly Message[], format: MessageFormat): number {
  return messages.reduce((n, m) => n + counter.countMessage(m, format), counter.requestOverhead);
}

const call = (id: string): Message => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }],
});
const result = (id: string, text: string): Message => ({ role: 'tool', tool_call_id: id, content: text });

const conversation: Message[] = [
  { role: 'system', content: 'You are a helpful agent.' },
  { role: 'user', content: 'First question, about the weather in Lisbon.' },
  { role: 'assistant', content: 'It is sunny in Lisbon.' },
  { role: 'user', content: 'Look something up for me.' },
  call('c1'),
  result('c1', 'a long result '.repeat(20)),
  { role: 'assistant', content: 'Here is what I found.' },
  { role: 'user', content: 'Thanks!' },
];

describe('truncationBaseline', () => {
  it('keeps the system prompt and the newest messages that fit, counting the request overhead', () => {
    const all = tokensOf(conversation, 'openai');
    const whole = truncationBaseline(conversation, { budget: all, counter, format: 'openai' });
    expect(whole.messages).toEqual(conversation);
    expect(whole.tokens).toBe(all);

    const lastTwo = tokensOf([conversation[0]!, ...conversation.slice(-2)], 'openai');
    const cut = truncationBaseline(conversation, { budget: lastTwo, counter, format: 'openai' });
    expect(cut.messages).toEqual([conversation[0], ...conversation.slice(-2)]);
    expect(cut.tokens).toBe(lastTwo);
  });

  it('keeps or drops a tool call and its results together', () => {
    // Room for the result but not for its call as well: both go.
    const tail = conversation.slice(5);
    const budget = tokensOf([conversation[0]!, ...tail], 'openai');
    const cut = truncationBaseline(conversation, { budget, counter, format: 'openai' });
    expect(cut.messages).toEqual([conversation[0], ...conversation.slice(6)]);
    expect(validateRequest(cut.messages, 'openai').valid).toBe(true);
  });

  it('starts an Anthropic conversation with a user message, dropping an assistant message that would open it', () => {
    const anthropic: Message[] = [
      { role: 'system', content: 'You are a helpful agent.' },
      { role: 'user', content: 'Hello there.' },
      { role: 'assistant', content: 'Hi! How can I help today?' },
      { role: 'user', content: 'Book it.' },
    ];
    const budget = tokensOf([anthropic[0]!, ...anthropic.slice(2)], 'anthropic');
    const cut = truncationBaseline(anthropic, { budget, counter, format: 'anthropic' });
    expect(cut.messages).toEqual([anthropic[0], anthropic[3]]);
    expect(cut.tokens).toBe(tokensOf(cut.messages, 'anthropic'));
    expect(validateRequest(cut.messages, 'anthropic').valid).toBe(true);
  });

  it('returns the system prompt alone, over the budget, when even that does not fit', () => {
    const cut = truncationBaseline(conversation, { budget: 3, counter, format: 'openai' });
    expect(cut.messages).toEqual([conversation[0]]);
    expect(cut.tokens).toBeGreaterThan(3);
  });

  it('on any valid conversation: a valid, in-budget request made of the system prompt and a newest suffix', () => {
    fc.assert(
      fc.property(
        conversationArb({ images: false }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (conv, share) => {
          const { messages, format } = conv;
          fc.pre(validateRequest(messages, format).valid);
          const isSystem = (m: Message) => m.role === 'system' || m.role === 'developer';
          const system = messages.filter(isSystem);
          const rest = messages.filter((m) => !isSystem(m));
          const floor = tokensOf(system, format);
          const budget = floor + Math.floor(share * (tokensOf(messages, format) - floor));
          const cut = truncationBaseline(messages, { budget, counter, format });
          expect(cut.tokens).toBe(tokensOf(cut.messages, format));
          expect(cut.tokens).toBeLessThanOrEqual(budget);
          expect(cut.messages.slice(0, system.length)).toEqual(system);
          const kept = cut.messages.slice(system.length);
          expect(kept).toEqual(rest.slice(rest.length - kept.length));
          if (kept.length > 0) expect(validateRequest(cut.messages, format).problems).toEqual([]);
          if (share === 1) expect(kept.length).toBe(rest.length);
        },
      ),
      { numRuns: 150 },
    );
  });
});
