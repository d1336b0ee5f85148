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
 * - message roles and part types are the documented ones.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the fake API puts in a reasoning item's `encrypted_content` (and checks it against). */
export function sealReasoning(id: string, summary: readonly string[]): string {
  return createHash('sha256')
    .update(`fake-openai:${id}:${summary.join('|')}`)
    .digest('base64');
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
  const problems: string[] = [];
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

export interface FakeResponsesServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Starts the fake on a free port of 127.0.0.1: POST `${url}/v1/responses`. */
export async function startFakeResponses(): Promise<FakeResponsesServer> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = undefined;
    }
    const problems = isRec(body) ? responsesRequestProblems(body) : ['body: expected JSON'];
    res.writeHead(problems.length > 0 ? 400 : 200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(
        problems.length > 0
          ? { error: { type: 'invalid_request_error', message: problems.join('; ') } }
          : {
              id: 'resp_1',
              object: 'response',
              output: [
                {
                  type: 'message',
                  id: 'msg_1',
                  role: 'assistant',
                  content: [{ type: 'output_text', text: 'ok', annotations: [] }],
                },
              ],
              usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
            },
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
}
