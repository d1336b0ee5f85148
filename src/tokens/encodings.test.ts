import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { countTokens as cl100kDirect } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200kDirect, encode as o200kEncode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { countTextTokens, getTextTokenCounter, isEncodingLoaded } from './encodings.js';

const SAMPLES = [
  'hello world',
  'The quick brown fox jumps over the lazy dog.',
  'function add(a: number, b: number): number {\n  return a + b;\n}\n',
  '{"path":"src/date.ts","line":42,"error":"Expected 2024-01-31, received 2024-02-01"}',
  'Ünïcödé, 日本語のテキスト, русский текст, emoji 🚀🔥',
  '    indented\n\n\n\ttabs and   spaces   ',
];

describe('encodings', () => {
  // Runs first: nothing in this file has counted yet, and gpt-tokenizer's ESM build imported
  // above is a separate instance from the one we load.
  it('loads an encoding only when first used', () => {
    expect(isEncodingLoaded('o200k_base')).toBe(false);
    expect(isEncodingLoaded('cl100k_base')).toBe(false);
    countTextTokens('hello', 'o200k_base');
    expect(isEncodingLoaded('o200k_base')).toBe(true);
    expect(isEncodingLoaded('cl100k_base')).toBe(false);
  });

  it('counts exactly what gpt-tokenizer counts, in both encodings', () => {
    for (const text of SAMPLES) {
      expect(countTextTokens(text, 'o200k_base')).toBe(o200kDirect(text));
      expect(countTextTokens(text, 'cl100k_base')).toBe(cl100kDirect(text));
    }
  });

  it('knows the counts of well-known strings', () => {
    expect(countTextTokens('hello world', 'o200k_base')).toBe(2);
    expect(countTextTokens('hello world', 'cl100k_base')).toBe(2);
    expect(countTextTokens('', 'o200k_base')).toBe(0);
    expect(countTextTokens('', 'cl100k_base')).toBe(0);
  });

  it('counts special-token strings as ordinary text instead of throwing', () => {
    const text = 'before <|endoftext|> middle <|im_start|>system<|im_end|> after';
    // The default gpt-tokenizer options refuse this text outright.
    expect(() => o200kDirect(text)).toThrow(/special token/i);
    const ordinary = o200kEncode(text, { disallowedSpecial: new Set() }).length;
    expect(countTextTokens(text, 'o200k_base')).toBe(ordinary);
    // As plain text `<|endoftext|>` is several tokens, not the single control token.
    expect(countTextTokens('<|endoftext|>', 'o200k_base')).toBeGreaterThan(1);
    expect(countTextTokens('<|endoftext|>', 'cl100k_base')).toBeGreaterThan(1);
  });

  it('hands out one shared counting function per encoding', () => {
    expect(getTextTokenCounter('o200k_base')).toBe(getTextTokenCounter('o200k_base'));
    expect(getTextTokenCounter('o200k_base')).not.toBe(getTextTokenCounter('cl100k_base'));
  });

  it('counts with throughput within 1.5x of calling gpt-tokenizer directly', () => {
    const paragraph = SAMPLES.join(' ');
    const texts = Array.from({ length: 400 }, (_, i) => `${i}: ${paragraph} ${'x'.repeat(i % 17)}`);
    const count = getTextTokenCounter('o200k_base');
    const timeOf = (fn: (text: string) => number): number => {
      const start = performance.now();
      let sink = 0;
      for (const text of texts) sink += fn(text);
      expect(sink).toBeGreaterThan(0);
      return performance.now() - start;
    };
    // Warm both instances' merge caches, then take the best of several alternating rounds so a
    // busy machine slows both sides alike.
    timeOf(count);
    timeOf(o200kDirect);
    let ours = Number.POSITIVE_INFINITY;
    let direct = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 5; round++) {
      ours = Math.min(ours, timeOf(count));
      direct = Math.min(direct, timeOf(o200kDirect));
    }
    expect(ours).toBeLessThan(direct * 1.5);
  });

  it('rejects an encoding it does not bundle', () => {
    // @ts-expect-error: not an EncodingName
    expect(() => countTextTokens('x', 'p50k_base')).toThrow(/unknown encoding/);
  });
});

describe("gpt-tokenizer's merge cache", () => {
  it('is never let fill: a full one evicts by walking the holes earlier evictions left, superlinearly', () => {
    countTextTokens('warm up', 'o200k_base');
    // The same CommonJS instance encodings.ts loads (the ESM import above is another one).
    const mod = createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as {
      default: { bytePairEncodingCoreProcessor: { mergeCache?: Map<string, number[]> } };
    };
    const cache = mod.default.bytePairEncodingCoreProcessor.mergeCache;
    expect(cache).toBeInstanceOf(Map);
    // Eviction is the cache's only caller of `keys()` (it drops the first, oldest key).
    let evictions = 0;
    const keys = cache!.keys.bind(cache);
    Object.defineProperty(cache, 'keys', {
      configurable: true,
      value: () => {
        evictions++;
        return keys();
      },
    });
    try {
      // 130,000 distinct words: more pre-tokens than the cache's 100,000 entries.
      const letters = randomBytes(26 * 5000 * 6);
      let at = 0;
      const word = () => {
        let w = ' ';
        for (let i = 0; i < 6; i++) w += String.fromCharCode(97 + (letters[at++]! % 26));
        return w;
      };
      for (let text = 0; text < 26; text++) {
        const words: string[] = [];
        for (let i = 0; i < 5000; i++) words.push(word());
        countTextTokens(words.join(''), 'o200k_base');
      }
      expect(evictions).toBe(0);
      expect(cache!.size).toBeLessThanOrEqual(100_000);
    } finally {
      Reflect.deleteProperty(cache!, 'keys');
    }
  });
});
