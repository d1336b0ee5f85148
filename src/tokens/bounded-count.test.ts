import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { countTokens as cl100kDirect } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200kDirect } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { hasTauBench, loadTauBench } from '../../test/support/tau-bench.js';
import { BLOB_RUN_CHARS, boundedCounter, CHUNK_CHARS, MAX_PRETOKEN_CHARS } from './bounded-count.js';
import { countTextTokens } from './encodings.js';
import type { EncodingName } from './types.js';

const ORDINARY = { disallowedSpecial: new Set<string>() };
const direct: Record<EncodingName, (text: string) => number> = {
  o200k_base: (text) => o200kDirect(text, ORDINARY),
  cl100k_base: (text) => cl100kDirect(text, ORDINARY),
};
const ENCODINGS: EncodingName[] = ['o200k_base', 'cl100k_base'];

/** The documented bound: one token per cut of an over-long pre-token. */
function allowedError(length: number): number {
  return Math.ceil(length / MAX_PRETOKEN_CHARS) - 1;
}

describe('bounded counting', () => {
  it('counts long ordinary texts exactly, cut into chunks where cutting cannot change the count', () => {
    const prose = 'The quick brown fox jumps over the lazy dog.   Then,\n\n\tit naps; ';
    const code = 'function add(a: number, b: number): number {\n    return a + b;   \n}\n\n';
    const mixed = 'Ünïcödé 日本語のテキスト русский текст 🚀🔥 {x} 12345678  \r\n';
    for (const unit of [prose, code, mixed]) {
      const text = unit.repeat(Math.ceil((3 * CHUNK_CHARS) / unit.length));
      for (const encoding of ENCODINGS) expect(countTextTokens(text, encoding)).toBe(direct[encoding](text));
    }
  });

  it('counts exactly texts read pre-token by pre-token (no space or digit for long stretches) whose pre-tokens are short', () => {
    const texts = [
      'a-b.c_d/e'.repeat(5000),
      '日本語のテキスト、'.repeat(3000),
      '{"key":"value","list":["x","y"],"nested":{"a":"b"}}'.repeat(2000),
      'word\nword\r\nWord!\n'.repeat(3000),
      `${'x'.repeat(600)} and then ${'ab.'.repeat(4000)}`,
    ];
    for (const text of texts) {
      for (const encoding of ENCODINGS) {
        const exact = direct[encoding](text);
        const got = countTextTokens(text, encoding);
        // The fifth holds one over-long run; the others none, so they are exact.
        if (text.startsWith('x')) expect(Math.abs(got - exact)).toBeLessThanOrEqual(1);
        else expect(got).toBe(exact);
      }
    }
  });

  it('counts arbitrary texts over a chunk long exactly when no pre-token is over-long', () => {
    const word = fc.stringMatching(/^[ a-zA-Z0-9.,;:!?'"\n\t{}[\]()-]{1,40}$/);
    fc.assert(
      fc.property(fc.array(word, { minLength: 50, maxLength: 300 }), (words) => {
        const unit = words.join('');
        const text = unit.repeat(Math.ceil((2.5 * CHUNK_CHARS) / unit.length));
        for (const encoding of ENCODINGS)
          expect(countTextTokens(text, encoding)).toBe(direct[encoding](text));
      }),
      { numRuns: 15 },
    );
  });

  it('stays within one token per cut on long runs, zero-filled base64 and long random words', () => {
    const inputs = [
      'a'.repeat(20_000),
      '-'.repeat(12_000),
      ' '.repeat(12_000),
      'x'.repeat(9_999),
      `start ${'A'.repeat(10_000)} end`,
      Buffer.alloc(9_000).toString('base64'),
      `${randomBytes(3000).toString('base64')}${Buffer.alloc(6000).toString('base64')}`,
      Array.from({ length: 4000 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join(''),
      '日本語'.repeat(3000),
      // Surrogate pairs and combining marks: pieces are never cut inside a pair.
      '🚀'.repeat(3000),
      `e${'\u0301'.repeat(3000)}`,
    ];
    for (const text of inputs) {
      for (const encoding of ENCODINGS) {
        const exact = direct[encoding](text);
        const got = countTextTokens(text, encoding);
        expect(Math.abs(got - exact)).toBeLessThanOrEqual(allowedError(text.length));
      }
    }
  });

  it('stays within the bound on random long words', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-zA-Z]{600,3000}$/), (word) => {
        for (const encoding of ENCODINGS) {
          const got = countTextTokens(word, encoding);
          expect(Math.abs(got - direct[encoding](word))).toBeLessThanOrEqual(allowedError(word.length));
        }
      }),
      { numRuns: 10 },
    );
  });

  it('counts a megabyte of one character, base64 and minified JSON without aborting', () => {
    const run = 'a'.repeat(1_000_000);
    // 'aaaaaaaa' is one token in o200k_base: pieces of 512 cut between tokens, so this is exact.
    expect(countTextTokens(run, 'o200k_base')).toBe(125_000);
    const zeros = Buffer.alloc(750_000).toString('base64');
    expect(countTextTokens(zeros, 'o200k_base')).toBeGreaterThan(0);
    const json = JSON.stringify(
      Array.from({ length: 20_000 }, (_, i) => ({ id: i, tags: ['a', 'b'], v: 1.5 })),
    );
    const exactJson = direct.o200k_base(json);
    expect(countTextTokens(json, 'o200k_base')).toBe(exactJson);
  });

  it.skipIf(!hasTauBench())('counts every tau-bench message text exactly, alone and run together', () => {
    const runs = loadTauBench().slice(0, 60);
    const texts: string[] = [];
    for (const run of runs) {
      for (const message of run.openai) {
        if (typeof message.content === 'string' && message.content.length > 0) texts.push(message.content);
      }
    }
    expect(texts.length).toBeGreaterThan(100);
    for (const encoding of ENCODINGS) {
      for (const text of texts) expect(countTextTokens(text, encoding)).toBe(direct[encoding](text));
      const joined = texts.join('\n');
      expect(joined.length).toBeGreaterThan(CHUNK_CHARS * 10);
      expect(countTextTokens(joined, encoding)).toBe(direct[encoding](joined));
    }
  });
});
describe('blobs (long runs of base64 or hex with digits)', () => {
  /** A random base64 blob of `chars` characters from a seeded generator. */
  const blob = (chars: number, seed: number) => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    let s = seed >>> 0;
    let out = '';
    for (let i = 0; i < chars; i++) {
      s = (s * 1664525 + 1013904223) >>> 0;
      out += alphabet[s >>> 26];
    }
    return out;
  };

  it('are counted by size, without handing the encoder a character of them', () => {
    const before = 'The file, base64-encoded: {"data": "';
    const after = '"} and then 12345 more words follow here.\n';
    const text = `${before}${blob(3 * BLOB_RUN_CHARS, 1)}${after}`;
    const given: string[] = [];
    const count = boundedCounter('o200k_base', (t) => {
      given.push(t);
      return direct.o200k_base(t);
    });
    const n = count(text);
    // Only the ordinary text around the blob went to the encoder.
    expect(given.join('').length).toBeLessThanOrEqual(before.length + after.length);
    expect(n).toBeGreaterThanOrEqual(direct.o200k_base(text));
  });

  it('are never counted under the exact count, whatever text is around them', () => {
    const edge = fc.stringMatching(/^[ a-zA-Z0-9é"':,.{}\n\t=+/-]{0,40}$/);
    fc.assert(
      fc.property(edge, edge, fc.integer({ min: 0, max: 1000 }), fc.integer(), (left, right, extra, seed) => {
        const text = `${left}${blob(BLOB_RUN_CHARS + extra, seed)}${right}`;
        for (const encoding of ENCODINGS) {
          const exact = direct[encoding](text);
          const got = countTextTokens(text, encoding);
          expect(got).toBeGreaterThanOrEqual(exact);
          // By size: random base64 is about 0.7 tokens a character, so at most about 1.5x.
          expect(got).toBeLessThanOrEqual(Math.ceil(exact * 1.6) + 60);
        }
      }),
      { numRuns: 6 },
    );
  });

  it('are not runs of one repeated character or digit-free words', () => {
    // Counted as blobs, these would cost a token a character.
    const letters = 'abcdefghij'.repeat(4000);
    expect(countTextTokens(letters, 'o200k_base')).toBeLessThan(letters.length / 4);
    // Zero-filled base64 has no digit: its pieces hit the encoder's cache (exact count: see above).
    const zeros = Buffer.alloc(3 * BLOB_RUN_CHARS).toString('base64');
    expect(countTextTokens(zeros, 'o200k_base')).toBeLessThan(zeros.length / 4);
  });
});
if (!hasTauBench()) console.log('skipping the tau-bench counting check: shared/data is absent');
