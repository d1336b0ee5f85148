import { describe, expect, it } from 'vitest';
import type { Message } from '../messages/types.js';
import { factsHeld } from './facts-held.js';

describe('factsHeld', () => {
  const view: Message[] = [
    { role: 'system', content: 'You are an airline agent.' },
    { role: 'user', content: 'I am noah_berg_1234.' },
    {
      role: 'assistant',
      content: [
        {
          type: 'tool_use',
          id: 'toolu_1',
          name: 'get_reservation',
          input: { reservation_id: 'QX7Z2A', amount: 250 },
        },
      ],
    },
  ];

  it('finds values in text, in tool inputs and in JSON numbers, in the order the facts are given', () => {
    expect(factsHeld(view, ['250', 'QX7Z2A', 'noah_berg_1234', 'HAT512'])).toEqual([
      '250',
      'QX7Z2A',
      'noah_berg_1234',
    ]);
  });

  it('finds values inside OpenAI tool-call arguments, which are JSON within JSON', () => {
    const openai: Message[] = [
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"flight_number":"HAT512"}' } },
        ],
      },
    ];
    expect(factsHeld(openai, ['HAT512', 'HAT513'])).toEqual(['HAT512']);
  });

  it('holds nothing of an empty list of facts or an empty view', () => {
    expect(factsHeld(view, [])).toEqual([]);
    expect(factsHeld([], ['QX7Z2A'])).toEqual([]);
  });
});
