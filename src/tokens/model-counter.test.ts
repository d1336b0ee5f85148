import { describe, expect, it } from 'vitest';
import { counterLabel, defaultModel, modelCounter } from './model-counter.js';

describe('modelCounter', () => {
  it("defaults to the format's provider", () => {
    expect(defaultModel('anthropic')).toBe('claude-sonnet-4-5');
    expect(defaultModel('openai')).toBe('gpt-4o');
    expect(defaultModel(undefined)).toBe('gpt-4o');
    expect(modelCounter(undefined, 'anthropic').info.id).toBe('claude-sonnet-4-5');
  });

  it('says whether counts are exact or estimated, and from what', () => {
    const gpt = modelCounter('gpt-4o-2024-08-06', 'openai');
    expect(gpt.info.id).toBe('gpt-4o');
    expect(gpt.label).toBe('exact (o200k_base)');
    expect(gpt.counter.exact).toBe(true);
    const claude = modelCounter('claude-sonnet-4-5', 'anthropic');
    expect(claude.label).toMatch(/^estimate \(cl100k_base × [\d.]+\)$/);
    expect(claude.counter.exact).toBe(false);
    expect(counterLabel(claude.info)).toBe(claude.label);
  });

  it('falls back to the default, with a warning, for an unknown model', () => {
    const unknown = modelCounter('my-local-llm', 'anthropic');
    expect(unknown.info.id).toBe('claude-sonnet-4-5');
    expect(unknown.warning).toBe(
      'model "my-local-llm" is not in the catalog; counting with claude-sonnet-4-5\'s tokenizer',
    );
    expect(modelCounter('gpt-4o', 'openai').warning).toBeUndefined();
  });
});
