import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findJsonSyntaxError, lineAndColumn } from './json-syntax-error.js';

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe('findJsonSyntaxError', () => {
  it('points at the line and column of a trailing comma', () => {
    const text = '[\n  {"role": "user", "content": "hi"},\n  {"role": "assistant", "content": "hello",}\n]';
    expect(findJsonSyntaxError(text)).toMatchObject({
      line: 3,
      column: 44,
      reason: 'unexpected "}", expected a property name in quotes',
    });
  });

  it('reports the end of input for a truncated document', () => {
    const text = '[{"role": "user"';
    expect(findJsonSyntaxError(text)).toMatchObject({
      line: 1,
      column: text.length + 1,
      reason: 'unexpected end of input, expected "," or "}"',
    });
  });

  it('names raw control characters, bad escapes, bad numbers and trailing garbage', () => {
    expect(findJsonSyntaxError('"a\nb"')?.reason).toMatch(/control character/);
    expect(findJsonSyntaxError('"\\x"')?.reason).toMatch(/invalid escape/);
    expect(findJsonSyntaxError('"\\u12g4"')?.reason).toMatch(/\\u escape/);
    expect(findJsonSyntaxError('-')?.reason).toBe('invalid number');
    expect(findJsonSyntaxError('[1] [2]')).toMatchObject({
      column: 5,
      reason: 'unexpected "[" after the end of the JSON value',
    });
  });

  it('finds nothing wrong in valid JSON', () => {
    expect(findJsonSyntaxError('{"a": [1, -2.5e3, true, false, null, "\\u00e9\\n"]}')).toBeUndefined();
  });

  it('agrees with JSON.parse on what is valid', () => {
    const jsonish = fc.oneof(
      fc.json(),
      fc
        .tuple(fc.json(), fc.nat(), fc.constantFrom(',', '}', ']', '"', ':', '\n', '\\', '-', 'x', ' '))
        .map(([text, at, insert]) => {
          const i = at % (text.length + 1);
          return text.slice(0, i) + insert + text.slice(i);
        }),
      fc.tuple(fc.json(), fc.nat()).map(([text, at]) => text.slice(0, at % (text.length + 1))),
    );
    fc.assert(
      fc.property(jsonish, (text) => {
        expect(findJsonSyntaxError(text) === undefined).toBe(parses(text));
      }),
      { numRuns: 500 },
    );
  });
});

describe('lineAndColumn', () => {
  it('counts lines and columns from 1', () => {
    expect(lineAndColumn('ab\ncd', 0)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
  });
});
