/**
 * What the models in the catalog bill for input, and how their providers cache prompts, so a
 * session's cost can be computed from the views it sent (see `src/meter/cost-meter.ts`).
 *
 * Read 2026-11-24 from:
 * - Anthropic: "Pricing" (platform.claude.com/docs/en/about-claude/pricing): base input, 5-minute
 *   and 1-hour cache writes (1.25× and 2× input), cache hits (0.1× input), output; "Prompt
 *   caching" (platform.claude.com/docs/en/build-with-claude/prompt-caching): minimum cacheable
 *   prompt per model (4,096 tokens for Opus 4.6/4.5 and Haiku 4.5, 1,024 for Sonnet 4.6/4.5/4,
 *   Opus 4.1/4 and Sonnet 3.7, 2,048 for Haiku 3.5/3), a 5-minute TTL refreshed at each hit (1
 *   hour on request), cache breakpoints (or one automatic breakpoint on the last block), and hits
 *   looked for at the breakpoint and up to 20 blocks before it.
 * - OpenAI: "Pricing" (developers.openai.com/api/docs/pricing): input, cached input, output;
 *   "Prompt caching" (developers.openai.com/api/docs/guides/prompt-caching): automatic for
 *   prompts of 1,024 tokens or more, hits in increments of 128 tokens, caches cleared after 5–10
 *   minutes of inactivity and always within an hour; no charge for writing.
 * Gemini has no prices here: its implicit caching is documented without a guaranteed saving.
 * Prices are USD per million tokens, at the standard tier (no batch, no long-context surcharge).
 */
import { ConfigurationError } from '../errors.js';

/** How a provider caches prompt prefixes. */
export interface CachingRules {
  /** `automatic`: every prefix is cached (OpenAI); `breakpoints`: cached where marked (Anthropic). */
  mode: 'automatic' | 'breakpoints';
  /** A prefix shorter than this is never cached. */
  minPrefixTokens: number;
  /** Seconds a cache entry lives after its last use (the shortest the provider documents). */
  ttlSeconds: number;
  /** Cached prefixes are counted in these steps past the minimum (OpenAI: 128). */
  increment?: number;
  /** Blocks before the breakpoint searched for a hit (Anthropic: 20). */
  lookbackBlocks?: number;
}

/** A model's prices in USD per million tokens, with its provider's caching rules. */
export interface ModelPricing {
  input: number;
  output: number;
  /** Input read from the prompt cache. */
  cacheRead: number;
  /** Input written to the cache with the default TTL (OpenAI: the input price, no surcharge). */
  cacheWrite: number;
  /** Input written to a 1-hour cache, where the provider offers one. */
  cacheWrite1h?: number;
  caching: CachingRules;
  /** Where the figures were read, and when (YYYY-MM-DD). */
  source: string;
}

const ANTHROPIC_SOURCE = 'platform.claude.com pricing + prompt-caching, read 2026-11-24';
const OPENAI_SOURCE = 'developers.openai.com pricing + prompt-caching guide, read 2026-11-24';

function anthropic(input: number, output: number, minPrefixTokens: number): ModelPricing {
  return Object.freeze({
    input,
    output,
    cacheRead: round(input * 0.1),
    cacheWrite: round(input * 1.25),
    cacheWrite1h: round(input * 2),
    caching: Object.freeze({ mode: 'breakpoints', minPrefixTokens, ttlSeconds: 300, lookbackBlocks: 20 }),
    source: ANTHROPIC_SOURCE,
  } as const);
}

function openai(input: number, cached: number, output: number): ModelPricing {
  return Object.freeze({
    input,
    output,
    cacheRead: cached,
    cacheWrite: input,
    caching: Object.freeze({ mode: 'automatic', minPrefixTokens: 1024, ttlSeconds: 300, increment: 128 }),
    source: OPENAI_SOURCE,
  } as const);
}

/** Rounds away binary noise (0.1 × 3 = 0.30000000000000004). */
function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/** Built-in prices by catalog id. Models without an entry have no price (the meter counts tokens only). */
export const BUILTIN_PRICING: Readonly<Record<string, ModelPricing>> = Object.freeze({
  // Read 2026-11-26 on platform.claude.com/docs/en/about-claude/pricing (Opus 4.8 and 4.7: $5 in,
  // $6.25 5m write, $10 1h write, $0.50 hit, $25 out); the Mythos Preview's $25/$125 from its
  // Project Glasswing announcement. Their cache minimum is taken from Opus 4.6 (not listed yet).
  // Read 2026-11-28 on platform.claude.com/docs/en/models/sonnet-5/overview: $2 in, $2.50 5m write,
  // $4 1h write, $0.20 hit, $10 out (Anthropic's usual 1.25× / 2× / 0.1×). Its cache minimum is not
  // listed there: taken from Sonnet 4.6, of which the guide calls it a drop-in upgrade.
  'claude-sonnet-5': anthropic(2, 10, 1024),
  'claude-opus-4-8': anthropic(5, 25, 4096),
  'claude-opus-4-7': anthropic(5, 25, 4096),
  'claude-mythos-preview': anthropic(25, 125, 4096),
  'claude-opus-4-6': anthropic(5, 25, 4096),
  'claude-opus-4-5': anthropic(5, 25, 4096),
  'claude-sonnet-4-6': anthropic(3, 15, 1024),
  'claude-sonnet-4-5': anthropic(3, 15, 1024),
  'claude-haiku-4-5': anthropic(1, 5, 4096),
  'claude-opus-4-1': anthropic(15, 75, 1024),
  'claude-opus-4': anthropic(15, 75, 1024),
  'claude-sonnet-4': anthropic(3, 15, 1024),
  'claude-3-7-sonnet': anthropic(3, 15, 1024),
  'claude-3-5-sonnet': anthropic(3, 15, 1024),
  'claude-3-5-haiku': anthropic(0.8, 4, 2048),
  'claude-3-opus': anthropic(15, 75, 1024),
  'claude-3-haiku': anthropic(0.25, 1.25, 2048),
  'gpt-5.5': openai(5, 0.5, 30),
  'gpt-5.4': openai(2.5, 0.25, 15),
  'gpt-5.2': openai(1.75, 0.175, 14),
  'gpt-5.1': openai(1.25, 0.125, 10),
  'gpt-5': openai(1.25, 0.125, 10),
  'gpt-5-mini': openai(0.25, 0.025, 2),
  'gpt-5-nano': openai(0.05, 0.005, 0.4),
  'gpt-4.1': openai(2, 0.5, 8),
  'gpt-4.1-mini': openai(0.4, 0.1, 1.6),
  'gpt-4.1-nano': openai(0.1, 0.025, 0.4),
  'gpt-4o': openai(2.5, 1.25, 10),
  'gpt-4o-mini': openai(0.15, 0.075, 0.6),
  o1: openai(15, 7.5, 60),
  o3: openai(2, 0.5, 8),
  'o3-mini': openai(1.1, 0.55, 4.4),
  'o4-mini': openai(1.1, 0.275, 4.4),
});

/**
 * Claude on Amazon Bedrock. The global cross-Region inference profiles (`global.anthropic.…`) bill
 * Anthropic's own rates, cache writes at 1.25× and hits at 0.1× the input price as on Anthropic's
 * API; for Claude Sonnet 4.5, Haiku 4.5, Opus 4.5 and the models after them, the geographic
 * (`us.`, `eu.`, `apac.`, `jp.`, `au.`, `ca.`, `us-gov.`) and in-Region (`anthropic.…`) ids bill
 * 10% more, input, output and cache alike. Read 2026-11-26: the figures of the Amazon Bedrock
 * pricing page (aws.amazon.com/bedrock/pricing) as quoted by clauder-navi.com/en/bedrock-claude-cost
 * and sam.mehdi.consulting/posts/saving-money-on-bedrock-is-hard (the AWS page itself could not be
 * read here); prompt caching rules from docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.
 */
const BEDROCK_REGIONAL =
  /^(?:(?:us|eu|apac|jp|au|ca|us-gov)\.)?anthropic\.claude-(?:(?:sonnet|haiku|opus)-4-[5-9]|(?:sonnet|haiku|opus)-[5-9])/;
const BEDROCK_SOURCE = 'aws.amazon.com/bedrock/pricing (as quoted, read 2026-11-26): regional +10%';

/**
 * The prices of `base` for a Bedrock model id: 10% over them for a regional or geographic
 * inference profile of Claude 4.5 and later, `base` itself otherwise (global profiles, older
 * models, any other name).
 */
export function bedrockPricing(modelId: string, base: ModelPricing): ModelPricing {
  if (!BEDROCK_REGIONAL.test(modelId.trim().toLowerCase())) return base;
  const up = (n: number) => round(n * 1.1);
  const out: ModelPricing = {
    input: up(base.input),
    output: up(base.output),
    cacheRead: up(base.cacheRead),
    cacheWrite: up(base.cacheWrite),
    caching: base.caching,
    source: BEDROCK_SOURCE,
  };
  if (base.cacheWrite1h !== undefined) out.cacheWrite1h = up(base.cacheWrite1h);
  return Object.freeze(out);
}

/** A user's prices: any subset of fields over the known ones, `caching` merged field by field. */
export type ModelPricingInput = Partial<Omit<ModelPricing, 'caching'>> & { caching?: Partial<CachingRules> };

const PRICE_FIELDS = ['input', 'output', 'cacheRead', 'cacheWrite', 'cacheWrite1h'] as const;

/**
 * The highest price accepted, in USD per million tokens: a dollar a token, far above any model's.
 * A higher one is a mistake, and would make costs overflow to Infinity (shown as `null`).
 */
const MAX_PRICE = 1_000_000;

function nonNegative(where: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new ConfigurationError(where, 'expected a non-negative number (USD per million tokens)');
  }
  return value;
}

function price(where: string, value: unknown): number {
  const checked = nonNegative(where, value);
  if (checked > MAX_PRICE) {
    throw new ConfigurationError(
      where,
      `${checked} USD per million tokens is more than ${MAX_PRICE} (a dollar a token); check the units`,
    );
  }
  return checked;
}

function positiveInteger(where: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new ConfigurationError(where, 'expected a non-negative integer');
  }
  return value;
}

/**
 * Checks a user's prices and completes them from `base` (the model's known prices). A model with
 * no known prices needs `input` and `output`; cache prices then default to the input price
 * (no discount, no surcharge) and caching to OpenAI-like automatic rules. Throws
 * `ConfigurationError` naming the field.
 */
export function checkPricing(where: string, input: unknown, base: ModelPricing | undefined): ModelPricing {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ConfigurationError(where, 'expected an object of prices (USD per million tokens)');
  }
  const given = input as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (![...PRICE_FIELDS, 'caching', 'source'].includes(key)) {
      throw new ConfigurationError(`${where}.${key}`, 'unknown field');
    }
  }
  const priceOf = (field: (typeof PRICE_FIELDS)[number], fallback: number | undefined): number | undefined =>
    given[field] !== undefined ? price(`${where}.${field}`, given[field]) : fallback;
  const inputPrice = priceOf('input', base?.input);
  const output = priceOf('output', base?.output);
  if (inputPrice === undefined)
    throw new ConfigurationError(`${where}.input`, 'required for a model with no known prices');
  if (output === undefined)
    throw new ConfigurationError(`${where}.output`, 'required for a model with no known prices');
  const cachingInput = given.caching;
  if (cachingInput !== undefined && (typeof cachingInput !== 'object' || cachingInput === null)) {
    throw new ConfigurationError(`${where}.caching`, 'expected an object');
  }
  const c = (cachingInput ?? {}) as Record<string, unknown>;
  const baseCaching: CachingRules = base?.caching ?? {
    mode: 'automatic',
    minPrefixTokens: 1024,
    ttlSeconds: 300,
  };
  const mode = c.mode ?? baseCaching.mode;
  if (mode !== 'automatic' && mode !== 'breakpoints') {
    throw new ConfigurationError(`${where}.caching.mode`, 'expected "automatic" or "breakpoints"');
  }
  const caching: CachingRules = {
    mode,
    minPrefixTokens:
      c.minPrefixTokens !== undefined
        ? positiveInteger(`${where}.caching.minPrefixTokens`, c.minPrefixTokens)
        : baseCaching.minPrefixTokens,
    ttlSeconds:
      c.ttlSeconds !== undefined
        ? nonNegative(`${where}.caching.ttlSeconds`, c.ttlSeconds)
        : baseCaching.ttlSeconds,
  };
  const increment =
    c.increment !== undefined
      ? positiveInteger(`${where}.caching.increment`, c.increment)
      : baseCaching.increment;
  if (increment) caching.increment = increment;
  const lookback =
    c.lookbackBlocks !== undefined
      ? positiveInteger(`${where}.caching.lookbackBlocks`, c.lookbackBlocks)
      : baseCaching.lookbackBlocks;
  if (lookback) caching.lookbackBlocks = lookback;
  const out: ModelPricing = {
    input: inputPrice,
    output,
    cacheRead: priceOf('cacheRead', base?.cacheRead) ?? inputPrice,
    cacheWrite: priceOf('cacheWrite', base?.cacheWrite) ?? inputPrice,
    caching: Object.freeze(caching),
    source:
      typeof given.source === 'string'
        ? given.source
        : base && input !== base
          ? `${base.source}, overridden`
          : 'user',
  };
  const oneHour = priceOf('cacheWrite1h', base?.cacheWrite1h);
  if (oneHour !== undefined) out.cacheWrite1h = oneHour;
  return Object.freeze(out);
}
