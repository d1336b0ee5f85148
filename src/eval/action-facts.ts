/**
 * The ground-truth facts of a tau-bench run: the argument values of the actions the agent had to
 * take. They are what a compacted view must still show the model for the run to succeed, so the
 * evaluation asks of each view which of them it holds.
 */

/**
 * Fields whose values are a handful of common words (`economy`, `one_way`, `no`): finding one in a
 * view says nothing about what the view remembers.
 */
const ENUM_FIELDS: ReadonlySet<string> = new Set(['cabin', 'flight_type', 'insurance']);

/**
 * Fields the agent writes itself (a hand-off summary, a calculator expression): free text that the
 * conversation need not contain word for word.
 */
const FREE_TEXT_FIELDS: ReadonlySet<string> = new Set(['summary', 'expression']);

/** Numbers below this match any text (bag counts, passenger counts). */
const MIN_NUMBER = 10;

/** Shorter strings match too much (a last name such as `Li`). */
const MIN_STRING_LENGTH = 3;

/**
 * The values the actions act on, as strings, each once, in the order first met: user and
 * reservation ids, flight numbers, dates, payment ids, amounts, names, airport codes. Nested
 * objects and arrays are walked; a value is named by the key that holds it (an array's items by the
 * array's key). Left out, because they cannot tell a view that remembers from one that does not:
 * booleans and null, numbers below 10, strings under 3 characters, enum fields and free text the
 * agent writes (see `ENUM_FIELDS`, `FREE_TEXT_FIELDS`).
 */
export function actionFacts(kwargsList: readonly Readonly<Record<string, unknown>>[]): string[] {
  const found = new Set<string>();
  const walk = (value: unknown, key: string): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item, key);
      return;
    }
    if (typeof value === 'object' && value !== null) {
      for (const [innerKey, inner] of Object.entries(value)) walk(inner, innerKey);
      return;
    }
    if (ENUM_FIELDS.has(key) || FREE_TEXT_FIELDS.has(key)) return;
    if (typeof value === 'number' && Math.abs(value) >= MIN_NUMBER) found.add(String(value));
    if (typeof value === 'string') {
      const text = value.trim();
      if (text.length >= MIN_STRING_LENGTH) found.add(text);
    }
  };
  for (const kwargs of kwargsList) walk(kwargs, '');
  return [...found];
}
