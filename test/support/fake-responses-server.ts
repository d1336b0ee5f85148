/**
 * A fake OpenAI Responses API (`POST /v1/responses`) on 127.0.0.1 that answers 400 with an
 * `invalid_request_error` where the API documents or is known to refuse an input, read on its own
 * (nothing from `src/`):
 * - `input` is a non-empty array of items of known types;
 * - every function, custom tool, computer and local shell call has exactly one output item of
 *   its kind later in the input, with its `call_id` ("No tool output found for function call");
 *   every output answers a call before it;
 * - a `reasoning` item is followed by another item ("provided without its required following
 *   item"); a call the model made right after reasoning (here: id `fc_<reasoning id>_<n>`) comes
 *   with that reasoning item ("provided without its required 'reasoning' item");
 * - reasoning is never edited: its `encrypted_content` (here `sealReasoning` of its summary) must
 *   still match;
 * - an `mcp_approval_response` answers an `mcp_approval_request` before it;
 * - message roles and part types are the documented ones;
 * - a `compaction` item is one this API wrote (its `encrypted_content` decrypts: here, carries
 *   this fake's seal) and within the 10 MiB limit on input strings;
 * - `context_management` is a list of `{ type: 'compaction', compact_threshold? }`.
 *
 * Compaction (developers.openai.com/api/docs/guides/compaction): with `context_management`, a
 * request whose rendered input passes `compact_threshold` gets a `compaction` item first in its
 * output, then the reply; `POST /v1/responses/compact` returns the input's user messages followed
 * by one `compaction` item (`object: 'response.compaction'`). A compaction item renders, when sent
 * back, as the tokens the compaction wrote (a tenth of what it compacted), billed as that call's
 * output. Input is counted with o200k (three framing tokens per item, then its role and text,
 * three priming the reply) and
 * read from the prompt cache as the "Prompt caching" guide says (`openaiCachedTokens`).
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encode as encodeO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { openaiCachedTokens } from './fake-caching-server.js';
import { listenLoopback } from './listen-loopback.js';

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the fake API puts in a reasoning item's `encrypted_content` (and checks it against). */
export function sealReasoning(id: string, summary: readonly string[]): string {
  return createHash('sha256')
    .update(`fake-openai:${id}:${summary.join('|')}`)
    .digest('base64');
}

/** The API's limit on an input string (10 MiB), which a compaction item's ciphertext meets too. */
export const MAX_INPUT_STRING = 10 * 1024 * 1024;
const SEAL_KEY = 'fake-responses-compaction';

/** A compaction item's `encrypted_content`: the tokens it renders as, sealed (opaque to clients). */
export function sealCompaction(tokens: number, nonce: string): string {
  const body = Buffer.from(JSON.stringify({ tokens, nonce })).toString('base64url');
  return `${body}.${createHmac('sha256', SEAL_KEY).update(body).digest('base64url')}`;
}

/** The tokens a sealed compaction renders as; undefined when this fake did not write it. */
export function unsealCompaction(content: string): number | undefined {
  const [body, mac] = content.split('.');
  if (body === undefined || mac !== createHmac('sha256', SEAL_KEY).update(body).digest('base64url'))
    return undefined;
  const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { tokens: number };
  return parsed.tokens;
}

const CALL_OUTPUT: Record<string, string> = {
  function_call: 'function_call_output',
  custom_tool_call: 'custom_tool_call_output',
  computer_call: 'computer_call_output',
  local_shell_call: 'local_shell_call_output',
};
const OTHER = new Set([
  'message',
  'reasoning',
  'item_reference',
  'web_search_call',
  'file_search_call',
  'code_interpreter_call',
  'image_generation_call',
  'mcp_call',
  'mcp_list_tools',
  'mcp_approval_request',
  'mcp_approval_response',
  'compaction',
]);
const PARTS: Record<string, string[]> = {
  user: ['input_text', 'input_image', 'input_file', 'input_audio'],
  system: ['input_text'],
  developer: ['input_text'],
  assistant: ['output_text', 'refusal', 'input_text'],
};

/** Everything the fake API would refuse in a request body; empty when it answers 200. */
export function responsesRequestProblems(body: Rec): string[] {
  const input = body.input;
  if (!Array.isArray(input) || input.length === 0) return ['input: expected a non-empty array of items'];
  const problems: string[] = contextManagementProblems(body.context_management);
  const calls = new Map<string, { type: string; answered: boolean }>();
  const seen = new Set<string>();
  const approvals = new Set<string>();
  input.forEach((raw: unknown, i: number) => {
    const problem = itemProblem(raw, i);
    if (problem) problems.push(problem);
    else if (isRec(raw)) checkItem(raw, i);
  });
  function itemProblem(raw: unknown, i: number): string | undefined {
    const at = `input[${i}]`;
    if (!isRec(raw)) return `${at}: expected an object`;
    const type = typeof raw.type === 'string' ? raw.type : typeof raw.role === 'string' ? 'message' : '';
    const outputs = Object.values(CALL_OUTPUT);
    if (!(type in CALL_OUTPUT) && !outputs.includes(type) && !OTHER.has(type))
      return `${at}.type: invalid item type ${JSON.stringify(type)}`;
    if (type === 'message' && !PARTS[String(raw.role)]) return `${at}.role: invalid role`;
    return undefined;
  }
  function checkItem(raw: Rec, i: number): void {
    const at = `input[${i}]`;
    const type = typeof raw.type === 'string' ? raw.type : typeof raw.role === 'string' ? 'message' : '';
    const outputs = Object.values(CALL_OUTPUT);
    if (type === 'message') {
      const accepted = PARTS[String(raw.role)]!;
      if (Array.isArray(raw.content))
        raw.content.forEach((p: unknown, k: number) => {
          if (!isRec(p) || !accepted.includes(String(p.type)))
            problems.push(`${at}.content[${k}].type: invalid part for role ${String(raw.role)}`);
        });
      else if (typeof raw.content !== 'string') problems.push(`${at}.content: expected a string or parts`);
    }
    if (type === 'reasoning') {
      const summary = Array.isArray(raw.summary)
        ? raw.summary.map((s) => (isRec(s) ? String(s.text) : ''))
        : [];
      if (raw.encrypted_content !== sealReasoning(String(raw.id), summary))
        problems.push(
          `${at}: reasoning item ${String(raw.id)} was modified (encrypted_content does not match)`,
        );
      const next = (input as unknown[])[i + 1];
      if (!isRec(next))
        problems.push(
          `Item '${String(raw.id)}' of type 'reasoning' was provided without its required following item.`,
        );
    }
    if (type === 'compaction') {
      const content = raw.encrypted_content;
      if (typeof content !== 'string') problems.push(`${at}.encrypted_content: expected a string`);
      else if (content.length > MAX_INPUT_STRING)
        problems.push(
          `Invalid '${at}.encrypted_content': string too long. Expected a string with maximum length ${MAX_INPUT_STRING}, but got a string with length ${content.length} instead.`,
        );
      else if (unsealCompaction(content) === undefined)
        problems.push(
          `${at}: the compaction item could not be decrypted (it was modified, or another API wrote it)`,
        );
    }
    if (typeof raw.id === 'string') seen.add(raw.id);
    if (type in CALL_OUTPUT) {
      const id = String(raw.call_id);
      if (calls.has(id)) problems.push(`${at}.call_id: duplicate ${id}`);
      calls.set(id, { type, answered: false });
      const made = typeof raw.id === 'string' ? /^fc_(rs_[A-Za-z0-9]+)_\d+$/.exec(raw.id) : null;
      if (made && !seen.has(made[1]!))
        problems.push(
          `Item '${String(raw.id)}' of type '${type}' was provided without its required 'reasoning' item: '${made[1]}'.`,
        );
    }
    if (outputs.includes(type)) {
      const id = String(raw.call_id ?? raw.id);
      const call = calls.get(id);
      if (!call || CALL_OUTPUT[call.type] !== type || call.answered)
        problems.push(`${at}: No tool call found for ${type} with call_id ${id}.`);
      else call.answered = true;
    }
    if (type === 'mcp_approval_request') approvals.add(String(raw.id));
    if (type === 'mcp_approval_response' && !approvals.has(String(raw.approval_request_id)))
      problems.push(`${at}: no approval request ${String(raw.approval_request_id)}`);
  }
  for (const [id, call] of calls)
    if (!call.answered) problems.push(`No tool output found for ${call.type.replace(/_/g, ' ')} ${id}.`);
  return problems;
}

function contextManagementProblems(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return ['context_management: expected an array'];
  return value.flatMap((entry: unknown, i: number) => {
    const at = `context_management[${i}]`;
    if (!isRec(entry) || entry.type !== 'compaction') return [`${at}.type: expected "compaction"`];
    const t = entry.compact_threshold;
    if (t !== undefined && (typeof t !== 'number' || !Number.isInteger(t) || t < 1))
      return [`${at}.compact_threshold: expected a positive integer`];
    return [];
  });
}

/** The input as the model reads it, token by token (see the module note). */
export function renderedTokens(body: Rec): number[] {
  const tokens: number[] = [];
  const frame = [-1, -2, -3];
  const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
  if (typeof body.instructions === 'string') tokens.push(...frame, ...encodeO200k(body.instructions));
  for (const raw of body.input as Rec[]) {
    tokens.push(...frame);
    const type = typeof raw.type === 'string' ? raw.type : 'message';
    if (type === 'message') {
      tokens.push(...encodeO200k(String(raw.role)));
      const parts = typeof raw.content === 'string' ? [raw.content] : (raw.content as Rec[]);
      for (const p of parts)
        tokens.push(...encodeO200k(typeof p === 'string' ? p : text(p.text ?? p.refusal ?? p)));
    } else if (type === 'compaction') {
      const n = unsealCompaction(String(raw.encrypted_content)) ?? 0;
      const seed = createHash('sha256').update(String(raw.encrypted_content)).digest().readUInt32LE(0);
      for (let k = 0; k < n; k++) tokens.push(-10 - ((seed + k) % 1_000_000));
    } else if (type === 'function_call') tokens.push(...encodeO200k(`${raw.name}${raw.arguments}`));
    else if (type in Object.fromEntries(Object.values(CALL_OUTPUT).map((t) => [t, 1])))
      tokens.push(...encodeO200k(text(raw.output)));
    else tokens.push(...encodeO200k(JSON.stringify(raw)));
  }
  // The reply is primed with <|start|>assistant<|message|> (OpenAI cookbook, "How to count tokens").
  tokens.push(-4, -5, -6);
  return tokens;
}

/** What the fake billed, request by request (input, cached input, output). */
export interface FakeBill {
  path: string;
  input: number;
  cached: number;
  output: number;
  /** Of the output, the tokens a compaction wrote. */
  compactionOutput: number;
  compacted: boolean;
}

export interface FakeResponsesServer {
  readonly url: string;
  /** Every answered request's billing, in order. */
  readonly bills: FakeBill[];
  close(): Promise<void>;
}

/** How many tokens a compaction of `tokens` rendered tokens writes (a tenth, at least 32). */
function compactedSize(tokens: number): number {
  return Math.max(32, Math.ceil(tokens / 10));
}

/** Starts the fake on a free port of 127.0.0.1: POST `${url}/v1/responses` and `/v1/responses/compact`. */
export async function startFakeResponses(options: { now?: () => number } = {}): Promise<FakeResponsesServer> {
  const bills: FakeBill[] = [];
  const cache = new Map<number, number>();
  let sealed = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = undefined;
    }
    const compact = req.url === '/v1/responses/compact';
    const problems = isRec(body) ? responsesRequestProblems(body) : ['body: expected JSON'];
    if (compact && isRec(body) && typeof body.model !== 'string') problems.push('model: required');
    res.writeHead(problems.length > 0 ? 400 : 200, { 'content-type': 'application/json' });
    if (problems.length > 0 || !isRec(body)) {
      res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: problems.join('; ') } }));
      return;
    }
    const tokens = renderedTokens(body);
    const cached = openaiCachedTokens(tokens, cache, options.now?.() ?? Date.now());
    const compaction = (): Rec => {
      sealed++;
      return {
        type: 'compaction',
        id: `cmp_${sealed}`,
        encrypted_content: sealCompaction(compactedSize(tokens.length), `${sealed}`),
      };
    };
    const usage = (output: number) => ({
      input_tokens: tokens.length,
      input_tokens_details: { cached_tokens: cached },
      output_tokens: output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: tokens.length + output,
    });
    if (compact) {
      // Output items: the user messages as `message` items with content parts.
      const users = (body.input as Rec[])
        .filter((item) => (item.type === undefined || item.type === 'message') && item.role === 'user')
        .map((item, k) => ({
          type: 'message',
          id: typeof item.id === 'string' ? item.id : `msg_c${sealed + 1}_${k}`,
          role: 'user',
          status: 'completed',
          content:
            typeof item.content === 'string' ? [{ type: 'input_text', text: item.content }] : item.content,
        }));
      const size = compactedSize(tokens.length);
      bills.push({
        path: req.url!,
        input: tokens.length,
        cached,
        output: size,
        compactionOutput: size,
        compacted: true,
      });
      res.end(
        JSON.stringify({
          id: `cmpresp_${sealed + 1}`,
          object: 'response.compaction',
          created_at: 0,
          output: [...users, compaction()],
          usage: usage(size),
        }),
      );
      return;
    }
    const thresholds = Array.isArray(body.context_management)
      ? (body.context_management as Rec[])
          .map((c) => c.compact_threshold)
          .filter((t) => typeof t === 'number')
      : [];
    const over = thresholds.length > 0 && tokens.length > Math.min(...(thresholds as number[]));
    const replyText = `ok ${bills.length + 1}`;
    const reply = {
      type: 'message',
      id: `msg_${bills.length + 1}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: replyText, annotations: [] }],
    };
    const replyTokens = encodeO200k(replyText).length;
    const output = over ? [compaction(), reply] : [reply];
    const compactionOutput = over ? compactedSize(tokens.length) : 0;
    const outputTokens = replyTokens + compactionOutput;
    bills.push({
      path: req.url!,
      input: tokens.length,
      cached,
      output: outputTokens,
      compactionOutput,
      compacted: over,
    });
    res.end(
      JSON.stringify({ id: `resp_${bills.length}`, object: 'response', output, usage: usage(outputTokens) }),
    );
  });
  await listenLoopback(server);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bills,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
