import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { countTokens as cl100kDirect } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200kDirect } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { hasTauBench, loadTauBench } from '../../test/support/tau-bench.js';
import { CHUNK_CHARS, MAX_PRETOKEN_CHARS } from './bounded-count.js';
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
if (!hasTauBench()) console.log('skipping the tau-bench counting check: shared/data is absent');
