/**
 * Shape validation of one message against the provider formats, before anything is stored. Every
 * problem is collected (not just the first) with the exact path and what was expected there, so a
 * caller fixing a converter sees all of it at once. What a format accepts is its
 * `WireFormat.messageIssues`; a message that fits every format is checked by the plain rules.
 */

import { InvalidMessageError, type MessageIssue } from '../errors.js';
import { PLAIN_FORMAT, wireFormat } from '../formats/registry.js';
import { jsonValueIssues } from '../messages/json-limits.js';
import type { Message, MessageFormat } from '../messages/types.js';
import { type Issues, isRecord } from '../messages/validate-kit.js';
import { formatEvidence } from './detect.js';

function messageIssues(
  message: unknown,
  path: string,
  format: MessageFormat | undefined,
  depthChecked = false,
): Issues {
  if (!isRecord(message)) return [{ path, message: 'expected a message object with "role" and "content"' }];
  // Every walk below (and every later one) is bounded by this depth.
  if (!depthChecked) {
    const deep = jsonValueIssues(message, path, { depthOnly: true });
    if (deep.length > 0) return deep;
  }
  const scope = format ?? (formatEvidence(message)?.format as MessageFormat | undefined);
  if (scope !== undefined) return wireFormat(scope).messageIssues(message, path);
  const plain = wireFormat(PLAIN_FORMAT);
  return plain.plainIssues ? plain.plainIssues(message, path) : plain.messageIssues(message, path);
}

/**
 * Checks that `message` is a well-formed message (of `format` when given, else of the format its
 * own fields show) and returns it typed. Throws `InvalidMessageError` listing every problem by
 * path (`messages[12].tool_calls[0].function.arguments: expected a string`). The input is only
 * read, never changed.
 *
 * Shape only: unknown extra fields are allowed (providers and SDKs add their own), unknown content
 * types are not. An assistant message with empty text (`""`, `[]`) is well-formed and accepted,
 * because real replies (a cancelled stream, a bare stop) produce them and the history should keep
 * what happened; `validateRequest` flags them, and views leave them out. An OpenAI assistant
 * message with neither content nor `tool_calls` is malformed and rejected here.
 */
export function validateMessage(message: unknown, path: string, format?: MessageFormat): Message {
  const issues = messageIssues(message, path, format);
  if (issues.length > 0) throw new InvalidMessageError(issues);
  return message as Message;
}

/**
 * `validateMessage` of a message `jsonValueIssues` already found nothing wrong with (which bounds
 * its depth as the depth walk here would): the same answer without walking it twice.
 */
export function validateJsonCheckedMessage(message: unknown, path: string, format?: MessageFormat): Message {
  const issues = messageIssues(message, path, format, true);
  if (issues.length > 0) throw new InvalidMessageError(issues);
  return message as Message;
}

/** Like `validateMessage` but returns the problems instead of throwing (empty when valid). */
export function messageProblems(message: unknown, path: string, format?: MessageFormat): MessageIssue[] {
  return messageIssues(message, path, format);
}
