import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { longSessionMessages } from '../../test/support/arbitraries.js';
import type { Message } from '../messages/types.js';
import { factsOfLeftOut, KeptTally, keyValues, unusableReason } from './view-keeps.js';

describe('what a view kept', () => {
  it('reads ids, numbers, dates, paths and emails as key values, not plain words', () => {
    expect(
      keyValues(
        'Customer usr_0a1f (ana.12@example.com) paid 4127 USD on 2024-05-01 for src/date.ts. Thanks, ok 7.',
      ),
    ).toEqual(['usr_0a1f', 'ana.12@example.com', '4127', '2024-05-01', 'src/date.ts']);
  });

  it('counts the facts of what left the view that it still shows (a summary, a facts block)', () => {
    const stored: Message[] = [
      { role: 'system', content: 'You help.' },
      { role: 'user', content: 'Refund order ORD-5512 to card 4242.' },
      { role: 'assistant', content: 'Refunded ORD-5512.' },
      { role: 'user', content: 'And the date?' },
    ];
    const summary: Message = { role: 'system', content: 'Earlier: order ORD-5512 refunded.' };
    expect(factsOfLeftOut(stored, [stored[0]!, summary, stored[3]!])).toEqual({ leftOut: 2, kept: 1 });
    expect(factsOfLeftOut(stored, stored)).toEqual({ leftOut: 0, kept: 0 });
  });

  it('over generated sessions: the whole history leaves nothing out, the system prompt alone keeps nothing', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 10, max: 120 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.constantFrom('openai' as const, 'anthropic' as const),
        (n, seed, format) => {
          const stored = longSessionMessages(n, format, seed);
          expect(factsOfLeftOut(stored, stored).leftOut).toBe(0);
          const bare = factsOfLeftOut(stored, [stored[0]!]);
          expect(bare.kept).toBe(0);
          expect(bare.leftOut).toBeGreaterThan(0);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('tallies views the provider takes, and the task and latest user turn in them', () => {
    const tally = new KeptTally(() => 'openai');
    const task: Message = { role: 'user', content: 'Fix src/date.ts' };
    const next: Message = { role: 'user', content: 'Now run the tests' };
    const answer: Message = { role: 'assistant', content: 'ok' };
    tally.call([task], [task], 10, 100);
    tally.call([task, answer, next], [next], 10, 100); // the task dropped
    tally.call([task, answer, next], [task, next], 500, 100); // over the budget
    tally.call([task, answer, next], [{ role: 'tool', tool_call_id: 'x', content: 'r' }], 10, 100); // refused
    tally.call([task, answer, next], null, 0, 100); // declined
    expect(tally.totals).toMatchObject({ requests: 5, accepted: 2, taskInView: 1, latestUserInView: 2 });
    expect(unusableReason(tally.totals)).toBe(
      'the provider would refuse 3 of 5 views; drops the task from 1 of 2 views',
    );
  });
});
