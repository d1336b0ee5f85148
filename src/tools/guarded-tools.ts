/**
 * Every `ContextTools` the planner uses goes through the same guards the built-in LLM tools
 * apply to a model's replies, so a user's own tools cannot break a request or the view: a call
 * that throws, an empty summary or one longer than the `maxTokens` it was given is answered by
 * the fallback tools instead (with a warning), and facts are merged with the facts kept so far,
 * never substituted for them (an `extractFacts` that returns only new facts keeps the old ones).
 */
import type { HistoryEntry } from '../messages/types.js';
import { mergeFacts } from './merge-facts.js';
import { estimateTokens } from './offline-summarizer.js';
import type { ContextTools, ExtractedFact, ExtractFactsOptions, SummarizeOptions } from './types.js';

/** `tools` behind the guards; `fallback` answers where they fail, `warn` is told why. */
export function guardedTools(
  tools: ContextTools,
  fallback: ContextTools,
  warn: (code: string, message: string) => void,
): ContextTools {
  const fellBack = (what: string, reason: string) =>
    warn(
      'tools_fallback',
      `the ${tools.kind} tools' ${what} ${reason}; used the ${fallback.kind} tools instead`,
    );
  return {
    kind: tools.kind,

    async summarize(entries: readonly HistoryEntry[], options: SummarizeOptions): Promise<string> {
      let text: unknown;
      try {
        text = await tools.summarize(entries, options);
      } catch (error) {
        fellBack('summarize', `failed (${error instanceof Error ? error.message : String(error)})`);
        return fallback.summarize(entries, options);
      }
      if (typeof text !== 'string' || (text.trim() === '' && entries.length > 0)) {
        fellBack('summarize', typeof text !== 'string' ? 'returned no text' : 'returned an empty summary');
        return fallback.summarize(entries, options);
      }
      const tokens = (options.countText ?? estimateTokens)(text);
      if (tokens > options.maxTokens) {
        fellBack('summarize', `returned ${tokens} tokens, over the ${options.maxTokens} allowed`);
        return fallback.summarize(entries, options);
      }
      return text;
    },

    async extractFacts(
      entries: readonly HistoryEntry[],
      options: ExtractFactsOptions = {},
    ): Promise<ExtractedFact[]> {
      let facts: unknown;
      try {
        facts = await tools.extractFacts(entries, options);
      } catch (error) {
        fellBack('extractFacts', `failed (${error instanceof Error ? error.message : String(error)})`);
        facts = await fallback.extractFacts(entries, options);
      }
      if (!Array.isArray(facts)) {
        fellBack('extractFacts', 'returned no list');
        facts = await fallback.extractFacts(entries, options);
      }
      return mergeFacts(options.previousFacts ?? [], facts as ExtractedFact[]);
    },
  };
}
