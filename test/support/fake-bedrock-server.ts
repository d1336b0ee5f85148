/**
 * A fake Amazon Bedrock Runtime Converse API (`POST /model/{modelId}/converse`) on 127.0.0.1 that
 * refuses, with a 400 and a `ValidationException` (the `x-amzn-ErrorType` header and a
 * `{"message"}` body, as AWS's REST-JSON services answer), what the documentation says Bedrock
 * refuses. It reads requests on its own (nothing from `src/`), so a view it accepts is accepted by
 * a reading that does not share the library's mistakes.
 *
 * Rules, read 2026-11-26 in the Bedrock API reference (docs.aws.amazon.com/bedrock/latest/
 * APIReference: API_runtime_Converse, Message, ContentBlock, ToolUseBlock, ToolResultBlock,
 * ToolResultContentBlock, ImageBlock, DocumentBlock, VideoBlock, ReasoningContentBlock,
 * CachePointBlock, GuardrailConverseContentBlock, SystemContentBlock, ToolConfiguration, Tool,
 * ToolSpecification, ToolChoice, TokenUsage) and the user guide (conversation-inference,
 * tool-use, prompt-caching, guardrails-use-converse-api); the error texts are Bedrock's own, as
 * reported in public issues (langchain-aws#130, dify#12340, OpenHands#5339, vercel/ai#7537,
 * aws-samples/bedrock-chat#95, goose#7550):
 * - the body has only the documented members (`messages`, `system`, `inferenceConfig`,
 *   `toolConfig`, `guardrailConfig`, `additionalModelRequestFields`,
 *   `additionalModelResponseFieldPaths`, `promptVariables`, `requestMetadata`,
 *   `performanceConfig`, `serviceTier`);
 * - a message is `{role: "user" | "assistant", content: ContentBlock[]}` with nothing else and
 *   a non-empty `content`; the first message is from the user, and roles alternate;
 * - a content block is a UNION: exactly one of `text`, `image`, `document`, `video`, `audio`,
 *   `toolUse`, `toolResult`, `guardContent`, `cachePoint`, `reasoningContent`,
 *   `citationsContent`, `searchResult`; text is never blank;
 * - `image.format` is png | jpeg | gif | webp and `image.source` one of `bytes`, `s3Location`;
 *   `document` has a `name` (1–200 characters: alphanumerics, single whitespace, hyphens,
 *   parentheses, square brackets), an optional `format` (pdf | csv | doc | docx | xls | xlsx |
 *   html | txt | md) and a source of `bytes`, `s3Location`, `text` or `content`; a user message
 *   with a document also has a text block; a message holds at most five documents and 20
 *   images, and only a user message holds images and documents (the Message reference,
 *   docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Message.html); `video.format` is mkv | mov | mp4 | webm | flv |
 *   mpeg | mpg | wmv | three_gp;
 * - `toolUse` has `toolUseId` and `name` of 1–64 characters in `[a-zA-Z0-9_-]` and an `input`;
 *   `toolResult` has `toolUseId`, a `content` array of `json` / `text` / `image` / `document` /
 *   `video` / `searchResult` blocks, and a `status` of success | error (content not empty
 *   with status error);
 * - every `toolUse` of an assistant message is answered by a `toolResult` with its id in the very
 *   next message, a user message; every `toolResult` answers a `toolUse` of the message just
 *   before, once; a conversation with tool blocks needs `toolConfig`;
 * - `reasoningContent` is `{reasoningText: {text, signature?}}` or `{redactedContent}`; a
 *   signature is checked against the one this fake gives (`signReasoning`): an edited reasoning
 *   block fails;
 * - `cachePoint` is `{type: "default"}` (an optional `ttl` of 5m | 1h); Claude takes at most 4
 *   cache checkpoints in a request (system, tools and messages together);
 * - `guardContent` is `{text: {text, qualifiers?}}` or `{image: {format: png | jpeg, source}}`;
 * - `system` blocks are `text` (not blank), `guardContent` or `cachePoint`;
 * - `toolConfig.tools` is a non-empty array of `{toolSpec: {name, description?, inputSchema:
 *   {json}}}` or `{cachePoint}` (names unique); `toolChoice` is one of `auto`, `any`, `tool`;
 * - the input (system, messages and tools) fits the model's context window, or "Input is too
 *   long for requested model." (Claude's own refusal, "prompt is too long: N tokens > M maximum",
 *   is returned for a model id containing `anthropic.claude`).
 * Input tokens: cl100k, three framing tokens per message plus its role, each block's text (a
 * tool call's name and JSON input, a non-text block's JSON). Prompt caching: the prefix up to the
 * last cache checkpoint is read from the cache when the fake saw it before (`cacheReadInputTokens`),
 * written otherwise (`cacheWriteInputTokens`); `inputTokens` counts the rest.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encode } from 'gpt-tokenizer/encoding/cl100k_base';
import { listenLoopback } from './listen-loopback.js';

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const blank = (t: unknown) => typeof t !== 'string' || t.trim() === '';

/** The signature the fake gives a reasoning text (and checks it against). */
export function signReasoning(text: string): string {
  return createHash('sha256').update(`fake-bedrock:${text}`).digest('base64');
}

const REQUEST_MEMBERS = new Set([
  'messages',
  'system',
  'inferenceConfig',
  'toolConfig',
  'guardrailConfig',
  'additionalModelRequestFields',
  'additionalModelResponseFieldPaths',
  'promptVariables',
  'requestMetadata',
  'performanceConfig',
  'serviceTier',
]);
const BLOCK_MEMBERS = [
  'text',
  'image',
  'document',
  'video',
  'audio',
  'toolUse',
  'toolResult',
  'guardContent',
  'cachePoint',
  'reasoningContent',
  'citationsContent',
  'searchResult',
];
const RESULT_MEMBERS = ['json', 'text', 'image', 'document', 'video', 'searchResult'];
const IMAGE_FORMATS = new Set(['png', 'jpeg', 'gif', 'webp']);
const DOCUMENT_FORMATS = new Set(['pdf', 'csv', 'doc', 'docx', 'xls', 'xlsx', 'html', 'txt', 'md']);
const VIDEO_FORMATS = new Set(['mkv', 'mov', 'mp4', 'webm', 'flv', 'mpeg', 'mpg', 'wmv', 'three_gp']);
const ID = /^[a-zA-Z0-9_-]{1,64}$/;
const DOCUMENT_NAME = /^(?:[a-zA-Z0-9\-()[\]]|\s(?!\s))+$/;
const MAX_CACHE_POINTS = 4;

/** The one member a union object sets, or a problem. */
function unionMember(
  value: unknown,
  members: readonly string[],
  at: string,
  problems: string[],
): string | null {
  if (!isRec(value)) {
    problems.push(`${at}: expected an object`);
    return null;
  }
  const keys = Object.keys(value);
  const known = keys.filter((k) => members.includes(k));
  for (const k of keys) if (!members.includes(k)) problems.push(`${at}.${k}: unknown member`);
  if (known.length !== 1) {
    problems.push(`${at}: exactly one member must be set (found ${known.length})`);
    return null;
  }
  return known[0]!;
}

function sourceProblems(source: unknown, allowed: readonly string[], at: string, problems: string[]): void {
  const member = unionMember(source, allowed, at, problems);
  if (member === null) return;
  const v = (source as Rec)[member];
  if (member === 'bytes' && (typeof v !== 'string' || v.length === 0))
    problems.push(`${at}.bytes: expected base64 bytes`);
  if (member === 's3Location' && (!isRec(v) || typeof v.uri !== 'string'))
    problems.push(`${at}.s3Location.uri: required`);
  if (member === 'text' && blank(v)) problems.push(`${at}.text: is blank`);
}

function imageProblems(image: unknown, at: string, problems: string[], formats = IMAGE_FORMATS): void {
  if (!isRec(image)) {
    problems.push(`${at}: expected an object`);
    return;
  }
  if (!formats.has(String(image.format)))
    problems.push(`${at}.format: expected one of ${[...formats].join(' | ')}`);
  sourceProblems(image.source, ['bytes', 's3Location'], `${at}.source`, problems);
}

function documentProblems(doc: unknown, at: string, problems: string[]): void {
  if (!isRec(doc)) {
    problems.push(`${at}: expected an object`);
    return;
  }
  if (
    typeof doc.name !== 'string' ||
    doc.name.length < 1 ||
    doc.name.length > 200 ||
    !DOCUMENT_NAME.test(doc.name)
  )
    problems.push(
      `${at}.name: 1 to 200 characters of alphanumerics, single whitespace, hyphens, parentheses and square brackets`,
    );
  if (doc.format !== undefined && !DOCUMENT_FORMATS.has(String(doc.format)))
    problems.push(`${at}.format: expected one of ${[...DOCUMENT_FORMATS].join(' | ')}`);
  sourceProblems(doc.source, ['bytes', 's3Location', 'text', 'content'], `${at}.source`, problems);
}

function videoProblems(video: unknown, at: string, problems: string[]): void {
  if (!isRec(video)) {
    problems.push(`${at}: expected an object`);
    return;
  }
  if (!VIDEO_FORMATS.has(String(video.format)))
    problems.push(`${at}.format: expected one of ${[...VIDEO_FORMATS].join(' | ')}`);
  sourceProblems(video.source, ['bytes', 's3Location'], `${at}.source`, problems);
}

function cachePointProblems(point: unknown, at: string, problems: string[]): void {
  if (!isRec(point) || point.type !== 'default') problems.push(`${at}.type: expected "default"`);
  else if (point.ttl !== undefined && point.ttl !== '5m' && point.ttl !== '1h')
    problems.push(`${at}.ttl: expected 5m | 1h`);
}

function guardProblems(guard: unknown, at: string, problems: string[]): void {
  const member = unionMember(guard, ['text', 'image'], at, problems);
  if (member === 'text') {
    const t = (guard as Rec).text;
    if (!isRec(t) || blank(t.text)) problems.push(`${at}.text.text: is blank`);
  } else if (member === 'image')
    imageProblems((guard as Rec).image, `${at}.image`, problems, new Set(['png', 'jpeg']));
}

function toolResultProblems(result: unknown, at: string, problems: string[]): void {
  if (!isRec(result)) {
    problems.push(`${at}: expected an object`);
    return;
  }
  for (const k of Object.keys(result))
    if (!['toolUseId', 'content', 'status', 'type'].includes(k)) problems.push(`${at}.${k}: unknown member`);
  if (typeof result.toolUseId !== 'string' || !ID.test(result.toolUseId))
    problems.push(`${at}.toolUseId: 1 to 64 characters of [a-zA-Z0-9_-]`);
  if (result.status !== undefined && result.status !== 'success' && result.status !== 'error')
    problems.push(`${at}.status: expected success | error`);
  if (!Array.isArray(result.content)) {
    problems.push(`${at}.content: required`);
    return;
  }
  if (result.content.length === 0 && result.status === 'error')
    problems.push(`The content field at ${at} cannot be empty when status value is error.`);
  result.content.forEach((c: unknown, k: number) => {
    const where = `${at}.content.${k}`;
    const member = unionMember(c, RESULT_MEMBERS, where, problems);
    const v = member ? (c as Rec)[member] : undefined;
    if (member === 'text' && blank(v)) problems.push(`${where}.text: is blank`);
    if (member === 'json' && v === undefined) problems.push(`${where}.json: required`);
    if (member === 'image') imageProblems(v, `${where}.image`, problems);
    if (member === 'document') documentProblems(v, `${where}.document`, problems);
    if (member === 'video') videoProblems(v, `${where}.video`, problems);
  });
}

function reasoningProblems(reasoning: unknown, at: string, problems: string[], signatures: boolean): void {
  const member = unionMember(reasoning, ['reasoningText', 'redactedContent'], at, problems);
  if (member === 'reasoningText') {
    const r = (reasoning as Rec).reasoningText;
    if (!isRec(r) || typeof r.text !== 'string') {
      problems.push(`${at}.reasoningText.text: required`);
      return;
    }
    if (signatures && r.signature !== undefined && r.signature !== signReasoning(r.text))
      problems.push(
        `${at}.reasoningText.signature: the reasoning block was modified (signature does not match)`,
      );
  } else if (member === 'redactedContent' && blank((reasoning as Rec).redactedContent))
    problems.push(`${at}.redactedContent: expected base64 bytes`);
}

function toolConfigProblems(config: unknown, problems: string[]): number {
  if (config === undefined) return 0;
  if (!isRec(config)) {
    problems.push('toolConfig: expected an object');
    return 0;
  }
  let points = 0;
  if (!Array.isArray(config.tools) || config.tools.length === 0) {
    problems.push('toolConfig.tools: at least one tool is required');
    return 0;
  }
  const names = new Set<string>();
  config.tools.forEach((tool: unknown, i: number) => {
    const at = `toolConfig.tools.${i}`;
    const member = unionMember(tool, ['toolSpec', 'cachePoint', 'systemTool'], at, problems);
    if (member === 'cachePoint') {
      points++;
      cachePointProblems((tool as Rec).cachePoint, `${at}.cachePoint`, problems);
    } else if (member === 'toolSpec') {
      const spec = (tool as Rec).toolSpec;
      if (!isRec(spec)) {
        problems.push(`${at}.toolSpec: expected an object`);
        return;
      }
      if (typeof spec.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(spec.name))
        problems.push(`${at}.toolSpec.name: 1 to 64 characters of [a-zA-Z0-9_-]`);
      else if (names.has(spec.name)) problems.push(`${at}.toolSpec.name: duplicate tool name ${spec.name}`);
      else names.add(spec.name);
      if (!isRec(spec.inputSchema) || spec.inputSchema.json === undefined)
        problems.push(`${at}.toolSpec.inputSchema.json: required`);
    }
  });
  if (config.toolChoice !== undefined) {
    const member = unionMember(config.toolChoice, ['auto', 'any', 'tool'], 'toolConfig.toolChoice', problems);
    if (member === 'tool') {
      const t = (config.toolChoice as Rec).tool;
      if (!isRec(t) || !names.has(String(t.name)))
        problems.push('toolConfig.toolChoice.tool.name: no such tool');
    }
  }
  return points;
}

/**
 * Everything the fake API would refuse in a Converse request body; empty when it answers 200.
 * With `signatures: false` reasoning signatures are not checked (for conversations whose
 * reasoning was not signed by this fake).
 */
export function bedrockRequestProblems(body: Rec, options: { signatures?: boolean } = {}): string[] {
  const signatures = options.signatures ?? true;
  const problems: string[] = [];
  for (const key of Object.keys(body))
    if (!REQUEST_MEMBERS.has(key)) problems.push(`${key}: unknown member of ConverseRequest`);
  let points = toolConfigProblems(body.toolConfig, problems);
  if (body.system !== undefined) {
    if (!Array.isArray(body.system)) problems.push('system: expected an array');
    else
      body.system.forEach((b: unknown, k: number) => {
        const at = `system.${k}`;
        const member = unionMember(b, ['text', 'guardContent', 'cachePoint'], at, problems);
        if (member === 'text' && blank((b as Rec).text))
          problems.push(`The text field in the SystemContentBlock object at ${at} is blank.`);
        if (member === 'guardContent') guardProblems((b as Rec).guardContent, `${at}.guardContent`, problems);
        if (member === 'cachePoint') {
          points++;
          cachePointProblems((b as Rec).cachePoint, `${at}.cachePoint`, problems);
        }
      });
  }
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0)
    return [...problems, 'messages: at least one is required'];
  let toolBlocks = false;
  let previousUses: string[] = [];
  let previousRole: unknown;
  messages.forEach((raw: unknown, i: number) => {
    const at = `messages.${i}`;
    if (!isRec(raw)) {
      problems.push(`${at}: expected an object`);
      return;
    }
    for (const k of Object.keys(raw))
      if (k !== 'role' && k !== 'content') problems.push(`${at}.${k}: unknown member`);
    const role = raw.role;
    if (role !== 'user' && role !== 'assistant') problems.push(`${at}.role: expected user | assistant`);
    if (i === 0 && role !== 'user')
      problems.push(
        'A conversation must start with a user message. Try again with a conversation that starts with a user message.',
      );
    if (i > 0 && role === previousRole)
      problems.push(
        `${at}: A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.`,
      );
    previousRole = role;
    const content = raw.content;
    if (!Array.isArray(content) || content.length === 0) {
      problems.push(
        `The content field in the Message object at ${at} is empty. Add a ContentBlock object to the content field and try again.`,
      );
      previousUses = [];
      return;
    }
    const uses: string[] = [];
    const answered = new Set<string>();
    let documents = false;
    let texts = false;
    let documentCount = 0;
    let imageCount = 0;
    content.forEach((block: unknown, k: number) => {
      const where = `${at}.content.${k}`;
      const member = unionMember(block, BLOCK_MEMBERS, where, problems);
      if (member === null) return;
      const v = (block as Rec)[member];
      switch (member) {
        case 'text':
          texts = true;
          if (blank(v))
            problems.push(
              `The text field in the ContentBlock object at ${where} is blank. Add text to the text field, and try again.`,
            );
          break;
        case 'image':
          imageCount++;
          if (role !== 'user') problems.push(`${where}: images are only accepted in user messages`);
          imageProblems(v, `${where}.image`, problems);
          break;
        case 'document':
          documents = true;
          documentCount++;
          if (role !== 'user') problems.push(`${where}: documents are only accepted in user messages`);
          documentProblems(v, `${where}.document`, problems);
          break;
        case 'video':
          videoProblems(v, `${where}.video`, problems);
          break;
        case 'cachePoint':
          points++;
          cachePointProblems(v, `${where}.cachePoint`, problems);
          break;
        case 'guardContent':
          guardProblems(v, `${where}.guardContent`, problems);
          break;
        case 'reasoningContent':
          if (role !== 'assistant')
            problems.push(`${where}: reasoningContent is only accepted in assistant messages`);
          reasoningProblems(v, `${where}.reasoningContent`, problems, signatures);
          break;
        case 'toolUse': {
          toolBlocks = true;
          if (role !== 'assistant') problems.push(`${where}: toolUse is only accepted in assistant messages`);
          if (!isRec(v)) {
            problems.push(`${where}.toolUse: expected an object`);
            return;
          }
          if (typeof v.toolUseId !== 'string' || !ID.test(v.toolUseId))
            problems.push(`${where}.toolUse.toolUseId: 1 to 64 characters of [a-zA-Z0-9_-]`);
          else if (uses.includes(v.toolUseId))
            problems.push(`${where}.toolUse.toolUseId: duplicate id ${v.toolUseId}`);
          else uses.push(v.toolUseId);
          if (typeof v.name !== 'string' || !ID.test(v.name))
            problems.push(`${where}.toolUse.name: 1 to 64 characters of [a-zA-Z0-9_-]`);
          if (v.input === undefined) problems.push(`${where}.toolUse.input: required`);
          break;
        }
        case 'toolResult': {
          toolBlocks = true;
          if (role !== 'user') problems.push(`${where}: toolResult is only accepted in user messages`);
          toolResultProblems(v, `${where}.toolResult`, problems);
          const id = isRec(v) ? String(v.toolUseId) : '';
          if (!previousUses.includes(id) || answered.has(id))
            problems.push(
              `The number of toolResult blocks at ${at}.content exceeds the number of toolUse blocks of previous turn.`,
            );
          answered.add(id);
          break;
        }
        default:
          break;
      }
    });
    if (role === 'user' && documents && !texts)
      problems.push(`${at}: A text block must be included when using documents.`);
    // Message.content (API_runtime_Message.html): "up to 20 images", "up to five documents".
    if (documentCount > 5) problems.push(`${at}: too many documents (${documentCount}); the maximum is 5`);
    if (imageCount > 20) problems.push(`${at}: too many images (${imageCount}); the maximum is 20`);
    const missing = previousUses.filter((id) => !answered.has(id));
    if (missing.length > 0)
      problems.push(
        `Expected toolResult blocks at ${at}.content for the following Ids: ${missing.join(', ')}`,
      );
    previousUses = role === 'assistant' ? uses : [];
  });
  if (toolBlocks && body.toolConfig === undefined)
    problems.push('The toolConfig field must be defined when using toolUse and toolResult content blocks.');
  if (points > MAX_CACHE_POINTS)
    problems.push(
      `A maximum of ${MAX_CACHE_POINTS} cache checkpoints is supported; the request has ${points}.`,
    );
  return problems;
}

function blockText(b: Rec): string {
  if (typeof b.text === 'string') return b.text;
  if (isRec(b.toolUse)) return `${String(b.toolUse.name)} ${JSON.stringify(b.toolUse.input)}`;
  if (isRec(b.toolResult))
    return (Array.isArray(b.toolResult.content) ? (b.toolResult.content as unknown[]) : [])
      .filter(isRec)
      .map((c) => (typeof c.text === 'string' ? c.text : JSON.stringify(c)))
      .join('\n');
  if (isRec(b.reasoningContent) && isRec(b.reasoningContent.reasoningText))
    return String(b.reasoningContent.reasoningText.text);
  if (b.cachePoint !== undefined) return '';
  return JSON.stringify(b);
}

/** Token counts of the request's parts in order, with the index of each cache checkpoint. */
function tokenRun(body: Rec): { total: number; cachedPrefix: number; prefixKey: string } {
  let n = 0;
  let cachedPrefix = 0;
  let prefixKey = '';
  const hash = createHash('sha256');
  const mark = () => {
    cachedPrefix = n;
    prefixKey = hash.copy().digest('hex');
  };
  for (const b of Array.isArray(body.system) ? (body.system as unknown[]).filter(isRec) : []) {
    if (b.cachePoint !== undefined) mark();
    else {
      const text = blockText(b);
      n += encode(text).length;
      hash.update(text);
    }
  }
  const tools = isRec(body.toolConfig) && Array.isArray(body.toolConfig.tools) ? body.toolConfig.tools : [];
  for (const t of (tools as unknown[]).filter(isRec)) {
    if (t.cachePoint !== undefined) mark();
    else {
      const text = JSON.stringify(t);
      n += encode(text).length;
      hash.update(text);
    }
  }
  for (const m of Array.isArray(body.messages) ? (body.messages as unknown[]).filter(isRec) : []) {
    n += 3 + encode(String(m.role)).length;
    hash.update(`|${String(m.role)}|`);
    for (const b of Array.isArray(m.content) ? (m.content as unknown[]).filter(isRec) : []) {
      if (b.cachePoint !== undefined) mark();
      else {
        const text = blockText(b);
        n += encode(text).length;
        hash.update(text);
      }
    }
  }
  return { total: n, cachedPrefix, prefixKey };
}

/** The fake's input tokens of a Converse request (system, tools and messages). */
export function fakeBedrockInputTokens(body: Rec): number {
  return tokenRun(body).total;
}

export interface FakeBedrockServer {
  url: string;
  /** Every request received: model id, body, and the problems found in it. */
  requests: Array<{ modelId: string; body: Rec; problems: string[] }>;
  close(): Promise<void>;
}

export interface FakeBedrockOptions {
  /** The context window the fake enforces (default 200,000 tokens). */
  contextWindow?: number;
  /** Check reasoning signatures (default true). */
  signatures?: boolean;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
  });
  res.end(JSON.stringify({ message }));
}

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeBedrock(options: FakeBedrockOptions = {}): Promise<FakeBedrockServer> {
  const window = options.contextWindow ?? 200_000;
  const requests: FakeBedrockServer['requests'] = [];
  const cache = new Set<string>();
  const server = createServer((req, res) => {
    const match = /^\/model\/([^/]+)\/converse$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !match) return sendError(res, 404, 'UnknownOperationException', 'Not found');
    const modelId = decodeURIComponent(match[1]!);
    readJson(req).then(
      (body) => {
        const problems = isRec(body)
          ? bedrockRequestProblems(body, { signatures: options.signatures ?? true })
          : ['body: expected an object'];
        requests.push({ modelId, body: body as Rec, problems });
        if (problems.length > 0) return sendError(res, 400, 'ValidationException', problems.join('; '));
        const run = tokenRun(body as Rec);
        if (run.total > window) {
          const message = modelId.includes('anthropic.claude')
            ? `The model returned the following errors: prompt is too long: ${run.total} tokens > ${window} maximum`
            : 'Input is too long for requested model.';
          return sendError(res, 400, 'ValidationException', message);
        }
        let cacheRead = 0;
        let cacheWrite = 0;
        if (run.cachedPrefix > 0) {
          const key = `${modelId}:${run.prefixKey}`;
          if (cache.has(key)) cacheRead = run.cachedPrefix;
          else {
            cache.add(key);
            cacheWrite = run.cachedPrefix;
          }
        }
        const text = `Reply ${requests.length}.`;
        const output = encode(text).length;
        const inputTokens = run.total - cacheRead - cacheWrite;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            output: { message: { role: 'assistant', content: [{ text }] } },
            stopReason: 'end_turn',
            usage: {
              inputTokens,
              outputTokens: output,
              totalTokens: inputTokens + cacheRead + cacheWrite + output,
              cacheReadInputTokens: cacheRead,
              cacheWriteInputTokens: cacheWrite,
            },
            metrics: { latencyMs: 1 },
          }),
        );
      },
      () => sendError(res, 400, 'SerializationException', 'Could not parse the request body as JSON.'),
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
