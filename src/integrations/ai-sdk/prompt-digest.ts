/**
 * A digest of a prompt's first messages, to tell cheaply whether a prompt extends the one a store
 * holds (`StoredPromptFitter`): each message is written in a canonical form (object keys sorted,
 * binary data as base64, URLs as their href, `undefined` left out, as JSON leaves it) and hashed
 * in order, so the digest of the first `n` messages and of all of them come from one pass.
 */

import { createHash, type Hash } from 'node:crypto';

/** Appends the canonical form of `value` to `out`. */
function writeCanonical(value: unknown, out: string[]): void {
  if (value === null || typeof value !== 'object') {
    // JSON's own forms; `undefined` and functions (never in a prompt) as `null`, as in an array.
    out.push(JSON.stringify(value) ?? 'null');
    return;
  }
  if (value instanceof Uint8Array) {
    out.push(
      JSON.stringify(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')),
    );
    return;
  }
  if (value instanceof ArrayBuffer) {
    out.push(JSON.stringify(Buffer.from(value).toString('base64')));
    return;
  }
  if (value instanceof URL) {
    out.push(JSON.stringify(value.href));
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    value.forEach((item, i) => {
      if (i > 0) out.push(',');
      writeCanonical(item, out);
    });
    out.push(']');
    return;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  // Most objects come with their keys in order already: sorted only when they are not.
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      keys.sort();
      break;
    }
  }
  out.push('{');
  let first = true;
  for (const key of keys) {
    const item = record[key];
    if (item === undefined) continue;
    out.push(first ? `${JSON.stringify(key)}:` : `,${JSON.stringify(key)}:`);
    first = false;
    writeCanonical(item, out);
  }
  out.push('}');
}

/** The canonical form of one message (see the module note). */
export function canonicalMessage(message: unknown): string {
  const out: string[] = [];
  writeCanonical(message, out);
  return out.join('');
}

/** A digest of messages hashed so far. */
function digestOf(hash: Hash): string {
  return hash.digest('base64url');
}

/**
 * The digest of `messages`' first `at` messages (undefined when `at` is 0 or past their end) and of
 * all of them, in one pass.
 */
export function promptDigests(
  messages: readonly unknown[],
  at: number,
): { prefix: string | undefined; whole: string } {
  const hash = createHash('sha256');
  let prefix: string | undefined;
  for (let i = 0; i < messages.length; i++) {
    hash.update(canonicalMessage(messages[i]));
    // A separator no canonical form holds: message boundaries are part of what is hashed.
    hash.update('\n');
    if (i + 1 === at) prefix = digestOf(hash.copy());
  }
  return { prefix, whole: digestOf(hash) };
}
