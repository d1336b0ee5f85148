/**
 * What a stored message may hold so that it survives JSON and every walk over it.
 *
 * - Depth: messages and metadata nested deeper than {@link MAX_JSON_DEPTH} levels, and tool-call
 *   arguments whose JSON is, are refused at `addMessage` (no request to a model needs more, and a
 *   recursive walk, `JSON.stringify` and `structuredClone` included, overflows the stack at a few
 *   thousand). JSON inside plain text (a tool result of `[[[[…]]]]`) is kept as text: the walks
 *   that parse text first measure its depth with {@link jsonTextDepth} and treat deeper text as
 *   prose.
 * - Faithful numbers: `NaN`, `Infinity`, `-Infinity` and `-0` have no JSON form (`JSON.stringify`
 *   writes `null` and `0`), so a live manager and one resumed from its store would disagree. They
 *   are refused with their path rather than changed.
 */
import type { MessageIssue } from '../errors.js';

/** The deepest nesting a message, its metadata or its tool-call arguments may have. */
export const MAX_JSON_DEPTH = 100;

/** Issues reported at most per value: enough to fix, not a flood. */
const MAX_ISSUES = 20;

interface Frame {
  value: unknown;
  parent: Frame | undefined;
  key: string | number;
  depth: number;
}

function pathOf(frame: Frame): string {
  const steps: Array<string | number> = [];
  for (let f: Frame | undefined = frame; f?.parent !== undefined; f = f.parent) steps.push(f.key);
  let out = '';
  for (let i = steps.length - 1; i >= 0; i--) {
    const step = steps[i]!;
    out +=
      typeof step === 'number'
        ? `[${step}]`
        : /^[A-Za-z_$][\w$]*$/.test(step)
          ? `.${step}`
          : `[${JSON.stringify(step)}]`;
  }
  return out;
}

/** A value JSON cannot hold: reported on the whole value, saying where inside it. */
function notPlain(path: string, frame: Frame, what: string): MessageIssue {
  return { path, message: `expected a plain JSON object (${path}${pathOf(frame)} is ${what}); refused` };
}

function isPlain(v: object): boolean {
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function describe(v: unknown): string {
  if (v === undefined) return 'undefined in an array (or a hole)';
  if (typeof v === 'bigint') return `the BigInt ${String(v)}n`;
  if (typeof v !== 'object' || v === null) return `a ${typeof v}`;
  const name = (v as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? `a ${name}` : 'an object with a custom prototype';
}

function numberIssue(n: number): string | undefined {
  if (Number.isNaN(n)) return 'NaN has no JSON form (it would be stored as null); refused';
  if (n === Number.POSITIVE_INFINITY)
    return 'Infinity has no JSON form (it would be stored as null); refused';
  if (n === Number.NEGATIVE_INFINITY)
    return '-Infinity has no JSON form (it would be stored as null); refused';
  if (n === 0 && 1 / n < 0) return '-0 has no JSON form (it would be stored as 0); refused';
  return undefined;
}

/**
 * Problems that would keep `value` (a message or its metadata) from round-tripping through JSON
 * or from being walked: nesting deeper than {@link MAX_JSON_DEPTH}, non-finite numbers and `-0`,
 * and values JSON would change or drop (BigInt, functions, symbols, `undefined` in an array, and
 * objects that are not plain: `Date`, `Map`, class instances, boxed primitives).
 * Iterative, so any depth (and a cycle) is reported, never a stack overflow. Paths start at `path`.
 * With `depthOnly`, only the depth of plain objects and arrays is checked.
 */
export function jsonValueIssues(
  value: unknown,
  path: string,
  options?: { depthOnly?: boolean },
): MessageIssue[] {
  const numbers = options?.depthOnly !== true;
  try {
    // Nearly every value is clean: told by a walk that allocates nothing; the issues, with their
    // paths, by the full walk only when it is not.
    if (isClean(value, 0, false, numbers)) return [];
  } catch {
    // A throwing getter or proxy trap: the full walk reports it.
  }
  try {
    return walkIssues(value, path, numbers);
  } catch (error) {
    // A throwing getter or proxy trap: the value cannot be read, let alone stored.
    return [
      { path, message: `cannot be read as JSON (${(error as Error)?.message ?? String(error)}); refused` },
    ];
  }
}

/** Whether `jsonValueIssues(value, …)` finds nothing, told without making a list when it does not. */
export function jsonValueIsClean(value: unknown): boolean {
  try {
    if (isClean(value, 0, false, true)) return true;
  } catch {
    // A throwing getter or proxy trap: the full walk reports it.
  }
  return jsonValueIssues(value, '').length === 0;
}

/**
 * Whether `walkIssues(value, …, numbers)` finds nothing, told without allocating: recursive, but
 * never deeper than {@link MAX_JSON_DEPTH} + 1 calls (an object at that depth is not clean).
 * `inArray`: the value is an array element (where `undefined` is a hole JSON would change).
 */
function isClean(v: unknown, depth: number, inArray: boolean, numbers: boolean): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      // Finite (NaN and ±Infinity give NaN here) and not -0.
      return !numbers || (v - v === 0 && (v !== 0 || 1 / v > 0));
    case 'object':
      break;
    default:
      return !numbers || (v === undefined && !inArray);
  }
  if (v === null) return true;
  const array = Array.isArray(v);
  if (!array && !isPlain(v)) return !numbers;
  if (depth >= MAX_JSON_DEPTH) return false;
  if (array) {
    for (let i = 0; i < v.length; i++) if (!isClean(v[i], depth + 1, true, numbers)) return false;
    return true;
  }
  const record = v as Record<string, unknown>;
  // `Object.keys` order without its array: own keys come first in a for-in, inherited ones after.
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    if (!isClean(record[key], depth + 1, false, numbers)) return false;
  }
  return true;
}

function walkIssues(value: unknown, path: string, numbers: boolean): MessageIssue[] {
  const issues: MessageIssue[] = [];
  const stack: Frame[] = [{ value, parent: undefined, key: '', depth: 0 }];
  while (stack.length > 0 && issues.length < MAX_ISSUES) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (typeof v === 'number') {
      if (!numbers) continue;
      const problem = numberIssue(v);
      if (problem) issues.push({ path: `${path}${pathOf(frame)}`, message: problem });
      continue;
    }
    if (typeof v === 'string' || typeof v === 'boolean' || v === null) continue;
    if (!numbers) {
      if (typeof v !== 'object' || (Array.isArray(v) === false && !isPlain(v))) continue;
    } else if (typeof v !== 'object') {
      // undefined as a property is left out by JSON as it is here; anywhere else it changes.
      if (v === undefined && (frame.parent === undefined || !Array.isArray(frame.parent.value))) continue;
      issues.push(notPlain(path, frame, `${describe(v)}, which has no JSON form`));
      continue;
    }
    if (!Array.isArray(v)) {
      if (!isPlain(v)) {
        issues.push(notPlain(path, frame, `${describe(v)}, which JSON would store changed`));
        continue;
      }
    }
    if (frame.depth >= MAX_JSON_DEPTH) {
      issues.push({
        path: `${path}${pathOf(frame)}`,
        message: `nested more than ${MAX_JSON_DEPTH} levels deep (or a cycle); refused`,
      });
      continue;
    }
    const depth = frame.depth + 1;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], parent: frame, key: i, depth });
    } else {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        stack.push({ value: (v as Record<string, unknown>)[key], parent: frame, key, depth });
      }
    }
  }
  return issues;
}

/**
 * The nesting depth of the JSON in `text` (brackets outside strings), in one pass; stops counting
 * once past `limit` and returns `limit + 1`. Works on any text: it does not check the syntax.
 */
export function jsonTextDepth(text: string, limit: number = MAX_JSON_DEPTH): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return limit + 1;
      }
    } else if ((c === 93 || c === 125) && depth > 0) depth--;
  }
  return max;
}

/** `JSON.parse(text)` when its nesting is within {@link MAX_JSON_DEPTH}; undefined when deeper. Throws on bad syntax. */
export function parseJsonWithinDepth(text: string): unknown {
  if (jsonTextDepth(text) > MAX_JSON_DEPTH) return undefined;
  return JSON.parse(text);
}
