/**
 * Reading what a model endpoint answers without trusting it: the body is read with a size cap
 * (an endpoint that answers 300 MB must not take its host down), and what an error body says is
 * scrubbed of credentials before it goes into a warning (a 401 that echoes the request headers
 * would otherwise put the key into a `context:warn` event).
 */

import { ConfigurationError } from '../errors.js';
import { redactUrlsIn } from '../redact-url.js';

/** Default cap of a summarizer or fact-extraction reply: far above any `max_tokens` reply. */
export const DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024;

/** The reply was longer than the cap; callers treat it like any other fault of the endpoint. */
export class ReplyTooLargeError extends Error {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`the reply is over the ${maxBytes}-byte cap (maxReplyBytes)`);
    this.name = 'ReplyTooLargeError';
    this.maxBytes = maxBytes;
  }
}

/**
 * The body of `response` as text, read chunk by chunk and abandoned (the stream cancelled) as
 * soon as it passes `maxBytes`, or before reading when `Content-Length` already says so.
 * Rejects with {@link ReplyTooLargeError}, or with the stream's own error.
 */
export async function readReplyText(response: Response, maxBytes: number): Promise<string> {
  const body = response.body;
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await body?.cancel().catch(() => undefined);
    throw new ReplyTooLargeError(maxBytes);
  }
  if (body === null) return '';
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new ReplyTooLargeError(maxBytes);
    }
    parts.push(decoder.decode(value, { stream: true }));
  }
  parts.push(decoder.decode());
  return parts.join('');
}

/** Checks a `maxReplyBytes` option: a positive whole number of bytes. */
export function replyCap(value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigurationError(
      'maxReplyBytes',
      `expected a positive whole number of bytes, got ${String(value)}`,
    );
  }
  return value;
}

const REDACTED = '[redacted]';

/** Header lines and tokens that carry credentials, wherever an error body quotes them. */
const SECRET_PATTERNS: readonly RegExp[] = [
  // "Authorization: Bearer sk-…", "authorization":"Basic …", x-api-key=…, x-goog-api-key …
  /\b(authorization|proxy-authorization|x-api-key|x-goog-api-key|api[-_]?key)("?\s*[:=]\s*"?)(?:(?:bearer|basic|token)\s+)?[^\s",;}]+/gi,
  /\bbearer\s+[A-Za-z0-9._~+/=-]+/gi,
  // Provider key shapes: OpenAI/Anthropic `sk-…`, Google `AIza…`.
  /\bsk-[A-Za-z0-9_-]{8,}/g,
  /\bAIza[0-9A-Za-z_-]{20,}/g,
];

/** The shortest piece of a configured key that is taken for the key when found on its own. */
const KEY_FRAGMENT_CHARS = 8;

/**
 * What every base64 (and base64url) encoding of a text holding `key` contains, whatever the
 * bytes before it: for each of the three alignments, the characters that encode the key's bytes
 * alone. A piece of the key encoded at the same alignment is a run inside one of these.
 */
function base64Cores(key: string): string[] {
  const bytes = Buffer.from(key, 'utf8');
  const cores: string[] = [];
  for (let before = 0; before < 3; before++) {
    const encoded = Buffer.concat([Buffer.alloc(before), bytes]).toString('base64');
    const whole = Math.floor((before + bytes.length) / 3) * 4;
    const core = encoded.slice(before > 0 ? 4 : 0, whole);
    cores.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return cores;
}

/** Every run of {@link KEY_FRAGMENT_CHARS} characters of `key` and of its base64 cores. */
function keyGrams(key: string): Set<string> {
  const grams = new Set<string>();
  for (const source of [key, ...base64Cores(key)]) {
    for (let i = 0; i + KEY_FRAGMENT_CHARS <= source.length; i++) {
      grams.add(source.slice(i, i + KEY_FRAGMENT_CHARS));
    }
  }
  return grams;
}

/**
 * `text` with every trace of `key` redacted: the key itself, and every run of at least
 * {@link KEY_FRAGMENT_CHARS} characters found in the key or in its base64 form, wherever it
 * stands (what is left of the key after a line break, a cut or a quote split it, beside any
 * other character; a `Basic` credential or a token quoted in base64, or a piece of one). Each
 * stretch of the text covered by such runs becomes one `[redacted]`. One pass over the text.
 */
function scrubKey(text: string, key: string): string {
  const whole = text.split(key).join(REDACTED);
  const grams = keyGrams(key);
  if (grams.size === 0) return whole;
  // covered[i] > 0: character i is inside a run found in the key (a difference array of runs).
  const covered = new Int32Array(whole.length + 1);
  let any = false;
  for (let i = 0; i + KEY_FRAGMENT_CHARS <= whole.length; i++) {
    if (grams.has(whole.slice(i, i + KEY_FRAGMENT_CHARS))) {
      covered[i] = (covered[i] as number) + 1;
      covered[i + KEY_FRAGMENT_CHARS] = (covered[i + KEY_FRAGMENT_CHARS] as number) - 1;
      any = true;
    }
  }
  if (!any) return whole;
  let out = '';
  let depth = 0;
  let from = 0;
  for (let i = 0; i <= whole.length; i++) {
    const was = depth;
    depth += covered[i] as number;
    if (was === 0 && depth > 0) {
      out += whole.slice(from, i);
    } else if (was > 0 && depth === 0) {
      out += REDACTED;
      from = i;
    }
  }
  return out + whole.slice(from);
}

/**
 * `text` with credentials replaced by `[redacted]`: `Authorization`, `x-api-key` and
 * `x-goog-api-key` values, `Bearer …` tokens, key-shaped strings (`sk-…`, `AIza…`) and every
 * trace of the given keys (the configured key, when it is at least 4 characters long: the key,
 * what is left of it after a split, and its base64 form); URLs in it lose their userinfo and
 * secret query parameters (see `redactUrl`).
 */
export function scrubSecrets(text: string, keys: readonly (string | undefined)[] = []): string {
  let out = redactUrlsIn(text);
  for (const key of keys) {
    if (typeof key === 'string' && key.length >= 4) out = scrubKey(out, key);
  }
  out = out.replace(SECRET_PATTERNS[0]!, (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`);
  for (const pattern of SECRET_PATTERNS.slice(1)) {
    out = out.replace(pattern, (m) => (/^bearer/i.test(m) ? `Bearer ${REDACTED}` : REDACTED));
  }
  return out;
}
