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

/** Runs of characters a key or its base64 form is made of. */
const TOKEN = /[A-Za-z0-9._~+/=-]+/g;

/**
 * What every base64 (and base64url) encoding of a text holding `key` contains, whatever the
 * bytes before it: for each of the three alignments, the characters that encode the key's bytes
 * alone. Empty for a key too short to leave a telling run.
 */
function base64Cores(key: string): string[] {
  const bytes = Buffer.from(key, 'utf8');
  const cores: string[] = [];
  for (let before = 0; before < 3; before++) {
    const encoded = Buffer.concat([Buffer.alloc(before), bytes]).toString('base64');
    const whole = Math.floor((before + bytes.length) / 3) * 4;
    const core = encoded.slice(before > 0 ? 4 : 0, whole);
    if (core.length >= KEY_FRAGMENT_CHARS) {
      cores.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  return cores;
}

/**
 * `text` with every trace of `key` redacted: the key itself, a piece of it that stands alone
 * (what is left of it after a line break, a cut or a quote split it: a run of at least
 * {@link KEY_FRAGMENT_CHARS} key characters found inside the key), and a base64 run that encodes
 * it (a `Basic` credential or a token quoted in base64).
 */
function scrubKey(text: string, key: string): string {
  const cores = base64Cores(key);
  return text
    .split(key)
    .join(REDACTED)
    .replace(TOKEN, (token) => {
      if (token.length >= KEY_FRAGMENT_CHARS && key.includes(token)) return REDACTED;
      return cores.some((core) => token.includes(core)) ? REDACTED : token;
    });
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
