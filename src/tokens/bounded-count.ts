/**
 * Counting in time linear in the text's length. gpt-tokenizer merges each pre-token (a run the
 * encoding's split pattern cuts out: a word, a run of punctuation or of spaces) pair by pair, in
 * time quadratic in the pre-token's length: `'a'.repeat(400_000)`, a run of `-` or the `AAAA…`
 * of a zero-filled base64 blob each take tens of seconds, and a 170M-character one aborts the
 * process. Ordinary text has no pre-token longer than a few dozen characters.
 *
 * So a text that may hold a long pre-token (a cheap pass tells, see `mayHoldLongPretoken`; other
 * texts are counted in one call) is read pre-token by pre-token with the encoding's own split
 * pattern, and counted in chunks of about {@link CHUNK_CHARS} characters cut only where cutting cannot change
 * the count (a pre-token boundary not preceded by whitespace: the only parts of the pattern that
 * look past a pre-token, `\s+(?!\S)` and `\s+$`, start on whitespace). Such texts are counted
 * exactly. A pre-token longer than {@link MAX_PRETOKEN_CHARS} characters is counted in pieces of
 * that length, each as its own text: that pre-token's count may then differ from the exact one
 * by at most one token per cut, i.e. by at most `ceil(length / MAX_PRETOKEN_CHARS) - 1` tokens
 * (bounded-count.test.ts checks the bound on runs, base64 and random long words), which is under
 * 0.2% of the characters of the run.
 *
 * Encoded binary data is not text: a run of {@link BLOB_RUN_CHARS} or more base64/hex characters
 * with digits among them (a file or an image pasted into a tool result) costs gpt-tokenizer
 * 1.5–4 µs a character (a 10 MB blob: tens of seconds), since nearly every pre-token is new. Its
 * pre-tokens are counted by their size instead (see `sizeBound`): never under the exact count,
 * about 1.5× it on random base64, and linear. Runs of one repeated character are not blobs: the
 * encoder's cache makes their pieces cheap, and they stay within the bound above.
 */
import { CL100K_TOKEN_SPLIT_REGEX, O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import type { EncodingName } from './types.js';

/** Where a text is read pre-token by pre-token, it is counted in chunks of about this many characters. */
export const CHUNK_CHARS = 8192;
/** Pre-tokens longer than this are counted in pieces of this many characters. */
export const MAX_PRETOKEN_CHARS = 512;
/** A run of base64/hex characters at least this long, with digits among them, is a blob. */
export const BLOB_RUN_CHARS = 32_768;
/** A blob's run has at least one digit per this many characters (random base64: one in 6.4). */
const BLOB_CHARS_PER_DIGIT = 64;
/**
 * Texts longer than this are read pre-token by pre-token and counted in chunks, so that one call
 * to the encoder adds at most about {@link CHUNK_CHARS} entries to its merge cache (encodings.ts).
 */
export const ONE_CALL_CHARS = 65_536;

/** Counts ordinary text in one call to the encoder. */
type RawCounter = (text: string) => number;

const SPLIT_SOURCES: Readonly<Record<EncodingName, string>> = {
  o200k_base: O200K_TOKEN_SPLIT_REGEX.source,
  cl100k_base: CL100K_TOKEN_SPLIT_REGEX.source,
};

function isWhitespaceCode(c: number): boolean {
  // Every character `\s` matches; only these can start the look-ahead parts of the pattern.
  return (
    (c >= 9 && c <= 13) ||
    c === 32 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * Whether `text` may hold a pre-token longer than {@link MAX_PRETOKEN_CHARS}, in one cheap pass.
 * A pre-token other than a run of whitespace holds no digit and no whitespace but `\r`/`\n`,
 * apart from one leading character; so when no stretch free of those "breakers" and no run of
 * whitespace is that long, none is. Conservative: `true` only sends the text down the slower,
 * still exact, path that finds the pre-tokens.
 */
function mayHoldLongPretoken(text: string): boolean {
  let sinceBreaker = 0;
  let whitespace = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isWhitespaceCode(c)) {
      whitespace++;
      sinceBreaker = c === 10 || c === 13 ? sinceBreaker + 1 : 0;
    } else {
      whitespace = 0;
      sinceBreaker = c >= 48 && c <= 57 ? 0 : sinceBreaker + 1;
    }
    if (sinceBreaker >= MAX_PRETOKEN_CHARS || whitespace > MAX_PRETOKEN_CHARS) return true;
  }
  return false;
}

/** Per ASCII code: 2 for a digit, 1 for another base64 (standard or URL-safe, padding) or hex character. */
const BLOB_CODES = (() => {
  const codes = new Uint8Array(128);
  for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/=_-') codes[c.charCodeAt(0)] = 1;
  for (const c of '0123456789') codes[c.charCodeAt(0)] = 2;
  return codes;
})();

/** The blobs of `text` as `[start, end, start, end, …]`, in one pass (empty for ordinary text). */
export function blobRuns(text: string): number[] {
  const runs: number[] = [];
  if (text.length < BLOB_RUN_CHARS) return runs;
  let start = 0;
  let digits = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 128;
    const code = c < 128 ? BLOB_CODES[c]! : 0;
    if (code === 2) digits++;
    if (code !== 0) continue;
    const length = i - start;
    if (length >= BLOB_RUN_CHARS && digits * BLOB_CHARS_PER_DIGIT >= length) runs.push(start, i);
    start = i + 1;
    digits = 0;
  }
  return runs;
}

/**
 * At least the tokens of `text[start, end)` when each of its pre-tokens is encoded alone: a
 * pre-token never has more tokens than UTF-8 bytes (the encoding's base tokens are the 256
 * bytes), and a run of digits is cut into pre-tokens of at most three, each one token.
 */
export function sizeBound(text: string, start: number, end: number): number {
  let n = 0;
  let digits = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      digits++;
      continue;
    }
    if (digits > 0) {
      n += Math.ceil(digits / 3);
      digits = 0;
    }
    // A surrogate pair is 4 bytes: 2 for each half.
    n += c < 0x80 ? 1 : c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 2 : 3;
  }
  return n + Math.ceil(digits / 3);
}

/**
 * The last position in `text[start, end)` holding a digit after a non-digit (or `start`). In a
 * blob that is a pre-token boundary of both encodings, and a safe cut: no pattern but the digits'
 * own takes a digit, and a letter or punctuation pre-token ends where a digit follows.
 */
function lastDigitStart(text: string, start: number, end: number): number {
  for (let i = end - 1; i > start; i--) {
    const c = text.charCodeAt(i);
    const before = text.charCodeAt(i - 1);
    if (c >= 48 && c <= 57 && !(before >= 48 && before <= 57)) return i;
  }
  return start;
}

/** Where to cut `text` near `at` without splitting a surrogate pair. */
function safeCut(text: string, at: number): number {
  const c = text.charCodeAt(at - 1);
  return c >= 0xd800 && c <= 0xdbff ? at - 1 : at;
}

/** Counts one over-long pre-token in pieces; see the module comment for the bound. */
function countLongPretoken(raw: RawCounter, text: string, start: number, end: number): number {
  let n = 0;
  let at = start;
  while (at < end) {
    let next = Math.min(end, at + MAX_PRETOKEN_CHARS);
    if (next < end) next = safeCut(text, next);
    if (next <= at) next = Math.min(end, at + 2);
    n += raw(text.slice(at, next));
    at = next;
  }
  return n;
}

/**
 * Counts a long text with no long pre-token and no blob exactly, in chunks of about
 * {@link CHUNK_CHARS} cut before a space that follows a non-whitespace character: found without
 * reading pre-tokens (which would cost another pass of the split pattern), and a safe cut in both
 * encodings. The space starts a pre-token (no pattern takes a space after a letter, digit or
 * punctuation run), and the text before the cut ends in non-whitespace.
 */
function countAtSpaces(raw: RawCounter, text: string): number {
  let total = 0;
  let chunkStart = 0;
  for (;;) {
    let cut = text.indexOf(' ', chunkStart + CHUNK_CHARS);
    while (cut > 0 && isWhitespaceCode(text.charCodeAt(cut - 1))) cut = text.indexOf(' ', cut + 1);
    if (cut < 0) break;
    total += raw(text.slice(chunkStart, cut));
    chunkStart = cut;
  }
  return total + raw(text.slice(chunkStart));
}

/**
 * Wraps an encoder's counting function so that any text is counted in time linear in its
 * length, exactly unless it holds a pre-token longer than {@link MAX_PRETOKEN_CHARS} characters
 * (then within the bound the module comment gives).
 */
export function boundedCounter(encoding: EncodingName, raw: RawCounter): RawCounter {
  const source = SPLIT_SOURCES[encoding];
  if (source === undefined) throw new TypeError(`unknown encoding ${JSON.stringify(encoding)}`);
  const split = new RegExp(source, 'gu');
  return (text: string): number => {
    // Ordinary text up to ONE_CALL_CHARS: one call, exact, and linear (no pre-token is long).
    if (text.length <= MAX_PRETOKEN_CHARS) return raw(text);
    const blobs = blobRuns(text);
    if (blobs.length === 0 && !mayHoldLongPretoken(text))
      return text.length <= ONE_CALL_CHARS ? raw(text) : countAtSpaces(raw, text);
    let total = 0;
    let chunkStart = 0;
    // The newest pre-token start where the chunk may end exactly (not preceded by whitespace).
    let safeEnd = 0;
    let blob = 0;
    split.lastIndex = 0;
    for (;;) {
      const m = split.exec(text);
      if (m === null) break;
      const start = m.index;
      const end = start + m[0].length;
      if (end === start) {
        // Cannot happen with these patterns; never loop on an empty match.
        split.lastIndex = end + 1;
        continue;
      }
      if (start === chunkStart || !isWhitespaceCode(text.charCodeAt(start - 1))) safeEnd = start;
      while (blob < blobs.length && blobs[blob + 1]! <= start) blob += 2;
      if (blob < blobs.length && blobs[blob]! < end) {
        // The blob, and the pre-tokens since the chunk's last safe end: by size, up to the blob's
        // last pre-token boundary it can name without reading pre-tokens (see `lastDigitStart`).
        if (safeEnd > chunkStart) total += raw(text.slice(chunkStart, safeEnd));
        const resume = Math.max(end, lastDigitStart(text, blobs[blob]!, blobs[blob + 1]!));
        total += sizeBound(text, safeEnd, resume);
        chunkStart = resume;
        safeEnd = resume;
        split.lastIndex = resume;
      } else if (end - start > MAX_PRETOKEN_CHARS) {
        if (start > chunkStart) total += raw(text.slice(chunkStart, start));
        total += countLongPretoken(raw, text, start, end);
        chunkStart = end;
      } else if (
        end - chunkStart >= CHUNK_CHARS &&
        end < text.length &&
        !isWhitespaceCode(text.charCodeAt(end - 1))
      ) {
        total += raw(text.slice(chunkStart, end));
        chunkStart = end;
      }
    }
    split.lastIndex = 0;
    if (chunkStart < text.length) total += raw(text.slice(chunkStart));
    return total;
  };
}
