/**
 * Recognises a provider's "the request does not fit the context window" error, however an SDK
 * wrapped it, and reads the numbers in it, so a caller can shrink the view and retry once
 * instead of failing the turn.
 *
 * The wording below is the providers' own, as found in public issue threads quoting real
 * responses:
 *
 * - OpenAI Chat Completions, `code: "context_length_exceeded"`, `type: "invalid_request_error"`:
 *   "This model's maximum context length is 4097 tokens. However, your messages resulted in
 *   4294 tokens. Please reduce the length of the messages." (chathub-dev/chathub#126,
 *   webtimemachine/wtm2#579), the older "However, you requested 4268 tokens (4012 in the
 *   messages, 256 in the completion)" (conghaonet/hao_chatgpt#4), and with tools "(202767 in the
 *   messages, 101 in the functions)" (bytedance/deer-flow#310). vLLM and OpenRouter answer in
 *   the same words ("This endpoint's maximum context length is 32768 tokens. However, you
 *   requested about 42832 tokens", refly-ai/refly#1177); a newer vLLM says "You passed 99073
 *   input tokens and requested 32000 output tokens. However, the model's context length is only
 *   131072 tokens, resulting in a maximum input length of 99072 tokens" (anomalyco/opencode#17748).
 * - OpenAI Responses API, same code: "Your input exceeds the context window of this model.
 *   Please adjust your input and try again." (dyad-sh/dyad#1672).
 * - Anthropic, `type: "invalid_request_error"`: "prompt is too long: 208310 tokens > 200000
 *   maximum" (anthropics/claude-code#12186; also through Bedrock, aaif-goose/goose#7504), and
 *   "input length and `max_tokens` exceed context limit: 189136 + 20000 > 204648, decrease input
 *   length or `max_tokens` and try again" (anthropics/claude-code#408).
 * - Gemini, `status: "INVALID_ARGUMENT"`, code 400: "The input token count (1200293) exceeds the
 *   maximum number of tokens allowed (1048576)." (google-gemini/gemini-cli#6678).
 * - xAI: "This model's maximum prompt length is 131072 but the request contains 136973 tokens."
 *   (cline/cline#3120). Bedrock: "Input is too long for requested model." (aws-samples/
 *   bedrock-chat#95). llama.cpp server: `type: "exceed_context_size_error"`, "the request
 *   exceeds the available context size", with `n_prompt_tokens` and `n_ctx` (ggml-org/llama.cpp#15780).
 *
 * Wrappers looked through: the OpenAI SDK (`.status`, `.code`, `.error.message`), the
 * Anthropic SDK (`.error.error.message`, and a message of `400 {json}`), axios
 * (`.response.data`), the AI SDK's `APICallError` (`.responseBody` as a JSON string, `.data`,
 * `.statusCode`), `.cause` chains, and arrays of errors (Gemini's CLI). Only error fields are
 * read, never a request body an error carries (`requestBodyValues`, `config`), so a user
 * message that quotes one of these sentences is not mistaken for the error.
 *
 * Not overflows, though they look alike: rate limits that mention prompt length ("This request
 * would exceed the rate limit … Please reduce the prompt length", Anthropic `rate_limit_error`;
 * OpenAI "Request too large for gpt-4o … on tokens per min", `rate_limit_exceeded`) and a
 * `max_tokens` above the model's output limit; shrinking the history does not fix those.
 */

/** Numbers read from an overflow error. Either may be missing: not every provider says them. */
export interface OverflowNumbers {
  /**
   * The most input tokens the provider would have taken with this request's settings: the
   * context window, less the output tokens the request reserved when the error says so.
   */
  limit?: number;
  /** The input tokens the provider counted. */
  actual?: number;
}

/** Keys that hold an error's own data; anything else (the request, headers) is not read. */
const ERROR_KEYS = [
  'message',
  'error',
  'errors',
  'code',
  'type',
  'status',
  'statusCode',
  'responseBody',
  'response',
  'data',
  'body',
  'cause',
  'reason',
  'detail',
  'details',
  'lc_error_code',
  'n_prompt_tokens',
  'n_ctx',
] as const;

/** Of those, the ones whose string value is a machine code rather than prose. */
const CODE_KEYS: ReadonlySet<string> = new Set(['code', 'type', 'status', 'reason', 'lc_error_code']);

const MAX_DEPTH = 8;
const MAX_TEXT = 20_000;

/** What an error says, gathered from every place SDKs put it. */
interface Evidence {
  texts: string[];
  codes: Set<string>;
  statuses: Set<number>;
  promptTokens?: number;
  contextSize?: number;
}

function gather(value: unknown, evidence: Evidence, seen: Set<object>, depth: number): void {
  if (depth > MAX_DEPTH || value === null || value === undefined) return;
  if (typeof value === 'string') {
    const text = value.slice(0, MAX_TEXT);
    evidence.texts.push(text);
    // SDKs often put the body's JSON in a string: "400 {…}", or all of `responseBody`.
    const open = text.indexOf('{');
    const close = text.lastIndexOf('}');
    if (open >= 0 && close > open) {
      try {
        gather(JSON.parse(text.slice(open, close + 1)), evidence, seen, depth + 1);
      } catch {
        // Not JSON after all: the text itself was kept.
      }
    }
    return;
  }
  if (typeof value !== 'object' || seen.has(value)) return;
  seen.add(value);
  if (Array.isArray(value)) {
    for (const item of value.slice(0, 20)) gather(item, evidence, seen, depth + 1);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const key of ERROR_KEYS) {
    let field: unknown;
    try {
      field = record[key];
    } catch {
      continue;
    }
    if (field === undefined || field === null) continue;
    if (typeof field === 'number') {
      if (key === 'status' || key === 'statusCode' || key === 'code') evidence.statuses.add(field);
      else if (key === 'n_prompt_tokens') evidence.promptTokens = field;
      else if (key === 'n_ctx') evidence.contextSize = field;
      continue;
    }
    if (typeof field === 'string' && CODE_KEYS.has(key)) {
      evidence.codes.add(field.toLowerCase());
      continue;
    }
    gather(field, evidence, seen, depth + 1);
  }
}

function evidenceOf(err: unknown): Evidence {
  const evidence: Evidence = { texts: [], codes: new Set(), statuses: new Set() };
  gather(err, evidence, new Set(), 0);
  return evidence;
}

const NOT_OVERFLOW_CODES = new Set([
  'rate_limit_exceeded',
  'rate_limit_error',
  'insufficient_quota',
  'overloaded_error',
  'resource_exhausted',
]);

const OVERFLOW_CODES = new Set(['context_length_exceeded', 'exceed_context_size_error']);

/** Sentences that only a context overflow produces (see the module note for their sources). */
const OVERFLOW_TEXTS: readonly RegExp[] = [
  /maximum context length is [\d,]+ tokens/i,
  /\bprompt is too long\b/i,
  /input length and `?max_tokens`? exceed context limit/i,
  /input token count \([\d,]+\) exceeds the maximum number of tokens allowed/i,
  /your input exceeds the context window/i,
  /maximum prompt length is [\d,]+ but the request contains/i,
  /input is too long for requested model/i,
  /exceeds the available context size/i,
  /resulting in a maximum input length of [\d,]+ tokens/i,
  /\bcontext_length_exceeded\b/i,
];

function isOverflowEvidence(evidence: Evidence): boolean {
  if (evidence.statuses.has(429)) return false;
  for (const code of evidence.codes) if (NOT_OVERFLOW_CODES.has(code)) return false;
  for (const code of evidence.codes) if (OVERFLOW_CODES.has(code)) return true;
  return evidence.texts.some((text) => OVERFLOW_TEXTS.some((pattern) => pattern.test(text)));
}

/**
 * Whether `err` is a provider's "input too long for the context window" error (OpenAI, the
 * Responses API, Anthropic, Gemini, and the OpenAI-compatible servers listed in the module note),
 * bare or wrapped by an SDK. Rate limits and output-limit errors are not.
 */
export function isContextOverflowError(err: unknown): boolean {
  return isOverflowEvidence(evidenceOf(err));
}

function num(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text.replace(/,/g, ''));
  return Number.isFinite(value) ? value : undefined;
}

function numbersFromText(text: string): OverflowNumbers | undefined {
  let m = /prompt is too long: ([\d,]+) tokens > ([\d,]+) maximum/i.exec(text);
  if (m) return { actual: num(m[1]), limit: num(m[2]) };

  m = /exceed context limit: ([\d,]+) \+ ([\d,]+) > ([\d,]+)/i.exec(text);
  if (m) {
    const window = num(m[3]);
    const output = num(m[2]);
    return {
      actual: num(m[1]),
      limit: window !== undefined && output !== undefined ? window - output : window,
    };
  }

  m = /input token count \(([\d,]+)\) exceeds the maximum number of tokens allowed \(([\d,]+)\)/i.exec(text);
  if (m) return { actual: num(m[1]), limit: num(m[2]) };

  m = /maximum prompt length is ([\d,]+) but the request contains ([\d,]+) tokens/i.exec(text);
  if (m) return { actual: num(m[2]), limit: num(m[1]) };

  const passed = /passed ([\d,]+) input tokens/i.exec(text);
  const maxInput = /maximum input length of ([\d,]+) tokens/i.exec(text);
  if (passed || maxInput) return { actual: num(passed?.[1]), limit: num(maxInput?.[1]) };

  m = /maximum context length is ([\d,]+) tokens/i.exec(text);
  if (m) {
    const window = num(m[1]);
    const resulted = /resulted in ([\d,]+) tokens/i.exec(text);
    if (resulted) return { actual: num(resulted[1]), limit: window };
    const requested = /you requested (?:about )?([\d,]+) tokens(?: \(([^)]*)\))?/i.exec(text);
    if (requested) {
      const total = num(requested[1]);
      const output = num(/([\d,]+) (?:in|for) the (?:completion|output)/i.exec(requested[2] ?? '')?.[1]);
      if (output !== undefined && total !== undefined && window !== undefined) {
        return { actual: total - output, limit: window - output };
      }
      return { actual: total, limit: window };
    }
    return { limit: window };
  }
  return undefined;
}

function defined(numbers: OverflowNumbers): OverflowNumbers {
  const out: OverflowNumbers = {};
  if (numbers.limit !== undefined) out.limit = numbers.limit;
  if (numbers.actual !== undefined) out.actual = numbers.actual;
  return out;
}

/**
 * The limit and the actual input size an overflow error states (see {@link OverflowNumbers}
 * for what `limit` means when the request reserved output tokens); `{}` for an overflow error
 * that gives no numbers (the Responses API, Bedrock); undefined when `err` is not an overflow.
 */
export function overflowNumbers(err: unknown): OverflowNumbers | undefined {
  const evidence = evidenceOf(err);
  if (!isOverflowEvidence(evidence)) return undefined;
  for (const text of evidence.texts) {
    const numbers = numbersFromText(text);
    if (numbers) return defined(numbers);
  }
  return defined({ actual: evidence.promptTokens, limit: evidence.contextSize });
}
