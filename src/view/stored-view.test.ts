import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { filterMayHold, idFilter } from './stored-view.js';

describe('the stored view record’s tool id filter', () => {
  it('holds every id it was made of (no false "certainly not"), and few others', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 400 }),
        (ids) => {
          const mayHold = filterMayHold(idFilter(ids));
          for (const id of ids) expect(mayHold(id)).toBe(true);
        },
      ),
    );
    const ids = Array.from({ length: 5_000 }, (_, i) => `call_${i.toString(36)}_${(i * 7919).toString(16)}`);
    const mayHold = filterMayHold(idFilter(ids));
    for (const id of ids) expect(mayHold(id)).toBe(true);
    let wrong = 0;
    for (let i = 0; i < 10_000; i++) if (mayHold(`toolu_${i}_other`)) wrong++;
    // About one in a hundred at 10 bits an id and 7 probes.
    expect(wrong).toBeLessThan(300);
    expect(filterMayHold(undefined)('call_1')).toBe(false);
  });
});
