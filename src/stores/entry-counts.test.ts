import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountsRecords, decodeCounts, encodeCounts } from './entry-counts.js';

const counts = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 30 }),
  fc.integer({ min: 0, max: 2 ** 40 }),
  { minKeys: 1, maxKeys: 8 },
);

/** What a record decodes to, told the slow way: the whole text parsed, then checked. */
function reference(stored: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(stored);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { d, c } = value as { d?: unknown; c?: unknown };
  if (typeof d !== 'string' || typeof c !== 'object' || c === null || Array.isArray(c)) return undefined;
  const entries = Object.entries(c);
  const usable =
    entries.length > 0 &&
    entries.length <= 8 &&
    entries.every(
      ([k, n]) => k.length > 0 && k.length <= 200 && Number.isSafeInteger(n) && (n as number) >= 0,
    );
  return usable ? c : undefined;
}

describe('CountsRecords', () => {
  it('decodes any text as parsing the whole record would, a record changed by a character included', () => {
    const edit = fc.record({
      at: fc.nat(),
      remove: fc.nat({ max: 2 }),
      insert: fc.constantFrom('', '"', '\\', '}', '{', ' ', 'A', ',"x":1', '-', '0'),
    });
    fc.assert(
      fc.property(fc.string(), counts, fc.array(edit, { maxLength: 3 }), (message, given, edits) => {
        let stored = encodeCounts(message, given)!;
        for (const { at, remove, insert } of edits) {
          const i = at % (stored.length + 1);
          stored = stored.slice(0, i) + insert + stored.slice(i + remove);
        }
        const records = new CountsRecords();
        expect(records.decode(stored)).toEqual(reference(stored));
        // Once remembered, the same.
        expect(records.decode(stored)).toEqual(reference(stored));
      }),
      { numRuns: 2_000 },
    );
  });

  it('decodes every record encodeCounts writes to the counts decodeCounts gives for its message', () => {
    fc.assert(
      fc.property(fc.string(), counts, (message, given) => {
        const record = encodeCounts(message, given)!;
        const decoded = new CountsRecords().decode(record);
        expect(decoded).toEqual(decodeCounts(record, message));
        expect(decoded).toEqual(given);
        expect(Object.isFrozen(decoded)).toBe(true);
      }),
    );
  });

  it('parses equal counts once: rows of the same counts share one object, other counts do not', () => {
    const records = new CountsRecords();
    const a = records.decode(encodeCounts('one message', { k: 7 }));
    const b = records.decode(encodeCounts('another message', { k: 7 }));
    const c = records.decode(encodeCounts('a third', { k: 8 }));
    expect(a).toBe(b);
    expect(c).toEqual({ k: 8 });
    expect(c).not.toBe(a);
  });

  it('reads a record written otherwise (spaced, keys reordered) as a record', () => {
    const records = new CountsRecords();
    expect(records.decode('{ "c": { "k": 3 }, "d": "anything" }')).toEqual({ k: 3 });
    const digest = 'A'.repeat(22);
    expect(records.decode(`{"d":"${digest}","c":{"k":1},"x":{"y":2}}`)).toEqual({ k: 1 });
    expect(records.decode(`{"d":"${digest}","c":{"k":1},"x":{"y":2}}`)).toEqual({ k: 1 });
  });

  it('reads anything that is not a record of usable counts as no count', () => {
    const records = new CountsRecords();
    const digest = 'A'.repeat(22);
    for (const stored of [
      null,
      undefined,
      42,
      '',
      '{not json',
      `{"d":"${digest}","c":{"k":-5}}`,
      `{"d":"${digest}","c":{"k":1.5}}`,
      `{"d":"${digest}","c":{}}`,
      `{"d":"${digest}","c":"{\\"k\\":1}"}`,
      `{"d":"${digest}","c":[1]}`,
      `{"d":"${digest}","c":{"k":1}`,
      '{"c":{"k":1}}',
      '{"d":5,"c":{"k":1}}',
      `{"d":"${digest}","c":{"k":1}}x`,
      `{"d":"${digest}","c":{"k":1}}}`,
      `{"d":"${digest}","c":{"":1}}`,
      `{"d":"${digest}","c":{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1}}`,
    ]) {
      expect(records.decode(stored), String(stored)).toBeUndefined();
      // Asked again (a decoding remembered), the same answer.
      expect(records.decode(stored), String(stored)).toBeUndefined();
    }
  });
});
