/**
 * Which model the commands count for, and how to say whether the counts are exact. Without
 * `--model`, an Anthropic conversation is counted for Claude and anything else for GPT-4o, so a
 * count is never silently made with the other provider's tokenizer.
 */

import { PLAIN_FORMAT, wireFormat } from '../formats/registry.js';
import type { MessageFormat } from '../messages/types.js';
import { didYouMeanModel, familyCounter, getModelInfo } from './catalog.js';
import { createTokenCounter } from './counter.js';
import type { ModelInfo, TokenCounter } from './types.js';

/** A model resolved for counting, with the words reports use for its counter. */
export interface ModelCounter {
  /** The catalog entry used (the fallback's when the model asked for is unknown). */
  info: ModelInfo;
  counter: TokenCounter;
  /** `exact (o200k_base)` or `estimate (cl100k_base × 1.2)`. */
  label: string;
  /** Set when the model asked for is not in the catalog and a default was used instead. */
  warning?: string;
}

/** The model a conversation in `format` is counted for when none is named. */
export function defaultModel(format: MessageFormat | undefined): string {
  return wireFormat(format ?? PLAIN_FORMAT).defaultModel;
}

/** How a counter's figures should be read: exact, or an estimate and from what. */
export function counterLabel(info: Pick<ModelInfo, 'tokenizer'>): string {
  const t = info.tokenizer;
  return t.kind === 'exact' ? `exact (${t.encoding})` : `estimate (${t.encoding} × ${t.factor})`;
}

/**
 * The counter for `model` (or the format's default). An unknown model falls back rather than
 * failing, with a warning that says whose counts they are: its family's tokenizer where the name
 * names a family (`claude-…`, `gpt-…`, `gemini-…`, `o3…`, through gateway and Bedrock ids), the
 * format's default model's otherwise.
 */
export function modelCounter(model: string | undefined, format: MessageFormat | undefined): ModelCounter {
  const fallback = defaultModel(format);
  const asked = model ?? fallback;
  const known = getModelInfo(asked);
  if (known) return { info: known, counter: createTokenCounter(known), label: counterLabel(known) };
  const family = familyCounter(asked);
  const info = getModelInfo(family?.representative ?? fallback) as ModelInfo;
  const whose = family ? `${info.id}'s tokenizer (the ${family.family} family)` : `${info.id}'s tokenizer`;
  return {
    info,
    counter: createTokenCounter(info),
    label: counterLabel(info),
    warning: `model ${JSON.stringify(asked)} is not in the catalog${didYouMeanModel(asked)}; counting with ${whose}`,
  };
}
