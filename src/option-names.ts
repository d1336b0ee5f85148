import { ConfigurationError } from './errors.js';
import { nearestName } from './nearest-name.js';

/**
 * Names the integrations took before they used the seed contract's names, each with what to pass
 * instead (issue 34: one name for one thing).
 */
const RENAMED: Readonly<Record<string, string>> = {
  budget:
    "maxTokens (the context's limit in input tokens, the seeds' max_tokens; not a provider's output max_tokens)",
  tokenBudget:
    'maxTokens (an integration fits every call to one limit; tokenBudget is per request on ContextManager)',
  sessionId: 'conversationId (the id of the conversation in the store)',
};

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
    if (known.includes(key)) continue;
    const renamed = RENAMED[key];
    if (renamed !== undefined)
      throw new ConfigurationError(`${where}: ${key}`, `was renamed: pass ${renamed}`);
    const best = nearestName(key, known);
    throw new ConfigurationError(
      `${where}: ${key}`,
      `is not an option${best ? `; did you mean ${best}?` : `; the options are ${known.join(', ')}`}`,
    );
  }
}
