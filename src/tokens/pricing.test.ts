import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../errors.js';
import { ContextManager } from '../manager.js';
import { BUILTIN_PRICING, checkPricing } from './pricing.js';

describe('checkPricing', () => {
  it('refuses a price past a dollar a token, naming the field, so no cost overflows to null', () => {
    const base = BUILTIN_PRICING['gpt-4o'];
    for (const [field, value] of [
      ['input', 1e308],
      ['cacheRead', 1e7],
    ] as const) {
      let caught: unknown;
      try {
        checkPricing('models["gpt-4o"].pricing', { [field]: value }, base);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ConfigurationError);
      expect((caught as Error).message).toMatch(
        new RegExp(`^models\\["gpt-4o"\\]\\.pricing\\.${field}: .* more than 1000000`),
      );
    }
  });

  it('prices a request at the highest accepted price as a number', async () => {
    const ctx = new ContextManager({
      model: 'gpt-4o',
      models: { 'gpt-4o': { pricing: { input: 1e6, output: 1e6, cacheRead: 1e6, cacheWrite: 1e6 } } },
    });
    await ctx.addMessage({ role: 'user', content: 'hello '.repeat(200) });
    await ctx.getMessagesForRequest();
    const { last, totals } = ctx.usage().cost!;
    expect(Number.isFinite(last.price)).toBe(true);
    expect(last.price).toBeGreaterThan(100);
    expect(JSON.parse(JSON.stringify(totals)).price).toBe(totals.price);
  });
});
