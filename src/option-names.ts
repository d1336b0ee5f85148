import { ConfigurationError } from './errors.js';
import { didYouMean } from './nearest-name.js';

/**
 * Option names taken before 1.0 (issue 34: one name for one thing), each with what to pass instead:
 * the integrations' and `replayConversation`'s `budget`, their `sessionId`, the manager's
 * `memoryShare` ("memory" names the memory tool only).
 */
const RENAMED: Readonly<Record<string, string>> = {
  budget:
    "maxTokens (the context's limit in input tokens, the seeds' max_tokens; not a provider's output max_tokens)",
  tokenBudget:
    'maxTokens (an integration fits every call to one limit; tokenBudget is per request on ContextManager)',
  sessionId: 'conversationId (the id of the conversation in the store)',
  memoryShare: 'summaryShare (the share of the summary and facts block; "memory" names the memory tool)',
};

/**
 * What an option name that is not one among `known` is told: `was renamed: pass …` when it is a
 * name taken before 1.0 whose new name is among `known`, else `is not an option` and the nearest
 * known name (or the list).
 */
export function unknownOptionText(key: string, known: readonly string[]): string {
  const renamed = RENAMED[key];
  if (renamed !== undefined && known.includes(renamed.split(' ')[0]!)) return `was renamed: pass ${renamed}`;
  return `is not an option${didYouMean(key, known)}`;
}

/**
 * Refuses an option that is not one (of an integration, of `replayConversation`), with a `ConfigurationError` that names the one
 * to use: a renamed option (`budget` → `maxTokens`), or the nearest known name of a typo. Options
 * given as `undefined` are checked too (a caller passing `budget: undefined` meant something).
 */
export function checkOptionNamesOf(where: string, options: unknown, known: readonly string[]): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ConfigurationError(
      where,
      `options must be an object, got ${options === null ? 'null' : typeof options}`,
    );
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new ConfigurationError(`${where}: ${key}`, unknownOptionText(key, known));
  }
}
