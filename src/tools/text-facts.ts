/**
 * Facts in free text: the patterns that find paths, ids, dates, amounts and the rest in prose,
 * logs and tool output, and the label that names each one ("user ID is X" → `user_id`).
 *
 * Patterns run in a fixed priority order (urls, emails, paths, amounts with a currency sign or
 * code; then one pass over the runs of digits, which finds dates, times, phones, amounts in words,
 * street addresses, ids and plain numbers; then all-caps and hex-tailed ids, names, `key: value`
 * pairs) and a character taken by one fact cannot be taken by another, so `src/2024-05-20.log` is
 * one path, not a path and a date, and `HAT136` is one id, not an id and the number 136.
 *
 * Speed matters (compaction reads every message it drops): each pattern is one pass over the text,
 * skipped when a cheap test says it cannot match, and the costly ones are anchored on a rare
 * character (`@`, `/`, a digit, a capital) and read the rest by hand, so no regex is tried at every
 * position of the text.
 */
import type { FactCategory } from './types.js';

/** A fact found in a text, with where it stands in that text. */
export interface TextFact {
  category: FactCategory;
  value: string;
  start: number;
  end: number;
}

/** Options of `textFacts`. */
export interface TextFactsOptions {
  /** Stop after this many facts (not counting known ones); the patterns' priority decides which. */
  limit?: number;
  /**
   * Facts already kept: they still take their characters (so `x.ts` inside a known `src/x.ts` is
   * not found again) but are not returned or counted.
   */
  isKnown?: (category: FactCategory, value: string) => boolean;
}

/** A value and where it starts, when that is not where the match started. */
interface Located {
  value: string;
  start: number;
  /** Where the scan resumes (past the token read around an anchor). */
  resume?: number;
  /** For patterns that find several kinds (the digit pass): what this one is. */
  category?: FactCategory;
}

type Verdict = string | Located | null;

interface Pattern {
  category: FactCategory;
  /** Matches candidates; or, for the digit pass, `find` walks the text by hand. */
  regex?: RegExp;
  find?: (text: string, from: number) => Located | null;
  /** Cheap test on what the text contains; the regex is skipped when it fails. */
  worth: (has: Features) => boolean;
  /** Final say over a match: the value (trimmed), or a located value, or null to reject it. */
  accept?: (match: RegExpExecArray, text: string) => Verdict;
}

/** What a text contains, tested once so each pattern's `worth` costs nothing. */
interface Features {
  digit: boolean;
  colon: boolean;
  slash: boolean;
  dot: boolean;
  at: boolean;
  link: boolean;
  windowsPath: boolean;
  capitalized: boolean;
  capitals: boolean;
  underscore: boolean;
  currencySign: boolean;
  currencyWord: boolean;
  keyValue: boolean;
}

/** Currency codes: the code-first amount pattern runs only when one is there. */
const CURRENCY_CODE = /USD|EUR|GBP|JPY|CAD|AUD|CHF|INR/;

/**
 * Native scans (`includes`, a regex test that stops at the first hit): several times faster than
 * one pass over the characters in JavaScript.
 */
function features(text: string): Features {
  const digit = /\d/.test(text);
  const colon = text.includes(':');
  return {
    digit,
    colon,
    slash: text.includes('/'),
    dot: text.includes('.'),
    at: text.includes('@'),
    link: colon && (text.includes('://') || text.includes('www.')),
    windowsPath: colon && text.includes(':\\'),
    capitalized: /[A-Z][a-z]/.test(text),
    capitals: /[A-Z]{5}/.test(text),
    underscore: text.includes('_'),
    currencySign: digit && /[$€£¥₹]/.test(text),
    currencyWord: digit && CURRENCY_CODE.test(text),
    keyValue: colon || text.includes('='),
  };
}

const MONTH =
  '(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)';

const FILE_EXTENSIONS =
  'tsx?|jsx?|mjs|cjs|json|jsonl|md|mdx|py|rb|go|rs|java|kt|swift|c|h|cc|cpp|hpp|cs|php|sh|bash|zsh|ps1|ya?ml|toml|ini|cfg|conf|txt|csv|tsv|log|sql|html?|css|scss|less|xml|lock|env|pdf|png|jpe?g|gif|svg|webp|zip|gz|tgz|tar|docx?|xlsx?|pptx?|wasm|vue|svelte|proto|graphql|gql|tf|dockerfile';

// ---------------------------------------------------------------- characters

function isWordChar(code: number): boolean {
  return (
    (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95
  );
}

function isTokenChar(code: number): boolean {
  return isWordChar(code) || code === 45; // '-'
}

function isPathChar(code: number): boolean {
  // word characters and @ + . ~ - /
  return (
    isWordChar(code) ||
    code === 64 ||
    code === 43 ||
    code === 46 ||
    code === 126 ||
    code === 45 ||
    code === 47
  );
}

function isEmailChar(code: number): boolean {
  // word characters and . % + - @
  return isWordChar(code) || code === 46 || code === 37 || code === 43 || code === 45 || code === 64;
}

/** The run of characters around `text[at]` for which `inside` holds. */
function runAround(
  text: string,
  at: number,
  inside: (code: number) => boolean,
): { start: number; end: number } {
  let start = at;
  let end = at + 1;
  while (start > 0 && inside(text.charCodeAt(start - 1))) start -= 1;
  while (end < text.length && inside(text.charCodeAt(end))) end += 1;
  return { start, end };
}

// ---------------------------------------------------------------- accepting matches

const TRAILING_PUNCTUATION = /[.,;:!?'"`]+$/;

function trimTrailing(value: string): string {
  let out = value.replace(TRAILING_PUNCTUATION, '');
  // An unbalanced closing bracket belongs to the sentence, not to the url.
  while (/[)\]}]$/.test(out)) {
    const close = out[out.length - 1] as string;
    const open = close === ')' ? '(' : close === ']' ? '[' : '{';
    if (out.split(open).length >= out.split(close).length) break;
    out = out.slice(0, -1).replace(TRAILING_PUNCTUATION, '');
  }
  return out;
}

function acceptUrl(value: string): string | null {
  const url = trimTrailing(value);
  return url.length > 10 ? url : null;
}

const EMAIL = /^[A-Za-z0-9_%+-][A-Za-z0-9._%+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$/;

/** The email address around the `@` at `at`: `ana.12@example.com`. */
function emailAround(text: string, at: number): Located | null {
  const run = runAround(text, at, isEmailChar);
  const raw = text.slice(run.start, run.end);
  const lead = /^[._%+-]*/.exec(raw)?.[0].length ?? 0;
  const value = raw.slice(lead).replace(/[.-]+$/, '');
  return EMAIL.test(value) ? { value, start: run.start + lead, resume: run.end } : null;
}

function isLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

/**
 * A path, or null: it has a letter; it is rooted (`/`, `./`, `~/`), or ends in an extension, or has
 * two slashes; a bare name needs an extension. Rejects `I/O`, `and/or`, `24/7`, `Node.js`. Read by
 * hand: this runs for every slash and every file extension in the text.
 */
function acceptPath(value: string): string | null {
  let end = value.length;
  while (end > 0 && '.,;:!?\'"`'.includes(value[end - 1] as string)) end -= 1;
  const path = end === value.length ? value : value.slice(0, end);
  if (path.length > 2 && path[1] === ':' && path[2] === '\\') return path.length > 3 ? path : null;
  let letter = false;
  let slashes = 0;
  let segments = 0;
  let longSegment = false;
  let segmentLength = 0;
  let lastSegmentStart = 0;
  for (let i = 0; i < path.length; i += 1) {
    const code = path.charCodeAt(i);
    if (code === 47) {
      slashes += 1;
      if (segmentLength > 0) segments += 1;
      if (segmentLength > 2) longSegment = true;
      segmentLength = 0;
      lastSegmentStart = i + 1;
    } else {
      segmentLength += 1;
      if (!letter && isLetter(code)) letter = true;
    }
  }
  if (segmentLength > 0) segments += 1;
  if (segmentLength > 2) longSegment = true;
  if (!letter || segments === 0 || !longSegment) return null;
  const last = path.slice(lastSegmentStart);
  const dot = last.lastIndexOf('.');
  const extension =
    dot > 0 &&
    dot < last.length - 1 &&
    last.length - dot <= 11 &&
    /^[A-Za-z0-9]+$/.test(last.slice(dot + 1)) &&
    !/^\d+\.\d+$/.test(last);
  if (slashes === 0)
    return extension && /[A-Za-z]/.test(last.slice(dot + 1)) && !/^[A-Z][a-z]+\.js$/.test(path) ? path : null;
  const rooted = path[0] === '/' || path.startsWith('./') || path.startsWith('../') || path.startsWith('~/');
  if (rooted || extension || slashes - (path[0] === '/' ? 1 : 0) - (path.endsWith('/') ? 1 : 0) >= 2)
    return path;
  return null;
}

/** The path around the `/` at `at`: `src/x.ts`, `./a/b`, `/v1/messages`, `~/notes.md`. */
function pathAround(text: string, at: number): Located | null {
  const run = runAround(text, at, isPathChar);
  const before = text[run.start - 1];
  if (before === ':' || before === '\\') return { value: '', start: run.start, resume: run.end };
  const raw = text.slice(run.start, run.end);
  const lead = /^(?:\.(?![./])|[@+-])*/.exec(raw)?.[0].length ?? 0;
  const path = acceptPath(raw.slice(lead));
  return path === null
    ? { value: '', start: run.start, resume: run.end }
    : { value: path, start: run.start + lead, resume: run.end };
}

const NAME_CHAR = /[\w.-]/;

/**
 * The file name whose extension starts at `dot` (`report.final.pdf`), or null when there is no
 * name before the dot or the name belongs to a path or url (those have their own patterns).
 */
function fileNameEndingAt(text: string, dot: number, end: number): Located | null {
  let from = dot;
  while (from > 0 && NAME_CHAR.test(text[from - 1] as string)) from -= 1;
  while (from < dot && !/\w/.test(text[from] as string)) from += 1;
  if (from >= dot) return null;
  const before = text[from - 1];
  if (before !== undefined && /[/@\\]/.test(before)) return null;
  const path = acceptPath(text.slice(from, end));
  return path === null ? null : { value: path, start: from };
}

function acceptMonthDay(value: string): string | null {
  const day = /(\d{1,2})(?:st|nd|rd|th)?(?!\d)/.exec(value.replace(/\d{4}$/, ''));
  if (day) {
    const n = Number.parseInt(day[1] as string, 10);
    if (n < 1 || n > 31) return null;
  }
  return value;
}

/** Whether a match at `at` starts a token: no letter, digit, `_`, `.`, `-` or `:` right before it. */
function startsToken(text: string, at: number): boolean {
  if (at === 0) return true;
  const code = text.charCodeAt(at - 1);
  return !isWordChar(code) && code !== 46 && code !== 45 && code !== 58 && code !== 47;
}

const ISO_DATE =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:T(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const OTHER_DATES = [
  /^\d{4}\/(?:0?[1-9]|1[0-2])\/(?:0?[1-9]|[12]\d|3[01])$/,
  /^(?:0?[1-9]|[12]\d|3[01])[/.](?:0?[1-9]|1[0-2])[/.]\d{4}$/,
  /^(?:0?[1-9]|1[0-2])\/(?:0?[1-9]|[12]\d|3[01])\/(?:\d{4}|\d{2})$/,
];

/** `2024-05-20` (with an optional `T` time), `2024/05/20`, `20.05.2024`, `05/20/2024`, `5/20/24`. */
function acceptNumericDate(match: RegExpExecArray, text: string): Verdict {
  const value = match[0];
  const end = match.index + value.length;
  if (!startsToken(text, match.index)) return null;
  const next = text.charCodeAt(end);
  if ((next >= 48 && next <= 57) || (text[end] === '.' && /\d/.test(text[end + 1] ?? ''))) return null;
  if (ISO_DATE.test(value)) return value;
  const plain = value.replace(/T.*$/, '');
  if (plain !== value) return null;
  for (const format of OTHER_DATES) if (format.test(value)) return value;
  return null;
}

function acceptTime(match: RegExpExecArray, text: string): string | null {
  const value = match[0];
  if (!startsToken(text, match.index)) return null;
  const hour = Number.parseInt(value, 10);
  if (hour > 23 || (/[apAP]\.?[mM]/.test(value) && (hour === 0 || hour > 12))) return null;
  const next = text[match.index + value.length];
  if (next !== undefined && /[\d:]/.test(next)) return null;
  // "3:30 pm." ends a sentence; "3:30 p.m." keeps its dots.
  return /[^.][mM]\.$/.test(value) && !/[apAP]\.[mM]\.$/.test(value) ? value.slice(0, -1) : value;
}

function acceptPhone(match: RegExpExecArray, text: string): string | null {
  const value = match[0];
  const before = text.charCodeAt(match.index - 1);
  if (isWordChar(before) || before === 43) return null; // a word or '+' right before
  const digits = value.replace(/\D/g, '').length;
  return digits >= 10 && digits <= 15 ? value : null;
}

const ID_CONTEXT =
  /\b(?:ids?|numbers?|no|code|codes|reservations?|bookings?|confirmation|orders?|tickets?|ref|reference|pnr|locator|key|sku|record|account|case|invoice)\b[^.!?\n]{0,24}$/i;

/** `usr_beef`, `ord_a1c0`: a short lowercase prefix and a hex tail, the shape of generated ids. */
const HEX_TAIL = /^[a-z]{2,8}_[0-9a-f]{4,16}$/;

const UNIT_SUFFIX = /^\d+(?:st|nd|rd|th|ms|s|px|em|rem|kb|mb|gb|tb|am|pm|k|m|x|h|d|min|sec|hrs?|mins?)$/i;

/**
 * An id: letters and digits mixed (`HAT136`, `usr_8f3a`, `T-1042`, `mia_li_3668`, a UUID), four
 * characters or more, not a number with a unit (`10ms`); a prefix and a hex tail (`usr_beef`); or
 * an all-caps code (`SDZQKO`) where the words just before call it an id, a code, a reservation…
 */
function acceptIdentifier(value: string, text: string, start: number): string | null {
  if (value.length < 4) return null;
  const letters = /[A-Za-z]/.test(value);
  const digits = /\d/.test(value);
  if (letters && digits) return UNIT_SUFFIX.test(value) ? null : value;
  if (!digits && /^[A-Z]{5,10}$/.test(value)) {
    return ID_CONTEXT.test(text.slice(Math.max(0, start - 48), start)) ? value : null;
  }
  return HEX_TAIL.test(value) ? value : null;
}

/** The token (letters, digits, `_`, `-`) around the digit at `at`, when it is an id. */
function tokenAroundDigit(text: string, at: number): Located | null {
  let start = at;
  let end = at + 1;
  let letter = false;
  while (start > 0 && isTokenChar(text.charCodeAt(start - 1))) {
    start -= 1;
    if (!letter && isLetter(text.charCodeAt(start))) letter = true;
  }
  while (end < text.length && isTokenChar(text.charCodeAt(end))) {
    if (!letter && isLetter(text.charCodeAt(end))) letter = true;
    end += 1;
  }
  const resume = end;
  if (!letter) return null;
  while (start < end && !isWordChar(text.charCodeAt(start))) start += 1;
  while (end > start && !isWordChar(text.charCodeAt(end - 1))) end -= 1;
  const id = acceptIdentifier(text.slice(start, end), text, start);
  return { value: id ?? '', start, resume };
}

const NAME_TRIGGER =
  /(?:\b(?:[Mm]y name is|[Nn]ame is|[Nn]ame:|I am|I'm|[Tt]his is|[Cc]all me|named|called|customer|passenger|contact)) $/;
const TITLES = new Set(['Mr', 'Mrs', 'Ms', 'Miss', 'Dr', 'Prof']);
const LEADING_TRIGGERS = new Set(['Customer', 'Passenger', 'Contact', 'Named', 'Called', "I'm"]);
const NOT_NAMES = new Set([
  'Monday',
  'Tuesday',
  'Wednesday',
  'Thursday',
  'Friday',
  'Saturday',
  'Sunday',
  'Sorry',
  'Not',
  'Just',
  'Here',
  'There',
  'Glad',
  'Happy',
  'Looking',
  'Trying',
  'Calling',
  'Going',
  'Sure',
  'Fine',
  'Good',
  'Back',
  'The',
  'This',
]);
const MONTH_WORD = new RegExp(`^${MONTH}$`);

/** Words after which a capitalized run may be a name; the full phrase is checked only after one. */
const TRIGGER_ENDINGS = new Set([
  'is',
  'am',
  'me',
  'named',
  'called',
  'customer',
  'passenger',
  'contact',
  'name:',
]);

/** The word before `start` (skipping one space), lowercased, with a trailing `.` of a title dropped. */
function previousWord(text: string, start: number): string {
  if (text[start - 1] !== ' ') return '';
  let i = start - 2;
  while (i >= 0 && i > start - 14 && text[i] !== ' ' && text[i] !== '\n') i -= 1;
  return text.slice(i + 1, start - 1);
}

/**
 * A person's name from a run of capitalized words: after "my name is", "I'm", "this is",
 * "customer", "passenger" and the like, or after a title (`Dr. Ana Lima`, kept with its title).
 * Within the run only a title or a trigger word (`I'm`, `Customer`) can start a name, so the text
 * before the run is read only when the word before it could end a trigger.
 */
function nameFromCapitalized(match: RegExpExecArray, text: string): Located | null {
  const run = match[0];
  const start = match.index;
  const words = run.split(' ');
  let wordStart = start;
  for (let k = 0; k < words.length - 1; k += 1) {
    const word = words[k] as string;
    if (TITLES.has(word)) return { value: words.slice(k).join(' '), start: wordStart };
    if (LEADING_TRIGGERS.has(word)) {
      const next = words[k + 1] as string;
      return NOT_NAMES.has(next)
        ? null
        : { value: words.slice(k + 1).join(' '), start: wordStart + word.length + 1 };
    }
    wordStart += word.length + 1;
  }
  const first = words[0] as string;
  if (NOT_NAMES.has(first) || MONTH_WORD.test(first)) return null;
  const previous = previousWord(text, start);
  if (previous === '') return null;
  const title = previous.replace(/\.$/, '');
  if (TITLES.has(title))
    return {
      value: text.slice(start - previous.length - 1, start + run.length),
      start: start - previous.length - 1,
    };
  if (!TRIGGER_ENDINGS.has(previous.toLowerCase())) return null;
  return NAME_TRIGGER.test(text.slice(Math.max(0, start - 16), start)) ? { value: run, start } : null;
}

function acceptNumber(value: string): string | null {
  const number = value.endsWith(',') ? value.slice(0, -1) : value;
  let digits = 0;
  for (let i = 0; i < number.length && digits < 2; i += 1) {
    const code = number.charCodeAt(i);
    if (code >= 48 && code <= 57) digits += 1;
  }
  return digits >= 2 || number.includes('.') ? number : null;
}

/** `key: value` or `key=value` whose key is snake_case (`user_id: X`) or an id (`id=X`, `orderId: X`). */
function keyValueAt(text: string, at: number): Located | null {
  let i = at - 1;
  while (i >= 0 && (text[i] === ' ' || text[i] === '"' || text[i] === "'")) i -= 1;
  const keyEnd = i + 1;
  while (i >= 0 && isWordChar(text.charCodeAt(i))) i -= 1;
  const key = text.slice(i + 1, keyEnd);
  if (!/^(?:[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+Id|id)$/.test(key)) return null;
  let j = at + 1;
  while (j < text.length && (text[j] === ' ' || text[j] === '"' || text[j] === "'")) j += 1;
  const valueStart = j;
  while (j < text.length && j - valueStart <= 60 && !/[\s"',;{}[\]()]/.test(text[j] as string)) j += 1;
  const value = trimTrailing(text.slice(valueStart, j));
  if (value.length < 2 || j - valueStart > 60) return null;
  return { value, start: valueStart, resume: j };
}

// ---------------------------------------------------------------- the patterns, in priority order

// ---------------------------------------------------------------- facts around a run of digits

/** Sticky regexes tried at one position of the digit pass; each is a fact's whole shape. */
const AT = {
  monthFirst: new RegExp(
    String.raw`${MONTH}\.? \d{1,2}(?:st|nd|rd|th)?(?:,? \d{4})?(?![\d:])|${MONTH} \d{4}\b`,
    'y',
  ),
  dayFirst: new RegExp(String.raw`\d{1,2}(?:st|nd|rd|th)? (?:of )?${MONTH}(?:,? \d{4})?\b`, 'y'),
  numericDate:
    /\d{1,4}[-/.]\d{1,2}[-/.]\d{2,4}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?/y,
  clock:
    /\d{1,2}:[0-5]\d(?::[0-5]\d)?(?:\s?[AaPp]\.?[Mm]\.?(?![A-Za-z]))?(?: (?:UTC|GMT|EST|EDT|CST|CDT|MST|MDT|PST|PDT|CET|CEST|BST|JST)\b)?/y,
  meridiem: /\d{1,2} ?(?:[ap]\.m\.|[AP]\.M\.|[ap]m\b|[AP]M\b)/y,
  phone: /(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)\s?|\d{2,4}[\s.-])\d{3,4}[\s.-]\d{3,5}(?!\w)|\+\d{10,15}\b/y,
  amountWord: /\d[\d,]*(?:\.\d+)? ?(?:USD|EUR|GBP|JPY|CAD|AUD|CHF|INR|dollars?|euros?|pounds?|cents?)\b/y,
  address:
    /\d{1,6} (?:[A-Z][A-Za-z]*\.? ){1,4}(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Ter|Parkway|Pkwy|Circle|Cir|Square|Sq|Highway|Hwy|Trail|Trl|Alley)\b\.?(?:,? (?:Suite|Ste|Apt|Apartment|Unit|#)\.? ?[A-Za-z0-9-]+)?(?:, [A-Z][A-Za-z]+(?: [A-Z][A-Za-z]+){0,2})?(?:, [A-Z]{2}(?: \d{5}(?:-\d{4})?)?)?/y,
  number: /\d[\d,]*(?:\.\d+)?(?:%|[a-zA-Z]{1,3}(?!\w))?/y,
};
const MONTH_BEFORE = new RegExp(String.raw`\b${MONTH}\.? $`);

/** Whether the word ending at `at` could be a month name: cheap, before trying the regex. */
function mayEndMonth(text: string, at: number): boolean {
  let i = at;
  if (text[i] === '.') i -= 1;
  const end = i;
  while (i >= 0 && isLetter(text.charCodeAt(i))) i -= 1;
  const length = end - i;
  return length >= 3 && length <= 9 && 'JFMASOND'.includes(text[i + 1] as string);
}

function stickyAt(regex: RegExp, text: string, at: number): RegExpExecArray | null {
  if (at < 0) return null;
  regex.lastIndex = at;
  return regex.exec(text);
}

function located(category: FactCategory, value: string, start: number): Located {
  return { category, value, start, resume: start + value.length };
}

/**
 * The fact that starts at (or just before) the run of digits `text[start, end)`: a date, a time, a
 * phone number, an amount in words, a street address, an id, or a plain number, tried in that
 * order. One pass stops at each run of digits once and looks at the characters around it to pick
 * the shapes worth trying, instead of one pass over the text per shape.
 */
function factAtDigits(text: string, start: number, end: number): Located | null {
  const next = text[end] ?? '';
  const before = text[start - 1] ?? '';
  const runLength = end - start;
  // Dates with a month name: "May 20", "May 2024" (month before) or "20 May 2024" (after).
  if (before === ' ' && runLength <= 4 && mayEndMonth(text, start - 2)) {
    const month = MONTH_BEFORE.exec(text.slice(Math.max(0, start - 11), start));
    if (month) {
      const from = start - (Math.min(start, 11) - month.index);
      const match = stickyAt(AT.monthFirst, text, from);
      if (match) {
        const value = acceptMonthDay(match[0]);
        if (value) return located('date', value, from);
      }
    }
  }
  const token = startsToken(text, start);
  if (token && runLength <= 2 && (next === ' ' || /[snrt]/.test(next))) {
    const match = stickyAt(AT.dayFirst, text, start);
    if (match) {
      const value = acceptMonthDay(match[0]);
      if (value) return located('date', value, start);
    }
  }
  if (token && runLength <= 4 && (next === '-' || next === '/' || next === '.')) {
    const match = stickyAt(AT.numericDate, text, start);
    const value = match ? acceptNumericDate(match, text) : null;
    if (typeof value === 'string') return located('date', value, start);
  }
  if (token && runLength <= 2 && next === ':') {
    const match = stickyAt(AT.clock, text, start);
    const value = match ? acceptTime(match, text) : null;
    if (value) return located('time', value, start);
  }
  if (token && runLength <= 2 && (next === ' ' || /[apAP]/.test(next))) {
    const match = stickyAt(AT.meridiem, text, start);
    const value = match ? acceptTime(match, text) : null;
    if (value) return located('time', value, start);
  }
  // Phones: "+1 555 123 4567", "(555) 123-4567", "555-123-4567".
  const phoneStart = before === '+' || before === '(' ? start - 1 : token ? start : -1;
  if (phoneStart >= 0 && (phoneStart < start || /[\s.-]/.test(next))) {
    const match = stickyAt(AT.phone, text, phoneStart);
    const value = match ? acceptPhone(match, text) : null;
    if (value) return located('phone', value, phoneStart);
  }
  if (token && (next === ' ' || next === ',' || next === '.' || /[A-Zdepc]/.test(next))) {
    const match = stickyAt(AT.amountWord, text, start);
    if (match) return located('amount', match[0].replace(/,$/, ''), start);
  }
  if (token && runLength <= 6 && next === ' ') {
    const match = stickyAt(AT.address, text, start);
    if (match) return located('address', match[0], start);
  }
  const id = tokenAroundDigit(text, start);
  if (id !== null) {
    id.category = 'identifier';
    return id;
  }
  if (!token || before === ',') return null;
  const match = stickyAt(AT.number, text, start);
  const value = match ? acceptNumber(match[0]) : null;
  return value ? located('number', value, start) : null;
}

/** The next run of digits at or after `from`, and the fact around it (see `factAtDigits`). */
function nextDigitFact(text: string, from: number): Located | null {
  let start = from;
  while (start < text.length) {
    const code = text.charCodeAt(start);
    if (code >= 48 && code <= 57) break;
    start += 1;
  }
  if (start >= text.length) return null;
  let end = start + 1;
  while (end < text.length) {
    const code = text.charCodeAt(end);
    if (code < 48 || code > 57) break;
    end += 1;
  }
  const fact = factAtDigits(text, start, end);
  if (fact === null) return { value: '', start, resume: end };
  if (fact.resume === undefined || fact.resume < end) fact.resume = end;
  return fact;
}

const PATTERNS: readonly Pattern[] = [
  {
    category: 'url',
    regex: /\b(?:https?:\/\/|www\.)[^\s<>"'`]+/g,
    worth: (has) => has.link,
    accept: (m) => acceptUrl(m[0]),
  },
  { category: 'email', regex: /@/g, worth: (has) => has.at, accept: (m, text) => emailAround(text, m.index) },
  {
    category: 'path',
    regex: /\b[A-Za-z]:\\(?:[^\\\s"'<>|*?:]+\\?)*/g,
    worth: (has) => has.windowsPath,
    accept: (m) => acceptPath(m[0]),
  },
  {
    category: 'path',
    regex: /\//g,
    worth: (has) => has.slash,
    accept: (m, text) => pathAround(text, m.index),
  },
  {
    category: 'path',
    regex: new RegExp(String.raw`\.(?:${FILE_EXTENSIONS})(?![\w-])`, 'g'),
    worth: (has) => has.dot,
    accept: (m, text) => fileNameEndingAt(text, m.index, m.index + m[0].length),
  },
  {
    category: 'amount',
    regex: /[$€£¥₹] ?\d[\d,]*(?:\.\d+)?(?: ?(?:[kKmMbB]|million|billion|thousand)\b)?/g,
    worth: (has) => has.currencySign,
    accept: (m) => m[0].replace(/,$/, ''),
  },
  {
    category: 'amount',
    regex: /(?:USD|EUR|GBP|JPY|CAD|AUD|CHF|INR) ?\d[\d,]*(?:\.\d+)?/g,
    worth: (has) => has.currencyWord,
    accept: (m, text) => (isWordChar(text.charCodeAt(m.index - 1)) ? null : m[0].replace(/,$/, '')),
  },
  { category: 'number', find: nextDigitFact, worth: (has) => has.digit },
  {
    category: 'identifier',
    // Ids without digits: all-caps codes, and snake_case with a hex tail (`usr_beef`).
    regex: /(?<![\w-])(?:[A-Z]{5,10}|[a-z]{2,8}_[0-9a-f]{4,16})(?![\w-])/g,
    worth: (has) => has.capitals || has.underscore,
    accept: (m, text) => acceptIdentifier(m[0], text, m.index),
  },
  {
    category: 'name',
    regex: /[A-Z][a-z'-]+(?: [A-Z][a-z'-]+){0,3}/g,
    worth: (has) => has.capitalized,
    accept: nameFromCapitalized,
  },
  {
    category: 'other',
    regex: /[:=]/g,
    worth: (has) => has.keyValue,
    accept: (m, text) => keyValueAt(text, m.index),
  },
];

// ---------------------------------------------------------------- labels

const LEADING_FILLER = new Set([
  'my',
  'your',
  'the',
  'a',
  'an',
  'our',
  'their',
  'his',
  'her',
  'its',
  'of',
  'for',
  'and',
  'to',
  'new',
  'this',
  'that',
  'with',
  'in',
  'on',
  'at',
  'is',
]);
const NOT_LABELS = new Set([
  'it',
  'this',
  'that',
  'which',
  'what',
  'there',
  'here',
  'he',
  'she',
  'they',
  'i',
  'we',
]);
const LINKING_VERBS = new Set(['is', 'are', 'was']);
const MAX_LABEL_WORDS = 3;
const keyCache = new Map<string, string>();

/** A snake_case fact key from arbitrary words: `User ID` → `user_id`, `flightNumber` → `flight_number`. */
export function factKey(words: string): string {
  const cached = keyCache.get(words);
  if (cached !== undefined) return cached;
  const key = words
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 40)
    .replace(/_+$/, '');
  if (keyCache.size >= 10_000) keyCache.clear();
  keyCache.set(words, key);
  return key;
}

/**
 * The label written just before a value on the same line: up to three words followed by `:`, `=`,
 * `#`, `is`, `are` or `was` (`User ID: X`, `my email is X`, `"order_id" = X`), without leading
 * filler words (`my`, `the`). Read backwards by hand: this runs once per fact.
 */
function labelBefore(text: string, start: number): string | undefined {
  const limit = Math.max(0, start - 48);
  let i = start - 1;
  while (i >= limit && ' \t"\'`('.includes(text[i] as string)) i -= 1;
  if (i < limit) return undefined;
  const mark = text[i] as string;
  if (mark === ':' || mark === '=' || mark === '#') {
    i -= 1;
  } else {
    const end = i + 1;
    while (i >= limit && isWordChar(text.charCodeAt(i))) i -= 1;
    if (i + 1 === end || !LINKING_VERBS.has(text.slice(i + 1, end).toLowerCase())) return undefined;
  }
  while (i >= limit && ' \t"\'`'.includes(text[i] as string)) i -= 1;
  const words: string[] = [];
  while (i >= limit && words.length < MAX_LABEL_WORDS) {
    const end = i + 1;
    while (i >= limit && isWordChar(text.charCodeAt(i))) i -= 1;
    if (i + 1 === end) break;
    words.unshift(text.slice(i + 1, end));
    if (i < limit || !' -.'.includes(text[i] as string)) break;
    i -= 1;
  }
  while (words.length > 0 && LEADING_FILLER.has((words[0] as string).toLowerCase())) words.shift();
  const last = words[words.length - 1];
  if (last === undefined || NOT_LABELS.has(last.toLowerCase()) || !/^[A-Za-z]/.test(words[0] as string)) {
    return undefined;
  }
  const key = factKey(words.join('_'));
  return key === '' ? undefined : key;
}

// ---------------------------------------------------------------- the scan

/**
 * With a `limit`, each pattern looks at most at this many matches per fact wanted (rejected and
 * known ones included) before the scan moves on: a log that repeats the same path ten thousand
 * times, or has a number on every line, would otherwise be read to its end for nothing new. A
 * sparse text is still read whole; a dense one only until its first facts. Without a limit every
 * match is read.
 */
const ATTEMPTS_PER_FACT = 4;
const MIN_ATTEMPTS_PER_PATTERN = 200;

/**
 * Which characters are taken, shared by every call (the scan is synchronous) and grown on demand,
 * so a call allocates nothing for it; only the taken ranges are cleared afterwards.
 */
let taken = new Uint8Array(1024);

function isFree(start: number, end: number): boolean {
  for (let i = start; i < end; i += 1) if (taken[i] === 1) return false;
  return true;
}

/** The next match of a regex pattern at or after `from`, as a candidate (empty when rejected). */
function nextMatch(pattern: Pattern, text: string, from: number): Located | null {
  const regex = pattern.regex as RegExp;
  regex.lastIndex = from;
  const match = regex.exec(text);
  if (match === null) return null;
  const matchEnd = match.index + match[0].length;
  const verdict = pattern.accept ? pattern.accept(match, text) : match[0];
  if (verdict === null) return { value: '', start: match.index, resume: matchEnd };
  if (typeof verdict === 'string') return { value: verdict, start: match.index, resume: matchEnd };
  if (verdict.resume === undefined || verdict.resume < matchEnd) verdict.resume = matchEnd;
  return verdict;
}

/**
 * The facts in `text`, in order of position; the same text always gives the same facts. Patterns
 * run in priority order, each one pass, and the scan stops once `options.limit` new facts are
 * found, so a huge log costs little more than its first facts: linear in the text at worst.
 */
export function textFacts(text: string, options: TextFactsOptions = {}): TextFact[] {
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const maxAttempts = Math.max(MIN_ATTEMPTS_PER_PATTERN, limit * ATTEMPTS_PER_FACT);
  const isKnown = options.isKnown;
  const found: TextFact[] = [];
  const marked: TextFact[] = [];
  const seen = new Set<string>();
  if (limit <= 0) return found;
  if (taken.length < text.length) taken = new Uint8Array(Math.max(text.length, taken.length * 2));
  const has = features(text);
  try {
    scan: for (const pattern of PATTERNS) {
      if (!pattern.worth(has)) continue;
      let from = 0;
      for (let attempts = 0; attempts < maxAttempts; attempts += 1) {
        const candidate = pattern.find ? pattern.find(text, from) : nextMatch(pattern, text, from);
        if (candidate === null) break;
        from = Math.max(from + 1, candidate.resume ?? candidate.start + candidate.value.length);
        const value = candidate.value;
        const start = candidate.start;
        const end = start + value.length;
        if (value === '' || !isFree(start, end)) continue;
        taken.fill(1, start, end);
        const category = candidate.category ?? pattern.category;
        const fact: TextFact = { category, value, start, end };
        marked.push(fact);
        if (isKnown?.(category, value)) continue;
        const id = `${category}\u0000${value}`;
        if (seen.has(id)) continue;
        seen.add(id);
        found.push(fact);
        if (found.length >= limit) break scan;
      }
    }
  } finally {
    // Leave the shared buffer clean for the next call, whatever happened in this one.
    for (const fact of marked) taken.fill(0, fact.start, fact.end);
  }
  return found.sort((a, b) => a.start - b.start);
}

/**
 * The key of a fact found by `textFacts`: the JSON-ish key of a `key: value` pair, else the label
 * written before it (`user ID is X` → `user_id`), else undefined. Computed only for the facts
 * that are kept, since most found in a long text are not.
 */
export function textFactKey(text: string, fact: TextFact): string | undefined {
  if (fact.category === 'other') return factKey(labelAt(text, fact.start)) || undefined;
  return labelBefore(text, fact.start);
}

/** The key of a `key: value` pair whose value starts at `start`. */
function labelAt(text: string, start: number): string {
  let i = start - 1;
  while (i >= 0 && !isWordChar(text.charCodeAt(i))) i -= 1;
  const end = i + 1;
  while (i >= 0 && isWordChar(text.charCodeAt(i))) i -= 1;
  return text.slice(i + 1, end);
}
