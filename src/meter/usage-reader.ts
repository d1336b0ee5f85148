/**
 * The one usage reader of `recordUsage` (issue 34 item 1): contextkit's own counts (`UsageCounts`)
 * or any provider's response or usage object, told apart by their fields. Beside `usageFromResponse`
 * (src/meter/usage.ts) it knows contextkit's counts and Bedrock's Converse `TokenUsage`, whose
 * reader lives with its format (src/formats/bedrock/request.ts).
 */

import { InvalidArgumentError } from '../errors.js';
import { usageFromBedrock } from '../formats/bedrock/request.js';
import {
  type UsageCounts,
  type UsageSample,
  usageFromAnthropic,
  usageFromCounts,
  usageFromGemini,
  usageFromOpenAI,
} from './usage.js';

/** Whose usage a value is: contextkit's own counts, or a provider's. */
export type UsageSource = 'counts' | 'openai' | 'anthropic' | 'gemini' | 'bedrock';

/** What `recordUsage` takes: contextkit's own counts, or a provider's response or usage object. */
export type UsageInput = UsageCounts | object;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Fields of Bedrock's `TokenUsage` that contextkit's `UsageCounts` (also `inputTokens`) has not. */
const BEDROCK_ONLY = ['outputTokens', 'totalTokens', 'cacheReadInputTokens', 'cacheWriteInputTokens'];

/**
 * Whose usage `value` is: `counts` for contextkit's own (`inputTokens`, and what has no provider's
 * fields, which `usageFromCounts` then refuses by name); `bedrock` for a Converse `usage` (`inputTokens` with
 * Bedrock's fields, or under `usage`); else as `usageFromResponse` tells them apart: Gemini's
 * `usageMetadata`, OpenAI's `prompt_tokens` or `input_tokens_details`, Anthropic's `input_tokens`.
 */
export function usageSource(value: unknown): UsageSource {
  if (!isRecord(value)) return 'counts';
  if ('inputTokens' in value && !('usage' in value) && !BEDROCK_ONLY.some((k) => k in value)) return 'counts';
  if ('usageMetadata' in value || 'promptTokenCount' in value) return 'gemini';
  const usage = isRecord(value.usage) ? value.usage : value;
  if ('inputTokens' in usage) return 'bedrock';
  if ('prompt_tokens' in usage || 'input_tokens_details' in usage) return 'openai';
  if ('input_tokens' in usage) return 'anthropic';
  // None of a provider's fields: contextkit's counts, which `usageFromCounts` refuses by name.
  return 'counts';
}

const READERS: Readonly<Record<UsageSource, (value: unknown) => UsageSample>> = {
  counts: (value) => usageFromCounts(value as UsageCounts),
  openai: usageFromOpenAI,
  anthropic: usageFromAnthropic,
  gemini: usageFromGemini,
  bedrock: usageFromBedrock,
};

/** Reads contextkit's counts or any provider's usage (see {@link usageSource}) into one sample. */
export function readUsage(value: unknown, source: UsageSource = usageSource(value)): UsageSample {
  return READERS[source](value);
}

/**
 * The rejection of a per-provider usage method that `recordUsage` replaced: an
 * `InvalidArgumentError` that names the one to call.
 */
export function removedUsageMethod(name: string): Promise<never> {
  return Promise.reject(
    new InvalidArgumentError(
      name,
      `${name} was removed: call recordUsage(response), which reads any provider's usage`,
    ),
  );
}
