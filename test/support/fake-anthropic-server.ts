/**
 * A fake Anthropic Messages API (`POST /v1/messages`) on 127.0.0.1 that refuses, with a 400 and an
 * `invalid_request_error`, what the documentation says the API refuses. It reads requests on its
 * own (nothing from `src/`), so a view it accepts is accepted by a reading that does not share
 * the library's mistakes.
 *
 * Rules (Messages API reference; tool use, server tools, extended thinking, prompt caching pages):
 * - at least one message; the first is from the user; roles are user and assistant only; a
 *   message has `role` and `content` and nothing else;
 * - every `tool_use` is answered by a `tool_result` in the very next message, a user message, where
 *   the results come before any other block; every `tool_result` answers a `tool_use` of the
 *   message just before, once; tool ids are unique in the request;
 * - server tools and MCP pair inside one assistant turn (consecutive assistant messages are one
 *   turn: the API merges them, which is how a `pause_turn` reply is continued): a
 *   `*_tool_result` / `mcp_tool_result` follows its `server_tool_use` / `mcp_tool_use` there; a
 *   call may be left unanswered only at the end of the request;
 * - no empty or whitespace-only text block, and no empty message except a final assistant one;
 * - thinking blocks carry the signature the API gave them: an edited thinking block fails the
 *   check (here the fake signs with `signThinking`); with `thinking` enabled, when the request
 *   ends with tool results, the assistant message that called the tools starts with a thinking or
 *   redacted_thinking block ("Expected thinking or redacted_thinking, but found tool_use");
 * - at most 4 blocks carry `cache_control` (system included), never a thinking block, and each
 *   is `{type: "ephemeral"}` (with an optional `ttl`);
 * - a block type the fake does not know is accepted as it is (the API evolves; so does this fake).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The signature the fake API gives a thinking text (and checks it against). */
export function signThinking(thinking: string): string {
  return createHash('sha256').update(`fake-anthropic:${thinking}`).digest('base64');
}

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const blocksOf = (m: Rec): Rec[] => (Array.isArray(m.content) ? (m.content as unknown[]).filter(isRec) : []);
const blank = (t: unknown) => typeof t !== 'string' || t.trim() === '';
const SERVER_RESULTS = new Set([
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result',
  'tool_search_tool_result',
]);

/**
 * Everything the fake API would refuse in a request body; empty when it answers 200. With
 * `signatures: false` thinking signatures are not checked (for conversations whose thinking
 * blocks were not signed by this fake).
 */
export function anthropicRequestProblems(body: Rec, options: { signatures?: boolean } = {}): string[] {
  const signatures = options.signatures ?? true;
  const problems: string[] = [];
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0)
    return ['messages: at least one message is required'];
  let marks = 0;
  const countMarks = (blocks: Rec[], where: string) => {
    blocks.forEach((b, k) => {
      if (b.cache_control === undefined) return;
      marks++;
      if (b.type === 'thinking' || b.type === 'redacted_thinking')
        problems.push(`${where}[${k}]: thinking blocks cannot be marked with cache_control`);
      if (!isRec(b.cache_control) || b.cache_control.type !== 'ephemeral')
        problems.push(`${where}[${k}].cache_control: expected {type: "ephemeral"}`);
    });
  };
  if (Array.isArray(body.system)) {
    const system = (body.system as unknown[]).filter(isRec);
    system.forEach((b, k) => {
      if (b.type !== 'text' || blank(b.text)) problems.push(`system[${k}]: expected non-empty text`);
    });
    countMarks(system, 'system');
  }
  const ids = new Set<string>();
  const last = messages.length - 1;
  const open = new Map<string, string>(); // server-tool calls of the current assistant turn
  messages.forEach((raw: unknown, i: number) => {
    const at = `messages.${i}`;
    if (!isRec(raw)) {
      problems.push(`${at}: expected an object`);
      return;
    }
    if (raw.role !== 'user' && raw.role !== 'assistant') problems.push(`${at}.role: unexpected role`);
    // A message is { role, content } (https://docs.anthropic.com/en/api/messages); the API refuses
    // any other property.
    for (const key of Object.keys(raw)) {
      if (key !== 'role' && key !== 'content') problems.push(`${at}.${key}: Extra inputs are not permitted`);
    }
    if (i === 0 && raw.role !== 'user') problems.push(`${at}: the first message must use the "user" role`);
    const finalAssistant = i === last && raw.role === 'assistant';
    if (raw.role === 'user' && open.size > 0) {
      problems.push(`${at}: server tool calls without results before this user message: ${[...open.keys()]}`);
      open.clear();
    }
    if (typeof raw.content === 'string') {
      if (blank(raw.content) && !finalAssistant) problems.push(`${at}: text content must be non-empty`);
      return;
    }
    const blocks = blocksOf(raw);
    if (blocks.length === 0 && !finalAssistant) problems.push(`${at}: content must be non-empty`);
    countMarks(blocks, `${at}.content`);
    // Results answer the tool_use blocks of the message before.
    const prev = i > 0 && isRec(messages[i - 1]) ? (messages[i - 1] as Rec) : undefined;
    const wanted = new Set(
      prev && prev.role === 'assistant'
        ? blocksOf(prev)
            .filter((b) => b.type === 'tool_use')
            .map((b) => String(b.id))
        : [],
    );
    let other = false;
    blocks.forEach((b, k) => {
      const where = `${at}.content.${k}`;
      if (b.type === 'text' && blank(b.text) && !finalAssistant)
        problems.push(`${where}: text content blocks must contain non-whitespace text`);
      if (signatures && b.type === 'thinking' && b.signature !== signThinking(String(b.thinking)))
        problems.push(`${where}: Invalid signature in thinking block`);
      if (b.type === 'tool_result') {
        if (raw.role !== 'user') problems.push(`${where}: tool_result only in a user message`);
        if (other) problems.push(`${where}: tool_result blocks must come first`);
        if (!wanted.delete(String(b.tool_use_id)))
          problems.push(`${where}: unexpected tool_use_id ${String(b.tool_use_id)}`);
        return;
      }
      other = true;
      if (b.type === 'tool_use' || b.type === 'server_tool_use' || b.type === 'mcp_tool_use') {
        if (raw.role !== 'assistant') problems.push(`${where}: ${b.type} only in an assistant message`);
        if (ids.has(String(b.id))) problems.push(`${where}: tool use ids must be unique`);
        ids.add(String(b.id));
        if (b.type !== 'tool_use') open.set(String(b.id), String(b.type));
      }
      if (SERVER_RESULTS.has(String(b.type)) || b.type === 'mcp_tool_result') {
        const call = open.get(String(b.tool_use_id));
        const expected = b.type === 'mcp_tool_result' ? 'mcp_tool_use' : 'server_tool_use';
        if (raw.role !== 'assistant' || call !== expected)
          problems.push(`${where}: ${String(b.type)} without its ${expected} before it`);
        open.delete(String(b.tool_use_id));
      }
    });
    if (prev && prev.role === 'assistant' && wanted.size > 0)
      problems.push(
        `messages.${i - 1}: tool_use ids without tool_result blocks after them: ${[...wanted].join(', ')}`,
      );
  });
  const end = messages[last];
  if (isRec(end) && end.role === 'assistant' && blocksOf(end).some((b) => b.type === 'tool_use'))
    problems.push(`messages.${last}: tool_use ids without tool_result blocks after them`);
  if (marks > 4) problems.push(`A maximum of 4 blocks with cache_control may be provided. Found ${marks}.`);
  // Extended thinking in a tool loop.
  const thinking = isRec(body.thinking) && body.thinking.type === 'enabled';
  if (thinking && isRec(end) && end.role === 'user' && blocksOf(end).some((b) => b.type === 'tool_result')) {
    const caller = messages[last - 1];
    const first = isRec(caller) ? blocksOf(caller)[0] : undefined;
    if (!first || (first.type !== 'thinking' && first.type !== 'redacted_thinking'))
      problems.push(
        `messages.${last - 1}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`,
      );
  }
  return problems;
}

/**
 * The request body for a contextkit view: leading `role: "system"` messages become the top-level
 * `system` (as text blocks, keeping their `cache_control`), the rest are the `messages`.
 */
export function messagesBody(view: readonly unknown[], extra: Rec = {}): Rec {
  const system: Rec[] = [];
  let k = 0;
  for (; k < view.length; k++) {
    const m = view[k];
    if (!isRec(m) || m.role !== 'system') break;
    if (typeof m.content === 'string') system.push({ type: 'text', text: m.content });
    else system.push(...blocksOf(m));
  }
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    ...(system.length ? { system } : {}),
    messages: view.slice(k),
    ...extra,
  };
}

export interface FakeAnthropicServer {
  /** `http://127.0.0.1:PORT`: POST `${url}/v1/messages`. */
  readonly url: string;
  /** Bodies received, with what was refused in each. */
  readonly requests: Array<{ body: Rec; problems: string[] }>;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeAnthropic(): Promise<FakeAnthropicServer> {
  const requests: FakeAnthropicServer['requests'] = [];
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/messages') return send(res, 404, { type: 'error' });
    readJson(req).then(
      (body) => {
        const problems = isRec(body) ? anthropicRequestProblems(body) : ['body: expected an object'];
        requests.push({ body: body as Rec, problems });
        if (problems.length > 0)
          return send(res, 400, {
            type: 'error',
            error: { type: 'invalid_request_error', message: problems.join('; ') },
          });
        send(res, 200, {
          id: `msg_${requests.length}`,
          type: 'message',
          role: 'assistant',
          content: [{ type: 'text', text: 'ok' }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 1, output_tokens: 1 },
        });
      },
      () => send(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'bad JSON' } }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
