/**
 * A fake OpenAI and Anthropic endpoint on 127.0.0.1 that bills input the way the providers
 * document their prompt caches, token by token, so the cost meter's predictions can be checked
 * against something that does not share its code:
 *
 * - `POST /v1/chat/completions` (OpenAI, "Prompt caching" guide): every prompt of 1,024 tokens or
 *   more is cached; a request reads the longest token prefix it shares with an earlier request
 *   whose cache is alive, in steps of 128 tokens past 1,024; `usage.prompt_tokens_details.cached_tokens`.
 * - `POST /v1/messages` (Anthropic, "Prompt caching"): prefixes are cached at breakpoints (a
 *   block's `cache_control`, or the request's top-level `cache_control`, which puts one on the
 *   last block); a hit is looked for at each breakpoint and up to 20 blocks before it; nothing
 *   under the model's minimum is cached; `cache_read_input_tokens`, `cache_creation_input_tokens`.
 *
 * Caches live 5 minutes after their last use, by the server's clock (`now`). Tokens: o200k for
 * OpenAI, cl100k for Anthropic, three framing tokens before each message.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encode as encodeCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { encode as encodeO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { listenLoopback } from './listen-loopback.js';

export interface FakeCachingOptions {
  /** The server's clock (ms). */
  now: () => number;
  /** Anthropic's minimum cacheable prompt (default 1,024, Sonnet 4.5's). */
  anthropicMinimum?: number;
}

export interface FakeCachingServer {
  readonly baseURL: string;
  close(): Promise<void>;
}

const TTL_MS = 5 * 60_000;
const FRAME = [-1, -2, -3];

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A rolling hash of a token sequence, read at any length. */
function prefixHashes(tokens: readonly number[]): number[] {
  const out = new Array<number>(tokens.length + 1);
  let a = 7;
  let b = 11;
  out[0] = 0;
  for (let i = 0; i < tokens.length; i++) {
    a = (Math.imul(a, 31) + tokens[i]! + 0x9e37) | 0;
    b = (Math.imul(b, 131) ^ (tokens[i]! * 2654435761)) | 0;
    out[i + 1] = (a >>> 0) * 2097152 + ((b >>> 0) & 2097151);
  }
  return out;
}

/**
 * The tokens of an OpenAI prompt read from the cache (the "Prompt caching" guide: prompts of
 * 1,024 tokens or more, the longest cached prefix in 128-token steps), caching this prompt too.
 */
export function openaiCachedTokens(
  tokens: readonly number[],
  cache: Map<number, number>,
  now: number,
): number {
  const hashes = prefixHashes(tokens);
  let lcp = 0;
  for (let n = tokens.length; n >= 1024; n--) {
    if ((cache.get(hashes[n]!) ?? -1) >= now) {
      lcp = n;
      break;
    }
  }
  const cached = lcp >= 1024 ? 1024 + Math.floor((lcp - 1024) / 128) * 128 : 0;
  // The whole prompt is cached, in 128-token steps: any later request sharing a step reads it.
  for (let n = 1024; n <= tokens.length; n += 128) cache.set(hashes[n]!, now + TTL_MS);
  return cached;
}

function openaiUsage(body: Record<string, unknown>, cache: Map<number, number>, now: number) {
  const tokens: number[] = [];
  if (Array.isArray(body.tools) && body.tools.length > 0)
    tokens.push(...encodeO200k(JSON.stringify(body.tools)));
  for (const m of (body.messages as Array<Record<string, unknown>>) ?? []) {
    tokens.push(...FRAME, ...encodeO200k(String(m.role)));
    if (m.content !== undefined && m.content !== null) tokens.push(...encodeO200k(text(m.content)));
    if (m.tool_calls !== undefined) tokens.push(...encodeO200k(JSON.stringify(m.tool_calls)));
  }
  const cached = openaiCachedTokens(tokens, cache, now);
  return {
    prompt_tokens: tokens.length,
    completion_tokens: 1,
    total_tokens: tokens.length + 1,
    prompt_tokens_details: { cached_tokens: cached },
  };
}

function anthropicUsage(
  body: Record<string, unknown>,
  cache: Map<number, number>,
  now: number,
  minimum: number,
) {
  const tokens: number[] = [];
  const ends: number[] = [];
  const marked: boolean[] = [];
  const block = (t: number[], mark: unknown) => {
    tokens.push(...t);
    ends.push(tokens.length);
    marked.push(mark !== undefined);
  };
  for (const tool of (body.tools as Array<Record<string, unknown>>) ?? []) {
    block(encodeCl100k(JSON.stringify(tool)), tool.cache_control);
  }
  const system = body.system;
  if (typeof system === 'string') block(encodeCl100k(system), undefined);
  else if (Array.isArray(system)) for (const s of system) block(encodeCl100k(text(s.text)), s.cache_control);
  for (const m of (body.messages as Array<Record<string, unknown>>) ?? []) {
    const parts =
      typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content as object[]);
    parts.forEach((p, i) => {
      const part = p as Record<string, unknown>;
      const t = encodeCl100k(part.type === 'text' ? String(part.text) : JSON.stringify(part));
      block(i === 0 ? [...FRAME, ...t] : t, part.cache_control);
    });
  }
  if (body.cache_control !== undefined && marked.length > 0) marked[marked.length - 1] = true;
  const hashes = prefixHashes(tokens);
  const breakpoints = marked.flatMap((m, i) => (m ? [i] : []));
  let read = 0;
  for (const bp of breakpoints) {
    for (let j = bp; j >= Math.max(0, bp - 20); j--) {
      const key = hashes[ends[j]!]!;
      if ((cache.get(key) ?? -1) >= now) {
        if (ends[j]! > read) read = ends[j]!;
        cache.set(key, now + TTL_MS);
        break;
      }
    }
  }
  let written = 0;
  for (const bp of breakpoints) {
    const end = ends[bp]!;
    if (end < minimum || end <= read) continue;
    cache.set(hashes[end]!, now + TTL_MS);
    written = end - read;
  }
  return {
    input_tokens: tokens.length - read - written,
    output_tokens: 1,
    cache_read_input_tokens: read,
    cache_creation_input_tokens: written,
  };
}

/** Starts the server; see the module comment. */
export async function startFakeCachingServer(options: FakeCachingOptions): Promise<FakeCachingServer> {
  const openaiCache = new Map<number, number>();
  const anthropicCache = new Map<number, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      const now = options.now();
      let reply: unknown;
      if (req.url === '/v1/chat/completions') {
        reply = {
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: openaiUsage(body, openaiCache, now),
        };
      } else if (req.url === '/v1/messages') {
        reply = {
          id: 'msg_fake',
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [{ type: 'text', text: 'ok' }],
          stop_reason: 'end_turn',
          usage: anthropicUsage(body, anthropicCache, now, options.anthropicMinimum ?? 1024),
        };
      } else {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
    });
  });
  await listenLoopback(server);
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
