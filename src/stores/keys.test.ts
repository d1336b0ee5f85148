import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import {
  compareIds,
  decodeId,
  encodeId,
  isHashedName,
  MAX_NAME_BYTES,
  validateConversationId,
} from './keys.js';

/** Any well-formed string: full Unicode, plus the ASCII troublemakers, long and short. */
const anyId = fc
  .oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
    fc.string({
      unit: fc.constantFrom('a', 'A', '.', '/', '%', '~', '\0', 'é', '🚀', '-', '_'),
      minLength: 1,
    }),
    fc.string({ unit: fc.constantFrom('a', 'B', '%', '🚀'), minLength: 40, maxLength: 400 }),
  )
  .filter((s) => s.length > 0 && !/\p{Cs}/u.test(s));

const WINDOWS_DEVICES = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/;

describe('encodeId and decodeId', () => {
  it('give a safe, lowercase, bounded name for any id', () => {
    fc.assert(
      fc.property(anyId, (id) => {
        const name = encodeId(id);
        expect(name).toMatch(/^[a-z0-9_%~-]+$/);
        expect(name.length).toBeLessThanOrEqual(MAX_NAME_BYTES);
        expect(WINDOWS_DEVICES.test(name)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('decode back to the id whenever the name is not hashed', () => {
    fc.assert(
      fc.property(anyId, (id) => {
        const name = encodeId(id);
        if (!isHashedName(name)) expect(decodeId(name)).toBe(id);
      }),
      { numRuns: 300 },
    );
  });

  it('never give two ids one name, also ignoring case', () => {
    fc.assert(
      fc.property(anyId, anyId, (a, b) => {
        fc.pre(a !== b);
        expect(encodeId(a).toLowerCase()).not.toBe(encodeId(b).toLowerCase());
      }),
      { numRuns: 300 },
    );
    expect(new Set(['abc', 'ABC', 'Abc', 'aBC'].map(encodeId)).size).toBe(4);
  });

  it('escape what file systems treat specially', () => {
    expect(encodeId('../x')).toBe('%2e%2e%2fx');
    expect(encodeId('.')).toBe('%2e');
    expect(encodeId('a/b')).toBe('a%2fb');
    expect(encodeId('%2F')).toBe('%252%46');
    expect(encodeId('Ü')).toBe('%c3%9c');
    expect(encodeId('a\0b')).toBe('a%00b');
    expect(encodeId('con')).toBe('%63on');
    expect(encodeId('CON')).toBe('%43%4f%4e');
    expect(encodeId('lpt1')).toBe('%6cpt1');
    expect(encodeId('console')).toBe('console');
    expect(decodeId('%63on')).toBe('con');
  });

  it('hash a long id to a readable prefix and its SHA-256, distinct per id', () => {
    const long = `project-${'x'.repeat(300)}`;
    const name = encodeId(long);
    expect(isHashedName(name)).toBe(true);
    expect(name.startsWith('project-xxx')).toBe(true);
    expect(name).toMatch(/~[0-9a-f]{64}$/);
    expect(name.length).toBeLessThanOrEqual(MAX_NAME_BYTES);
    expect(encodeId(`${long}y`)).not.toBe(name);
    expect(() => decodeId(name)).toThrow(/hashed/);
  });

  it('never cut an escape in the prefix of a hashed name', () => {
    for (let pad = 0; pad < 3; pad++) {
      const name = encodeId(`${'a'.repeat(pad)}${'Ü'.repeat(200)}`);
      const prefix = name.slice(0, name.indexOf('~'));
      expect(prefix).toMatch(/^a*(%[0-9a-f]{2})*$/);
    }
  });

  it('refuse names encodeId would never write', () => {
    for (const name of ['Upper', '%4', '%zz', '%c3', 'a.b', '%61', '%2F', 'con', '']) {
      expect(() => decodeId(name), name).toThrow(StoreError);
    }
  });
});

describe('validateConversationId', () => {
  it('says why an id is refused', () => {
    expect(() => validateConversationId('')).toThrow(/must not be empty/);
    expect(() => validateConversationId('ok\ud800')).toThrow(/lone surrogate U\+D800 at index 2/);
    expect(() => validateConversationId(7)).toThrow(/must be a string, got number/);
    expect(() => validateConversationId(null)).toThrow(/got null/);
    expect(() => validateConversationId('x', 'cache key')).not.toThrow();
    expect(() => validateConversationId('', 'cache key')).toThrow(/^cache key must not be empty/);
  });

  it('accepts any well-formed string', () => {
    fc.assert(fc.property(anyId, (id) => validateConversationId(id)));
  });
});

describe('compareIds', () => {
  it('orders like UTF-8 bytes (code points), not UTF-16 units', () => {
    fc.assert(
      fc.property(anyId, anyId, (a, b) => {
        const bytes = Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
        expect(Math.sign(compareIds(a, b))).toBe(bytes);
      }),
      { numRuns: 500 },
    );
    expect(compareIds('\uff5e', '😀')).toBeLessThan(0);
    expect('\uff5e' < '😀').toBe(false);
  });
});
