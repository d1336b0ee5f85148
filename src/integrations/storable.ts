/**
 * The door check of the integrations that write to a store without a `ContextManager` (the
 * Agents session, the LangChain history): what they are given must survive JSON as it is, as
 * `addMessage` requires, or be refused with its path before anything is written.
 */

import { InvalidMessageError } from '../errors.js';
import { jsonValueIssues } from '../messages/json-limits.js';

/**
 * Throws `InvalidMessageError` (with paths under `path`) when `value` holds what JSON would
 * change or a walk could not take: `NaN`, `±Infinity`, `-0`, nesting deeper than
 * `MAX_JSON_DEPTH`, values that are not plain JSON.
 */
export function checkStorable(value: unknown, path: string): void {
  const issues = jsonValueIssues(value, path);
  if (issues.length > 0) throw new InvalidMessageError(issues);
}
