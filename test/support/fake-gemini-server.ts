/**
 * A fake Gemini `generateContent` (`POST /v1beta/models/{model}:generateContent`) on 127.0.0.1
 * that answers 400 `INVALID_ARGUMENT` where the API reference and the function-calling and
 * thought-signature guides say a request is refused, read on its own (nothing from `src/`):
 * - `contents` is a non-empty array of `{ role: "user" | "model", parts }` with non-empty parts,
 *   each holding exactly one datum (a model part may hold only a `thoughtSignature`);
 *   `systemInstruction` holds text parts only;
 * - the first content is the user's;
 * - a function call turn (model, `functionCall` parts) comes right after a user turn or a
 *   function response turn, and the next content is a function response turn with as many
 *   `functionResponse` parts as there were calls, matched by id where the call has one, else by
 *   name; a function response turn comes right after a function call turn;
 * - thought signatures are returned exactly where they were: here a signature is `sealPart` of
 *   the part it sits on, so a moved or edited signed part is refused;
 * - with `requireSignatures` (Gemini 3): in the current turn (the contents after the last user
 *   content with standard content), the first `functionCall` part of every model step carries
 *   its signature.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listenLoopback } from './listen-loopback.js';

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

const DATA = [
  'text',
  'inlineData',
  'fileData',
  'functionCall',
  'functionResponse',
  'executableCode',
  'codeExecutionResult',
];

/** The signature the fake "model" puts on a part: a hash of the part without its signature. */
export function sealPart(part: Rec): string {
  const { thoughtSignature: _, ...rest } = part;
  return createHash('sha256')
    .update(`fake-gemini:${JSON.stringify(rest)}`)
    .digest('base64');
}

function kindOf(part: Rec): string[] {
  return DATA.filter((k) => part[k] !== undefined);
}

/** Options of the fake: Gemini 3's signature requirement. */
export interface FakeGeminiOptions {
  requireSignatures?: boolean;
}

/** Everything the fake API would refuse in a request body; empty when it answers 200. */
export function geminiRequestProblems(body: Rec, options: FakeGeminiOptions = {}): string[] {
  const problems: string[] = [];
  const contents = body.contents;
  if (!Array.isArray(contents) || contents.length === 0) return ['contents: expected a non-empty array'];
  if (body.systemInstruction !== undefined) {
    const parts = isRec(body.systemInstruction) ? body.systemInstruction.parts : undefined;
    if (
      !Array.isArray(parts) ||
      parts.length === 0 ||
      parts.some((p) => !isRec(p) || typeof p.text !== 'string')
    )
      problems.push('systemInstruction.parts: expected text parts');
  }
  const calls: Rec[][] = [];
  const responses: Rec[][] = [];
  contents.forEach((content: unknown, i: number) => {
    const at = `contents[${i}]`;
    calls.push([]);
    responses.push([]);
    if (!isRec(content) || (content.role !== 'user' && content.role !== 'model')) {
      problems.push(`${at}.role: must be "user" or "model"`);
      return;
    }
    const parts = content.parts;
    if (!Array.isArray(parts) || parts.length === 0) {
      problems.push(`${at}.parts: must not be empty`);
      return;
    }
    parts.forEach((part: unknown, k: number) => {
      if (!isRec(part)) {
        problems.push(`${at}.parts[${k}]: expected an object`);
        return;
      }
      const kinds = kindOf(part);
      const signatureOnly =
        kinds.length === 0 && content.role === 'model' && typeof part.thoughtSignature === 'string';
      if (kinds.length !== 1 && !signatureOnly)
        problems.push(`${at}.parts[${k}]: a part holds exactly one datum`);
      if (typeof part.thoughtSignature === 'string' && part.thoughtSignature !== sealPart(part))
        problems.push(`${at}.parts[${k}].thoughtSignature: invalid thought signature`);
      if (isRec(part.functionCall)) {
        if (content.role !== 'model') problems.push(`${at}.parts[${k}]: functionCall in a user content`);
        calls[i]!.push(part);
      }
      if (isRec(part.functionResponse)) {
        if (content.role !== 'user') problems.push(`${at}.parts[${k}]: functionResponse in a model content`);
        if (!isRec(part.functionResponse.response))
          problems.push(`${at}.parts[${k}].functionResponse.response: expected an object`);
        responses[i]!.push(part.functionResponse);
      }
      if (typeof part.text === 'string' && part.text.length === 0 && part.thoughtSignature === undefined)
        problems.push(`${at}.parts[${k}].text: must not be empty`);
    });
  });
  if (isRec(contents[0]) && contents[0].role !== 'user')
    problems.push('contents[0]: the first content must be a user content');
  for (let i = 0; i < contents.length; i++) {
    const asked = calls[i]!;
    const prev = contents[i - 1] as Rec | undefined;
    if (asked.length > 0) {
      if (prev !== undefined && prev.role !== 'user')
        problems.push(
          `Please ensure that function call turn comes immediately after a user turn or after a function response turn (contents[${i}]).`,
        );
      const answers = responses[i + 1];
      if (answers === undefined || answers.length === 0) {
        problems.push(`contents[${i}]: function calls not followed by a function response turn`);
        continue;
      }
      if (answers.length !== asked.length) {
        problems.push(
          `Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn (contents[${i + 1}]).`,
        );
        continue;
      }
      const used = new Set<number>();
      for (const part of asked) {
        const call = part.functionCall as Rec;
        const k = answers.findIndex((r, n) =>
          used.has(n) ? false : call.id !== undefined ? r.id === call.id : r.name === call.name,
        );
        if (k < 0) problems.push(`contents[${i + 1}]: no functionResponse for ${String(call.name)}`);
        else used.add(k);
      }
    }
    if (responses[i]!.length > 0 && (i === 0 || calls[i - 1]!.length === 0))
      problems.push(
        `Please ensure that function response turn comes immediately after a function call turn (contents[${i}]).`,
      );
  }
  if (options.requireSignatures) {
    let start = contents.length - 1;
    while (start > 0) {
      const c = contents[start] as Rec;
      const standard =
        c.role === 'user' &&
        Array.isArray(c.parts) &&
        c.parts.some((p) => isRec(p) && p.functionResponse === undefined);
      if (standard) break;
      start--;
    }
    for (let i = start; i < contents.length; i++) {
      const first = calls[i]?.[0];
      if (first && typeof first.thoughtSignature !== 'string')
        problems.push(
          `Function call ${String((first.functionCall as Rec).name)} in the ${i}. content block is missing a thought_signature.`,
        );
    }
  }
  return problems;
}

export interface FakeGeminiServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Starts the fake on a free port of 127.0.0.1: POST `${url}/v1beta/models/{model}:generateContent`. */
export async function startFakeGemini(options: FakeGeminiOptions = {}): Promise<FakeGeminiServer> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = undefined;
    }
    const path = /^\/v1beta\/models\/[^/:]+:generateContent$/.test(req.url ?? '');
    const problems = !path
      ? ['unknown path']
      : isRec(body)
        ? geminiRequestProblems(body, options)
        : ['body: expected JSON'];
    res.writeHead(problems.length > 0 ? 400 : 200, { 'content-type': 'application/json' });
    const reply: Rec = { text: 'ok' };
    reply.thoughtSignature = sealPart(reply);
    res.end(
      JSON.stringify(
        problems.length > 0
          ? { error: { code: 400, message: problems.join('; '), status: 'INVALID_ARGUMENT' } }
          : {
              candidates: [{ content: { role: 'model', parts: [reply] }, finishReason: 'STOP', index: 0 }],
              usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 1, totalTokenCount: 11 },
              modelVersion: 'gemini-2.5-flash',
            },
      ),
    );
  });
  await listenLoopback(server);
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
}
