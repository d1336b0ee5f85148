/**
 * What a provider says a request cost, read from its response, so the measurer can learn the
 * real price of what it estimated. Field names as the providers document them:
 *
 * - OpenAI Chat Completions: `usage.prompt_tokens` (all input, cached included) and
 *   `usage.prompt_tokens_details.cached_tokens`; the Responses API: `usage.input_tokens` and
 *   `usage.input_tokens_details.cached_tokens`. OpenAI bills no separate cache write.
 * - Anthropic Messages: `usage.input_tokens` (input after the last cache breakpoint only),
 *   `usage.cache_read_input_tokens` and `usage.cache_creation_input_tokens`; the whole input is
 *   their sum. The cache fields may be absent or `null`.
 * - Gemini: `usageMetadata.promptTokenCount` (all input, cached included) and
 *   `usageMetadata.cachedContentTokenCount`; the model is in `modelVersion`.
 *
 * Every reader takes the whole response or just its usage object, and returns the same shape,
 * three disjoint parts and their sum: `inputTokens` (neither read from nor written to a cache,
 * Anthropic's own meaning of `input_tokens`), `cacheReadTokens`, `cacheWriteTokens`, and
 * `totalInputTokens`, what the view cost and what calibration compares against.
 */

import { ContextkitError } from '../errors.js';

/** One request's input cost as the provider reported it. */
export interface UsageSample {
  /** The model the provider says answered, when the response names it. */
  model?: string;
  /** Input tokens neither read from nor written to the prompt cache. */
  inputTokens: number;
  /** Input tokens read from the provider's prompt cache. */
  cacheReadTokens: number;
  /** Input tokens written to the prompt cache (Anthropic bills these apart; 0 elsewhere). */
  cacheWriteTokens: number;
  /** Every input token of the request: `inputTokens + cacheReadTokens + cacheWriteTokens`. */
  totalInputTokens: number;
  /**
   * Anthropic `usage.iterations`, present when the server compacted during the request: one entry
   * per sampling step, the `compaction` step first. The top-level counts leave the compaction step
   * out; the request's billing is the sum of these.
   */
  iterations?: UsageIteration[];
}

/**
 * One sampling step of an Anthropic request (`usage.iterations[i]`): "the top-level input_tokens
 * and output_tokens in the usage field do not include compaction iteration usage [...] sum across
 * all entries in the usage.iterations array" (platform.claude.com/docs/en/build-with-claude/compaction,
 * "Understanding usage").
 */
export interface UsageIteration {
  /** `compaction` for the summarization step, `message` for the reply. */
  type: string;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** A response whose usage cannot be read; `field` is the path of the culprit. */
export class InvalidUsageError extends ContextkitError {
  readonly field: string;
  constructor(field: string, message: string) {
    super('invalid_usage', `${field}: ${message}`);
    this.field = field;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === 'number') return String(value);
  return typeof value;
}

/**
 * The most tokens a usage figure may report: a hundred times the largest context window a
 * model offers (1M–2M tokens), and far past any model's output. No request reads or writes more,
 * so a larger figure (1e300, `Number.MAX_SAFE_INTEGER`) is a bug or a forgery upstream.
 */
export const MAX_USAGE_TOKENS = 100_000_000;

/**
 * A usage figure, checked where it enters: refused, not clamped, when it is not a whole number
 * of tokens or past {@link MAX_USAGE_TOKENS} (and a total past it), since learning from it would
 * turn every later estimate, stored count and cost into garbage. The error names the field.
 */
export function usageCount(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new InvalidUsageError(field, `expected a non-negative integer, got ${describe(value)}`);
  }
  if (value > MAX_USAGE_TOKENS) {
    throw new InvalidUsageError(
      field,
      `${describe(value)} tokens is not a plausible figure (at most ${MAX_USAGE_TOKENS}: no request reads or writes that many); refused`,
    );
  }
  return value;
}

const count = usageCount;

/** An optional count: absent or `null` is 0. */
function optionalCount(value: unknown, field: string): number {
  return value === undefined || value === null ? 0 : count(value, field);
}

function optionalRecord(value: unknown, field: string): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw new InvalidUsageError(field, `expected an object, got ${describe(value)}`);
  return value;
}

/** The usage object and the model name, from a response or from the usage object itself. */
function usageOf(
  response: unknown,
  usageKey: string,
  modelKey: string,
): { usage: Record<string, unknown>; path: string; model?: string } {
  if (!isRecord(response))
    throw new InvalidUsageError('response', `expected an object, got ${describe(response)}`);
  const model = typeof response[modelKey] === 'string' ? (response[modelKey] as string) : undefined;
  if (!(usageKey in response)) return { usage: response, path: usageKey, ...(model ? { model } : {}) };
  const usage = response[usageKey];
  if (!isRecord(usage)) throw new InvalidUsageError(usageKey, `expected an object, got ${describe(usage)}`);
  return { usage, path: usageKey, ...(model ? { model } : {}) };
}

function sample(
  model: string | undefined,
  inputTokens: number,
  cacheReadTokens: number,
  cacheWriteTokens: number,
): UsageSample {
  const totalInputTokens = count(inputTokens + cacheReadTokens + cacheWriteTokens, 'total input tokens');
  const out: UsageSample = { inputTokens, cacheReadTokens, cacheWriteTokens, totalInputTokens };
  if (model !== undefined) out.model = model;
  return out;
}

const UNREPORTED = new WeakSet<UsageSample>();

/** Marks a sample whose usage had no cache figures (see {@link cacheUnreported}). */
function unreported(out: UsageSample, none: boolean): UsageSample {
  if (none) UNREPORTED.add(out);
  return out;
}

/**
 * Whether a sample's usage carried no cache figures at all (a gateway that strips them, counts
 * given by hand without them): its cache counts are then 0 by default, not the provider's word.
 */
export function cacheUnreported(sample: UsageSample): boolean {
  return UNREPORTED.has(sample);
}

/**
 * Reads an OpenAI Chat Completions or Responses API response (or its `usage`). Cached tokens
 * are part of `prompt_tokens`/`input_tokens` there, so they are taken out of `inputTokens`.
 */
export function usageFromOpenAI(response: unknown): UsageSample {
  const { usage, path, model } = usageOf(response, 'usage', 'model');
  const chat = 'prompt_tokens' in usage;
  const totalField = chat ? 'prompt_tokens' : 'input_tokens';
  const detailsField = chat ? 'prompt_tokens_details' : 'input_tokens_details';
  if (!chat && !('input_tokens' in usage)) {
    throw new InvalidUsageError(
      `${path}.prompt_tokens`,
      'missing (neither prompt_tokens nor input_tokens is there)',
    );
  }
  const total = count(usage[totalField], `${path}.${totalField}`);
  const details = optionalRecord(usage[detailsField], `${path}.${detailsField}`);
  const cachedField = `${path}.${detailsField}.cached_tokens`;
  const cached = details ? optionalCount(details.cached_tokens, cachedField) : 0;
  // The output figures are not learned from here, but they enter with the rest (a compaction
  // item's cost is read from them): checked alike.
  const outputField = chat ? 'completion_tokens' : 'output_tokens';
  optionalCount(usage[outputField], `${path}.${outputField}`);
  optionalCount(usage.total_tokens, `${path}.total_tokens`);
  const outputDetailsField = chat ? 'completion_tokens_details' : 'output_tokens_details';
  const outputDetails = optionalRecord(usage[outputDetailsField], `${path}.${outputDetailsField}`);
  if (outputDetails) {
    optionalCount(outputDetails.reasoning_tokens, `${path}.${outputDetailsField}.reasoning_tokens`);
  }
  if (cached > total) {
    throw new InvalidUsageError(cachedField, `${cached} cached tokens exceed the ${total} input tokens`);
  }
  return unreported(sample(model, total - cached, cached, 0), details?.cached_tokens == null);
}

/**
 * Reads an Anthropic Messages response (or its `usage`). `input_tokens` there excludes what was
 * read from or written to the cache, so the whole input is the sum of the three.
 */
export function usageFromAnthropic(response: unknown): UsageSample {
  const { usage, path, model } = usageOf(response, 'usage', 'model');
  const input = count(usage.input_tokens, `${path}.input_tokens`);
  const read = optionalCount(usage.cache_read_input_tokens, `${path}.cache_read_input_tokens`);
  const write = optionalCount(usage.cache_creation_input_tokens, `${path}.cache_creation_input_tokens`);
  optionalCount(usage.output_tokens, `${path}.output_tokens`);
  const out = unreported(
    sample(model, input, read, write),
    usage.cache_read_input_tokens == null && usage.cache_creation_input_tokens == null,
  );
  const iterations = usage.iterations;
  if (iterations === undefined || iterations === null) return out;
  if (!Array.isArray(iterations))
    throw new InvalidUsageError(`${path}.iterations`, `expected an array, got ${describe(iterations)}`);
  out.iterations = iterations.map((it: unknown, i) => {
    const at = `${path}.iterations[${i}]`;
    if (!isRecord(it)) throw new InvalidUsageError(at, `expected an object, got ${describe(it)}`);
    return {
      type: typeof it.type === 'string' ? it.type : 'message',
      inputTokens: count(it.input_tokens, `${at}.input_tokens`),
      outputTokens: optionalCount(it.output_tokens, `${at}.output_tokens`),
      cacheReadTokens: optionalCount(it.cache_read_input_tokens, `${at}.cache_read_input_tokens`),
      cacheWriteTokens: optionalCount(it.cache_creation_input_tokens, `${at}.cache_creation_input_tokens`),
    };
  });
  return out;
}

/**
 * The input the request carried, as the provider's first sampling step read it: where the server
 * compacted (`iterations`), the top-level counts are those of the steps after the compaction, so
 * the first step's input is what was sent. What calibration compares contextkit's count with.
 */
export function carriedInputTokens(sample: UsageSample): number {
  const first = sample.iterations?.[0];
  if (!first || !sample.iterations!.some((it) => it.type === 'compaction')) return sample.totalInputTokens;
  return first.inputTokens + first.cacheReadTokens + first.cacheWriteTokens;
}

/** Reads a Gemini `generateContent` response (or its `usageMetadata`). */
export function usageFromGemini(response: unknown): UsageSample {
  const { usage, path, model } = usageOf(response, 'usageMetadata', 'modelVersion');
  const total = count(usage.promptTokenCount, `${path}.promptTokenCount`);
  const cached = optionalCount(usage.cachedContentTokenCount, `${path}.cachedContentTokenCount`);
  for (const field of [
    'candidatesTokenCount',
    'thoughtsTokenCount',
    'totalTokenCount',
    'toolUsePromptTokenCount',
  ]) {
    optionalCount(usage[field], `${path}.${field}`);
  }
  if (cached > total) {
    throw new InvalidUsageError(
      `${path}.cachedContentTokenCount`,
      `${cached} cached tokens exceed the ${total} prompt tokens`,
    );
  }
  return sample(model, total - cached, cached, 0);
}

/**
 * Reads any of the three providers' responses (or bare usage objects), telling them apart by
 * their fields: `usageMetadata`/`promptTokenCount` is Gemini, `prompt_tokens` or
 * `input_tokens_details` is OpenAI, `cache_*_input_tokens` is Anthropic. A bare `input_tokens`
 * with none of these is read as Anthropic's, which gives the same total as OpenAI's reading.
 */
export function usageFromResponse(response: unknown): UsageSample {
  if (!isRecord(response))
    throw new InvalidUsageError('response', `expected an object, got ${describe(response)}`);
  if ('usageMetadata' in response || 'promptTokenCount' in response) return usageFromGemini(response);
  const usage = isRecord(response.usage) ? response.usage : response;
  if ('prompt_tokens' in usage || 'input_tokens_details' in usage) return usageFromOpenAI(response);
  if ('input_tokens' in usage) return usageFromAnthropic(response);
  throw new InvalidUsageError(
    'usage',
    'no known usage fields (prompt_tokens, input_tokens or usageMetadata.promptTokenCount)',
  );
}

/** The counts a caller reports by hand, contextkit's own names; the cache parts default to 0. */
export interface UsageCounts {
  model?: string;
  inputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /**
   * The sampling steps of a request the provider compacted during (Anthropic `usage.iterations`,
   * in these names): calibration then compares with the compaction step's input, what was sent,
   * and the cost meter bills every step.
   */
  iterations?: ReadonlyArray<{
    type: string;
    inputTokens: number;
    outputTokens?: number;
    cacheReadTokens?: number;
    cacheWriteTokens?: number;
  }>;
}

/**
 * Checks counts reported by hand (`recordUsage({ model, inputTokens, … })`) and completes them
 * with their total, so hand-made and parsed samples are used the same way.
 */
export function usageFromCounts(counts: UsageCounts): UsageSample {
  if (!isRecord(counts)) throw new InvalidUsageError('usage', `expected an object, got ${describe(counts)}`);
  const model = counts.model;
  if (model !== undefined && typeof model !== 'string') {
    throw new InvalidUsageError('usage.model', `expected a string, got ${describe(model)}`);
  }
  const out = unreported(
    sample(
      model,
      count(counts.inputTokens, 'usage.inputTokens'),
      optionalCount(counts.cacheReadTokens, 'usage.cacheReadTokens'),
      optionalCount(counts.cacheWriteTokens, 'usage.cacheWriteTokens'),
    ),
    counts.cacheReadTokens === undefined && counts.cacheWriteTokens === undefined,
  );
  const iterations = counts.iterations;
  if (iterations === undefined) return out;
  if (!Array.isArray(iterations))
    throw new InvalidUsageError('usage.iterations', `expected an array, got ${describe(iterations)}`);
  out.iterations = iterations.map((it: unknown, i) => {
    const at = `usage.iterations[${i}]`;
    if (!isRecord(it) || typeof it.type !== 'string')
      throw new InvalidUsageError(at, `expected { type, inputTokens, … }, got ${describe(it)}`);
    return {
      type: it.type,
      inputTokens: count(it.inputTokens, `${at}.inputTokens`),
      outputTokens: optionalCount(it.outputTokens, `${at}.outputTokens`),
      cacheReadTokens: optionalCount(it.cacheReadTokens, `${at}.cacheReadTokens`),
      cacheWriteTokens: optionalCount(it.cacheWriteTokens, `${at}.cacheWriteTokens`),
    };
  });
  return out;
}
