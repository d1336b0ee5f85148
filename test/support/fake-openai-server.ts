/**
 * A fake OpenAI model on 127.0.0.1 for the integration tests and examples: Chat Completions
 * (`POST /v1/chat/completions`) and Responses (`POST /v1/responses`), non-streaming, answering as
 * a small tool-using agent would. It reads each request into one transcript shape, checks it the
 * way the API does (every tool result answers an earlier call, every call is answered), records it,
 * and replies with what `reply` decides: tool calls or a final text.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listenLoopback } from './listen-loopback.js';

/** One entry of a request's conversation, whichever API it came through. */
export type TranscriptEntry =
  | { kind: 'system' | 'user' | 'assistant'; text: string }
  | { kind: 'call'; callId: string; name: string; arguments: string }
  | { kind: 'result'; callId: string; text: string };

export interface FakeRequest {
  endpoint: 'chat' | 'responses';
  body: Record<string, unknown>;
  transcript: TranscriptEntry[];
  /** Names of the function tools offered. */
  tools: string[];
  /** What the API would refuse: orphan results, unanswered calls. Empty when valid. */
  problems: string[];
}

/** What the fake model answers: tool calls, or a final text. */
export interface FakeTurn {
  text?: string;
  /** `id`: the call's id (default `call_N`, counted by this server), e.g. one derived from the request, so that a repeated request gets the same reply. */
  toolCalls?: Array<{ name: string; arguments: unknown; id?: string }>;
}

export interface FakeOpenAIOptions {
  /** Decides each reply; by default `toolLoopReply()`. */
  reply?: (request: FakeRequest) => FakeTurn;
}

export interface FakeOpenAIServer {
  /** `http://127.0.0.1:PORT/v1`: the `baseURL` for OpenAI clients. */
  readonly baseURL: string;
  readonly requests: FakeRequest[];
  close(): Promise<void>;
}

/**
 * The default agent: after each user message it calls the first tool `calls` times (one call per
 * step, with the user's text and a step number as arguments), then answers in text. It reads its
 * progress from the step number of its latest call, which a fitted view keeps (the exchange in
 * progress), not from how many results it still sees.
 */
export function toolLoopReply(calls = 2): (request: FakeRequest) => FakeTurn {
  return (request) => {
    let lastUser = -1;
    request.transcript.forEach((e, i) => {
      if (e.kind === 'user') lastUser = i;
    });
    const userText = lastUser >= 0 ? (request.transcript[lastUser] as { text: string }).text : '';
    let done = 0;
    for (const e of request.transcript.slice(lastUser + 1)) {
      if (e.kind !== 'call') continue;
      try {
        const step: unknown = (JSON.parse(e.arguments) as { step?: unknown }).step;
        if (typeof step === 'number') done = step;
      } catch {
        // Arguments that are not JSON carry no step.
      }
    }
    const tool = request.tools[0];
    if (tool !== undefined && done < calls) {
      return { toolCalls: [{ name: tool, arguments: { query: userText.slice(0, 60), step: done + 1 } }] };
    }
    return { text: `Done after ${done} tool calls: ${userText.slice(0, 80)}` };
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p: unknown) => {
      if (!isRecord(p)) return '';
      if (typeof p.text === 'string') return p.text;
      if (typeof p.refusal === 'string') return p.refusal;
      return `[${String(p.type)}]`;
    })
    .join('');
}

function chatTranscript(messages: unknown): TranscriptEntry[] {
  const out: TranscriptEntry[] = [];
  for (const m of Array.isArray(messages) ? messages : []) {
    if (!isRecord(m)) continue;
    const role = m.role;
    if (role === 'tool') {
      out.push({ kind: 'result', callId: String(m.tool_call_id), text: textOf(m.content) });
    } else if (role === 'assistant') {
      const text = textOf(m.content);
      if (text !== '' || !Array.isArray(m.tool_calls)) out.push({ kind: 'assistant', text });
      for (const call of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
        if (!isRecord(call) || !isRecord(call.function)) continue;
        out.push({
          kind: 'call',
          callId: String(call.id),
          name: String(call.function.name),
          arguments: String(call.function.arguments),
        });
      }
    } else if (role === 'user') out.push({ kind: 'user', text: textOf(m.content) });
    else out.push({ kind: 'system', text: textOf(m.content) });
  }
  return out;
}

function responsesTranscript(body: Record<string, unknown>): TranscriptEntry[] {
  const out: TranscriptEntry[] = [];
  if (typeof body.instructions === 'string') out.push({ kind: 'system', text: body.instructions });
  const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  for (const item of Array.isArray(input) ? input : []) {
    if (!isRecord(item)) continue;
    if (item.type === 'function_call') {
      out.push({
        kind: 'call',
        callId: String(item.call_id),
        name: String(item.name),
        arguments: String(item.arguments),
      });
    } else if (item.type === 'function_call_output') {
      out.push({
        kind: 'result',
        callId: String(item.call_id),
        text: typeof item.output === 'string' ? item.output : JSON.stringify(item.output),
      });
    } else if (item.role === 'user') out.push({ kind: 'user', text: textOf(item.content) });
    else if (item.role === 'assistant') out.push({ kind: 'assistant', text: textOf(item.content) });
    else if (item.role === 'system' || item.role === 'developer') {
      out.push({ kind: 'system', text: textOf(item.content) });
    }
  }
  return out;
}

/** The pairing rules both APIs enforce. */
function transcriptProblems(transcript: readonly TranscriptEntry[]): string[] {
  const problems: string[] = [];
  const open = new Set<string>();
  transcript.forEach((e, i) => {
    if (e.kind === 'call') open.add(e.callId);
    else if (e.kind === 'result') {
      if (!open.delete(e.callId)) problems.push(`entry ${i}: result for ${e.callId} answers no earlier call`);
    } else if (e.kind !== 'system' && open.size > 0 && e.kind === 'user') {
      problems.push(`entry ${i}: user message while ${[...open].join(', ')} wait for results`);
    }
  });
  for (const id of open) problems.push(`call ${id} has no result`);
  return problems;
}

function toolNames(tools: unknown): string[] {
  const names: string[] = [];
  for (const tool of Array.isArray(tools) ? tools : []) {
    if (!isRecord(tool)) continue;
    if (isRecord(tool.function) && typeof tool.function.name === 'string') names.push(tool.function.name);
    else if (typeof tool.name === 'string') names.push(tool.name);
  }
  return names;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Starts the fake model on 127.0.0.1 at a free port. */
export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAIServer> {
  const reply = options.reply ?? toolLoopReply();
  const requests: FakeRequest[] = [];
  let ids = 0;
  const nextId = (prefix: string) => `${prefix}_${++ids}`;

  const server = createServer(async (req, res) => {
    try {
      const raw = await readBody(req);
      const body: unknown = JSON.parse(raw);
      if (req.method !== 'POST' || !isRecord(body)) {
        send(res, 404, { error: { message: 'not found', type: 'invalid_request_error' } });
        return;
      }
      const endpoint = req.url?.endsWith('/chat/completions')
        ? 'chat'
        : req.url?.endsWith('/responses')
          ? 'responses'
          : undefined;
      if (!endpoint || body.stream === true) {
        send(res, 400, { error: { message: `unsupported: ${req.url} stream=${String(body.stream)}` } });
        return;
      }
      const transcript = endpoint === 'chat' ? chatTranscript(body.messages) : responsesTranscript(body);
      const request: FakeRequest = {
        endpoint,
        body,
        transcript,
        tools: toolNames(body.tools),
        problems: transcriptProblems(transcript),
      };
      requests.push(request);
      if (request.problems.length > 0) {
        send(res, 400, {
          error: { message: request.problems.join('; '), type: 'invalid_request_error', code: null },
        });
        return;
      }
      const turn = reply(request);
      const inputTokens = Math.ceil(raw.length / 4);
      const outputTokens = Math.ceil(JSON.stringify(turn).length / 4);
      const calls = (turn.toolCalls ?? []).map((c) => ({
        id: c.id ?? nextId('call'),
        name: c.name,
        arguments: JSON.stringify(c.arguments),
      }));
      const model = typeof body.model === 'string' ? body.model : 'fake-model';
      if (endpoint === 'chat') {
        send(res, 200, {
          id: nextId('chatcmpl'),
          object: 'chat.completion',
          created: 1_700_000_000,
          model,
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: turn.text ?? null,
                refusal: null,
                ...(calls.length > 0
                  ? {
                      tool_calls: calls.map((c) => ({
                        id: c.id,
                        type: 'function',
                        function: { name: c.name, arguments: c.arguments },
                      })),
                    }
                  : {}),
              },
              finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
              logprobs: null,
            },
          ],
          usage: {
            prompt_tokens: inputTokens,
            completion_tokens: outputTokens,
            total_tokens: inputTokens + outputTokens,
          },
        });
        return;
      }
      const output: unknown[] = [];
      if (turn.text !== undefined) {
        output.push({
          type: 'message',
          id: nextId('msg'),
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: turn.text, annotations: [] }],
        });
      }
      for (const c of calls) {
        output.push({
          type: 'function_call',
          id: nextId('fc'),
          call_id: c.id,
          name: c.name,
          arguments: c.arguments,
          status: 'completed',
        });
      }
      send(res, 200, {
        id: nextId('resp'),
        object: 'response',
        created_at: 1_700_000_000,
        status: 'completed',
        model,
        output,
        error: null,
        incomplete_details: null,
        instructions: body.instructions ?? null,
        metadata: {},
        parallel_tool_calls: true,
        temperature: 1,
        top_p: 1,
        tool_choice: 'auto',
        tools: [],
        text: { format: { type: 'text' } },
        usage: {
          input_tokens: inputTokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: outputTokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: inputTokens + outputTokens,
        },
      });
    } catch (err) {
      send(res, 500, { error: { message: String(err), type: 'server_error' } });
    }
  });
  await listenLoopback(server);
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
