import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../errors.js';
import { ContextManager } from '../manager.js';
import {
  BUILTIN_MODELS,
  CLAUDE_TOKENIZER,
  createModelCatalog,
  didYouMeanModel,
  familyCounter,
  GEMINI_TOKENIZER,
  getModelInfo,
} from './catalog.js';

describe('model catalog: built-in models', () => {
  it('knows the current models of all three providers', () => {
    const openai = [
      'gpt-4o',
      'gpt-4o-mini',
      'gpt-4.1',
      'gpt-4.1-mini',
      'gpt-4.1-nano',
      'o1',
      'o3',
      'o3-mini',
      'o4-mini',
    ];
    const openaiMore = ['gpt-5', 'gpt-5-mini', 'gpt-5-nano', 'gpt-4-turbo', 'gpt-4', 'gpt-3.5-turbo'];
    const anthropic = [
      'claude-opus-4-1',
      'claude-sonnet-4-5',
      'claude-haiku-4-5',
      'claude-3-7-sonnet',
      'claude-3-5-haiku',
    ];
    const google = ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.0-flash', 'gemini-1.5-pro'];
    for (const id of [...openai, ...openaiMore]) expect(getModelInfo(id)?.provider, id).toBe('openai');
    for (const id of anthropic) expect(getModelInfo(id)?.provider, id).toBe('anthropic');
    for (const id of google) expect(getModelInfo(id)?.provider, id).toBe('google');
  });

  it('uses o200k for the 4o/4.1/o-series/5 families and cl100k for gpt-4, gpt-4-turbo and gpt-3.5', () => {
    for (const id of ['gpt-4o', 'gpt-4.1-nano', 'o1', 'o3-mini', 'o4-mini', 'gpt-5', 'gpt-5-nano']) {
      expect(getModelInfo(id)?.tokenizer, id).toEqual({ kind: 'exact', encoding: 'o200k_base' });
    }
    for (const id of ['gpt-4', 'gpt-4-turbo', 'gpt-3.5-turbo']) {
      expect(getModelInfo(id)?.tokenizer, id).toEqual({ kind: 'exact', encoding: 'cl100k_base' });
    }
    expect(getModelInfo('claude-sonnet-4-5')?.tokenizer).toBe(CLAUDE_TOKENIZER);
    expect(getModelInfo('gemini-2.5-flash')?.tokenizer).toBe(GEMINI_TOKENIZER);
    expect(CLAUDE_TOKENIZER.kind).toBe('estimate');
  });

  it.each([
    ['gpt-4o', 128_000, 16_384],
    ['gpt-4.1', 1_047_576, 32_768],
    ['gpt-5', 400_000, 128_000],
    ['o3', 200_000, 100_000],
    ['gpt-4', 8_192, 8_192],
    ['claude-sonnet-4-5', 200_000, 64_000],
    ['claude-opus-4-1', 200_000, 32_000],
    ['claude-3-5-haiku', 200_000, 8_192],
    ['gemini-2.5-pro', 1_048_576, 65_536],
    ['gemini-2.0-flash', 1_048_576, 8_192],
  ])('has the documented limits of %s: %i in, %i out', (id, contextWindow, maxOutputTokens) => {
    expect(getModelInfo(id)).toMatchObject({ contextWindow, maxOutputTokens });
  });

  it('has sane, frozen, unique entries', () => {
    const ids = new Set<string>();
    for (const info of BUILTIN_MODELS) {
      expect(ids.has(info.id), info.id).toBe(false);
      ids.add(info.id);
      expect(Number.isInteger(info.contextWindow) && info.contextWindow > 0, info.id).toBe(true);
      expect(info.maxOutputTokens > 0 && info.maxOutputTokens <= info.contextWindow, info.id).toBe(true);
      expect(Object.isFrozen(info), info.id).toBe(true);
    }
  });
});

describe('model catalog: lookup', () => {
  it.each([
    ['gpt-4o-2024-08-06', 'gpt-4o'],
    ['gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
    ['gpt-4.1-nano-2025-04-14', 'gpt-4.1-nano'],
    ['o3-mini-2025-01-31', 'o3-mini'],
    ['gpt-4-turbo-2024-04-09', 'gpt-4-turbo'],
    ['gpt-4-0613', 'gpt-4'],
    ['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'],
    ['claude-sonnet-4-20250514', 'claude-sonnet-4'],
    ['claude-opus-4-1-20250805', 'claude-opus-4-1'],
    ['claude-3-7-sonnet-latest', 'claude-3-7-sonnet'],
    ['gemini-2.5-flash-preview-05-20', 'gemini-2.5-flash'],
    ['gemini-1.5-pro-002', 'gemini-1.5-pro'],
  ])('matches the dated snapshot %s to its model %s, longest id first', (given, id) => {
    expect(getModelInfo(given)?.id).toBe(id);
  });

  it('does not let a shorter id claim a different model across a version dot', () => {
    expect(getModelInfo('gpt-4.5-preview')?.id).toBe('gpt-4.5-preview');
    expect(getModelInfo('gpt-4.7')).toBeUndefined();
  });

  it.each([
    ['openai/gpt-4o', 'gpt-4o'],
    ['anthropic/claude-sonnet-4-5', 'claude-sonnet-4-5'],
    ['anthropic/claude-3.7-sonnet', 'claude-3-7-sonnet'],
    ['models/gemini-2.5-pro', 'gemini-2.5-pro'],
    ['google/gemini-2.0-flash-001', 'gemini-2.0-flash'],
    ['us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'claude-sonnet-4-5'],
    ['anthropic.claude-3-5-haiku-20241022-v1:0', 'claude-3-5-haiku'],
    ['claude-opus-4-1@20250805', 'claude-opus-4-1'],
    ['ft:gpt-4o-mini-2024-07-18:acme::abc123', 'gpt-4o-mini'],
    ['  GPT-4o  ', 'gpt-4o'],
  ])('strips gateway and cloud prefixes: %j is %s', (given, id) => {
    expect(getModelInfo(given)?.id).toBe(id);
  });

  it('returns undefined for unknown models', () => {
    expect(getModelInfo('llama-3-70b')).toBeUndefined();
    expect(getModelInfo('gpt')).toBeUndefined();
    expect(getModelInfo('')).toBeUndefined();
    expect(getModelInfo('mistral/mixtral-8x7b')).toBeUndefined();
  });
});

describe('model catalog: user entries', () => {
  it('overrides fields of a known model, and its snapshots follow', () => {
    const models = { 'claude-sonnet-4-5': { contextWindow: 1_000_000 } };
    const info = getModelInfo('claude-sonnet-4-5', models);
    expect(info).toMatchObject({
      id: 'claude-sonnet-4-5',
      provider: 'anthropic',
      contextWindow: 1_000_000,
      maxOutputTokens: 64_000,
    });
    expect(info?.tokenizer).toBe(CLAUDE_TOKENIZER);
    expect(getModelInfo('claude-sonnet-4-5-20250929', models)?.contextWindow).toBe(1_000_000);
    // The built-in catalog is untouched.
    expect(getModelInfo('claude-sonnet-4-5')?.contextWindow).toBe(200_000);
  });

  it('adds new models, inheriting from the model a new id extends', () => {
    const catalog = createModelCatalog({
      'acme-llm': { provider: 'openai', contextWindow: 32_000, maxOutputTokens: 4_000 },
      'claude-opus-5': { contextWindow: 500_000, maxOutputTokens: 64_000 },
      'gpt-4o-2024-08-06': { maxOutputTokens: 8_000 },
      'my-gemini': {
        provider: 'google',
        contextWindow: 100_000,
        maxOutputTokens: 1_000,
        tokenizer: { kind: 'estimate', encoding: 'o200k_base', factor: 1.3 },
      },
    });
    expect(catalog.get('acme-llm')).toMatchObject({
      provider: 'openai',
      tokenizer: { kind: 'exact', encoding: 'o200k_base' },
    });
    expect(catalog.get('claude-opus-5')).toMatchObject({
      provider: 'anthropic',
      tokenizer: CLAUDE_TOKENIZER,
    });
    expect(catalog.get('gpt-4o-2024-08-06')).toMatchObject({
      contextWindow: 128_000,
      maxOutputTokens: 8_000,
    });
    expect(catalog.get('gpt-4o')?.maxOutputTokens).toBe(16_384);
    expect(catalog.get('my-gemini')?.tokenizer).toEqual({
      kind: 'estimate',
      encoding: 'o200k_base',
      factor: 1.3,
    });
    expect(catalog.list().map((m) => m.id)).toEqual(
      expect.arrayContaining(['acme-llm', 'claude-opus-5', 'gpt-4o']),
    );
    expect(Object.isFrozen(catalog.get('acme-llm'))).toBe(true);
  });

  it('rejects entries it cannot use, naming the field', () => {
    expect(() => createModelCatalog({ 'acme-llm': { contextWindow: 1000, maxOutputTokens: 100 } })).toThrow(
      /provider/,
    );
    expect(() => createModelCatalog({ 'acme-llm': { provider: 'openai', maxOutputTokens: 100 } })).toThrow(
      /models\["acme-llm"\]\.contextWindow/,
    );
    expect(() => createModelCatalog({ 'gpt-4o': { maxOutputTokens: 200_000 } })).toThrow(/maxOutputTokens/);
    expect(() =>
      createModelCatalog({
        'gpt-4o': { tokenizer: { kind: 'estimate', encoding: 'o200k_base', factor: -1 } },
      }),
    ).toThrow(ConfigurationError);
  });
});

describe('model catalog: the models with server-side compaction (read 2026-11-26)', () => {
  it('knows Opus 4.7, Opus 4.8 and the Mythos Preview, with their windows and prices', () => {
    for (const [id, input, output] of [
      ['claude-opus-4-7', 5, 25],
      ['claude-opus-4-8', 5, 25],
      ['claude-mythos-preview', 25, 125],
    ] as const) {
      const info = getModelInfo(id);
      expect(info).toMatchObject({
        provider: 'anthropic',
        contextWindow: 1_000_000,
        maxOutputTokens: 128_000,
      });
      expect(info?.pricing).toMatchObject({ input, output, cacheRead: input / 10 });
    }
    expect(getModelInfo('claude-opus-4-7-20260416')?.id).toBe('claude-opus-4-7');
  });
});

describe('names the catalog does not hold (issue 23, item 8)', () => {
  it('takes an id only with a documented snapshot or alias after it, not any extension', () => {
    expect(getModelInfo('gpt-4-o')).toBeUndefined();
    expect(getModelInfo('gpt-4-foo')).toBeUndefined();
    expect(getModelInfo('gpt-4o-audio-preview')).toBeUndefined();
    expect(getModelInfo('gpt-4-0613')?.id).toBe('gpt-4');
    expect(getModelInfo('claude-3-5-sonnet-latest')?.id).toBe('claude-3-5-sonnet');
    expect(getModelInfo('gemini-2.5-pro-exp-03-25')?.id).toBe('gemini-2.5-pro');
    expect(getModelInfo('gemini-2.0-flash-exp')?.id).toBe('gemini-2.0-flash');
    expect(getModelInfo('gpt-3.5-turbo-0125')?.id).toBe('gpt-3.5-turbo');
    expect(getModelInfo('o1-2024-12-17')?.id).toBe('o1');
  });

  it('suggests the name meant, as the options do', async () => {
    expect(didYouMeanModel('claude-sonet-4-5')).toBe('; did you mean claude-sonnet-4-5?');
    expect(didYouMeanModel('gpt-4-o')).toBe('; did you mean gpt-4o?');
    expect(didYouMeanModel('gpt-4-foo')).toBe('; did you mean gpt-4?');
    expect(didYouMeanModel('llama-3-70b')).toBe('');
    const ctx = new ContextManager({ model: 'claude-sonet-4-5' });
    const warnings: string[] = [];
    ctx.on('context:warn', (w) => warnings.push(w.message));
    await ctx.addMessage({ role: 'user', content: 'hi' });
    await ctx.getMessagesForRequest();
    expect(warnings[0]).toMatch(/"claude-sonet-4-5" is not in the catalog; did you mean claude-sonnet-4-5\?/);
  });
});

describe('models of 2026 and names of a known family (issue 34, item 6)', () => {
  it('knows Claude Sonnet 5 and Gemini 3 Pro, with their windows, prices and tokenizers', () => {
    expect(getModelInfo('claude-sonnet-5')).toMatchObject({
      provider: 'anthropic',
      contextWindow: 1_000_000,
      maxOutputTokens: 128_000,
      tokenizer: { kind: 'estimate', encoding: 'cl100k_base', factor: 1.56 },
      pricing: { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5, cacheWrite1h: 4 },
    });
    expect(getModelInfo('us.anthropic.claude-sonnet-5-v1:0')?.id).toBe('claude-sonnet-5');
    expect(getModelInfo('gemini-3-pro')).toMatchObject({
      provider: 'google',
      contextWindow: 1_048_576,
      maxOutputTokens: 65_536,
    });
    expect(getModelInfo('models/gemini-3-pro')?.id).toBe('gemini-3-pro');
  });

  it("gives a name it does not know its family's counter, by prefix", () => {
    expect(familyCounter('claude-opus-5')).toMatchObject({ family: 'Claude 5', tokenizer: { factor: 1.56 } });
    expect(familyCounter('claude-sonnet-5-5-20261001')).toMatchObject({ family: 'Claude 5' });
    expect(familyCounter('eu.anthropic.claude-fable-5-1-v1:0')).toMatchObject({ family: 'Claude 5' });
    expect(familyCounter('claude-sonnet-4-7')).toMatchObject({
      family: 'Claude',
      tokenizer: { factor: 1.2 },
    });
    expect(familyCounter('openrouter/openai/gpt-6')).toMatchObject({
      provider: 'openai',
      tokenizer: { kind: 'exact', encoding: 'o200k_base' },
    });
    expect(familyCounter('o5-mini')).toMatchObject({ provider: 'openai' });
    expect(familyCounter('gemini-4-ultra')).toMatchObject({ provider: 'google', tokenizer: { factor: 1.1 } });
    expect(familyCounter('llama-3-70b')).toBeUndefined();
    expect(familyCounter('mystery-model-9000')).toBeUndefined();
  });

  it('counts an unknown Claude 5 name with the new tokenizer and warns once, naming the family', async () => {
    const ctx = new ContextManager({ model: 'claude-opus-5', maxTokens: 50_000 });
    const sonnet5 = new ContextManager({ model: 'claude-sonnet-5', maxTokens: 50_000 });
    const warnings: string[] = [];
    ctx.on('context:warn', (w) => warnings.push(w.message));
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(200);
    for (const m of [ctx, sonnet5]) await m.addMessage({ role: 'user', content: text });
    await ctx.getMessagesForRequest();
    await ctx.getMessagesForRequest();
    await sonnet5.getMessagesForRequest();
    expect(ctx.usage().tokens).toBe(sonnet5.usage().tokens);
    expect(ctx.usage().budget).toBe(50_000);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /"claude-opus-5" is not in the catalog.*Claude 5 family's tokenizer \(estimate \(cl100k_base × 1\.56\)\)/,
    );
  });
});
