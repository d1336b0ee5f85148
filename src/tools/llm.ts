/**
 * Context tools backed by a chat model over plain `fetch`: OpenAI-compatible Chat Completions
 * (`POST {baseURL}/chat/completions`) and Anthropic Messages (`POST {baseURL}/v1/messages`).
 *
 * A model is optional help, never a dependency: on any failure (timeout, network error, 4xx, 5xx,
 * a reply that does not parse, an empty or over-budget summary) the call falls back to the offline
 * tools and reports what failed through `onWarn`, so compaction always completes. Facts from the
 * model are checked against the messages and added to the offline extractor's, never substituted.
 */
import type { HistoryEntry } from '../messages/types.js';
import { redactUrl } from '../redact-url.js';
import {
  factsPrompt,
  memoryPrompt,
  type PromptPair,
  parseFactsReply,
  parseMemoryReply,
  summaryPrompt,
  validateFactsInSlices,
} from './llm-prompts.js';
import { mergeFacts } from './merge-facts.js';
import { createOfflineTools } from './offline.js';
import { estimateTokens } from './offline-summarizer.js';
import {
  DEFAULT_MAX_REPLY_BYTES,
  ReplyTooLargeError,
  readReplyText,
  replyCap,
  scrubSecrets,
} from './reply-body.js';
import { renderTranscript } from './transcript.js';
import type { ContextTools, ExtractedFact, ExtractFactsOptions, SummarizeOptions } from './types.js';

/** What `onWarn` receives when a model call failed and the offline tools answered instead. */
export interface LLMWarning {
  code: 'llm_fallback';
  message: string;
}

/** Options of `createOpenAITools` and `createAnthropicTools`. */
export interface LLMToolsOptions {
  /** `https://api.openai.com/v1` (OpenAI-compatible) or `https://api.anthropic.com` (Anthropic). */
  baseURL: string;
  apiKey: string;
  model: string;
  /** Per request, including reading the reply. Default 60,000 ms. */
  timeoutMs?: number;
  /** Defaults to the global `fetch`. */
  fetch?: typeof globalThis.fetch;
  /** Answers when the model fails. Defaults to `createOfflineTools()`. */
  fallback?: ContextTools;
  /** Told about every fallback; a throwing listener is ignored. */
  onWarn?: (warning: LLMWarning) => void;
  /** Transcript limits (see `renderTranscript`): whole transcript, default 200,000 characters… */
  maxTranscriptChars?: number;
  /** …and each tool result, default 2,000 characters. */
  maxResultChars?: number;
  /** `max_tokens` of a fact-extraction reply. Default 4,096. */
  factsMaxTokens?: number;
  /**
   * The most bytes of a reply read; a longer one is abandoned as it arrives and falls back like
   * any other fault (`llm_fallback`). Default 8 MiB.
   */
  maxReplyBytes?: number;
}

/** What `prepareMemory` is asked for: a range's summary and the facts of what leaves the view with it. */
export interface MemoryRequest {
  /** The entries the summary replaces (as the planner hands them to `summarize`). */
  summaryEntries: readonly HistoryEntry[];
  /** Further entries leaving the view whose facts are wanted (cleared results); may repeat some. */
  factEntries: readonly HistoryEntry[];
  /** Upper bound on the summary, counted with `countText`. */
  maxTokens: number;
  previousSummary?: string;
  focus?: string;
  countText?: (text: string) => number;
}

/** A model's summary of a range and its fact items, unchecked (check them with `validateFacts`). */
export interface PreparedMemory {
  summary: string;
  facts: unknown[];
}

/** Tools that write a summary and its facts in one model call, and throw (no fallback) on any failure. */
export interface PreparingTools extends ContextTools {
  prepareMemory(request: MemoryRequest): Promise<PreparedMemory>;
}

/** Whether `tools` can prepare a summary and its facts in one call (the `llm` tools can). */
export function canPrepare(tools: ContextTools | undefined): tools is PreparingTools {
  return typeof (tools as Partial<PreparingTools> | undefined)?.prepareMemory === 'function';
}

/** One chat completion: the text of the reply, and whether it was cut by `max_tokens`. */
interface Completion {
  text: string;
  truncated: boolean;
}

/** How one provider's API is called and read. */
interface Provider {
  kind: 'openai' | 'anthropic';
  url: string;
  headers: Record<string, string>;
  body(prompt: PromptPair, maxTokens: number): unknown;
  read(reply: unknown): Completion;
}

const DEFAULT_TIMEOUT_MS = 60_000;
/**
 * The most characters of reply text one output token may stand for, generously (a token of an
 * English text is about 4 characters; the longest in the OpenAI and Anthropic vocabularies are
 * runs of a few dozen spaces or dashes). A reply longer than `max_tokens` × this is not what
 * the model was asked for: it is refused before it is parsed, so a reply that fills
 * `maxReplyBytes` with fact items is never read item by item.
 */
const MAX_CHARS_PER_TOKEN = 32;

/** Refuses a reply text longer than `maxTokens` output tokens can hold. */
function checkReplyLength(text: string, maxTokens: number): void {
  const most = Math.max(64 * 1024, maxTokens * MAX_CHARS_PER_TOKEN);
  if (text.length > most) {
    throw new Error(
      `the reply has ${text.length} characters, more than ${maxTokens} output tokens can hold (${most} at most)`,
    );
  }
}
const DEFAULT_FACTS_MAX_TOKENS = 4_096;
const ANTHROPIC_VERSION = '2023-06-01';

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Tools over an OpenAI-compatible Chat Completions endpoint (OpenAI, Azure-style proxies, vLLM,
 * Ollama, LiteLLM…): `Authorization: Bearer`, body `{ model, messages, temperature: 0, max_tokens }`,
 * reply text from `choices[0].message.content`.
 */
export function createOpenAITools(options: LLMToolsOptions): PreparingTools {
  const provider: Provider = {
    kind: 'openai',
    url: `${trimSlash(options.baseURL)}/chat/completions`,
    headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' },
    body: (prompt, maxTokens) => ({
      model: options.model,
      messages: [
        { role: 'system', content: prompt.system },
        { role: 'user', content: prompt.user },
      ],
      temperature: 0,
      max_tokens: maxTokens,
    }),
    read: (reply) => {
      const choice = isRecord(reply) && Array.isArray(reply.choices) ? reply.choices[0] : undefined;
      const message = isRecord(choice) ? choice.message : undefined;
      const content = isRecord(message) ? message.content : undefined;
      if (typeof content !== 'string') throw new Error('the reply has no choices[0].message.content');
      return { text: content, truncated: isRecord(choice) && choice.finish_reason === 'length' };
    },
  };
  return createLLMTools(provider, options);
}

/**
 * Tools over the Anthropic Messages API: headers `x-api-key` and `anthropic-version: 2023-06-01`,
 * body `{ model, max_tokens, system, messages, temperature: 0 }`, reply text from the `text` blocks
 * of `content`.
 */
export function createAnthropicTools(options: LLMToolsOptions): PreparingTools {
  const provider: Provider = {
    kind: 'anthropic',
    url: `${trimSlash(options.baseURL)}/v1/messages`,
    headers: {
      'x-api-key': options.apiKey,
      'anthropic-version': ANTHROPIC_VERSION,
      'content-type': 'application/json',
    },
    body: (prompt, maxTokens) => ({
      model: options.model,
      max_tokens: maxTokens,
      system: prompt.system,
      messages: [{ role: 'user', content: prompt.user }],
      temperature: 0,
    }),
    read: (reply) => {
      const content = isRecord(reply) ? reply.content : undefined;
      if (!Array.isArray(content)) throw new Error('the reply has no content array');
      const text = content
        .filter(
          (block): block is { type: 'text'; text: string } =>
            isRecord(block) && block.type === 'text' && typeof block.text === 'string',
        )
        .map((block) => block.text)
        .join('');
      return { text, truncated: isRecord(reply) && reply.stop_reason === 'max_tokens' };
    },
  };
  return createLLMTools(provider, options);
}

/** The most of an error reply's body read for its warning. */
const ERROR_BODY_BYTES = 64 * 1024;

/**
 * The body of an error reply, shortened and scrubbed of credentials, for the warning (never the
 * request, which holds the key; an endpoint may still echo it).
 */
async function errorDetail(response: Response, apiKey: string, maxBytes: number): Promise<string> {
  try {
    const raw = await readReplyText(response, Math.min(maxBytes, ERROR_BODY_BYTES));
    const text = scrubSecrets(raw, [apiKey]).replace(/\s+/g, ' ').trim();
    return text === '' ? '' : `: ${text.slice(0, 300)}`;
  } catch {
    return '';
  }
}

/**
 * The most bytes a reply of `maxTokens` output tokens takes: its text at
 * {@link MAX_CHARS_PER_TOKEN} characters a token, each at most 4 bytes of UTF-8 or JSON escape,
 * and the envelope around it. A longer reply is abandoned as it arrives, before it is parsed.
 */
function replyBytesFor(maxTokens: number): number {
  return Math.max(64 * 1024, maxTokens * MAX_CHARS_PER_TOKEN) * 4 + 64 * 1024;
}

async function complete(
  provider: Provider,
  options: LLMToolsOptions,
  prompt: PromptPair,
  maxTokens: number,
): Promise<Completion> {
  const cap = replyCap(options.maxReplyBytes, DEFAULT_MAX_REPLY_BYTES);
  const bound = replyBytesFor(maxTokens);
  try {
    return provider.read(
      await postJson(provider.url, provider.headers, provider.body(prompt, maxTokens), {
        ...options,
        maxReplyBytes: Math.min(cap, bound),
      }),
    );
  } catch (error) {
    if (error instanceof ReplyTooLargeError && bound < cap) {
      throw new Error(
        `the reply is over the ${bound}-byte cap of a reply of ${maxTokens} output tokens (more than they can hold; maxReplyBytes is ${cap})`,
      );
    }
    throw error;
  }
}

/**
 * POSTs `body` as JSON and returns the parsed reply; throws an `Error` saying what failed (no
 * reply in time, network, HTTP status with the scrubbed error body, a reply too large or not JSON).
 */
export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  options: Pick<LLMToolsOptions, 'apiKey' | 'fetch' | 'timeoutMs' | 'maxReplyBytes'>,
): Promise<unknown> {
  const doFetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = replyCap(options.maxReplyBytes, DEFAULT_MAX_REPLY_BYTES);
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
    } catch (error) {
      if (controller.signal.aborted) throw new Error(`no reply within ${timeoutMs} ms`);
      throw new Error(`network error: ${(error as Error).message}`);
    }
    if (!response.ok) {
      throw new Error(`HTTP ${response.status}${await errorDetail(response, options.apiKey, maxBytes)}`);
    }
    let raw: string;
    try {
      raw = await readReplyText(response, maxBytes);
    } catch (error) {
      if (error instanceof ReplyTooLargeError) throw error;
      if (controller.signal.aborted) throw new Error(`no complete reply within ${timeoutMs} ms`);
      throw new Error(`network error while reading the reply: ${(error as Error).message}`);
    }
    try {
      return JSON.parse(raw);
    } catch {
      throw new Error(`the reply is not JSON: ${raw.slice(0, 120)}`);
    }
  } finally {
    clearTimeout(timer);
  }
}

/** After an endpoint fails, it is not asked again for this long (doubling per failure in a row). */
const BACKOFF_FIRST_MS = 30_000;
/** The longest wait between two tries of a failing endpoint. */
const BACKOFF_MAX_MS = 10 * 60_000;

/**
 * When a failing endpoint may be asked again. A compaction that asks a down or rate-limited
 * endpoint waits for its error (or its timeout) before falling back; without a pause, every
 * compaction would wait again, and a rate-limited endpoint would be hit again at once.
 */
class Backoff {
  private failures = 0;
  private until = 0;
  private reason = '';

  /** Why the endpoint is being left alone, or undefined when it may be asked. */
  waiting(): string | undefined {
    if (this.failures === 0 || Date.now() >= this.until) return undefined;
    return `${this.reason}; not asked again until ${new Date(this.until).toISOString()}`;
  }

  failed(reason: string): void {
    this.failures++;
    this.reason = reason;
    this.until = Date.now() + Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** (this.failures - 1));
  }

  succeeded(): void {
    this.failures = 0;
  }
}

/** `complete`, unless the endpoint is backing off; its own failures (not the reply's content) back it off. */
async function completeOrBackOff(
  backoff: Backoff,
  ...args: Parameters<typeof complete>
): Promise<Completion> {
  const waiting = backoff.waiting();
  if (waiting !== undefined) throw new Error(waiting);
  try {
    const reply = await complete(...args);
    backoff.succeeded();
    return reply;
  } catch (error) {
    backoff.failed(error instanceof Error ? error.message : String(error));
    throw error;
  }
}

function createLLMTools(provider: Provider, options: LLMToolsOptions): PreparingTools {
  // Refuses a bad cap now rather than as a fallback on every call.
  replyCap(options.maxReplyBytes, DEFAULT_MAX_REPLY_BYTES);
  const where = redactUrl(provider.url);
  const fallback = options.fallback ?? createOfflineTools();
  const backoff = new Backoff();
  const transcriptOptions = {
    ...(options.maxTranscriptChars !== undefined ? { maxChars: options.maxTranscriptChars } : {}),
    ...(options.maxResultChars !== undefined ? { maxResultChars: options.maxResultChars } : {}),
  };
  const warn = (what: string, error: unknown): void => {
    const reason = scrubSecrets(error instanceof Error ? error.message : String(error), [options.apiKey]);
    try {
      options.onWarn?.({
        code: 'llm_fallback',
        message: `${provider.kind} ${what} failed (${reason}) at ${where}; used the ${fallback.kind} tools instead`,
      });
    } catch {
      // A failing listener must not break compaction.
    }
  };

  return {
    kind: provider.kind,

    async prepareMemory(request: MemoryRequest): Promise<PreparedMemory> {
      const count = request.countText ?? estimateTokens;
      const summarized = new Set(request.summaryEntries.map((e) => e.seq));
      const factsOnly = request.factEntries.filter((e) => !summarized.has(e.seq));
      const prompt = memoryPrompt({
        transcript: renderTranscript(request.summaryEntries, transcriptOptions),
        ...(factsOnly.length > 0 ? { factsOnly: renderTranscript(factsOnly, transcriptOptions) } : {}),
        maxTokens: request.maxTokens,
        facts: await fallback.extractFacts(request.summaryEntries),
        ...(request.previousSummary !== undefined ? { previousSummary: request.previousSummary } : {}),
        ...(request.focus !== undefined ? { focus: request.focus } : {}),
      });
      try {
        const maxTokens =
          Math.max(1, Math.floor(request.maxTokens)) + (options.factsMaxTokens ?? DEFAULT_FACTS_MAX_TOKENS);
        const reply = await completeOrBackOff(backoff, provider, options, prompt, maxTokens);
        if (reply.truncated) throw new Error('the reply was cut off at max_tokens');
        checkReplyLength(reply.text, maxTokens);
        const memory = parseMemoryReply(reply.text);
        const tokens = count(memory.summary);
        if (tokens > request.maxTokens) {
          throw new Error(`the summary has ${tokens} tokens, over the ${request.maxTokens} allowed`);
        }
        return memory;
      } catch (error) {
        const reason = scrubSecrets(error instanceof Error ? error.message : String(error), [options.apiKey]);
        throw new Error(`${reason} at ${where}`);
      }
    },

    async summarize(entries: readonly HistoryEntry[], summarizeOptions: SummarizeOptions): Promise<string> {
      if (entries.length === 0) return summarizeOptions.previousSummary ?? '';
      try {
        const count = summarizeOptions.countText ?? estimateTokens;
        const facts = await fallback.extractFacts(entries);
        const prompt = summaryPrompt({
          transcript: renderTranscript(entries, transcriptOptions),
          maxTokens: summarizeOptions.maxTokens,
          facts,
          ...(summarizeOptions.previousSummary !== undefined
            ? { previousSummary: summarizeOptions.previousSummary }
            : {}),
          ...(summarizeOptions.focus !== undefined ? { focus: summarizeOptions.focus } : {}),
        });
        const maxTokens = Math.max(1, Math.floor(summarizeOptions.maxTokens));
        const reply = await completeOrBackOff(backoff, provider, options, prompt, maxTokens);
        checkReplyLength(reply.text, maxTokens);
        const text = reply.text.trim();
        if (text === '') throw new Error('the summary is empty');
        if (reply.truncated) throw new Error('the summary was cut off at max_tokens');
        const tokens = count(text);
        if (tokens > summarizeOptions.maxTokens) {
          throw new Error(`the summary has ${tokens} tokens, over the ${summarizeOptions.maxTokens} allowed`);
        }
        return text;
      } catch (error) {
        warn('summarize', error);
        return fallback.summarize(entries, summarizeOptions);
      }
    },

    async extractFacts(
      entries: readonly HistoryEntry[],
      factOptions: ExtractFactsOptions = {},
    ): Promise<ExtractedFact[]> {
      const offline = await fallback.extractFacts(entries, factOptions);
      if (entries.length === 0) return offline;
      try {
        const prompt = factsPrompt({
          transcript: renderTranscript(entries, transcriptOptions),
          ...(factOptions.categories !== undefined ? { categories: factOptions.categories } : {}),
        });
        const maxTokens = options.factsMaxTokens ?? DEFAULT_FACTS_MAX_TOKENS;
        const reply = await completeOrBackOff(backoff, provider, options, prompt, maxTokens);
        if (reply.text.trim() === '') throw new Error('the reply is empty');
        checkReplyLength(reply.text, maxTokens);
        const items = parseFactsReply(reply.text);
        return mergeFacts(offline, await validateFactsInSlices(items, entries, factOptions.categories));
      } catch (error) {
        warn('extractFacts', error);
        return offline;
      }
    },
  };
}
