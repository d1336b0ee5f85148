/**
 * What the message validators of every format share: the field checks that collect problems by
 * path, and the role-and-content skeleton of the formats whose messages are `{ role, content }`
 * with a string or a list of typed parts (Chat Completions, Anthropic Messages, and a plain
 * message that fits every format). A format's rules (`ContentRules`) say what it accepts.
 */

import type { MessageIssue } from '../errors.js';

/** Problems found so far, by path. */
export type Issues = MessageIssue[];

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `expected one of "a", "b"`. */
export function oneOf(values: readonly string[]): string {
  return `expected one of ${values.map((v) => `"${v}"`).join(', ')}`;
}

/** A string (non-empty when asked). */
export function str(issues: Issues, value: unknown, path: string, nonEmpty = false): void {
  if (typeof value !== 'string')
    issues.push({ path, message: nonEmpty ? 'expected a non-empty string' : 'expected a string' });
  else if (nonEmpty && value.length === 0) issues.push({ path, message: 'expected a non-empty string' });
}

/** Absent, or a string. */
export function optStr(issues: Issues, value: unknown, path: string): void {
  if (value !== undefined) str(issues, value, path);
}

/** Absent, or a boolean. */
export function optBool(issues: Issues, value: unknown, path: string): void {
  if (value !== undefined && typeof value !== 'boolean') issues.push({ path, message: 'expected a boolean' });
}

/** Bare base64 data. */
export function base64(issues: Issues, value: unknown, path: string): void {
  if (typeof value === 'string' && value.length > 0 && value.length % 4 === 0 && BASE64.test(value)) return;
  const hint =
    typeof value === 'string' && value.startsWith('data:')
      ? ' (the bare data, without the "data:…;base64," prefix)'
      : '';
  issues.push({ path, message: `expected a base64 string${hint}` });
}

/** An object (narrows `value`). */
export function record(issues: Issues, value: unknown, path: string): value is Record<string, unknown> {
  if (isRecord(value)) return true;
  issues.push({ path, message: 'expected an object' });
  return false;
}

/** One of `values`. */
export function enumOf(issues: Issues, value: unknown, path: string, values: readonly string[]): void {
  if (typeof value !== 'string' || !values.includes(value)) issues.push({ path, message: oneOf(values) });
}

/** What a `{ role, content }` format accepts, for `roleContentIssues` and `blockList`. */
export interface ContentRules {
  /** The roles a message may have. */
  readonly roles: readonly string[];
  /** `blocks` (Anthropic) or `parts` (OpenAI), for messages. */
  readonly noun: 'blocks' | 'parts';
  /** The part or block types a message of `role` may hold. */
  accepted(role: string): readonly string[];
  /** Checks the fields of one part or block of an accepted type. */
  block(issues: Issues, block: Record<string, unknown>, path: string): void;
  /** Whether a type no rule knows passes (a block a future API adds), checked by `block`. */
  future?(type: unknown): boolean;
  /** Why `type` is not accepted here, when there is more to say than the accepted list. */
  unknownHint?(type: string): string | undefined;
  /** Why `role` is not accepted here, when there is more to say than the roles. */
  roleHint?(role: unknown): string;
  /** Checks the assistant fields beside content (OpenAI's `tool_calls`, `refusal`). */
  assistant?(issues: Issues, message: Record<string, unknown>, path: string, rules: ContentRules): void;
}

/**
 * Checks an array of parts/blocks: each an object of a type `accepted` with its fields, as
 * `rules` check them.
 */
export function blockList(
  issues: Issues,
  value: unknown,
  path: string,
  accepted: readonly string[],
  rules: ContentRules,
  notArray: string,
): void {
  if (!Array.isArray(value)) {
    issues.push({ path, message: notArray });
    return;
  }
  for (let i = 0; i < value.length; i++) {
    const block: unknown = value[i];
    const at = `${path}[${i}]`;
    if (!isRecord(block)) {
      issues.push({ path: at, message: 'expected an object' });
      continue;
    }
    const future = rules.future?.(block.type) ?? false;
    if (!future && (typeof block.type !== 'string' || !accepted.includes(block.type))) {
      const hint = typeof block.type === 'string' ? rules.unknownHint?.(block.type) : undefined;
      issues.push({ path: `${at}.type`, message: hint ? `${oneOf(accepted)} ${hint}` : oneOf(accepted) });
      continue;
    }
    rules.block(issues, block, at);
  }
}

/** `content blocks`, `text parts`, … as a message names what its content may hold. */
export function contentNoun(rules: ContentRules, accepted: readonly string[]): string {
  return `${accepted.length === 1 ? 'text' : 'content'} ${rules.noun}`;
}

/** Every problem of a `{ role, content }` message under `rules`. */
export function roleContentIssues(
  message: Record<string, unknown>,
  path: string,
  rules: ContentRules,
): Issues {
  const issues: Issues = [];
  const role = message.role;
  if (typeof role !== 'string' || !rules.roles.includes(role)) {
    issues.push({ path: `${path}.role`, message: `${oneOf(rules.roles)}${rules.roleHint?.(role) ?? ''}` });
    return issues;
  }
  if (message.name !== undefined) str(issues, message.name, `${path}.name`);
  const accepted = rules.accepted(role);
  const content = message.content;
  if (role === 'assistant' && rules.assistant) {
    rules.assistant(issues, message, path, rules);
    return issues;
  }
  if (role === 'tool') {
    str(issues, message.tool_call_id, `${path}.tool_call_id`, true);
  }
  if (typeof content !== 'string') {
    const noun = contentNoun(rules, accepted);
    blockList(
      issues,
      content,
      `${path}.content`,
      accepted,
      rules,
      `expected a string or an array of ${noun}`,
    );
  }
  return issues;
}
