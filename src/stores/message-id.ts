/**
 * Caller-given message ids (`addMessage(message, { id })`): what an id may be, so that every
 * store keeps it exactly (issue 33 item 1).
 */

/**
 * The longest id, in UTF-16 code units: room for the ids integrations carry (UUIDs, AI SDK and
 * Responses item ids, a durable engine's `workflow:step` keys) and small enough for every
 * store's index (a Postgres btree entry, a Redis hash field, a line of the file store's index).
 */
export const MAX_MESSAGE_ID_LENGTH = 256;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A short, printable quote of a value for an error message. */
export function quoteId(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

/**
 * Why `value` cannot be a message id, or undefined when it can: a non-empty string of at most
 * {@link MAX_MESSAGE_ID_LENGTH} code units, without NUL (Postgres `text` cannot hold it) or a
 * lone surrogate (UTF-8 stores would turn it into U+FFFD, so two ids would become one).
 */
export function messageIdProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') {
    return `expected a string, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`;
  }
  if (value.length === 0) return 'expected a non-empty string';
  if (value.length > MAX_MESSAGE_ID_LENGTH) {
    return `${quoteId(value)} is ${value.length} characters long; ids are at most ${MAX_MESSAGE_ID_LENGTH}`;
  }
  if (value.includes('\u0000')) return `${quoteId(value)} holds a NUL character, which stores cannot keep`;
  if (LONE_SURROGATE.test(value)) {
    return `${quoteId(value)} holds a lone surrogate (not valid Unicode), which stores cannot keep exactly`;
  }
  return undefined;
}
