/**
 * The context tools contextkit uses when no model is configured: no network, no randomness, no
 * clock, so the same entries always give the same summary and facts (a view stays reproducible and
 * its prefix stays byte-stable for the provider's prompt cache).
 */
import type { HistoryEntry } from '../messages/types.js';
import { extractFactsOffline } from './offline-facts.js';
import { summarizeOfflineInSlices } from './offline-summarizer.js';
import type { ContextTools, ExtractedFact, ExtractFactsOptions, SummarizeOptions } from './types.js';

/** The offline `ContextTools` (kind `'offline'`): the extractive summarizer and pattern fact extractor. */
export function createOfflineTools(): ContextTools {
  return {
    kind: 'offline',
    async summarize(entries: readonly HistoryEntry[], options: SummarizeOptions): Promise<string> {
      // In slices that yield: a dialogue memory of a long chat is seconds of scoring and counting.
      return summarizeOfflineInSlices(entries, options);
    },
    async extractFacts(
      entries: readonly HistoryEntry[],
      options?: ExtractFactsOptions,
    ): Promise<ExtractedFact[]> {
      return extractFactsOffline(entries, options);
    },
  };
}
