/**
 * What is special to each wire format for `testFormat()` (format-conformance.ts): its generated
 * conversations, what its conversions document as lossless, a neutral reading of its messages
 * written here (not the library's), its fake provider API and request builder, its model, and the
 * real tau-bench runs in it.
 */
import fc from 'fast-check';
import {
  type AddMessageOptions,
  addResponse,
  convertMessages,
  type GeminiMessage,
  type Message,
  toRequest,
} from '../../src/index.js';
import { blocksConversationArb } from './anthropic-blocks-arb.js';
import { conversationArb, type GeneratedConversation } from './arbitraries.js';
import { bedrockConversationArb } from './bedrock-arb.js';
import { signThinking, startFakeAnthropic } from './fake-anthropic-server.js';
import { bedrockRequestProblems, signReasoning, startFakeBedrock } from './fake-bedrock-server.js';
import { startFakeGemini } from './fake-gemini-server.js';
import { startFakeOpenAI } from './fake-openai-server.js';
import { startFakeResponses } from './fake-responses-server.js';
import type {
  FormatConversation,
  FormatDescriptor,
  FormatServer,
  NeutralEntry,
} from './format-conformance.js';
import { geminiConversationArb } from './gemini-arb.js';
import { referenceProblems } from './reference-validator.js';
import { responsesItemsArb } from './responses-items-arb.js';

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const recs = (v: unknown): Rec[] => (Array.isArray(v) ? v.filter(isRec) : []);

// ------------------------------------------------------------------ shared helpers

/**
 * POSTs `body` as JSON to `url`; the status and the body of the answer. Sent again once when the
 * kept-alive connection was closed by the server as it was reused (ECONNRESET before any answer:
 * the request never reached the fake).
 */
async function postJson(url: string, body: unknown): Promise<{ status: number; body: string }> {
  const init = {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (error) {
    if ((error as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET') throw error;
    res = await fetch(url, init);
  }
  return { status: res.status, body: await res.text() };
}

/** A `FormatServer` over a fake that POSTs each view where `request` says, with the body it builds. */
function posting(
  fake: { close(): Promise<void> },
  request: (view: readonly Message[], stored: readonly Message[]) => [string, unknown],
): FormatServer {
  return {
    send: (view, stored) => postJson(...request(view, stored)),
    close: () => fake.close(),
  };
}

/** Adds pinned and critical flags to some user turns of each conversation. */
function withFlags(
  messages: fc.Arbitrary<Message[]>,
  isUserTurn: (m: Message) => boolean,
): fc.Arbitrary<FormatConversation> {
  const flag = fc.constantFrom<AddMessageOptions>({}, {}, {}, { pinned: true }, { critical: true });
  return fc.tuple(messages, fc.array(flag, { maxLength: 10 })).map(([list, flags]) => {
    let turn = 0;
    const options = list.map((m) => (isUserTurn(m) ? (flags[turn++] ?? {}) : {}));
    return { messages: list, options };
  });
}

/**
 * A format's own generator, three times in four as it is and once with huge results and call ids
 * reused across turns, with pinned and critical flags on some user turns.
 */
function generated(
  make: (options: { huge?: boolean; reuseIds?: boolean }) => fc.Arbitrary<Message[]>,
  isUserTurn: (m: Message) => boolean,
): fc.Arbitrary<FormatConversation> {
  return withFlags(
    fc.oneof(
      { weight: 3, arbitrary: make({}) },
      { weight: 1, arbitrary: make({ huge: true, reuseIds: true }) },
    ),
    isUserTurn,
  );
}

function fromGenerated(conv: GeneratedConversation): FormatConversation {
  return { messages: conv.messages, options: conv.options, reordered: conv.breakage.interleaved };
}

/** Parses tool-call arguments the way a reader compares them (a JSON value, or the raw text). */
function parsedArgs(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Builds a neutral reading: adjacent texts of one side joined (formats split text into parts
 * differently) with whitespace collapsed, calls numbered in order, results naming the call they
 * answer by id (the latest call with that id) or, without ids, by position in the latest turn of calls.
 */
class NeutralReader {
  private readonly out: NeutralEntry[] = [];
  private next = 0;
  private readonly byId = new Map<string, number>();
  private positional: number[] = [];

  text(side: 'caller' | 'model', text: unknown): void {
    if (typeof text !== 'string') return;
    const clean = text.replace(/\s+/g, ' ').trim();
    if (clean === '') return;
    const last = this.out.at(-1);
    if (last && 'side' in last && last.side === side) last.text = `${last.text} ${clean}`;
    else this.out.push({ side, text: clean });
  }

  /** A new turn of calls: id-less results pair with its calls by position. */
  callTurn(): void {
    this.positional = [];
  }

  call(id: unknown, name: unknown, args: unknown): void {
    const n = this.next++;
    if (typeof id === 'string') this.byId.set(id, n);
    else this.positional.push(n);
    this.out.push({ call: n, name: String(name), args });
  }

  result(id: unknown, text: string): void {
    const n = typeof id === 'string' ? (this.byId.get(id) ?? -1) : (this.positional.shift() ?? -1);
    this.out.push({ result: n, text: text.replace(/\s+/g, ' ').trim() });
  }

  media(what: string): void {
    this.out.push({ media: what });
  }

  done(): NeutralEntry[] {
    return this.out;
  }
}

// ------------------------------------------------------------------ OpenAI Chat Completions

function chatText(content: unknown): string {
  if (typeof content === 'string') return content;
  return recs(content)
    .map((p) => (typeof p.text === 'string' ? p.text : typeof p.refusal === 'string' ? p.refusal : ''))
    .join('\n');
}

function readChat(messages: readonly Message[]): NeutralEntry[] {
  const r = new NeutralReader();
  for (const raw of messages as unknown as Rec[]) {
    if (raw.role === 'tool') {
      r.result(raw.tool_call_id, chatText(raw.content));
      continue;
    }
    const side = raw.role === 'assistant' ? 'model' : 'caller';
    if (typeof raw.content === 'string') r.text(side, raw.content);
    for (const part of recs(raw.content)) {
      if (part.type === 'text') r.text(side, part.text);
      else if (part.type === 'refusal') r.text(side, part.refusal);
      else if (isRec(part.image_url)) r.media(`image ${String(part.image_url.url)}`);
      else r.media(String(part.type));
    }
    const calls = recs(raw.tool_calls);
    if (calls.length > 0) r.callTurn();
    for (const c of calls) {
      const fn = isRec(c.function) ? c.function : {};
      r.call(c.id, fn.name, parsedArgs(fn.arguments));
    }
  }
  return r.done();
}

const chatUserTurn = (m: Message): boolean => m.role === 'user';

async function startChatServer(model: string): Promise<FormatServer> {
  const fake = await startFakeOpenAI();
  return posting(fake, (view) => [`${fake.baseURL}/chat/completions`, { model, messages: view }]);
}

export const OPENAI_CHAT: FormatDescriptor = {
  name: 'openai',
  model: 'gpt-4o',
  conversations: fc
    .oneof(
      { weight: 3, arbitrary: conversationArb({ format: 'openai' }) },
      { weight: 1, arbitrary: conversationArb({ format: 'openai', huge: true, broken: true, maxTurns: 3 }) },
    )
    .map(fromGenerated),
  sessions: conversationArb({ format: 'openai', minTurns: 3, maxTurns: 6 }).map(fromGenerated),
  convertible: conversationArb({ format: 'openai', images: false }).map((c) => c.messages),
  read: readChat,
  isUserTurn: chatUserTurn,
  hasResults: (m) => m.role === 'tool',
  startServer: () => startChatServer('gpt-4o'),
  problems: (view) => referenceProblems(view, 'openai'),
  fromTauBench: (run) => run.openai,
  reply: {
    add: addResponse,
    accepted: {
      choices: [{ message: { role: 'assistant', content: 'Order 42 shipped.' } }],
      usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
    },
    refused: {
      choices: [{ message: { role: 'assistant', content: 42 } }],
      usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
    },
  },
};

// ------------------------------------------------------------------ OpenAI Responses API items

function readResponses(messages: readonly Message[]): NeutralEntry[] {
  const r = new NeutralReader();
  let calling = false;
  for (const item of messages as unknown as Rec[]) {
    const type = item.type ?? 'message';
    if (type === 'function_call') {
      if (!calling) r.callTurn();
      calling = true;
      r.call(item.call_id, item.name, parsedArgs(item.arguments));
      continue;
    }
    calling = false;
    if (type === 'function_call_output') {
      r.result(item.call_id, typeof item.output === 'string' ? item.output : JSON.stringify(item.output));
    } else if (type === 'message') {
      const side = item.role === 'assistant' ? 'model' : 'caller';
      if (typeof item.content === 'string') r.text(side, item.content);
      for (const part of recs(item.content)) {
        if (typeof part.text === 'string') r.text(side, part.text);
        else if (typeof part.refusal === 'string') r.text(side, part.refusal);
        else r.media(String(part.type));
      }
    } else if (type !== 'reasoning') r.media(String(type));
  }
  return r.done();
}

const responsesUserTurn = (m: Message): boolean => {
  const item = m as unknown as Rec;
  return (item.type === undefined || item.type === 'message') && item.role === 'user';
};

async function startResponsesServer(model: string): Promise<FormatServer> {
  const fake = await startFakeResponses();
  return posting(fake, (view) => [`${fake.url}/v1/responses`, { model, input: view }]);
}

export const OPENAI_RESPONSES: FormatDescriptor = {
  name: 'openai-responses',
  model: 'gpt-4o',
  conversations: generated(responsesItemsArb, responsesUserTurn),
  convertible: fc.oneof(
    responsesItemsArb({ kinds: ['chat', 'parallel'] }),
    responsesItemsArb({ kinds: ['chat', 'parallel'], reuseIds: true }),
  ),
  read: readResponses,
  isUserTurn: responsesUserTurn,
  hasResults: (m) => String((m as unknown as Rec).type).endsWith('_output'),
  resultsInCallOrder: true,
  startServer: () => startResponsesServer('gpt-4o'),
  fromTauBench: (run) => convertMessages(run.openai, 'openai-responses'),
  reply: {
    add: addResponse,
    accepted: {
      output: [
        {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Looking.', annotations: [] }],
        },
        { type: 'function_call', call_id: 'call_1', name: 'get_order', arguments: '{"id":42}' },
      ],
      usage: { input_tokens: 20, output_tokens: 9, total_tokens: 29 },
    },
    refused: {
      output: [
        {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Looking.', annotations: [] }],
        },
        { type: 'function_call', call_id: '', name: 'get_order', arguments: '{"id":42}' },
      ],
      usage: { input_tokens: 20, output_tokens: 9, total_tokens: 29 },
    },
  },
};

// ------------------------------------------------------------------ Anthropic Messages

function anthropicResultText(block: Rec): string {
  const text =
    typeof block.content === 'string'
      ? block.content
      : recs(block.content)
          .map((b) => (typeof b.text === 'string' ? b.text : ''))
          .join('\n');
  return block.is_error === true ? `Error: ${text}` : text;
}

function readAnthropic(messages: readonly Message[]): NeutralEntry[] {
  const r = new NeutralReader();
  for (const raw of messages as unknown as Rec[]) {
    const side = raw.role === 'assistant' ? 'model' : 'caller';
    if (typeof raw.content === 'string') r.text(side, raw.content);
    const blocks = recs(raw.content);
    if (blocks.some((b) => b.type === 'tool_use')) r.callTurn();
    for (const b of blocks) {
      if (b.type === 'text') r.text(side, b.text);
      else if (b.type === 'tool_use') r.call(b.id, b.name, b.input);
      else if (b.type === 'tool_result') r.result(b.tool_use_id, anthropicResultText(b));
      else if (b.type === 'thinking' || b.type === 'redacted_thinking') continue;
      else if (isRec(b.source)) r.media(`${String(b.type)} ${String(b.source.data ?? b.source.url)}`);
      else r.media(String(b.type));
    }
  }
  return r.done();
}

const anthropicUserTurn = (m: Message): boolean =>
  m.role === 'user' &&
  (typeof m.content === 'string' || recs(m.content).some((b) => b.type !== 'tool_result'));

/** Thinking blocks signed as the fake Messages API signs them (the generator writes placeholders). */
function signedThinking(conv: GeneratedConversation): GeneratedConversation {
  const messages = conv.messages.map((m) =>
    Array.isArray(m.content) && recs(m.content).some((b) => b.type === 'thinking')
      ? ({
          ...m,
          content: recs(m.content).map((b) =>
            b.type === 'thinking' ? { ...b, signature: signThinking(String(b.thinking)) } : b,
          ),
        } as unknown as Message)
      : m,
  );
  return { ...conv, messages };
}

/** Whether the conversation ends inside a tool loop whose call came with thinking (extended thinking on). */
function endsInThinkingLoop(stored: readonly Message[]): boolean {
  const last = stored.at(-1);
  const caller = stored.at(-2);
  if (!last || !caller || last.role !== 'user' || caller.role !== 'assistant') return false;
  const first = recs(caller.content)[0];
  return (
    recs(last.content).some((b) => b.type === 'tool_result') &&
    (first?.type === 'thinking' || first?.type === 'redacted_thinking')
  );
}

async function startAnthropicServer(model: string): Promise<FormatServer> {
  const fake = await startFakeAnthropic();
  return posting(fake, (view, stored) => [
    `${fake.url}/v1/messages`,
    {
      model,
      max_tokens: 1024,
      ...toRequest(view, 'anthropic'),
      ...(endsInThinkingLoop(stored) ? { thinking: { type: 'enabled', budget_tokens: 1024 } } : {}),
    },
  ]);
}

export const ANTHROPIC: FormatDescriptor = {
  name: 'anthropic',
  model: 'claude-sonnet-4-5',
  conversations: fc.oneof(
    { weight: 2, arbitrary: conversationArb({ format: 'anthropic' }).map(signedThinking).map(fromGenerated) },
    {
      weight: 1,
      arbitrary: conversationArb({ format: 'anthropic', huge: true, broken: true, maxTurns: 3 })
        .map(signedThinking)
        .map(fromGenerated),
    },
    {
      weight: 2,
      arbitrary: withFlags(
        blocksConversationArb.map((c) => c.messages),
        anthropicUserTurn,
      ),
    },
  ),
  sessions: fc.oneof(
    conversationArb({ format: 'anthropic', minTurns: 3, maxTurns: 6 }).map(signedThinking).map(fromGenerated),
    withFlags(
      blocksConversationArb.map((c) => c.messages),
      anthropicUserTurn,
    ),
  ),
  convertible: conversationArb({ format: 'anthropic', images: false }).map((c) => c.messages),
  read: readAnthropic,
  isUserTurn: anthropicUserTurn,
  hasResults: (m) => recs(m.content).some((b) => b.type === 'tool_result'),
  startServer: () => startAnthropicServer('claude-sonnet-4-5'),
  problems: (view) => referenceProblems(view, 'anthropic'),
  fromTauBench: (run) => run.anthropic,
  reply: {
    add: addResponse,
    accepted: {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_order', input: { id: 42 } },
      ],
      usage: { input_tokens: 20, output_tokens: 9 },
    },
    refused: {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: '', name: 'get_order', input: { id: 42 } },
      ],
      usage: { input_tokens: 20, output_tokens: 9 },
    },
  },
};

// ------------------------------------------------------------------ Gemini contents

function geminiResponseText(response: unknown): string {
  if (!isRec(response)) return JSON.stringify(response);
  if (typeof response.content === 'string') return response.content;
  if (typeof response.error === 'string') return `Error: ${response.error}`;
  return JSON.stringify(response);
}

function readGemini(messages: readonly Message[]): NeutralEntry[] {
  const r = new NeutralReader();
  for (const raw of messages as unknown as Rec[]) {
    const side = raw.role === 'model' ? 'model' : 'caller';
    const parts = recs(raw.parts);
    if (parts.some((p) => isRec(p.functionCall))) r.callTurn();
    for (const p of parts) {
      if (p.thought === true) continue;
      if (typeof p.text === 'string') r.text(side, p.text);
      else if (isRec(p.functionCall))
        r.call(p.functionCall.id, p.functionCall.name, p.functionCall.args ?? {});
      else if (isRec(p.functionResponse))
        r.result(p.functionResponse.id, geminiResponseText(p.functionResponse.response));
      else if (isRec(p.inlineData)) r.media(`${String(p.inlineData.mimeType)} ${String(p.inlineData.data)}`);
      else if (isRec(p.fileData)) r.media(`${String(p.fileData.mimeType)} ${String(p.fileData.fileUri)}`);
      else if (Object.keys(p).some((k) => k !== 'thoughtSignature')) r.media(Object.keys(p).join(','));
    }
  }
  return r.done();
}

const geminiUserTurn = (m: Message): boolean =>
  m.role === 'user' && recs((m as unknown as Rec).parts).some((p) => p.functionResponse === undefined);

/**
 * Two fakes: Gemini 3's, which requires the thought signatures of the current turn, for a
 * conversation a signing model wrote (it holds signatures), and one without that rule for a
 * conversation that came from elsewhere (a converted run holds none to give back).
 */
async function startGeminiServers(model: string): Promise<FormatServer> {
  const signing = await startFakeGemini({ requireSignatures: true });
  const plain = await startFakeGemini();
  return {
    send: (view, stored) => {
      const fake = JSON.stringify(stored).includes('"thoughtSignature"') ? signing : plain;
      return postJson(`${fake.url}/v1beta/models/${model}:generateContent`, {
        ...toRequest(view as GeminiMessage[], 'gemini'),
      });
    },
    close: async () => {
      await signing.close();
      await plain.close();
    },
  };
}

export const GEMINI: FormatDescriptor = {
  name: 'gemini',
  model: 'gemini-2.5-flash',
  conversations: generated(geminiConversationArb, geminiUserTurn),
  convertible: geminiConversationArb({
    kinds: ['chat', 'call', 'parallel', 'steps', 'split'],
    reuseIds: true,
  }),
  read: readGemini,
  isUserTurn: geminiUserTurn,
  hasResults: (m) => recs((m as unknown as Rec).parts).some((p) => p.functionResponse !== undefined),
  startServer: () => startGeminiServers('gemini-2.5-flash'),
  fromTauBench: (run) => convertMessages(run.openai, 'gemini'),
  reply: {
    add: addResponse,
    accepted: {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [{ text: 'Looking.' }, { functionCall: { name: 'get_order', args: { id: 42 } } }],
          },
        },
      ],
      usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 9, totalTokenCount: 29 },
    },
    refused: {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [{ text: 'Looking.' }, { functionCall: { name: '', args: { id: 42 } } }],
          },
        },
      ],
      usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 9, totalTokenCount: 29 },
    },
  },
};

// ------------------------------------------------------------------ AWS Bedrock Converse

function bedrockResultText(result: Rec): string {
  const text = recs(result.content)
    .map((c) => (typeof c.text === 'string' ? c.text : 'json' in c ? JSON.stringify(c.json) : ''))
    .join('\n');
  return result.status === 'error' ? `Error: ${text}` : text;
}

function readBedrock(messages: readonly Message[]): NeutralEntry[] {
  const r = new NeutralReader();
  for (const raw of messages as unknown as Rec[]) {
    const side = raw.role === 'assistant' ? 'model' : 'caller';
    if (typeof raw.content === 'string') r.text(side, raw.content);
    const blocks = recs(raw.content);
    if (blocks.some((b) => isRec(b.toolUse))) r.callTurn();
    for (const b of blocks) {
      if (typeof b.text === 'string') r.text(side, b.text);
      else if (isRec(b.toolUse)) r.call(b.toolUse.toolUseId, b.toolUse.name, b.toolUse.input);
      else if (isRec(b.toolResult)) r.result(b.toolResult.toolUseId, bedrockResultText(b.toolResult));
      else if (b.reasoningContent !== undefined || b.cachePoint !== undefined) continue;
      else {
        const kind = Object.keys(b)[0] ?? '';
        const value = isRec(b[kind]) ? (b[kind] as Rec) : {};
        const source = isRec(value.source) ? value.source : {};
        r.media(`${kind} ${String(source.bytes ?? source.text ?? '')}`);
      }
    }
  }
  return r.done();
}

const bedrockUserTurn = (m: Message): boolean =>
  m.role === 'user' &&
  (typeof m.content === 'string' ||
    recs(m.content).some((b) => b.toolResult === undefined && b.cachePoint === undefined));

/** Whether every reasoning signature in `stored` is one the fake Converse API gave. */
function signedByFake(stored: readonly Message[]): boolean {
  for (const m of stored as unknown as Rec[])
    for (const b of recs(m.content)) {
      const r =
        isRec(b.reasoningContent) && isRec(b.reasoningContent.reasoningText)
          ? b.reasoningContent.reasoningText
          : undefined;
      if (r && r.signature !== undefined && r.signature !== signReasoning(String(r.text))) return false;
    }
  return true;
}

/**
 * Two fakes: one checking reasoning signatures, for a conversation the fake signed, and one
 * without that check for a conversation converted from elsewhere (signed by another fake).
 */
async function startBedrockServers(model: string): Promise<FormatServer> {
  const signing = await startFakeBedrock();
  const plain = await startFakeBedrock({ signatures: false });
  const path = `/model/${encodeURIComponent(model)}/converse`;
  return {
    send: (view, stored) =>
      postJson(`${(signedByFake(stored) ? signing : plain).url}${path}`, toRequest(view, 'bedrock')),
    close: async () => {
      await signing.close();
      await plain.close();
    },
  };
}

export const BEDROCK: FormatDescriptor = {
  name: 'bedrock',
  model: 'claude-sonnet-4-5',
  conversations: generated((options) => bedrockConversationArb(options), bedrockUserTurn),
  convertible: bedrockConversationArb({
    kinds: ['chat', 'call', 'parallel', 'split'],
    reuseIds: true,
    cachePoints: false,
  }),
  read: readBedrock,
  isUserTurn: bedrockUserTurn,
  hasResults: (m) => recs(m.content).some((b) => isRec(b.toolResult)),
  startServer: () => startBedrockServers('us.anthropic.claude-sonnet-4-5-20250929-v1:0'),
  problems: (view) => bedrockRequestProblems({ ...toRequest(view, 'bedrock') }, { signatures: false }),
  fromTauBench: (run) => convertMessages(run.openai, 'bedrock'),
  reply: {
    add: addResponse,
    accepted: {
      output: {
        message: {
          role: 'assistant',
          content: [
            { text: 'Looking.' },
            { toolUse: { toolUseId: 'tooluse_1', name: 'get_order', input: { id: 42 } } },
          ],
        },
      },
      usage: { inputTokens: 20, outputTokens: 9, totalTokens: 29 },
    },
    refused: {
      output: {
        message: {
          role: 'assistant',
          content: [
            { text: 'Looking.' },
            { toolUse: { toolUseId: '', name: 'get_order', input: { id: 42 } } },
          ],
        },
      },
      usage: { inputTokens: 20, outputTokens: 9, totalTokens: 29 },
    },
  },
};
