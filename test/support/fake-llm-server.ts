/**
 * A stand-in for the OpenAI Chat Completions and Anthropic Messages APIs on 127.0.0.1, for tests
 * of the LLM context tools. It checks each request against the documented shape (method, path,
 * headers, body fields and their types) and answers as the real API does: the reply text on
 * success, the API's error bodies on a bad request, a wrong key, a 429 or a 500. It can also hang
 * (for timeouts) or send a body that is not JSON.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listenLoopback } from './listen-loopback.js';

export type FakeProvider = 'openai' | 'anthropic';

/** How the server answers the next requests. */
export type FakeMode =
  | 'ok'
  /** A 200 whose reply was cut by max_tokens (`finish_reason: length`, `stop_reason: max_tokens`). */
  | 'truncated'
  /** A 200 with an empty text. */
  | 'empty'
  | 'error500'
  | 'error429'
  /** Never answers; the client must time out. */
  | 'hang'
  /** A 200 whose body is not JSON. */
  | 'garbage';

/** One request as received, with what was wrong with its shape (empty when it was right). */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  problems: string[];
  /** The remote address: always 127.0.0.1 here. */
  remoteAddress: string;
}

/** The prompt of a well-formed request, handed to `reply`. */
export interface FakePrompt {
  system: string;
  user: string;
  maxTokens: number;
  model: string;
}

export interface FakeLLMServerOptions {
  provider: FakeProvider;
  /** The key the client must send. */
  apiKey: string;
  /** The reply text for a well-formed request in mode `ok`. Defaults to a fixed summary. */
  reply?: (prompt: FakePrompt) => string;
}

export interface FakeLLMServer {
  /** The `baseURL` to give the client: `http://127.0.0.1:PORT/v1` (OpenAI) or `http://127.0.0.1:PORT`. */
  readonly baseURL: string;
  readonly requests: RecordedRequest[];
  setMode(mode: FakeMode): void;
  setReply(reply: (prompt: FakePrompt) => string): void;
  close(): Promise<void>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function isPositiveInteger(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value > 0;
}

/** What is wrong with an OpenAI Chat Completions request, per the API reference. */
function openAIProblems(request: IncomingMessage, body: unknown): string[] {
  const problems: string[] = [];
  if (request.method !== 'POST') problems.push(`method ${request.method}, expected POST`);
  if (request.url !== '/v1/chat/completions')
    problems.push(`path ${request.url}, expected /v1/chat/completions`);
  if (!header(request, 'content-type')?.startsWith('application/json'))
    problems.push('content-type is not application/json');
  if (!isRecord(body)) return [...problems, 'body is not a JSON object'];
  if (typeof body.model !== 'string' || body.model === '')
    problems.push('model: expected a non-empty string');
  if (!isPositiveInteger(body.max_tokens)) problems.push('max_tokens: expected a positive integer');
  if (body.temperature !== undefined && typeof body.temperature !== 'number')
    problems.push('temperature: expected a number');
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    problems.push('messages: expected a non-empty array');
  } else {
    body.messages.forEach((message, i) => {
      if (!isRecord(message)) {
        problems.push(`messages[${i}]: expected an object`);
        return;
      }
      if (!['system', 'developer', 'user', 'assistant'].includes(String(message.role))) {
        problems.push(`messages[${i}].role: unexpected ${String(message.role)}`);
      }
      if (typeof message.content !== 'string') problems.push(`messages[${i}].content: expected a string`);
    });
  }
  return problems;
}

/** What is wrong with an Anthropic Messages request, per the API reference. */
function anthropicProblems(request: IncomingMessage, body: unknown): string[] {
  const problems: string[] = [];
  if (request.method !== 'POST') problems.push(`method ${request.method}, expected POST`);
  if (request.url !== '/v1/messages') problems.push(`path ${request.url}, expected /v1/messages`);
  if (header(request, 'anthropic-version') !== '2023-06-01')
    problems.push('anthropic-version header is not 2023-06-01');
  if (!header(request, 'content-type')?.startsWith('application/json'))
    problems.push('content-type is not application/json');
  if (!isRecord(body)) return [...problems, 'body is not a JSON object'];
  if (typeof body.model !== 'string' || body.model === '')
    problems.push('model: expected a non-empty string');
  if (!isPositiveInteger(body.max_tokens)) problems.push('max_tokens: expected a positive integer');
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system)) {
    problems.push('system: expected a string or an array of text blocks');
  }
  if (
    body.temperature !== undefined &&
    (typeof body.temperature !== 'number' || body.temperature < 0 || body.temperature > 1)
  ) {
    problems.push('temperature: expected a number in [0, 1]');
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    problems.push('messages: expected a non-empty array');
  } else {
    body.messages.forEach((message, i) => {
      if (!isRecord(message)) {
        problems.push(`messages[${i}]: expected an object`);
        return;
      }
      if (message.role !== 'user' && message.role !== 'assistant') {
        problems.push(`messages[${i}].role: expected user or assistant (system goes in the top-level field)`);
      }
      if (typeof message.content !== 'string' && !Array.isArray(message.content)) {
        problems.push(`messages[${i}].content: expected a string or an array of blocks`);
      }
    });
    if (isRecord(body.messages[0]) && body.messages[0].role !== 'user')
      problems.push('messages[0].role: must be user');
  }
  return problems;
}

function promptOf(provider: FakeProvider, body: Record<string, unknown>): FakePrompt {
  const messages = Array.isArray(body.messages) ? body.messages.filter(isRecord) : [];
  const text = (role: string): string =>
    messages
      .filter((m) => m.role === role)
      .map((m) => (typeof m.content === 'string' ? m.content : ''))
      .join('\n');
  return {
    system: provider === 'anthropic' ? (typeof body.system === 'string' ? body.system : '') : text('system'),
    user: text('user'),
    maxTokens: typeof body.max_tokens === 'number' ? body.max_tokens : 0,
    model: typeof body.model === 'string' ? body.model : '',
  };
}

function send(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

function errorBody(provider: FakeProvider, type: string, message: string): unknown {
  return provider === 'openai'
    ? { error: { message, type, param: null, code: null } }
    : { type: 'error', error: { type, message } };
}

function successBody(provider: FakeProvider, prompt: FakePrompt, text: string, truncated: boolean): unknown {
  const inputTokens = Math.ceil((prompt.system.length + prompt.user.length) / 4);
  const outputTokens = Math.ceil(text.length / 4);
  if (provider === 'openai') {
    return {
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created: 0,
      model: prompt.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: text, refusal: null },
          logprobs: null,
          finish_reason: truncated ? 'length' : 'stop',
        },
      ],
      usage: {
        prompt_tokens: inputTokens,
        completion_tokens: outputTokens,
        total_tokens: inputTokens + outputTokens,
      },
    };
  }
  return {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model: prompt.model,
    content: [{ type: 'text', text }],
    stop_reason: truncated ? 'max_tokens' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: inputTokens, output_tokens: outputTokens },
  };
}

/** Starts the server on 127.0.0.1 with a random port. */
export async function startFakeLLMServer(options: FakeLLMServerOptions): Promise<FakeLLMServer> {
  const { provider, apiKey } = options;
  let mode: FakeMode = 'ok';
  let reply = options.reply ?? (() => 'user: asked to fix src/date.ts\nassistant: fixed it.');
  const requests: RecordedRequest[] = [];

  const server = createServer(async (request, response) => {
    const raw = await readBody(request);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const problems = provider === 'openai' ? openAIProblems(request, body) : anthropicProblems(request, body);
    requests.push({
      method: request.method ?? '',
      path: request.url ?? '',
      headers: { ...request.headers },
      body,
      problems,
      remoteAddress: request.socket.remoteAddress ?? '',
    });
    const authorized =
      provider === 'openai'
        ? header(request, 'authorization') === `Bearer ${apiKey}`
        : header(request, 'x-api-key') === apiKey;
    if (!authorized) {
      return send(
        response,
        401,
        errorBody(
          provider,
          provider === 'openai' ? 'invalid_request_error' : 'authentication_error',
          'invalid api key',
        ),
      );
    }
    if (problems.length > 0)
      return send(response, 400, errorBody(provider, 'invalid_request_error', problems.join('; ')));
    const prompt = promptOf(provider, body as Record<string, unknown>);
    switch (mode) {
      case 'hang':
        return; // the socket stays open until the client gives up or the server closes
      case 'garbage':
        response.writeHead(200, { 'content-type': 'application/json' });
        return response.end('<html>upstream proxy error</html>');
      case 'error500':
        return send(
          response,
          500,
          errorBody(provider, provider === 'openai' ? 'server_error' : 'api_error', 'internal error'),
        );
      case 'error429':
        return send(
          response,
          429,
          errorBody(
            provider,
            provider === 'openai' ? 'rate_limit_exceeded' : 'rate_limit_error',
            'rate limited',
          ),
          { 'retry-after': '1' },
        );
      case 'empty':
        return send(response, 200, successBody(provider, prompt, '', false));
      case 'truncated':
        return send(response, 200, successBody(provider, prompt, reply(prompt), true));
      case 'ok':
        return send(response, 200, successBody(provider, prompt, reply(prompt), false));
    }
  });

  await listenLoopback(server);
  const port = (server.address() as AddressInfo).port;
  return {
    baseURL: provider === 'openai' ? `http://127.0.0.1:${port}/v1` : `http://127.0.0.1:${port}`,
    requests,
    setMode: (next) => {
      mode = next;
    },
    setReply: (next) => {
      reply = next;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
