import type { Message, MessageFormat, ToolDefinition } from '../messages/types.js';
import type { ModelPricing } from './pricing.js';

/** Which provider family a model belongs to; decides framing, image costs and count endpoints. */
export type ProviderFamily = 'openai' | 'anthropic' | 'google';

/** The BPE encodings bundled with contextkit (through gpt-tokenizer). */
export type EncodingName = 'o200k_base' | 'cl100k_base';

/**
 * How a model's tokens are counted: exactly with its own BPE encoding, or estimated from a BPE
 * count times a calibrated factor where no exact offline tokenizer exists (Claude, Gemini).
 */
export type TokenizerSpec =
  | { kind: 'exact'; encoding: EncodingName }
  | { kind: 'estimate'; encoding: EncodingName; factor: number };

/** A model's limits and tokenizer, from the catalog or given by the user. */
export interface ModelInfo {
  id: string;
  provider: ProviderFamily;
  contextWindow: number;
  maxOutputTokens: number;
  tokenizer: TokenizerSpec;
  /** Prices and caching rules, where known (see `src/tokens/pricing.ts`). */
  pricing?: ModelPricing;
}

/** Counts the tokens a provider bills for messages, tools and a whole request. */
export interface TokenCounter {
  /** Stable key for memoization: two counters with the same id give the same counts. */
  readonly id: string;
  /** False when counts are estimates (Claude, Gemini): reports label them so. */
  readonly exact: boolean;
  readonly provider: ProviderFamily;
  /** Tokens of a plain string, no framing. */
  countText(text: string): number;
  /** Tokens one message costs in a request, framing included. Synchronous and pure. */
  countMessage(message: Message, format: MessageFormat): number;
  /**
   * An upper bound of `countMessage`, in time linear in the message's size without tokenizing it
   * (text counted as its UTF-8 bytes): never under the count. Optional: without it, a cold start
   * of a long history counts all of it before the first view (see `ContextMeasurer.countAhead`).
   */
  boundMessage?(message: Message, format: MessageFormat): number;
  /** Tokens the tool definitions cost in a request (zero for none). */
  countTools(tools: readonly ToolDefinition[] | undefined): number;
  /** Fixed tokens every request costs on top of its messages (reply priming and the like). */
  readonly requestOverhead: number;
  /** Tokens of a whole request: messages, tools and overhead. */
  measure(
    messages: readonly Message[],
    options?: { tools?: readonly ToolDefinition[]; format?: MessageFormat },
  ): Promise<number>;
}
