import { describe, expect, it } from 'vitest';
import { actionFacts } from './action-facts.js';

describe('actionFacts', () => {
  it('walks nested objects and arrays and keeps each value once, first occurrence first', () => {
    const facts = actionFacts([
      {
        reservation_id: 'QX7Z2A',
        flights: [
          { flight_number: 'HAT512', date: '2024-06-11' },
          { flight_number: 'HAT039', date: '2024-06-11' },
        ],
        payment_methods: [{ payment_id: 'credit_card_5550123', amount: 250 }],
      },
      { user_id: 'noah_berg_1234', reservation_id: 'QX7Z2A' },
    ]);
    expect(facts).toEqual([
      'QX7Z2A',
      'HAT512',
      '2024-06-11',
      'HAT039',
      'credit_card_5550123',
      '250',
      'noah_berg_1234',
    ]);
  });

  it('leaves out values that would match any text: enums, free text, small numbers, short strings, booleans', () => {
    const facts = actionFacts([
      {
        cabin: 'economy',
        flight_type: 'one_way',
        insurance: 'no',
        summary: 'The user wants a refund for the delayed flight.',
        expression: '250 * 2',
        total_baggages: 3,
        nonfree_baggages: 0,
        last_name: 'Li',
        first_name: ' Mia ',
        confirmed: true,
        note: null,
        amount: -42,
      },
    ]);
    expect(facts).toEqual(['Mia', '-42']);
  });

  it('names array items by the array key, so an enum field holding a list is left out too', () => {
    expect(actionFacts([{ cabin: ['economy', 'business'], origin: ['JFK', 'SEA'] }])).toEqual(['JFK', 'SEA']);
  });

  it('gives nothing for actions without arguments', () => {
    expect(actionFacts([])).toEqual([]);
    expect(actionFacts([{}])).toEqual([]);
  });
});
