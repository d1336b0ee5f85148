/**
 * Where two messages differ, for the error that says an id already names another message
 * (issue 33 item 1). Messages are JSON values: key order does not matter, everything else does.
 */

/** The first place `stored` and `added` differ: its path and a short quote of each side. */
export interface MessageDifference {
  /** Like `content[0].text`; `''` for the messages themselves. */
  path: string;
  stored: string;
  added: string;
}

/** A short, printable rendering of a JSON value for an error message. */
function excerpt(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key)
    ? path === ''
      ? key
      : `${path}.${key}`
    : `${path}[${JSON.stringify(key)}]`;
}

/**
 * The first difference between two JSON values, depth first in `stored`'s key order (then
 * `added`'s keys it lacks), or undefined when they are equal. Iterative, so a deep message
 * cannot overflow the stack.
 */
export function firstDifference(stored: unknown, added: unknown): MessageDifference | undefined {
  const stack: Array<{ a: unknown; b: unknown; path: string }> = [{ a: stored, b: added, path: '' }];
  while (stack.length > 0) {
    const { a, b, path } = stack.pop() as { a: unknown; b: unknown; path: string };
    if (Object.is(a, b)) continue;
    const differ = (): MessageDifference => ({ path, stored: excerpt(a), added: excerpt(b) });
    if (Array.isArray(a) && Array.isArray(b)) {
      if (a.length !== b.length) {
        const at = Math.min(a.length, b.length);
        return { path: join(path, at), stored: excerpt(a[at]), added: excerpt(b[at]) };
      }
      for (let i = a.length - 1; i >= 0; i--) stack.push({ a: a[i], b: b[i], path: join(path, i) });
      continue;
    }
    if (isObject(a) && isObject(b)) {
      const keys = [...Object.keys(a), ...Object.keys(b).filter((k) => !Object.hasOwn(a, k))];
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        stack.push({ a: a[key], b: b[key], path: join(path, key) });
      }
      continue;
    }
    return differ();
  }
  return undefined;
}
