/**
 * The contract between compaction and whatever writes summaries and pulls out facts: the offline
 * tools (no network, deterministic) or an LLM behind an HTTP API. Compaction only sees this
 * interface, so a model can be plugged in or taken away without touching the planner.
 */
import type { HistoryEntry } from '../messages/types.js';

/** What kind of value a fact holds; the seed's categories. */
export type FactCategory =
  | 'name'
  | 'date'
  | 'time'
  | 'path'
  | 'url'
  | 'email'
  | 'phone'
  | 'address'
  | 'amount'
  | 'number'
  | 'identifier'
  | 'other';

/** One value worth keeping after the messages that stated it leave the view. */
export interface ExtractedFact {
  /** Short lowercase snake label (`reservation_id`, `email`, `path_2`). */
  key: string;
  /** Verbatim from the source message. */
  value: string;
  category: FactCategory;
  /** Sequence number of the entry where the value first occurs. */
  seq: number;
  /** Some surrounding text, to tell two facts with the same key apart. */
  span?: string;
  /**
   * How much the fact answers what its message was read for (a tool result's call arguments and
   * the current request): absent or 0 for none; higher ranks first when the facts block is capped.
   * The definition of a name the call or request names scores above 100, a line or value holding
   * such names 2 and up.
   */
  relevance?: number;
}

/** Options of `ContextTools.summarize`. */
export interface SummarizeOptions {
  /** Upper bound on the summary's size, counted with `countText`. */
  maxTokens: number;
  /** Words the summary should favour (a task, a file name). */
  focus?: string;
  /** The summary of the entries before these; the new summary includes it (recursive summaries). */
  previousSummary?: string;
  /** How tokens are counted; a cheap chars/4 estimate when absent. */
  countText?: (text: string) => number;
}

/** Options of `ContextTools.extractFacts`. */
export interface ExtractFactsOptions {
  /** Only new facts of these categories; previous facts are kept whatever their category. */
  categories?: readonly FactCategory[];
  /** Facts kept so far; every one of them is in the result. */
  previousFacts?: readonly ExtractedFact[];
  /**
   * The current request (the latest user message's text): with the arguments of each result's
   * call, it says what a tool result was read for, and the facts answering it rank first.
   */
  request?: string;
}

/** Summarizes entries and extracts their facts, for compaction. */
export interface ContextTools {
  /** 'offline' | 'openai' | 'anthropic', or a custom implementation's name. */
  readonly kind: string;
  summarize(entries: readonly HistoryEntry[], options: SummarizeOptions): Promise<string>;
  extractFacts(entries: readonly HistoryEntry[], options?: ExtractFactsOptions): Promise<ExtractedFact[]>;
}

/** Every category, in the order the seed lists them; for validation of facts from outside. */
export const FACT_CATEGORIES: readonly FactCategory[] = [
  'name',
  'date',
  'time',
  'path',
  'url',
  'email',
  'phone',
  'address',
  'amount',
  'number',
  'identifier',
  'other',
];
