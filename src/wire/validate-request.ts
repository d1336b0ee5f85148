/**
 * Whether a provider's API would accept a list of messages as a request. Every view contextkit
 * returns is checked with this; it is exported so callers can check their own lists (and the CLI's
 * `validate` command is a thin wrapper over it).
 *
 * The rules are the providers' documented ones and the errors their APIs are known to return:
 * each format's `requestProblems` lists them (src/formats/<format>/request-rules.ts or request.ts).
 * All: at least one message, and every message well-formed for that provider (`validateMessage`).
 */

import { InvalidMessageError } from '../errors.js';
import { wireFormat } from '../formats/registry.js';
import { at, type RequestProblem } from '../messages/request-kit.js';
import type { Message, MessageFormat } from '../messages/types.js';
import { messageProblems } from './validate-message.js';

export type { RequestProblem } from '../messages/request-kit.js';

/** The outcome of `validateRequest`: valid exactly when there are no problems. */
export interface RequestValidation {
  valid: boolean;
  problems: RequestProblem[];
}

/**
 * Checks `messages` against what `provider`'s API accepts and lists every problem with the
 * message index and the path of the offending field. Never throws; see `assertValidRequest`.
 */
export function validateRequest(messages: readonly unknown[], provider: MessageFormat): RequestValidation {
  const problems: RequestProblem[] = [];
  if (!Array.isArray(messages)) {
    problems.push({ index: -1, path: 'messages', message: 'expected an array of messages' });
    return { valid: false, problems };
  }
  if (messages.length === 0) {
    problems.push({ index: -1, path: 'messages', message: 'expected at least one message' });
  }
  for (let i = 0; i < messages.length; i++) {
    for (const issue of messageProblems(messages[i], at(i), provider)) problems.push({ index: i, ...issue });
  }
  wireFormat(provider).requestProblems(messages, problems);
  problems.sort((a, b) => a.index - b.index);
  return { valid: problems.length === 0, problems };
}

/**
 * Throws `InvalidMessageError` (code `invalid_request`) listing every problem when `messages`
 * would be refused by `provider`; returns them typed otherwise.
 */
export function assertValidRequest(messages: readonly unknown[], provider: MessageFormat): Message[] {
  const { problems } = validateRequest(messages, provider);
  if (problems.length > 0) {
    throw new InvalidMessageError(
      problems.map(({ path, message }) => ({ path, message })),
      'invalid_request',
    );
  }
  return messages as Message[];
}
