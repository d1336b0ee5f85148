import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContextkitError } from '../errors.js';
import {
  InvalidUsageError,
  MAX_USAGE_TOKENS,
  usageFromAnthropic,
  usageFromCounts,
  usageFromGemini,
  usageFromOpenAI,
  usageFromResponse,
} from './usage.js';

function invalid(fn: () => unknown): InvalidUsageError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidUsageError);
    expect(error).toBeInstanceOf(ContextkitError);
    expect((error as InvalidUsageError).code).toBe('invalid_usage');
    return error as InvalidUsageError;
  }
  throw new Error('expected an InvalidUsageError');
}

describe('usageFromOpenAI', () => {
  it('reads a Chat Completions response, cached tokens taken out of the uncached input', () => {
    const response = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      model: 'gpt-4o-2024-08-06',
      usage: {
        prompt_tokens: 2006,
        completion_tokens: 300,
        total_tokens: 2306,
        prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
      },
    };
    expect(usageFromOpenAI(response)).toEqual({
      model: 'gpt-4o-2024-08-06',
      inputTokens: 86,
      cacheReadTokens: 1920,
      cacheWriteTokens: 0,
      totalInputTokens: 2006,
    });
  });

  it('reads a Responses API response and a bare usage object', () => {
    const response = {
      object: 'response',
      model: 'gpt-4.1',
      usage: {
        input_tokens: 328,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 52,
        total_tokens: 380,
      },
    };
    expect(usageFromOpenAI(response)).toEqual({
      model: 'gpt-4.1',
      inputTokens: 328,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      totalInputTokens: 328,
    });
    expect(usageFromOpenAI({ prompt_tokens: 12, completion_tokens: 3 })).toEqual({
      inputTokens: 12,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      totalInputTokens: 12,
    });
  });

  it('names the field that is wrong', () => {
    expect(invalid(() => usageFromOpenAI({ usage: { prompt_tokens: '12' } })).field).toBe(
      'usage.prompt_tokens',
    );
    expect(invalid(() => usageFromOpenAI({ usage: { completion_tokens: 3 } })).field).toBe(
      'usage.prompt_tokens',
    );
    expect(
      invalid(() =>
        usageFromOpenAI({ usage: { prompt_tokens: 10, prompt_tokens_details: { cached_tokens: -1 } } }),
      ).field,
    ).toBe('usage.prompt_tokens_details.cached_tokens');
    expect(
      invalid(() =>
        usageFromOpenAI({ usage: { prompt_tokens: 10, prompt_tokens_details: { cached_tokens: 11 } } }),
      ).message,
    ).toContain('exceed');
    expect(invalid(() => usageFromOpenAI({ usage: null })).field).toBe('usage');
    expect(invalid(() => usageFromOpenAI('usage')).field).toBe('response');
    expect(invalid(() => usageFromOpenAI({ usage: { prompt_tokens: 1.5 } })).message).toContain('1.5');
  });
});

describe('usageFromAnthropic', () => {
  it('sums input, cache reads and cache writes into the total', () => {
    const response = {
      id: 'msg_01',
      type: 'message',
      model: 'claude-sonnet-4-5-20250929',
      usage: {
        input_tokens: 21,
        cache_creation_input_tokens: 188086,
        cache_read_input_tokens: 0,
        output_tokens: 393,
      },
    };
    expect(usageFromAnthropic(response)).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      inputTokens: 21,
      cacheReadTokens: 0,
      cacheWriteTokens: 188086,
      totalInputTokens: 188107,
    });
  });

  it('treats absent or null cache fields as 0', () => {
    expect(usageFromAnthropic({ input_tokens: 50, cache_read_input_tokens: null, output_tokens: 1 })).toEqual(
      {
        inputTokens: 50,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        totalInputTokens: 50,
      },
    );
  });

  it('names the field that is wrong', () => {
    expect(invalid(() => usageFromAnthropic({ usage: { output_tokens: 3 } })).field).toBe(
      'usage.input_tokens',
    );
    expect(
      invalid(() => usageFromAnthropic({ usage: { input_tokens: 3, cache_read_input_tokens: 'many' } }))
        .field,
    ).toBe('usage.cache_read_input_tokens');
  });
});

describe('usageFromGemini', () => {
  it('reads usageMetadata, cached content taken out of the uncached input', () => {
    const response = {
      candidates: [],
      modelVersion: 'gemini-2.5-flash',
      usageMetadata: { promptTokenCount: 1200, cachedContentTokenCount: 1000, candidatesTokenCount: 40 },
    };
    expect(usageFromGemini(response)).toEqual({
      model: 'gemini-2.5-flash',
      inputTokens: 200,
      cacheReadTokens: 1000,
      cacheWriteTokens: 0,
      totalInputTokens: 1200,
    });
  });

  it('names the field that is wrong', () => {
    expect(invalid(() => usageFromGemini({ usageMetadata: { candidatesTokenCount: 3 } })).field).toBe(
      'usageMetadata.promptTokenCount',
    );
  });
});

describe('usageFromResponse', () => {
  it('tells the providers apart', () => {
    expect(usageFromResponse({ usage: { prompt_tokens: 7 } }).totalInputTokens).toBe(7);
    expect(
      usageFromResponse({ usage: { input_tokens: 7, input_tokens_details: { cached_tokens: 2 } } }),
    ).toMatchObject({
      inputTokens: 5,
      cacheReadTokens: 2,
    });
    expect(
      usageFromResponse({
        usage: { input_tokens: 7, cache_read_input_tokens: 2, cache_creation_input_tokens: 1 },
      }),
    ).toMatchObject({ inputTokens: 7, totalInputTokens: 10 });
    expect(usageFromResponse({ usageMetadata: { promptTokenCount: 9 } }).totalInputTokens).toBe(9);
    expect(invalid(() => usageFromResponse({ usage: { tokens: 1 } })).field).toBe('usage');
  });
});

describe('usageFromCounts', () => {
  it('completes hand-reported counts with their total and checks them', () => {
    expect(usageFromCounts({ model: 'claude-opus-4-1', inputTokens: 10, cacheReadTokens: 5 })).toEqual({
      model: 'claude-opus-4-1',
      inputTokens: 10,
      cacheReadTokens: 5,
      cacheWriteTokens: 0,
      totalInputTokens: 15,
    });
    expect(invalid(() => usageFromCounts({ inputTokens: Number.NaN })).field).toBe('usage.inputTokens');
    expect(invalid(() => usageFromCounts({ model: 3 as never, inputTokens: 1 })).field).toBe('usage.model');
  });

  // Issue 31, item 11: MAX_SAFE_INTEGER was accepted and reached stored counts; the bound is now
  // MAX_USAGE_TOKENS (no request reads or writes more), so this test's expectations moved with it.
  it('refuses implausible counts (1e300, 2^53, MAX_SAFE_INTEGER, past MAX_USAGE_TOKENS) and a total past it, from every reader', () => {
    const big = Number.MAX_SAFE_INTEGER;
    expect(invalid(() => usageFromCounts({ inputTokens: 1e300 })).message).toMatch(
      /^usage\.inputTokens: 1e\+300 tokens is not a plausible figure/,
    );
    expect(invalid(() => usageFromCounts({ inputTokens: 1, cacheReadTokens: 2 ** 53 })).field).toBe(
      'usage.cacheReadTokens',
    );
    expect(invalid(() => usageFromCounts({ inputTokens: big })).field).toBe('usage.inputTokens');
    expect(
      invalid(() => usageFromCounts({ inputTokens: MAX_USAGE_TOKENS, cacheWriteTokens: MAX_USAGE_TOKENS }))
        .field,
    ).toBe('total input tokens');
    expect(invalid(() => usageFromAnthropic({ input_tokens: 1e300 })).field).toBe('usage.input_tokens');
    expect(invalid(() => usageFromAnthropic({ input_tokens: 1, output_tokens: big })).field).toBe(
      'usage.output_tokens',
    );
    expect(invalid(() => usageFromOpenAI({ prompt_tokens: 2 ** 60 })).field).toBe('usage.prompt_tokens');
    expect(invalid(() => usageFromOpenAI({ input_tokens: 10, output_tokens: 1e300 })).field).toBe(
      'usage.output_tokens',
    );
    expect(usageFromCounts({ inputTokens: MAX_USAGE_TOKENS }).totalInputTokens).toBe(MAX_USAGE_TOKENS);
  });

  it('always has total = input + cache reads + cache writes, whichever provider reported it', () => {
    const n = fc.nat({ max: 2_000_000 });
    fc.assert(
      fc.property(n, n, n, (a, b, c) => {
        const samples = [
          usageFromAnthropic({ input_tokens: a, cache_read_input_tokens: b, cache_creation_input_tokens: c }),
          usageFromOpenAI({ prompt_tokens: a + b, prompt_tokens_details: { cached_tokens: b } }),
          usageFromGemini({ promptTokenCount: a + b, cachedContentTokenCount: b }),
        ];
        for (const s of samples) {
          expect(s.totalInputTokens).toBe(s.inputTokens + s.cacheReadTokens + s.cacheWriteTokens);
          expect(s.inputTokens).toBe(a);
          expect(s.cacheReadTokens).toBe(b);
        }
      }),
    );
  });
});
