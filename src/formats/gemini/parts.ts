/**
 * Gemini's `contents` (ai.google.dev/api/generate-content, `Content` and `Part`; the function
 * calling and thought-signature guides). A conversation in the `'gemini'` format is a list of
 * `{ role: 'user' | 'model', parts }`, stored as they came, plus the system instruction given as
 * a `{ role: 'system', parts: [{ text }] }` message (its parts are what `systemInstruction.parts`
 * takes; `toGeminiRequest` moves it there).
 *
 * A part holds exactly one datum: `text`, `inlineData`, `fileData`, `functionCall`,
 * `functionResponse`, `executableCode` or `codeExecutionResult`. A `thought: true` text part is
 * the model's thought summary; `thoughtSignature` (opaque base64) sits on the part it came with
 * and goes back exactly where it was: contextkit never edits a part that carries one.
 *
 * A model content's `functionCall` parts (parallel calls included) are answered, in order, by the
 * `functionResponse` parts of the next user content, matched by `id` where the call has one,
 * else by name.
 */

/** The data fields of a part, one of which it holds. */
export const GEMINI_DATA_FIELDS: readonly string[] = [
  'text',
  'inlineData',
  'fileData',
  'functionCall',
  'functionResponse',
  'executableCode',
  'codeExecutionResult',
];

/** Fields only the model's own parts carry. */
const MODEL_ONLY = new Set(['functionCall', 'executableCode', 'codeExecutionResult']);

const CODE_OUTCOMES = ['OUTCOME_UNSPECIFIED', 'OUTCOME_OK', 'OUTCOME_FAILED', 'OUTCOME_DEADLINE_EXCEEDED'];

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The datum a part holds (`text`, `functionCall`, …), or undefined when it holds none. */
export function partKind(part: unknown): string | undefined {
  if (!isRecord(part)) return undefined;
  for (const field of GEMINI_DATA_FIELDS) if (part[field] !== undefined) return field;
  return undefined;
}

/** The parts of a Gemini message, or undefined for a message of another format. */
export function geminiParts(message: unknown): readonly unknown[] | undefined {
  return isRecord(message) && Array.isArray(message.parts) ? message.parts : undefined;
}

/** A call or response of a content: its position among the parts, name and id (when given). */
export interface GeminiCallRef {
  index: number;
  name: string;
  id?: string;
}

function refs(message: unknown, field: 'functionCall' | 'functionResponse'): GeminiCallRef[] {
  const out: GeminiCallRef[] = [];
  const parts = geminiParts(message);
  if (!parts) return out;
  parts.forEach((part, index) => {
    const fn = isRecord(part) ? part[field] : undefined;
    if (!isRecord(fn)) return;
    const ref: GeminiCallRef = { index, name: typeof fn.name === 'string' ? fn.name : '' };
    if (typeof fn.id === 'string' && fn.id.length > 0) ref.id = fn.id;
    out.push(ref);
  });
  return out;
}

/** The `functionCall` parts of a model content, in order. */
export function geminiCalls(message: unknown): GeminiCallRef[] {
  return isRecord(message) && message.role === 'model' ? refs(message, 'functionCall') : [];
}

/** The `functionResponse` parts of a user content, in order. */
export function geminiResponses(message: unknown): GeminiCallRef[] {
  return isRecord(message) && message.role === 'user' ? refs(message, 'functionResponse') : [];
}

/** The key a call and its response share: the id when the call has one, else the name. */
export function callKeyOf(ref: GeminiCallRef): string {
  return ref.id ?? ref.name;
}

/**
 * Pairs responses with calls as Gemini does: by id where the call has one, else the first
 * response of the same name not yet used. Returns, per call, the index into `responses` or -1.
 */
export function pairGemini(calls: readonly GeminiCallRef[], responses: readonly GeminiCallRef[]): number[] {
  const used = new Set<number>();
  return calls.map((call) => {
    const k = responses.findIndex((r, i) =>
      used.has(i)
        ? false
        : call.id !== undefined && r.id !== undefined
          ? r.id === call.id
          : r.name === call.name,
    );
    if (k >= 0) used.add(k);
    return k;
  });
}

/** The text a function response carries, for summaries and search. */
export function responseText(response: unknown): string {
  if (!isRecord(response)) return '';
  const body = response.response;
  if (!isRecord(body)) return '';
  for (const key of ['content', 'output', 'result', 'error']) {
    if (typeof body[key] === 'string') return body[key] as string;
  }
  try {
    return JSON.stringify(body);
  } catch {
    return '';
  }
}

/** All readable text of a Gemini message: text parts (not thoughts) and function responses. */
export function geminiText(message: unknown): string {
  const parts = geminiParts(message);
  if (!parts) return '';
  const out: string[] = [];
  for (const part of parts) {
    if (!isRecord(part) || part.thought === true) continue;
    if (typeof part.text === 'string' && part.text.length > 0) out.push(part.text);
    else if (isRecord(part.functionResponse)) {
      const text = responseText(part.functionResponse);
      if (text.length > 0) out.push(text);
    } else if (isRecord(part.codeExecutionResult) && typeof part.codeExecutionResult.output === 'string')
      out.push(part.codeExecutionResult.output);
  }
  return out.join('\n');
}

/** Whether any part of the message carries a thought signature (such a part is never edited). */
export function hasSignature(part: unknown): boolean {
  return isRecord(part) && part.thoughtSignature !== undefined;
}

/**
 * A text message contextkit writes (summary, facts block, notices) in Gemini's shape: `content`
 * becomes one text part. Other messages are returned as they are.
 */
export function textMessageAsGemini<T>(message: T): T {
  const m = message as Record<string, unknown>;
  if (typeof m.content !== 'string') return message;
  return { role: m.role, parts: [{ text: m.content }] } as T;
}

// ------------------------------------------------------------------------------------ validation

/** A problem of one message, by path. */
export interface GeminiIssue {
  path: string;
  message: string;
}

function needString(issues: GeminiIssue[], value: unknown, path: string, nonEmpty = false): void {
  if (typeof value !== 'string' || (nonEmpty && value.length === 0))
    issues.push({ path, message: nonEmpty ? 'expected a non-empty string' : 'expected a string' });
}

function needObject(issues: GeminiIssue[], value: unknown, path: string, what: string): boolean {
  if (isRecord(value)) return true;
  issues.push({ path, message: `expected ${what}` });
  return false;
}

function partDatumIssues(
  issues: GeminiIssue[],
  part: Record<string, unknown>,
  kind: string,
  at: string,
): void {
  const value = part[kind];
  const path = `${at}.${kind}`;
  switch (kind) {
    case 'text':
      needString(issues, value, path);
      return;
    case 'inlineData':
      if (!needObject(issues, value, path, 'an object with "mimeType" and "data"')) return;
      needString(issues, (value as Record<string, unknown>).mimeType, `${path}.mimeType`, true);
      needString(issues, (value as Record<string, unknown>).data, `${path}.data`);
      if (
        typeof (value as Record<string, unknown>).data === 'string' &&
        !BASE64.test(String((value as Record<string, unknown>).data))
      )
        issues.push({ path: `${path}.data`, message: 'expected base64 data' });
      return;
    case 'fileData':
      if (!needObject(issues, value, path, 'an object with "fileUri"')) return;
      needString(issues, (value as Record<string, unknown>).fileUri, `${path}.fileUri`, true);
      if ((value as Record<string, unknown>).mimeType !== undefined)
        needString(issues, (value as Record<string, unknown>).mimeType, `${path}.mimeType`, true);
      return;
    case 'functionCall': {
      if (!needObject(issues, value, path, 'an object with "name" and "args"')) return;
      const call = value as Record<string, unknown>;
      needString(issues, call.name, `${path}.name`, true);
      if (call.args !== undefined && !isRecord(call.args))
        issues.push({ path: `${path}.args`, message: 'expected a JSON object (a Struct)' });
      if (call.id !== undefined) needString(issues, call.id, `${path}.id`);
      return;
    }
    case 'functionResponse': {
      if (!needObject(issues, value, path, 'an object with "name" and "response"')) return;
      const response = value as Record<string, unknown>;
      needString(issues, response.name, `${path}.name`, true);
      if (!isRecord(response.response))
        issues.push({ path: `${path}.response`, message: 'expected a JSON object (a Struct)' });
      if (response.id !== undefined) needString(issues, response.id, `${path}.id`);
      if (response.parts !== undefined && !Array.isArray(response.parts))
        issues.push({ path: `${path}.parts`, message: 'expected an array of parts' });
      return;
    }
    case 'executableCode':
      if (!needObject(issues, value, path, 'an object with "language" and "code"')) return;
      needString(issues, (value as Record<string, unknown>).language, `${path}.language`, true);
      needString(issues, (value as Record<string, unknown>).code, `${path}.code`);
      return;
    case 'codeExecutionResult': {
      if (!needObject(issues, value, path, 'an object with "outcome"')) return;
      const outcome = (value as Record<string, unknown>).outcome;
      if (typeof outcome !== 'string' || !CODE_OUTCOMES.includes(outcome))
        issues.push({
          path: `${path}.outcome`,
          message: `expected one of ${CODE_OUTCOMES.map((o) => `"${o}"`).join(', ')}`,
        });
      const output = (value as Record<string, unknown>).output;
      if (output !== undefined) needString(issues, output, `${path}.output`);
      return;
    }
  }
}

function partIssues(issues: GeminiIssue[], part: unknown, at: string, role: string): void {
  if (!isRecord(part)) {
    issues.push({ path: at, message: 'expected a part object' });
    return;
  }
  const kinds = GEMINI_DATA_FIELDS.filter((f) => part[f] !== undefined);
  // A model part may carry only a signature (the API returns one on its own at a turn's end).
  if (kinds.length === 0 && role === 'model' && typeof part.thoughtSignature === 'string') {
    if (!BASE64.test(part.thoughtSignature))
      issues.push({
        path: `${at}.thoughtSignature`,
        message: 'expected a base64 string, as the API returned it',
      });
    return;
  }
  if (kinds.length !== 1) {
    issues.push({
      path: at,
      message:
        kinds.length === 0
          ? `expected exactly one of ${GEMINI_DATA_FIELDS.map((f) => `"${f}"`).join(', ')}`
          : `a part holds exactly one datum, got ${kinds.map((k) => `"${k}"`).join(' and ')}`,
    });
    return;
  }
  const kind = kinds[0]!;
  if (role === 'system' && kind !== 'text') {
    issues.push({ path: `${at}.${kind}`, message: 'the system instruction takes text parts only' });
    return;
  }
  if (role === 'user' && MODEL_ONLY.has(kind))
    issues.push({ path: `${at}.${kind}`, message: `a "${kind}" part is only allowed in a model content` });
  if (role === 'model' && kind === 'functionResponse')
    issues.push({
      path: `${at}.${kind}`,
      message: 'a "functionResponse" part is only allowed in a user content',
    });
  partDatumIssues(issues, part, kind, at);
  if (part.thought !== undefined && typeof part.thought !== 'boolean')
    issues.push({ path: `${at}.thought`, message: 'expected a boolean' });
  if (part.thoughtSignature !== undefined) {
    if (typeof part.thoughtSignature !== 'string' || !BASE64.test(part.thoughtSignature))
      issues.push({
        path: `${at}.thoughtSignature`,
        message: 'expected a base64 string, as the API returned it',
      });
  }
}

/** Every shape problem of a Gemini message (content or system instruction), by path. */
export function geminiMessageIssues(message: Record<string, unknown>, path: string): GeminiIssue[] {
  const issues: GeminiIssue[] = [];
  const role = message.role;
  if (role !== 'user' && role !== 'model' && role !== 'system') {
    const hint = role === 'assistant' ? ' (Gemini calls the assistant "model")' : '';
    issues.push({ path: `${path}.role`, message: `expected one of "user", "model", "system"${hint}` });
    return issues;
  }
  const parts = message.parts;
  if (!Array.isArray(parts) || parts.length === 0) {
    const hint =
      message.content !== undefined ? ' (a Gemini message has "parts": [{ "text": … }], not "content")' : '';
    issues.push({ path: `${path}.parts`, message: `expected a non-empty array of parts${hint}` });
    return issues;
  }
  if (message.content !== undefined)
    issues.push({ path: `${path}.content`, message: 'a Gemini content has "parts", not "content"' });
  parts.forEach((part, k) => {
    partIssues(issues, part, `${path}.parts[${k}]`, role);
  });
  return issues;
}
