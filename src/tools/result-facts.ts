/**
 * Facts of a tool result that the work needs: what the result was read for. A `read_file` for
 * `MAX_RETRIES`, a `grep` for a name, a test run, a page fetched to answer the user: the line that
 * names what the call's arguments or the current request name, an assignment or key with its
 * value, an error line (and the stack line under it), the ids on such lines. Not the first
 * identifiers of the result, its line numbers or its counters: those are what a pattern scan from
 * the top finds, and what an agent never needed.
 *
 * The result is read a line at a time (a very long line in pieces), each line scored by the
 * focus terms it holds (see `resultFocus`), and the facts of the best lines are kept first:
 * relevance, then kind (the definition of a named thing, an error, an assignment or key, a line
 * with an id), then position. Deterministic, and linear in the part of the result it reads
 * (`MAX_RESULT_SCAN_CHARS`).
 */
import { textFactKey, textFacts } from './text-facts.js';
import type { FactCategory } from './types.js';

/**
 * Characters of one result read for its lines: the first `HEAD_SCAN_CHARS` and the last
 * `TAIL_SCAN_CHARS` of a longer one (a log's errors are at its end). What lies between is not read.
 */
export const MAX_RESULT_SCAN_CHARS = 256_000;
const HEAD_SCAN_CHARS = 192_000;
const TAIL_SCAN_CHARS = MAX_RESULT_SCAN_CHARS - HEAD_SCAN_CHARS;
/** A longer line is read in pieces of about this size (minified code, a page on one line). */
const MAX_LINE_CHARS = 400;
/** A fact's value quoting a line keeps at most this many characters of it. */
const MAX_LINE_VALUE = 160;
/** An assigned value longer than this is cut (at a space where it can). */
const MAX_ASSIGNED_VALUE = 120;
/** At most this many focus terms are taken from the arguments and the request together. */
const MAX_FOCUS_TERMS = 64;
/** Characters of the current request read for focus terms. */
const MAX_REQUEST_CHARS = 4_000;

/** Words that name nothing a result could be read for. */
const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'the and for are but not you all any can had her was one our out has him his how its may new now ' +
    'see two who did get got let put say she too use this that with have from they will would there ' +
    'their what when where which while about after again also been before being below between both ' +
    'could does doing down during each few further here into just more most must only other over own ' +
    'same should some such than then these those through under until very were your yours please ' +
    'thanks thank want need like make sure know tell give find show look read file files line lines ' +
    'value values check help using used then able true false null none undefined return'
  ).split(' '),
);

/**
 * What a result was read for: lowercased terms with a weight. Names (`MAX_RETRIES`, `baseDelay`,
 * `ZFA04Y`, `user_42`) weigh `NAME_WEIGHT`; plain words of four letters or more weigh 1.
 */
export interface ResultFocus {
  readonly terms: ReadonlyMap<string, number>;
  /** The terms of the current request alone (a call's arguments are what its whole result is about). */
  readonly requestTerms: ReadonlyMap<string, number>;
}

/** The weight of a name (an identifier, a constant, an id) among the focus terms. */
export const NAME_WEIGHT = 3;
const NO_FOCUS: ResultFocus = { terms: new Map(), requestTerms: new Map() };

/** Tokens of a text: words, names and ids, with dotted and dashed compounds (`config.ts`, `T-1042`). */
const TOKEN = /[A-Za-z0-9_$]+(?:[-.][A-Za-z0-9_$]+)*/g;

function isName(token: string): boolean {
  return (
    token.includes('_') ||
    /\d/.test(token) ||
    /[a-z][A-Z]/.test(token) ||
    /^[A-Z][A-Z0-9]{2,}$/.test(token) ||
    /[-.]/.test(token)
  );
}

/**
 * A term as it is looked up: lowercased, without `_` and `-`, so `MAX_RETRIES`, `maxRetries` and
 * `max-retries` are one name, as code, configs and prose spell it.
 */
export function squash(token: string): string {
  return token.toLowerCase().replace(/[_-]/g, '');
}

function addTerm(terms: Map<string, number>, token: string): void {
  if (terms.size >= MAX_FOCUS_TERMS) return;
  const lower = token.toLowerCase();
  if (lower.length < 3 || STOPWORDS.has(lower) || /^\d{1,2}$/.test(lower)) return;
  const name = isName(token);
  if (!name && lower.length < 4) return;
  const weight = name ? NAME_WEIGHT : 1;
  const key = squash(token);
  if (key.length >= 3 && (terms.get(key) ?? 0) < weight) terms.set(key, weight);
}

function addTokens(terms: Map<string, number>, text: string): void {
  for (const match of text.matchAll(TOKEN)) {
    const token = match[0];
    addTerm(terms, token);
    if (/[-.]/.test(token)) for (const part of token.split(/[-.]/)) addTerm(terms, part);
  }
}

/** The string and number values of a call's arguments (JSON), or the text itself when it is not JSON. */
function argumentValues(text: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [text];
  }
  const out: string[] = [];
  const walk = (value: unknown, depth: number): void => {
    if (depth > 8 || out.length > 64) return;
    if (typeof value === 'string') out.push(value);
    else if (typeof value === 'number' && Number.isFinite(value)) out.push(String(value));
    else if (Array.isArray(value)) for (const item of value) walk(item, depth + 1);
    else if (typeof value === 'object' && value !== null)
      for (const inner of Object.values(value)) walk(inner, depth + 1);
  };
  walk(parsed, 0);
  return out;
}

/**
 * The focus of a result: the values of its call's arguments (not their keys, which name the
 * tool's parameters) and the words of the current request (the latest user message), the
 * arguments first. Empty when neither names anything.
 */
export function resultFocus(callArguments: string | undefined, request: string | undefined): ResultFocus {
  const terms = new Map<string, number>();
  const requestTerms = new Map<string, number>();
  if (callArguments) for (const value of argumentValues(callArguments)) addTokens(terms, value);
  if (request) {
    const text = request.slice(0, MAX_REQUEST_CHARS);
    addTokens(terms, text);
    addTokens(requestTerms, text);
  }
  return terms.size === 0 ? NO_FOCUS : { terms, requestTerms };
}

function isTokenCode(code: number): boolean {
  return (
    (code >= 48 && code <= 57) ||
    (code >= 65 && code <= 90) ||
    (code >= 97 && code <= 122) ||
    code === 95 ||
    code === 36
  );
}

/** `text[from, to)` lowercased, without `_` and `-`: the squashed form, with no regex per token. */
function squashedSlice(text: string, from: number, to: number): string {
  const slice = text.slice(from, to).toLowerCase();
  return slice.includes('_') || slice.includes('-') ? slice.replace(/[_-]/g, '') : slice;
}

/** What a token must start with and how long it must be, squashed, to be one of a focus's terms. */
interface TermShapes {
  starts: Uint8Array;
  lengths: Uint8Array;
}

const shapes = new WeakMap<ReadonlyMap<string, number>, TermShapes>();

function shapesOf(terms: ReadonlyMap<string, number>): TermShapes {
  let found = shapes.get(terms);
  if (found === undefined) {
    found = { starts: new Uint8Array(128), lengths: new Uint8Array(257) };
    for (const term of terms.keys()) {
      const code = term.charCodeAt(0);
      if (code < 128) found.starts[code] = 1;
      found.lengths[Math.min(term.length, 256)] = 1;
    }
    shapes.set(terms, found);
  }
  return found;
}

const NO_HITS: ReadonlyMap<string, number> = new Map();

/** Adds to `hits` the term `text[from, to)` is, if it is one; returns the map (made on the first hit). */
function lookUp(
  text: string,
  from: number,
  to: number,
  terms: ReadonlyMap<string, number>,
  shape: TermShapes,
  hits: Map<string, number> | undefined,
): Map<string, number> | undefined {
  if (to - from < 3) return hits;
  // Squashed, a token loses its `_` and `-`: its first character and length are read past them,
  // so most tokens are passed over without making a string.
  let first = -1;
  let length = 0;
  for (let k = from; k < to; k += 1) {
    const code = text.charCodeAt(k);
    if (code === 95 || code === 45) continue;
    if (first === -1) first = code >= 65 && code <= 90 ? code + 32 : code;
    length += 1;
  }
  if (first === -1 || first >= 128 || shape.starts[first] !== 1) return hits;
  if (shape.lengths[Math.min(length, 256)] !== 1) return hits;
  const key = squashedSlice(text, from, to);
  const weight = terms.get(key);
  if (weight === undefined) return hits;
  const out = hits ?? new Map<string, number>();
  out.set(key, weight);
  return out;
}

/**
 * The focus terms `text` holds, each once, with their weights. Read by hand, one pass over the
 * characters: this runs on every line of every result read (tokens as `TOKEN` reads them, each
 * compound and its parts looked up, most passed over by their first character and length).
 */
export function focusHits(text: string, focus: ResultFocus): ReadonlyMap<string, number> {
  const terms = focus.terms;
  if (terms.size === 0) return NO_HITS;
  const shape = shapesOf(terms);
  const n = text.length;
  let hits: Map<string, number> | undefined;
  let i = 0;
  while (i < n) {
    if (!isTokenCode(text.charCodeAt(i))) {
      i += 1;
      continue;
    }
    const start = i;
    let partStart = i;
    let compound = false;
    for (;;) {
      while (i < n && isTokenCode(text.charCodeAt(i))) i += 1;
      const sep = text.charCodeAt(i);
      // A `-` or `.` joins a compound only when a token character follows it.
      if ((sep === 45 || sep === 46) && i + 1 < n && isTokenCode(text.charCodeAt(i + 1))) {
        hits = lookUp(text, partStart, i, terms, shape, hits);
        compound = true;
        i += 1;
        partStart = i;
        continue;
      }
      break;
    }
    if (compound) hits = lookUp(text, partStart, i, terms, shape, hits);
    hits = lookUp(text, start, i, terms, shape, hits);
  }
  return hits ?? NO_HITS;
}

// ---------------------------------------------------------------- lines

/** What a line is, in the order a result's facts are kept at equal relevance. */
type LineKind = 'definition' | 'error' | 'assignment' | 'plain';
const KIND_RANK: Record<LineKind, number> = { definition: 0, error: 1, assignment: 2, plain: 3 };

interface Line {
  /** Where the line's text starts in the result (after a line-number prefix) and ends. */
  start: number;
  end: number;
  text: string;
  kind: LineKind;
  relevance: number;
  /** The term of the focus this line holds with the most weight. */
  term?: string;
  /** For an assignment: the name assigned and the value, as written. */
  name?: string;
  value?: string;
  /** Where `value` starts in the result. */
  valueStart?: number;
  /** An error line among more than `OUTCOME_LINES` lines. */
  inOutput?: boolean;
  /** The file a grep-style prefix (`path:12:`) named, and where it starts in the result. */
  path?: string;
  pathStart?: number;
}

/**
 * A line-number prefix as tools print them: `cat -n` (`    12\t`), `12: `, `12 | `, `12→`, and a
 * grep's `path:12:` / `path-12-`. Stripped only when most lines of the result carry one.
 */
const LINE_NUMBER = /^(?:\s*\d+(?:\t|: |:|\s*\|\s?|→)|[^\s:]+[:-]\d+[:-])/;

/** Lines of `text` in [from, to), very long ones in pieces; each with its offset in `text`. */
function splitLines(text: string, from: number, to: number, out: Array<{ start: number; text: string }>) {
  let at = from;
  while (at < to) {
    let end = text.indexOf('\n', at);
    if (end === -1 || end > to) end = to;
    let start = at;
    while (end - start > MAX_LINE_CHARS) {
      // Break a long line at a sentence or a space near the size, so a value is not split.
      let cut = text.lastIndexOf('. ', start + MAX_LINE_CHARS);
      if (cut <= start + MAX_LINE_CHARS / 2) cut = text.lastIndexOf(' ', start + MAX_LINE_CHARS);
      if (cut <= start + MAX_LINE_CHARS / 2) cut = start + MAX_LINE_CHARS;
      else cut += 1;
      out.push({ start, text: text.slice(start, cut) });
      start = cut;
    }
    out.push({ start, text: text.slice(start, end) });
    at = end + 1;
  }
}

/** The error lines of logs, compilers, test runners and stack traces, by their shapes. */
const ERROR_LINE = [
  /^\s*(?:[\w$.]*(?:Error|Exception|Failure)(?::|$)|Traceback \(most recent call last\)|Exception in thread|(?:panic|fatal|FATAL|Caused by):)/,
  /(?:^|[\s:\]])(?:error|ERROR|Error)(?:\[\w+\])?(?: TS\d+)?:/,
  /^\s*(?:\[(?:ERROR|FATAL|CRITICAL|FAIL(?:ED)?)\]|ERROR\b|CRITICAL\b|FAIL(?:ED)?\b|npm ERR!|E {2,}\S|[✗✘×❌]\s)/,
  /^\s*(?:Expected|Received|expected|received|AssertionError|assert(?:ion)? failed)\b/,
  /\b(?:exit(?:ed)?(?: with)?(?: code| status)|exit code|returned non-zero|non-zero exit|Segmentation fault|command not found|No such file or directory|Permission denied|Connection refused)\b/i,
];

/**
 * A stack frame: `    at fn (src/x.ts:3:5)`, `  File "x.py", line 3`, a test runner's
 * `❯ src/x.test.ts:48:33`. The first one within `FRAME_REACH` lines of an error line is its top.
 */
const STACK_FRAME = /^\s*(?:at \S|File "[^"]+", line \d+|[❯›>] \S+:\d+(?::\d+)?\s*$)/;
const FRAME_REACH = 12;

/** Words one of `ERROR_LINE`'s unanchored shapes needs: a line with none is tried only at its start. */
const ERROR_WORDS = /error|exit|non-zero|segmentation|not found|no such|denied|refused/i;

/** How a line of code ends: an item, a statement, a block or a call opening. */
const CODE_END = /[,;{(]\s*$/;

function isErrorLine(text: string): boolean {
  const worded = ERROR_WORDS.test(text);
  for (let k = 0; k < ERROR_LINE.length; k += 1) {
    if ((k === 1 || k === 4) && !worded) continue;
    if (!(ERROR_LINE[k] as RegExp).test(text)) continue;
    // `error: error.message,` in an object literal is code, not a compiler's or a log's error.
    if (k === 1 && CODE_END.test(text)) continue;
    return true;
  }
  return false;
}

/** Words before `=` that make it a comparison or a control statement, not an assignment. */
const NOT_ASSIGNING = /^\s*(?:if|elif|else|while|for|return|assert|case|when|until|unless|and|or|not)\b/;

/**
 * The name and value of an assignment or key on one line: `export const MAX_RETRIES = 5;`,
 * `MAX_RETRIES: int = 5`, `x := 5`, `static final int MAX = 5;`, `#define MAX 5`, `KEY=value`,
 * `key: value` (YAML, headers, object literals), `"key": value,` (JSON, one key a line), `--x: 5;`.
 * The value is as written, without a trailing `;`/`,`, a trailing comment or surrounding quotes.
 */
export function assignmentOf(line: string): { name: string; value: string; valueAt: number } | undefined {
  const define = /^\s*#\s*define\s+([A-Za-z_]\w*)\s+(\S.*)$/.exec(line);
  if (define) return cleanValue(define[1]!, define[2]!, line.length - define[2]!.length);
  let eq = -1;
  for (let i = line.indexOf('='); i !== -1; i = line.indexOf('=', i + 1)) {
    const before = line[i - 1];
    const after = line[i + 1];
    if (after === '=' || after === '>' || after === '~') {
      i += 1;
      continue;
    }
    if (before === '=' || before === '!' || before === '<' || before === '>') continue;
    eq = i;
    break;
  }
  if (eq > 0) {
    let left = line.slice(0, line[eq - 1] === ':' ? eq - 1 : eq);
    const bare = left.replace(/\[[^\]]*\]|<[^>]*>/g, '');
    if (!NOT_ASSIGNING.test(left) && !/[([{<?]/.test(bare) && !bare.includes('://')) {
      // `name: Type = value`: the name is before the annotation.
      const colon = left.search(/:(?!:)/);
      if (colon > 0) left = left.slice(0, colon);
      const name = /["']?([A-Za-z_$@-][\w$.@-]*)["']?\s*$/.exec(left)?.[1];
      if (name !== undefined && /[A-Za-z]/.test(name)) {
        let valueAt = eq + 1;
        while (valueAt < line.length && (line[valueAt] === ' ' || line[valueAt] === '\t')) valueAt += 1;
        return cleanValue(name, line.slice(valueAt), valueAt);
      }
    }
  }
  // `key: value` — a quoted key, or a key of at most four words at the start of the line.
  const pair =
    /^\s*(?:- )?(?:"([^"]{1,60})"|'([^']{1,60})'|([A-Za-z_$-][\w$.-]*(?: [\w$.-]+){0,3}))\s*:(?!:)/.exec(
      line,
    );
  if (pair) {
    const name = (pair[1] ?? pair[2] ?? pair[3]) as string;
    let valueAt = pair[0].length;
    const quoted = pair[3] === undefined;
    if (!quoted && line[valueAt] !== ' ' && line[valueAt] !== '\t') return undefined;
    while (valueAt < line.length && (line[valueAt] === ' ' || line[valueAt] === '\t')) valueAt += 1;
    if (/^\/\//.test(line.slice(valueAt))) return undefined;
    return cleanValue(name, line.slice(valueAt), valueAt);
  }
  return undefined;
}

function cleanValue(
  name: string,
  raw: string,
  at: number,
): { name: string; value: string; valueAt: number } | undefined {
  let value = raw.replace(/\s+(?:\/\/|#|--)\s.*$/, '').replace(/\s*(?:\*\/)?\s*$/, '');
  value = value.replace(/[;,]+$/, '').trimEnd();
  let valueAt = at;
  const quote = value[0];
  if ((quote === '"' || quote === "'" || quote === '`') && value.length >= 2 && value.endsWith(quote)) {
    value = value.slice(1, -1);
    valueAt += 1;
  }
  // An opening bracket alone starts a block on the following lines: their own keys are read there.
  if (value === '' || /^[[{(]$/.test(value) || value === '|' || value === '>') return undefined;
  if (value.length > MAX_ASSIGNED_VALUE) {
    const space = value.lastIndexOf(' ', MAX_ASSIGNED_VALUE);
    value = value.slice(0, space > MAX_ASSIGNED_VALUE / 2 ? space : MAX_ASSIGNED_VALUE);
  }
  return { name, value, valueAt };
}

/** A line's text cut to `MAX_LINE_VALUE` characters around `at` (a focus term), at spaces. */
function lineValue(text: string, at: number): { value: string; offset: number } {
  const trimmedStart = text.length - text.trimStart().length;
  const trimmed = text.trim();
  if (trimmed.length <= MAX_LINE_VALUE) return { value: trimmed, offset: trimmedStart };
  let from = Math.max(trimmedStart, at - MAX_LINE_VALUE / 3);
  if (from > trimmedStart) {
    const space = text.indexOf(' ', from);
    if (space !== -1 && space < at) from = space + 1;
  }
  let to = Math.min(text.length, from + MAX_LINE_VALUE);
  const space = text.lastIndexOf(' ', to);
  if (to < text.length && space > from + MAX_LINE_VALUE / 2) to = space;
  return { value: text.slice(from, to).trim(), offset: from };
}

/** Where in `text` the token whose squashed form is `term` starts (0 when not found). */
function termAt(text: string, term: string): number {
  for (const match of text.matchAll(TOKEN)) {
    if (squash(match[0]) === term) return match.index;
    if (match[0].includes('-') || match[0].includes('.')) {
      let at = match.index;
      for (const part of match[0].split(/[-.]/)) {
        if (squash(part) === term) return at;
        at += part.length + 1;
      }
    }
  }
  return 0;
}

/** The token (a name as written: `BACKOFF_CAP_MS`) that starts at `at`. */
function tokenAt(text: string, at: number): string {
  let end = at;
  while (end < text.length && isTokenCode(text.charCodeAt(end))) end += 1;
  return text.slice(at, end);
}

/** A fact found in a result, ranked: higher `relevance` first, then `kind`, then position. */
export interface ResultFact {
  category: FactCategory;
  value: string;
  /** A label for the fact (an assigned name, `error`, the focus term a line holds). */
  key?: string;
  start: number;
  end: number;
  relevance: number;
}

/** What one line gives: its assignment, its error, or itself as named, with the ids on it. */
function lineFacts(line: Line, categoryOf: (value: string) => FactCategory): ResultFact[] {
  const out = ownLineFacts(line, categoryOf);
  // The file of a grep's line, when the line is more than one of many that name the same thing.
  const telling = line.kind === 'definition' || line.kind === 'error' || line.relevance >= NAME_WEIGHT;
  if (out.length > 0 && line.path !== undefined && telling) {
    const start = line.pathStart as number;
    out.push({
      category: 'path',
      value: line.path,
      key: 'path',
      start,
      end: start + line.path.length,
      relevance: relevanceOf(line),
    });
  }
  return out;
}

function ownLineFacts(line: Line, categoryOf: (value: string) => FactCategory): ResultFact[] {
  const out: ResultFact[] = [];
  const relevance = relevanceOf(line);
  if ((line.kind === 'definition' || line.kind === 'assignment') && line.value !== undefined) {
    const start = line.valueStart as number;
    out.push({
      category: categoryOf(line.value),
      value: line.value,
      key: line.name,
      start,
      end: start + line.value.length,
      relevance,
    });
    return out;
  }
  if (line.kind === 'error' || line.relevance > 0) {
    const at = line.term === undefined ? 0 : termAt(line.text, line.term);
    const { value, offset } = lineValue(line.text, at);
    if (value.length >= 3) {
      out.push({
        category: 'other',
        value,
        key: line.kind === 'error' ? 'error' : tokenAt(line.text, at),
        start: line.start + offset,
        end: line.start + offset + value.length,
        relevance,
      });
    }
  }
  return out;
}

/**
 * The rank of a line's facts beside other results' facts: the definition of a named thing far
 * first, then lines by the weight of the focus terms they hold, an error line picked out of a
 * longer output (a test run, a build log: `inOutput`) counting as one more name. Zero for any other line: within its
 * result its facts then rank by kind, and beside other results' facts by category. A result that
 * is no more than its error (`Error: payment method not found`) is told by its own outcome line.
 */
function relevanceOf(line: Line): number {
  if (line.kind === 'definition') return 100 + line.relevance;
  // An error picked out of an output weighs as much as a name the request gives.
  const score = line.relevance + (line.kind === 'error' && line.inOutput === true ? NAME_WEIGHT : 0);
  return score > 0 ? 2 + score : 0;
}

/** An error line is picked out of an output when the output has more lines than this. */
const OUTCOME_LINES = 3;

/** Options of `resultFacts`. */
export interface ResultFactsOptions {
  /** What the result was read for (see `resultFocus`). */
  focus?: ResultFocus;
  /** At most this many facts (default: all found). */
  limit?: number;
  /** Facts already kept: not returned or counted. */
  isKnown?: (category: FactCategory, value: string) => boolean;
  /** The category of an assigned value, by its shape. */
  categoryOf: (value: string) => FactCategory;
}

/**
 * The facts of a tool result's text, best first: what the lines holding the focus terms say (an
 * assignment's value, else the line itself), the definitions of named things above all; error
 * lines and the stack frame under each; assignments and keys; then the ids, paths, dates, urls and
 * amounts of the other lines (`textFacts`), never their bare numbers. Line-number prefixes are
 * never facts. Reads at most `MAX_RESULT_SCAN_CHARS` of the text.
 */
export function resultFacts(text: string, options: ResultFactsOptions): ResultFact[] {
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  if (limit <= 0 || text.trim() === '') return [];
  const focus = options.focus ?? NO_FOCUS;
  const raw: Array<{ start: number; text: string }> = [];
  if (text.length <= MAX_RESULT_SCAN_CHARS) splitLines(text, 0, text.length, raw);
  else {
    splitLines(text, 0, HEAD_SCAN_CHARS, raw);
    const tail = text.indexOf('\n', text.length - TAIL_SCAN_CHARS);
    splitLines(text, tail === -1 ? text.length - TAIL_SCAN_CHARS : tail + 1, text.length, raw);
  }
  // Line numbers: stripped when most of the first lines carry them.
  const sample = raw.slice(0, 40).filter((l) => l.text.trim() !== '');
  // One line alone is numbered only in the forms read tools print (`     1\t`, `1→`): `404: Not
  // Found` keeps its number.
  const numbered =
    sample.length >= 2
      ? sample.filter((l) => LINE_NUMBER.test(l.text)).length >= sample.length * 0.6
      : sample.length === 1 && /^\s*\d+(?:\t|→)/.test(sample[0]!.text);
  const lines: Line[] = [];
  const termLines = new Map<string, number>();
  const hitsOf: Array<ReadonlyMap<string, number>> = [];
  /** Lines since the latest error line whose stack top is not read yet (-1: none pending). */
  let sinceError = -1;
  for (const { start, text: rawText } of raw) {
    let lineText = rawText;
    let lineStart = start;
    let pathOf: string | undefined;
    if (numbered) {
      const prefix = LINE_NUMBER.exec(lineText);
      if (prefix) {
        // A grep's `path:12:` names the file the line is in: the file is a fact, its line number not.
        pathOf = /^([^\s:]+)[:-]\d+[:-]$/.exec(prefix[0])?.[1];
        lineText = lineText.slice(prefix[0].length);
        lineStart += prefix[0].length;
      }
    }
    if (lineText.trim().length < 2) continue;
    const hits = focusHits(lineText, focus);
    for (const term of hits.keys()) termLines.set(term, (termLines.get(term) ?? 0) + 1);
    let kind: LineKind = 'plain';
    if (isErrorLine(lineText)) {
      kind = 'error';
      sinceError = 0;
    } else if (sinceError >= 0 && STACK_FRAME.test(lineText)) {
      kind = 'error';
      sinceError = -1;
    } else if (sinceError >= 0 && ++sinceError > FRAME_REACH) {
      sinceError = -1;
    }
    const line: Line = {
      start: lineStart,
      end: lineStart + lineText.length,
      text: lineText,
      kind,
      relevance: 0,
    };
    if (pathOf !== undefined && /[A-Za-z]/.test(pathOf)) {
      line.path = pathOf;
      line.pathStart = start;
    }
    if (kind === 'plain') {
      const assigned = assignmentOf(lineText);
      if (assigned) {
        line.kind = 'assignment';
        line.name = assigned.name;
        line.value = assigned.value;
        line.valueStart = lineStart + assigned.valueAt;
      }
    }
    lines.push(line);
    hitsOf.push(hits);
  }
  // A term on most lines tells them apart not at all, name or plain word (`tests` in a test run's
  // every summary line, the module's name in a file's every comment): the lines that say something
  // else (an assignment, an error) rank by their kind instead.
  const common = Math.max(3, lines.length / 4);
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    if (line.kind === 'error' && lines.length > OUTCOME_LINES) line.inOutput = true;
    let best = 0;
    for (const [term, weight] of hitsOf[i]!) {
      const w = (termLines.get(term) ?? 0) > common ? 0 : weight;
      line.relevance += w;
      if (w > best) {
        best = w;
        line.term = term;
      }
    }
    if (line.kind === 'assignment' && line.name !== undefined) {
      // The definition of a name the focus holds (not of a plain word it happens to use).
      const names = focusHits(line.name, focus);
      const weight = names.get(squash(line.name)) ?? names.get(squash(line.name.split('.').pop()!)) ?? 0;
      if (weight >= NAME_WEIGHT) line.kind = 'definition';
    }
  }
  const order = lines.map((_, i) => i);
  order.sort(
    (a, b) =>
      relevanceOf(lines[b]!) - relevanceOf(lines[a]!) ||
      KIND_RANK[lines[a]!.kind] - KIND_RANK[lines[b]!.kind] ||
      a - b,
  );
  const out: ResultFact[] = [];
  const seen = new Set<string>();
  const used = new Set<number>();
  const keep = (fact: ResultFact): boolean => {
    if (options.isKnown?.(fact.category, fact.value)) return false;
    const id = `${fact.category}\u0000${fact.value}`;
    if (seen.has(id)) return false;
    seen.add(id);
    out.push(fact);
    return out.length >= limit;
  };
  for (const i of order) {
    const line = lines[i]!;
    if (line.kind === 'plain' && line.relevance === 0) break;
    used.add(i);
    for (const fact of lineFacts(line, options.categoryOf)) if (keep(fact)) return out;
  }
  // The other lines: their ids, paths, urls, dates and amounts, in the patterns' order; never a
  // bare number (a counter, a size, a line number) or a line-number prefix.
  const rest = lines.filter((_, i) => !used.has(i));
  const isKnown = (category: FactCategory, value: string): boolean =>
    category === 'number' ||
    (options.isKnown?.(category, value) ?? false) ||
    seen.has(`${category}\u0000${value}`);
  for (const line of rest) {
    if (line.path !== undefined) {
      const start = line.pathStart as number;
      const path = { category: 'path', value: line.path, start, end: start + line.path.length, relevance: 0 };
      if (keep({ ...path, category: 'path', key: 'path' })) return out;
    }
    for (const fact of textFacts(line.text, { limit: limit - out.length, isKnown })) {
      const key = textFactKey(line.text, fact);
      const found: ResultFact = {
        category: fact.category,
        value: fact.value,
        start: line.start + fact.start,
        end: line.start + fact.end,
        relevance: 0,
      };
      if (key !== undefined) found.key = key;
      if (keep(found)) return out;
    }
  }
  return out;
}
