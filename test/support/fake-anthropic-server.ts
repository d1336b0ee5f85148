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
 *   redacted_thinking block ("Expected thinking or redacted_thinking, but found tool_use"); given
 *   what the model output (`issueThinking`), each run of consecutive thinking and redacted thinking
 *   blocks is the model's run, whole and in its order, and a redacted block's `data` is its own;
 * - at most 4 blocks carry `cache_control` (system included), never a thinking block, and each
 *   is `{type: "ephemeral"}` (with an optional `ttl`);
 * - `tools` (tool use overview and memory tool pages): a client tool has a `name` matching
 *   `^[a-zA-Z0-9_-]{1,64}$` and an object `input_schema`; names are unique; the memory tool is
 *   exactly `{type: "memory_20250818", name: "memory"}` (plus an optional `cache_control`),
 *   https://platform.claude.com/docs/en/agents-and-tools/tool-use/memory-tool; other typed
 *   (server or versioned client) tools are accepted as they are;
 * - a block type the fake does not know is accepted as it is (the API evolves; so does this fake).
 *
 * Context management (platform.claude.com/docs/en/build-with-claude/compaction and
 * /context-editing), read from `context_management.edits`:
 * - `compact_20260112` needs the `anthropic-beta: compact-2026-01-12` header and a model that
 *   supports it (Opus 4.6, Sonnet 4.6 and later); its trigger is `{type: "input_tokens", value}`
 *   with a value of at least 50,000 (default 150,000). The API drops every block before the last
 *   `compaction` block of the request; when what is left is past the trigger it summarizes it,
 *   puts a `compaction` block at the start of the reply, answers from the compacted context, and
 *   bills both steps in `usage.iterations` (the top-level counts leave the compaction step out);
 * - `clear_tool_uses_20250919` and `clear_thinking_20251015` need
 *   `anthropic-beta: context-management-2025-06-27`; past its trigger (default 100,000 input
 *   tokens) tool-result clearing replaces the oldest tool results' content with a placeholder,
 *   keeping the last `keep` tool uses (default 3), and the response lists it in
 *   `context_management.applied_edits`;
 * - `clear_thinking_20251015` takes `keep` as `{type: "thinking_turns", value: N}` with N > 0, or
 *   `"all"` (default: all turns on Opus 4.5, Sonnet 4.6 and later, the last turn on earlier
 *   models), and "when using multiple strategies, the `clear_thinking_20251015` strategy must be
 *   listed first in the `edits` array"; it removes the thinking blocks of the assistant turns
 *   before the last `keep` turns that have any, and reports `{type, cleared_thinking_turns,
 *   cleared_input_tokens}` in `applied_edits`.
 * Input tokens: cl100k, three framing tokens per message plus its role, each block's text (a
 * tool call's name and JSON input, a non-text block's JSON).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encode } from 'gpt-tokenizer/encoding/cl100k_base';
import { listenLoopback } from './listen-loopback.js';

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

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

function toolProblems(tools: unknown): string[] {
  if (tools === undefined) return [];
  if (!Array.isArray(tools)) return ['tools: expected an array'];
  const problems: string[] = [];
  const names = new Set<string>();
  tools.forEach((tool: unknown, i) => {
    const at = `tools.${i}`;
    if (!isRec(tool)) {
      problems.push(`${at}: expected an object`);
      return;
    }
    if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) {
      problems.push(`${at}.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
    } else if (names.has(tool.name)) problems.push(`${at}: tool names must be unique (${tool.name})`);
    else names.add(tool.name);
    if (tool.type === 'memory_20250818') {
      if (tool.name !== 'memory') problems.push(`${at}.name: the memory tool must be named "memory"`);
      for (const key of Object.keys(tool)) {
        if (!['type', 'name', 'cache_control'].includes(key))
          problems.push(`${at}.${key}: Extra inputs are not permitted`);
      }
    } else if (tool.type === undefined || tool.type === 'custom') {
      if (!isRec(tool.input_schema) || tool.input_schema.type !== 'object') {
        problems.push(`${at}.input_schema: Field required (a JSON Schema with type "object")`);
      }
    }
  });
  return problems;
}

/**
 * The runs of consecutive `thinking` / `redacted_thinking` blocks a model output, keyed by each
 * block's signature (thinking) or data (redacted thinking): what the API holds its reasoning to.
 */
export type IssuedThinking = Map<string, readonly string[]>;

const thinkingKey = (b: Rec): string | undefined =>
  b.type === 'thinking' ? String(b.signature) : b.type === 'redacted_thinking' ? String(b.data) : undefined;

/** The runs of consecutive thinking blocks of one message, as their keys. */
function thinkingRuns(blocks: readonly Rec[]): Array<{ at: number; keys: string[] }> {
  const runs: Array<{ at: number; keys: string[] }> = [];
  let run: { at: number; keys: string[] } | null = null;
  blocks.forEach((b, k) => {
    const key = thinkingKey(b);
    if (key === undefined) {
      run = null;
      return;
    }
    if (run === null) {
      run = { at: k, keys: [] };
      runs.push(run);
    }
    run.keys.push(key);
  });
  return runs;
}

/** Records the thinking runs of the assistant messages in `messages` as the model's output. */
export function issueThinking(issued: IssuedThinking, messages: readonly unknown[]): void {
  for (const m of messages) {
    if (!isRec(m) || m.role !== 'assistant') continue;
    for (const run of thinkingRuns(blocksOf(m))) for (const key of run.keys) issued.set(key, run.keys);
  }
}

/**
 * Everything the fake API would refuse in a request body; empty when it answers 200. With
 * `signatures: false` thinking signatures are not checked (for conversations whose thinking
 * blocks were not signed by this fake). With `issued` (what the model output, `issueThinking`),
 * every thinking and redacted thinking block must be one it output, in the run it came in, whole:
 * "the entire sequence of consecutive thinking or redacted_thinking blocks must match the outputs
 * generated by the model during the original request; you cannot rearrange or modify the sequence
 * of these blocks" (platform.claude.com/docs/en/build-with-claude/extended-thinking, "Preserving
 * thinking blocks"); a redacted block's `data` is checked this way too.
 */
export function anthropicRequestProblems(
  body: Rec,
  options: { signatures?: boolean; issued?: IssuedThinking } = {},
): string[] {
  const signatures = options.signatures ?? true;
  const issued = options.issued;
  const problems: string[] = toolProblems(body.tools);
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
    if (issued && raw.role === 'assistant')
      for (const run of thinkingRuns(blocks)) {
        const unknown = run.keys.findIndex((key) => !issued.has(key));
        if (unknown >= 0) {
          problems.push(`${at}.content.${run.at + unknown}: Invalid signature or data in thinking block`);
          continue;
        }
        const original = issued.get(run.keys[0]!)!;
        if (original.length !== run.keys.length || original.some((key, n) => key !== run.keys[n]))
          problems.push(
            `${at}.content.${run.at}: thinking blocks were rearranged, cut or joined (the sequence must match the model's output)`,
          );
      }
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

const COMPACTION_MODELS = new Set([
  'claude-opus-4-6',
  'claude-sonnet-4-6',
  'claude-opus-4-7',
  'claude-opus-4-8',
  'claude-mythos-preview',
]);
const COMPACTION_BETA = 'compact-2026-01-12';
const EDITING_BETA = 'context-management-2025-06-27';

function blockText(b: Rec): string {
  switch (b.type) {
    case 'text':
      return String(b.text ?? '');
    case 'tool_use':
      return `${String(b.name)} ${JSON.stringify(b.input ?? {})}`;
    case 'tool_result':
      return typeof b.content === 'string'
        ? b.content
        : blocksOfValue(b.content)
            .map((c) => blockText(c))
            .join('\n');
    case 'compaction':
      return String(b.content ?? '');
    case 'thinking':
      return String(b.thinking ?? '');
    default:
      return JSON.stringify(b);
  }
}
const blocksOfValue = (v: unknown): Rec[] => (Array.isArray(v) ? (v as unknown[]).filter(isRec) : []);

/** The fake's input tokens of a system prompt, messages and tools. */
export function fakeInputTokens(system: unknown, messages: readonly Rec[], tools?: unknown): number {
  let n = 0;
  if (typeof system === 'string') n += encode(system).length;
  else for (const b of blocksOfValue(system)) n += encode(blockText(b)).length;
  if (Array.isArray(tools) && tools.length > 0) n += encode(JSON.stringify(tools)).length;
  for (const m of messages) {
    n += 3 + encode(String(m.role)).length;
    if (typeof m.content === 'string') n += encode(m.content).length;
    else for (const b of blocksOf(m)) n += encode(blockText(b)).length;
  }
  return n;
}

/** What the API reads of a request's messages: from the last compaction block on. */
export function afterLastCompaction(messages: readonly Rec[]): Rec[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    const blocks = blocksOf(messages[i]!);
    const k = blocks.map((b) => b.type).lastIndexOf('compaction');
    if (k >= 0) return [{ ...messages[i], content: blocks.slice(k) }, ...messages.slice(i + 1)];
  }
  return messages.slice();
}

interface Edits {
  compact?: { trigger: number; instructions?: string };
  /** Thinking turns kept (`Infinity`: all). */
  clearThinking?: { keep: number };
  clearToolUses?: { trigger: number; keep: number; clearAtLeast: number; exclude: string[] };
}

/** The edits of `context_management`, or what the API would refuse in them. */
function readEdits(body: Rec, betas: readonly string[]): { edits: Edits; problems: string[] } {
  const edits: Edits = {};
  const problems: string[] = [];
  const cm = body.context_management;
  if (cm === undefined) return { edits, problems };
  if (!isRec(cm) || !Array.isArray(cm.edits))
    return { edits, problems: ['context_management.edits: expected an array'] };
  const tokens = (t: unknown, at: string, fallback: number, min = 0): number => {
    if (t === undefined) return fallback;
    if (!isRec(t) || t.type !== 'input_tokens' || typeof t.value !== 'number' || !Number.isInteger(t.value)) {
      problems.push(`${at}: expected {type: "input_tokens", value: integer}`);
      return fallback;
    }
    if (t.value < min) problems.push(`${at}.value: must be at least ${min}, got ${t.value}`);
    return t.value;
  };
  (cm.edits as unknown[]).forEach((e, i) => {
    const at = `context_management.edits.${i}`;
    if (!isRec(e)) {
      problems.push(`${at}: expected an object`);
      return;
    }
    if (e.type === 'compact_20260112') {
      if (!betas.includes(COMPACTION_BETA))
        problems.push(`${at}: compact_20260112 requires the anthropic-beta header ${COMPACTION_BETA}`);
      if (!COMPACTION_MODELS.has(String(body.model)))
        problems.push(`${at}: compact_20260112 is not supported on model ${String(body.model)}`);
      edits.compact = {
        trigger: tokens(e.trigger, `${at}.trigger`, 150_000, 50_000),
        ...(typeof e.instructions === 'string' ? { instructions: e.instructions } : {}),
      };
    } else if (e.type === 'clear_tool_uses_20250919' || e.type === 'clear_thinking_20251015') {
      if (!betas.includes(EDITING_BETA))
        problems.push(`${at}: ${e.type} requires the anthropic-beta header ${EDITING_BETA}`);
      if (e.type === 'clear_thinking_20251015') {
        const edits_ = cm.edits as unknown[];
        if (i !== 0 && edits_.length > 1)
          problems.push(`${at}: clear_thinking_20251015 must be listed first in the edits array`);
        edits.clearThinking = { keep: thinkingKeep(e.keep, `${at}.keep`, String(body.model), problems) };
      }
      if (e.type === 'clear_tool_uses_20250919') {
        const keep = isRec(e.keep) && typeof e.keep.value === 'number' ? e.keep.value : 3;
        edits.clearToolUses = {
          trigger: tokens(e.trigger, `${at}.trigger`, 100_000),
          keep,
          clearAtLeast: tokens(e.clear_at_least, `${at}.clear_at_least`, 0),
          exclude: Array.isArray(e.exclude_tools) ? e.exclude_tools.map(String) : [],
        };
      }
    } else problems.push(`${at}.type: unknown edit ${JSON.stringify(e.type)}`);
  });
  return { edits, problems };
}

/** Models whose default is to keep every thinking turn (Opus 4.5, Sonnet 4.6 and later). */
const KEEP_ALL_THINKING = new Set([...COMPACTION_MODELS, 'claude-opus-4-5', 'claude-opus-4-5-20251101']);

/** The thinking turns `clear_thinking_20251015` keeps, or what the API refuses in its `keep`. */
function thinkingKeep(keep: unknown, at: string, model: string, problems: string[]): number {
  if (keep === undefined) return KEEP_ALL_THINKING.has(model) ? Number.POSITIVE_INFINITY : 1;
  if (keep === 'all') return Number.POSITIVE_INFINITY;
  if (
    !isRec(keep) ||
    keep.type !== 'thinking_turns' ||
    typeof keep.value !== 'number' ||
    !Number.isInteger(keep.value) ||
    keep.value <= 0
  ) {
    problems.push(`${at}: expected {type: "thinking_turns", value: N} with N > 0, or "all"`);
    return 1;
  }
  return keep.value;
}

/**
 * Thinking clearing: an assistant turn is the assistant messages between two user messages that
 * say something (tool results alone continue the turn); the thinking blocks of all turns but the
 * last `keep` that have any are removed. What it cleared, in turns.
 */
function clearThinking(messages: Rec[], keep: number): { messages: Rec[]; cleared: number } {
  const turns: number[][] = [];
  let current: number[] | null = null;
  messages.forEach((m, i) => {
    if (m.role === 'user') {
      const saysSomething =
        typeof m.content === 'string' || blocksOf(m).some((b) => b.type !== 'tool_result');
      if (saysSomething) current = null;
      return;
    }
    if (!current) {
      current = [];
      turns.push(current);
    }
    current.push(i);
  });
  const thinking = (i: number) =>
    blocksOf(messages[i]!).some((b) => b.type === 'thinking' || b.type === 'redacted_thinking');
  const withThinking = turns.filter((t) => t.some(thinking));
  const clear = withThinking.slice(0, Math.max(0, withThinking.length - keep));
  if (clear.length === 0) return { messages, cleared: 0 };
  const out = messages.slice();
  for (const turn of clear) {
    for (const i of turn) {
      const m = out[i]!;
      out[i] = {
        ...m,
        content: blocksOf(m).filter((b) => b.type !== 'thinking' && b.type !== 'redacted_thinking'),
      };
    }
  }
  return { messages: out, cleared: clear.length };
}

/** Tool-result clearing: the oldest results past `keep` get a placeholder; what it cleared. */
function clearToolResults(
  messages: Rec[],
  o: NonNullable<Edits['clearToolUses']>,
): { messages: Rec[]; cleared: number } {
  const names = new Map<string, string>();
  const results: Array<[number, number]> = [];
  messages.forEach((m, i) => {
    blocksOf(m).forEach((b, k) => {
      if (b.type === 'tool_use') names.set(String(b.id), String(b.name));
      if (b.type === 'tool_result' && !o.exclude.includes(names.get(String(b.tool_use_id)) ?? ''))
        results.push([i, k]);
    });
  });
  const clear = results.slice(0, Math.max(0, results.length - o.keep));
  if (clear.length === 0) return { messages, cleared: 0 };
  const out = messages.map((m) => ({
    ...m,
    content: Array.isArray(m.content) ? [...blocksOf(m)] : m.content,
  }));
  for (const [i, k] of clear) {
    const blocks = out[i]!.content as Rec[];
    blocks[k] = { ...blocks[k], content: '[cleared to save context]' };
  }
  return { messages: out, cleared: clear.length };
}

/** The fake's summary of what it compacts: the start of each text, in order (its own reading). */
function summarize(messages: readonly Rec[]): string {
  const parts: string[] = [];
  for (const m of messages) {
    const text = typeof m.content === 'string' ? m.content : blocksOf(m).map(blockText).join(' ');
    parts.push(`${String(m.role)}: ${text.split(/\s+/).slice(0, 12).join(' ')}`);
  }
  const summary = parts.join('\n');
  const tokens = encode(summary);
  return tokens.length <= 2_000 ? summary : `${summary.slice(0, 8_000)}`;
}

/** What the fake answers a valid request: its content and usage, compacting and clearing as asked. */
function answer(body: Rec, edits: Edits): Rec {
  const sent = (body.messages as Rec[]).filter(isRec);
  let read = afterLastCompaction(sent);
  const applied: Rec[] = [];
  let input = fakeInputTokens(body.system, read, body.tools);
  // An edit applies when it clears something (and at least `clear_at_least`): listed with what it cleared.
  const apply = (
    type: string,
    cleared: { messages: Rec[]; cleared: number },
    countKey: string,
    least = 0,
  ) => {
    const after = fakeInputTokens(body.system, cleared.messages, body.tools);
    if (cleared.cleared === 0 || input - after < least) return;
    applied.push({ type, [countKey]: cleared.cleared, cleared_input_tokens: input - after });
    read = cleared.messages;
    input = after;
  };
  if (edits.clearThinking)
    apply('clear_thinking_20251015', clearThinking(read, edits.clearThinking.keep), 'cleared_thinking_turns');
  if (edits.clearToolUses && input > edits.clearToolUses.trigger) {
    const cleared = clearToolResults(read, edits.clearToolUses);
    apply('clear_tool_uses_20250919', cleared, 'cleared_tool_uses', edits.clearToolUses.clearAtLeast);
  }
  const last = read[read.length - 1];
  const lastText = last
    ? typeof last.content === 'string'
      ? last.content
      : blocksOf(last).map(blockText).join(' ')
    : '';
  const text = `Noted: ${lastText.split(/\s+/).slice(0, 30).join(' ')}`;
  const output = encode(text).length;
  const content: Rec[] = [{ type: 'text', text }];
  const usage: Rec = { input_tokens: input, output_tokens: output };
  if (edits.compact && input > edits.compact.trigger) {
    const summary = summarize(read);
    const block = { type: 'compaction', content: summary };
    content.unshift(block);
    // The reply is written from the compacted context: the summary and the latest message.
    const compacted = fakeInputTokens(
      body.system,
      [{ role: 'assistant', content: [block] }, ...(last ? [last] : [])],
      body.tools,
    );
    const compactionOutput = encode(summary).length;
    usage.input_tokens = compacted;
    usage.iterations = [
      { type: 'compaction', input_tokens: input, output_tokens: compactionOutput },
      { type: 'message', input_tokens: compacted, output_tokens: output },
    ];
  }
  const out: Rec = { content, usage };
  if (body.context_management !== undefined) out.context_management = { applied_edits: applied };
  return out;
}

/**
 * Starts the fake on a free port of 127.0.0.1. With `issued`, thinking blocks are held to the runs
 * the model output (see `anthropicRequestProblems`).
 */
export async function startFakeAnthropic(
  options: { issued?: IssuedThinking } = {},
): Promise<FakeAnthropicServer> {
  const requests: FakeAnthropicServer['requests'] = [];
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/messages') return send(res, 404, { type: 'error' });
    const header = req.headers['anthropic-beta'];
    const betas = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((b) => b.trim());
    readJson(req).then(
      (body) => {
        const read = isRec(body) ? readEdits(body, betas) : { edits: {}, problems: [] };
        const problems = isRec(body)
          ? [
              ...read.problems,
              ...anthropicRequestProblems(body, options.issued ? { issued: options.issued } : {}),
            ]
          : ['body: expected an object'];
        requests.push({ body: body as Rec, problems });
        if (problems.length > 0)
          return send(res, 400, {
            type: 'error',
            error: { type: 'invalid_request_error', message: problems.join('; ') },
          });
        const { content, usage, context_management } = answer(body as Rec, read.edits) as {
          content: Rec[];
          usage: Rec;
          context_management?: Rec;
        };
        send(res, 200, {
          id: `msg_${requests.length}`,
          type: 'message',
          role: 'assistant',
          model: (body as Rec).model,
          content,
          stop_reason: 'end_turn',
          usage,
          ...(context_management ? { context_management } : {}),
        });
      },
      () => send(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'bad JSON' } }),
    );
  });
  await listenLoopback(server);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
