/**
 * A stand-in for Anthropic's and Gemini's token-counting endpoints on 127.0.0.1, strict about
 * the documented request shape so the count client's requests are checked, not just answered:
 *
 * - Anthropic `POST /v1/messages/count_tokens`: headers `x-api-key` (the configured key),
 *   `anthropic-version: 2023-06-01`, `content-type: application/json`; body with `model` and a
 *   non-empty `messages` of `user`/`assistant` turns, optional `system` (a string or text
 *   blocks) and `tools` (each with a `name`; a custom tool with an `input_schema` object),
 *   nothing else but `tool_choice`/`thinking`. Answers `{ input_tokens }`.
 * - Gemini `POST /v1beta/models/{model}:countTokens`: header `x-goog-api-key`; body with
 *   exactly one of `contents` and `generateContentRequest`, the latter naming
 *   `models/{model}` as in the path; every content `user` or `model` with parts that each hold
 *   exactly one of `text`, `inlineData`, `fileData`, `functionCall` (object `args`),
 *   `functionResponse` (object `response`), `executableCode` or `codeExecutionResult`, beside
 *   which only `thought`, `thoughtSignature` and `videoMetadata` may stand (a signature may stand
 *   alone). Answers `{ totalTokens }`.
 *
 * A request that breaks a rule gets the provider's kind of 400 and its problems are kept in
 * `rejections`. The count is a deterministic function of the body (a quarter of its JSON
 * length), so adding a system prompt or tools raises it. Failures on demand: a 500, a 429, no
 * answer at all (until closed), or a 200 whose body is not JSON or lacks the count.
 */

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listenLoopback } from './listen-loopback.js';

/** What the next requests should meet instead of a count. */
export type FakeFailure = 'server-error' | 'rate-limit' | 'hang' | 'garbage' | 'no-count';

/** One request as received. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** A running fake; `close` it after the test. */
export interface FakeCountServer {
  /** `http://127.0.0.1:{port}`: pass as the count client's `baseURL`. */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: ReceivedRequest[];
  /** The problems found in requests that were refused, one list per refused request. */
  readonly rejections: string[][];
  /** Makes the next `times` requests fail as `failure`. */
  failNext(failure: FakeFailure, times?: number): void;
  /** The count the fake gives for a body (what a well-formed request gets back). */
  countOf(body: unknown): number;
  close(): Promise<void>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function anthropicProblems(req: IncomingMessage, body: unknown, apiKey: string): string[] {
  const problems: string[] = [];
  if (req.headers['x-api-key'] !== apiKey) problems.push('header x-api-key: missing or wrong');
  if (req.headers['anthropic-version'] !== '2023-06-01')
    problems.push('header anthropic-version: expected 2023-06-01');
  if (!String(req.headers['content-type']).startsWith('application/json')) {
    problems.push('header content-type: expected application/json');
  }
  if (!isRecord(body)) return [...problems, 'body: expected a JSON object'];
  const allowed = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking']);
  for (const key of Object.keys(body)) if (!allowed.has(key)) problems.push(`body.${key}: unexpected field`);
  if (typeof body.model !== 'string' || body.model === '') problems.push('body.model: expected a model name');
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    problems.push('body.messages: expected a non-empty array');
  } else {
    body.messages.forEach((m, i) => {
      if (!isRecord(m) || (m.role !== 'user' && m.role !== 'assistant')) {
        problems.push(`body.messages[${i}].role: expected user or assistant`);
      } else if (typeof m.content !== 'string' && !Array.isArray(m.content)) {
        problems.push(`body.messages[${i}].content: expected a string or blocks`);
      }
    });
  }
  if (body.system !== undefined) {
    const ok =
      typeof body.system === 'string' ||
      (Array.isArray(body.system) &&
        body.system.every((b) => isRecord(b) && b.type === 'text' && typeof b.text === 'string'));
    if (!ok) problems.push('body.system: expected a string or text blocks');
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) problems.push('body.tools: expected an array');
    else {
      body.tools.forEach((t, i) => {
        if (!isRecord(t) || typeof t.name !== 'string')
          problems.push(`body.tools[${i}].name: expected a string`);
        else if (t.type === undefined && !isRecord(t.input_schema)) {
          problems.push(`body.tools[${i}].input_schema: a custom tool needs a schema object`);
        }
      });
    }
  }
  return problems;
}

const PART_FIELDS = [
  'text',
  'inlineData',
  'fileData',
  'functionCall',
  'functionResponse',
  'executableCode',
  'codeExecutionResult',
];
/** Fields a Part may carry beside its datum (the `Part` reference: thought, signature, video clip). */
const PART_EXTRAS = ['thought', 'thoughtSignature', 'videoMetadata'];

function partProblems(part: unknown, path: string): string[] {
  if (!isRecord(part)) return [`${path}: expected an object`];
  const fields = Object.keys(part).filter((k) => PART_FIELDS.includes(k));
  const others = Object.keys(part).filter((k) => !PART_FIELDS.includes(k) && !PART_EXTRAS.includes(k));
  // A model part may carry a thought signature alone.
  if (fields.length === 0 && others.length === 0 && typeof part.thoughtSignature === 'string') return [];
  if (fields.length !== 1 || others.length > 0) {
    return [
      `${path}: expected exactly one of ${PART_FIELDS.join(', ')}, got ${Object.keys(part).join(', ')}`,
    ];
  }
  const [field] = fields;
  const value = part[field as string];
  switch (field) {
    case 'text':
      return typeof value === 'string' && value !== '' ? [] : [`${path}.text: expected non-empty text`];
    case 'inlineData':
      return isRecord(value) && typeof value.mimeType === 'string' && typeof value.data === 'string'
        ? []
        : [`${path}.inlineData: expected { mimeType, data }`];
    case 'fileData':
      return isRecord(value) && typeof value.fileUri === 'string'
        ? []
        : [`${path}.fileData: expected { fileUri }`];
    case 'functionCall':
      return isRecord(value) && typeof value.name === 'string' && isRecord(value.args)
        ? []
        : [`${path}.functionCall: expected { name, args: object }`];
    case 'executableCode':
      return isRecord(value) && typeof value.code === 'string'
        ? []
        : [`${path}.executableCode: expected { language, code }`];
    case 'codeExecutionResult':
      return isRecord(value) && typeof value.outcome === 'string'
        ? []
        : [`${path}.codeExecutionResult: expected { outcome }`];
    default:
      return isRecord(value) && typeof value.name === 'string' && isRecord(value.response)
        ? []
        : [`${path}.functionResponse: expected { name, response: object }`];
  }
}

function contentsProblems(contents: unknown, path: string): string[] {
  if (!Array.isArray(contents) || contents.length === 0) return [`${path}: expected a non-empty array`];
  const problems: string[] = [];
  contents.forEach((c, i) => {
    if (!isRecord(c) || (c.role !== 'user' && c.role !== 'model')) {
      problems.push(`${path}[${i}].role: expected user or model`);
      return;
    }
    if (!Array.isArray(c.parts) || c.parts.length === 0) {
      problems.push(`${path}[${i}].parts: expected a non-empty array`);
      return;
    }
    c.parts.forEach((p, j) => {
      problems.push(...partProblems(p, `${path}[${i}].parts[${j}]`));
    });
  });
  return problems;
}

function geminiProblems(req: IncomingMessage, body: unknown, apiKey: string, model: string): string[] {
  const problems: string[] = [];
  if (req.headers['x-goog-api-key'] !== apiKey) problems.push('header x-goog-api-key: missing or wrong');
  if (!isRecord(body)) return [...problems, 'body: expected a JSON object'];
  for (const key of Object.keys(body)) {
    if (key !== 'contents' && key !== 'generateContentRequest')
      problems.push(`body.${key}: unexpected field`);
  }
  if ((body.contents === undefined) === (body.generateContentRequest === undefined)) {
    problems.push('body: expected exactly one of contents and generateContentRequest');
  }
  if (body.contents !== undefined) problems.push(...contentsProblems(body.contents, 'body.contents'));
  const gcr = body.generateContentRequest;
  if (gcr !== undefined) {
    if (!isRecord(gcr)) return [...problems, 'body.generateContentRequest: expected an object'];
    if (gcr.model !== `models/${model}`) {
      problems.push(
        `body.generateContentRequest.model: expected "models/${model}", got ${JSON.stringify(gcr.model)}`,
      );
    }
    problems.push(...contentsProblems(gcr.contents, 'body.generateContentRequest.contents'));
    const system = gcr.systemInstruction;
    if (system !== undefined) {
      const ok =
        isRecord(system) &&
        Array.isArray(system.parts) &&
        system.parts.every((p) => isRecord(p) && typeof p.text === 'string');
      if (!ok) problems.push('body.generateContentRequest.systemInstruction: expected { parts: [{ text }] }');
    }
    if (gcr.tools !== undefined) {
      const ok =
        Array.isArray(gcr.tools) &&
        gcr.tools.every(
          (t) =>
            isRecord(t) &&
            Array.isArray(t.functionDeclarations) &&
            t.functionDeclarations.every((d) => isRecord(d) && typeof d.name === 'string'),
        );
      if (!ok)
        problems.push('body.generateContentRequest.tools: expected [{ functionDeclarations: [{ name }] }]');
    }
  }
  return problems;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(text);
}

/** Starts the fake on a free port of 127.0.0.1, accepting `apiKey` (default `test-key`). */
export async function startFakeCountServer(options: { apiKey?: string } = {}): Promise<FakeCountServer> {
  const apiKey = options.apiKey ?? 'test-key';
  const requests: ReceivedRequest[] = [];
  const rejections: string[][] = [];
  const failures: FakeFailure[] = [];
  const countOf = (body: unknown): number => Math.ceil(JSON.stringify(body).length / 4);

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
      const path = req.url ?? '';
      requests.push({ method: req.method ?? '', path, headers: { ...req.headers }, body });

      const failure = failures.shift();
      if (failure === 'hang') return; // Never answers; `close` ends the socket.
      if (failure === 'server-error') return send(res, 500, { error: { message: 'internal error' } });
      if (failure === 'rate-limit') {
        return send(res, 429, {
          type: 'error',
          error: { type: 'rate_limit_error', message: 'Rate limited' },
        });
      }
      if (failure === 'garbage') return send(res, 200, '<html>502 Bad Gateway</html>');

      const gemini = /^\/v1beta\/models\/([^/:]+):countTokens$/.exec(path);
      const anthropic = path === '/v1/messages/count_tokens';
      if (req.method !== 'POST' || (!gemini && !anthropic)) {
        rejections.push([`${req.method} ${path}: no such endpoint`]);
        return send(res, 404, { error: { message: `no route for ${req.method} ${path}` } });
      }
      if (anthropic) {
        const problems = anthropicProblems(req, body, apiKey);
        if (problems.length > 0) {
          rejections.push(problems);
          return send(res, 400, {
            type: 'error',
            error: { type: 'invalid_request_error', message: problems.join('; ') },
          });
        }
        return send(res, 200, failure === 'no-count' ? { tokens: 1 } : { input_tokens: countOf(body) });
      }
      const model = decodeURIComponent(gemini?.[1] ?? '');
      const problems = geminiProblems(req, body, apiKey, model);
      if (problems.length > 0) {
        rejections.push(problems);
        return send(res, 400, {
          error: { code: 400, message: problems.join('; '), status: 'INVALID_ARGUMENT' },
        });
      }
      return send(res, 200, failure === 'no-count' ? { tokens: 1 } : { totalTokens: countOf(body) });
    });
  });

  await listenLoopback(server);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    rejections,
    failNext(failure: FakeFailure, times = 1): void {
      for (let i = 0; i < times; i++) failures.push(failure);
    },
    countOf,
    close(): Promise<void> {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
