/**
 * Exact token counts from the providers' own counting endpoints, for the measurer to use near
 * the limit where an estimate's error matters. Over plain `fetch`, no SDK.
 *
 * Request shapes, as confirmed through the docs search:
 *
 * - Anthropic, "Count tokens in a Message" (platform.claude.com/docs/api/beta/messages/count_tokens):
 *   `POST {baseURL}/v1/messages/count_tokens` with headers `x-api-key`,
 *   `anthropic-version: 2023-06-01` (platform.claude.com/docs/en/api/versioning: "you must send
 *   an anthropic-version request header"; a later version exists, hence `anthropicVersion`) and
 *   `content-type: application/json`; body `{ model, messages, system?, tools? }` (also
 *   `tool_choice`, `thinking`), the fields of a Messages request minus `max_tokens`; it counts
 *   "tools, images, and documents" too. Response `{ input_tokens }`.
 * - Gemini, `models.countTokens` (ai.google.dev/api/tokens):
 *   `POST {baseURL}/v1beta/models/{model}:countTokens` with the key in `x-goog-api-key`; body
 *   either `{ contents }` or `{ generateContentRequest }`, mutually exclusive; only the latter
 *   carries `systemInstruction` and `tools`, and it needs its own `model: "models/{model}"`.
 *   Response `{ totalTokens }`.
 *
 * Both are sent the whole request (system prompt and tools included), since that is what the
 * provider bills. Results are cached by content: the SHA-256 of the canonical JSON (keys sorted)
 * of provider, model and body, in an in-memory LRU and optionally in a `Cache` under
 * `exact-count`; identical requests in flight share one call. Any failure rejects with
 * {@link CountFailedError} (code `count_failed`) so the caller keeps its estimate.
 */

import { createHash } from 'node:crypto';
import { ConfigurationError, ContextkitError } from '../errors.js';
import { WIRE_FORMATS } from '../formats/registry.js';
import type { CountEndpoint, CountRequest, ViewReader } from '../formats/wire-format.js';
import type { Message, MessageFormat } from '../messages/types.js';
import { redactUrl } from '../redact-url.js';
import type { Cache } from '../stores/cache.js';
import { ReplyTooLargeError, readReplyText, scrubSecrets } from '../tools/reply-body.js';
import { convertMessages } from '../wire/convert.js';
import { detectConversationFormat } from '../wire/detect.js';

/** Providers that offer a counting endpoint. */
export type CountProvider = 'anthropic' | 'google';

export type { CountRequest } from '../formats/wire-format.js';

/** Options of {@link createCountClient}. */
export interface CountClientOptions {
  provider: CountProvider;
  /** Default `https://api.anthropic.com` or `https://generativelanguage.googleapis.com`. */
  baseURL?: string;
  apiKey: string;
  /** Per call, default 10 000 ms. */
  timeoutMs?: number;
  /** Injectable for tests and custom transports; default the global `fetch`. */
  fetch?: typeof fetch;
  /** A shared cache (e.g. over the store's persistence) for counts across processes. */
  cache?: Cache;
  /** How long counts live in `cache`, default 7 days (a model's tokenizer does not change). */
  cacheTtlMs?: number;
  /** How many counts the in-memory LRU holds, default 1000. */
  memoSize?: number;
  /** Default `2023-06-01`. */
  anthropicVersion?: string;
  /**
   * The most bytes of an answer read; a longer one is abandoned as it arrives and the count
   * fails (`reason: 'response'`), so the estimate stands. Default 1 MiB (an answer is a few bytes).
   */
  maxReplyBytes?: number;
}

/** Counts requests exactly through one provider's endpoint. */
export interface CountClient {
  readonly provider: CountProvider;
  /** Input tokens of the request; rejects with {@link CountFailedError}. */
  count(request: CountRequest): Promise<number>;
}

/** Why a count failed, for callers that log or back off. */
export type CountFailure = 'request' | 'http' | 'timeout' | 'network' | 'response';

/**
 * An exact count could not be had. The caller keeps its estimate; `status` is the HTTP status
 * when the provider answered, and the message quotes the provider's error, never the key.
 */
export class CountFailedError extends ContextkitError {
  readonly provider: CountProvider;
  readonly reason: CountFailure;
  readonly status: number | undefined;
  constructor(
    provider: CountProvider,
    reason: CountFailure,
    message: string,
    options: { status?: number; cause?: unknown } = {},
  ) {
    super('count_failed', `${provider} token count failed: ${message}`, { cause: options.cause });
    this.provider = provider;
    this.reason = reason;
    this.status = options.status;
  }
}

/** The name counts are kept under in a `Cache`. */
export const EXACT_COUNT_CACHE = 'exact-count';

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_CACHE_TTL_MS = 7 * 24 * 60 * 60 * 1000;
const DEFAULT_MEMO_SIZE = 1000;
/** An answer is `{"input_tokens":123}`; an error body a few KB. */
const DEFAULT_MAX_COUNT_REPLY_BYTES = 1024 * 1024;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON with object keys sorted and `undefined` members left out, so equal content hashes equal. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (isRecord(value)) {
    const members = Object.keys(value)
      .sort()
      .filter((key) => value[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * A view read through the core's detection and conversion, for a format's count body (which
 * cannot detect or convert itself: the formats are below the core).
 */
export function viewReaderOf(messages: readonly Message[]): ViewReader {
  return {
    format: detectConversationFormat(messages),
    as: (to) => convertMessages(messages, to as MessageFormat),
  };
}

/** The endpoint `provider` names: the one a registered format owns. */
function endpointOf(provider: CountProvider): CountEndpoint | undefined {
  return WIRE_FORMATS.find((f) => f.countEndpoint?.provider === provider)?.countEndpoint;
}

/** The names `createCountClient` takes: every registered format's counting endpoint. */
const COUNT_PROVIDERS = WIRE_FORMATS.flatMap((f) => (f.countEndpoint ? [f.countEndpoint.provider] : []));

/**
 * The JSON body `count` sends for `request` (exported so callers and tests can see exactly what
 * is counted). Throws what message conversion throws for a view that mixes formats.
 */
export function countRequestBody(provider: CountProvider, request: CountRequest): Record<string, unknown> {
  const endpoint = endpointOf(provider);
  if (endpoint === undefined) throw new TypeError(`no counting endpoint "${String(provider)}"`);
  return endpoint.body(request, viewReaderOf(request.messages));
}

/** A short excerpt of an error body: the provider's `error.message` when there is one. */
function errorExcerpt(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    const error = isRecord(parsed) ? parsed.error : undefined;
    if (isRecord(error) && typeof error.message === 'string') return error.message.slice(0, 300);
  } catch {
    // Not JSON: quote the start of the text.
  }
  return JSON.stringify(text.slice(0, 200));
}

function isAbort(error: unknown): boolean {
  return isRecord(error) && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

/** A bounded map that forgets the least recently used entry first. */
class Lru {
  readonly #max: number;
  readonly #map = new Map<string, number>();
  constructor(max: number) {
    this.#max = max;
  }
  get(key: string): number | undefined {
    const value = this.#map.get(key);
    if (value === undefined) return undefined;
    this.#map.delete(key);
    this.#map.set(key, value);
    return value;
  }
  set(key: string, value: number): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#max) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.#map.delete(oldest.value);
    }
  }
}

function positiveOption(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0)) {
    throw new ConfigurationError(name, `must be a positive number, got ${String(value)}`);
  }
  return value;
}

/**
 * A client for one provider's counting endpoint (see the module note). Counts are cached by
 * content, so asking again for an unchanged view costs nothing; a failed count is not cached.
 */
export function createCountClient(options: CountClientOptions): CountClient {
  const { provider, apiKey, cache } = options;
  const found = endpointOf(provider);
  if (found === undefined) {
    const names = COUNT_PROVIDERS.map((p) => JSON.stringify(p)).join(' or ');
    throw new ConfigurationError('provider', `must be ${names}, got ${String(provider)}`);
  }
  const countEndpoint: CountEndpoint = found;
  if (typeof apiKey !== 'string' || apiKey === '') {
    throw new ConfigurationError('apiKey', `the ${provider} count endpoint needs an API key`);
  }
  const baseURL = (options.baseURL ?? countEndpoint.baseURL).replace(/\/+$/, '');
  const timeoutMs = positiveOption('timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS);
  const cacheTtlMs = positiveOption('cacheTtlMs', options.cacheTtlMs, DEFAULT_CACHE_TTL_MS);
  const memo = new Lru(positiveOption('memoSize', options.memoSize, DEFAULT_MEMO_SIZE));
  const doFetch = options.fetch ?? globalThis.fetch;
  const anthropicVersion = options.anthropicVersion ?? '2023-06-01';
  const maxReplyBytes = positiveOption('maxReplyBytes', options.maxReplyBytes, DEFAULT_MAX_COUNT_REPLY_BYTES);
  const pending = new Map<string, Promise<number>>();

  const endpoint = (model: string): { url: string; headers: Record<string, string> } =>
    countEndpoint.target(baseURL, model, apiKey, anthropicVersion);

  const fail = (reason: CountFailure, message: string, extra?: { status?: number; cause?: unknown }) =>
    new CountFailedError(provider, reason, message, extra);

  async function call(model: string, body: Record<string, unknown>): Promise<number> {
    const { url, headers } = endpoint(model);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      let response: Response;
      try {
        response = await doFetch(url, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
          signal: controller.signal,
        });
      } catch (cause) {
        if (controller.signal.aborted || isAbort(cause)) {
          throw fail('timeout', `no answer within ${timeoutMs} ms`, { cause });
        }
        throw fail('network', `cannot reach ${redactUrl(url)}: ${scrubSecrets(String(cause), [apiKey])}`, {
          cause,
        });
      }
      let text: string;
      try {
        text = await readReplyText(response, maxReplyBytes);
      } catch (cause) {
        if (cause instanceof ReplyTooLargeError) throw fail('response', cause.message, { cause });
        if (controller.signal.aborted) throw fail('timeout', `no answer within ${timeoutMs} ms`, { cause });
        throw fail('network', `the answer was cut off: ${String(cause)}`, { cause });
      }
      if (!response.ok) {
        const excerpt = scrubSecrets(errorExcerpt(text), [apiKey]);
        throw fail('http', `HTTP ${response.status}: ${excerpt}`, { status: response.status });
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (cause) {
        throw fail('response', `the answer is not JSON: ${JSON.stringify(text.slice(0, 80))}`, { cause });
      }
      const field = countEndpoint.field;
      const value = isRecord(parsed) ? parsed[field] : undefined;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
        throw fail('response', `the answer has no ${field} count: ${JSON.stringify(text.slice(0, 80))}`);
      }
      return value;
    } finally {
      clearTimeout(timer);
    }
  }

  async function lookup(key: string, model: string, body: Record<string, unknown>): Promise<number> {
    if (cache) {
      try {
        const cached = await cache.get<unknown>(EXACT_COUNT_CACHE, key);
        if (typeof cached === 'number' && Number.isInteger(cached) && cached >= 0) {
          memo.set(key, cached);
          return cached;
        }
      } catch {
        // A cache that cannot be read is a miss: the endpoint still answers.
      }
    }
    const value = await call(model, body);
    memo.set(key, value);
    if (cache) {
      // A count that cannot be stored is still a good count.
      await cache.set(EXACT_COUNT_CACHE, key, value, { ttlMs: cacheTtlMs }).catch(() => undefined);
    }
    return value;
  }

  return {
    provider,
    async count(request: CountRequest): Promise<number> {
      let body: Record<string, unknown>;
      try {
        if (!isRecord(request) || typeof request.model !== 'string' || request.model === '') {
          throw new TypeError('request.model must be a non-empty string');
        }
        if (!Array.isArray(request.messages)) throw new TypeError('request.messages must be an array');
        body = countRequestBody(provider, request);
      } catch (cause) {
        throw fail('request', `cannot build the request: ${(cause as Error).message}`, { cause });
      }
      const key = createHash('sha256')
        .update(canonicalJson({ provider, model: request.model, body }))
        .digest('hex');
      const known = memo.get(key);
      if (known !== undefined) return known;
      const inFlight = pending.get(key);
      if (inFlight) return inFlight;
      const promise = lookup(key, request.model, body).finally(() => pending.delete(key));
      pending.set(key, promise);
      return promise;
    },
  };
}
