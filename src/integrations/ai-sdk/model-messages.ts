/**
 * Conversion between the Vercel AI SDK's messages (`ModelMessage`, and the `LanguageModelV3Prompt`
 * a model receives) and contextkit's OpenAI Chat Completions messages.
 *
 * The OpenAI messages are what contextkit counts and plans over; they hold text, images, files,
 * audio, tool calls and tool results. What they cannot hold (provider options, reasoning, tool
 * approvals, tool calls the provider ran itself, the exact media of a tool result) stays in a side
 * map beside them, and `toModelMessages` puts it back: a message the plan left alone comes back as
 * the very object it was, and a message it rewrote (a cleared result, a cut text) keeps the tool
 * call, the reasoning and the provider options of the message it came from.
 */

import type { LanguageModelMiddleware, ModelMessage } from 'ai';
import type {
  Message,
  OpenAIAssistantMessage,
  OpenAIContentPart,
  OpenAIMessage,
  OpenAIToolCall,
} from '../../messages/types.js';
import { convertMessages } from '../../wire/convert.js';

/** The prompt a language model is called with (`LanguageModelV3Prompt`), as middleware sees it. */
export type LanguageModelPrompt = Parameters<
  NonNullable<LanguageModelMiddleware['transformParams']>
>[0]['params']['prompt'];

/** A message as `generateText` takes it, or as a language model receives it. */
export type AnyModelMessage = ModelMessage | LanguageModelPrompt[number];

type Part = { type: string } & Record<string, unknown>;

interface LooseMessage {
  role: string;
  content: string | Part[];
  providerOptions?: unknown;
}

/** Which SDK message, and which of its parts, one OpenAI message stands for. */
export interface Origin {
  message: number;
  /** Part indexes, or `string` when the SDK message's content is a string. */
  parts: number[] | 'string';
}

/** Where a tool call or result sits among the SDK messages. */
export interface PartAt {
  message: number;
  part: number;
  /** The proxy that stands for it, whose riders follow it. */
  proxy: number;
}

/**
 * What the OpenAI messages cannot hold, kept beside them by `fromModelMessages` so that
 * `toModelMessages` can give the SDK's messages back whole. Treat it as opaque.
 */
export interface ModelMessageSideMap {
  readonly source: readonly AnyModelMessage[];
  /** The OpenAI messages made, in order; `origins[i]` says where `proxies[i]` came from. */
  readonly proxies: readonly OpenAIMessage[];
  readonly origins: readonly Origin[];
  /** SDK messages with nothing to count (a tool message of approvals only), by the proxy they follow. */
  readonly riders: ReadonlyMap<number, readonly number[]>;
  /** SDK messages with nothing to count before the first proxy. */
  readonly leading: readonly number[];
  /** Client-side tool calls and their results, by tool call id. */
  readonly calls: ReadonlyMap<string, PartAt>;
  readonly results: ReadonlyMap<string, PartAt>;
  readonly byKey: ReadonlyMap<string, readonly number[]>;
}

/** OpenAI messages for contextkit, and the side map that restores the SDK's messages from them. */
export interface ConvertedModelMessages {
  messages: OpenAIMessage[];
  sideMap: ModelMessageSideMap;
}

// ------------------------------------------------------------------------------------ data

const URL_LIKE = /^(?:https?|data):/i;
const DATA_URL = /^data:([^;,]+)(?:;[^;,]*)*?;base64,(.*)$/s;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function bytesOf(data: unknown): Uint8Array | undefined {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return undefined;
}

/** Base64 of binary data, or the string as given (the SDK's strings are base64 or URLs). */
function dataString(data: unknown): string | undefined {
  if (data instanceof URL) return data.href;
  if (typeof data === 'string') return data;
  const bytes = bytesOf(data);
  return bytes ? Buffer.from(bytes).toString('base64') : undefined;
}

/** The image type from its first bytes, where the SDK left it open (`image/*` or absent). */
function sniffImageType(base64: string): string {
  const head = Buffer.from(base64.slice(0, 24), 'base64');
  if (head[0] === 0x89 && head[1] === 0x50) return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8) return 'image/jpeg';
  if (head[0] === 0x47 && head[1] === 0x49) return 'image/gif';
  if (head.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return 'image/png';
}

/** A URL an OpenAI part can carry: the data's own URL, or a data URL of its base64. */
function urlOf(data: unknown, mediaType: string | undefined, image: boolean): string | undefined {
  const text = dataString(data);
  if (text === undefined) return undefined;
  if (URL_LIKE.test(text)) return text;
  let type = mediaType;
  if (image && (type === undefined || type.endsWith('/*'))) type = sniffImageType(text);
  return `data:${type ?? 'application/octet-stream'};base64,${text}`;
}

const AUDIO_FORMATS: Record<string, string> = {
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
};

// ------------------------------------------------------------------------------------ to OpenAI

function textOf(part: Part): string {
  return typeof part.text === 'string' ? part.text : '';
}

/** The OpenAI part for a user's image or file: what contextkit counts it as. */
function mediaPart(part: Part): OpenAIContentPart {
  const mediaType = typeof part.mediaType === 'string' ? part.mediaType : undefined;
  const data = part.type === 'image' ? part.image : part.data;
  const filename = typeof part.filename === 'string' ? part.filename : undefined;
  const isImage = part.type === 'image' || (mediaType?.startsWith('image/') ?? false);
  const url = urlOf(data, mediaType, isImage);
  if (url === undefined) return { type: 'text', text: `[file ${filename ?? mediaType ?? ''}]` };
  if (isImage) return { type: 'image_url', image_url: { url } };
  const audio = mediaType ? AUDIO_FORMATS[mediaType] : undefined;
  const inline = DATA_URL.exec(url);
  if (audio && inline) return { type: 'input_audio', input_audio: { data: inline[2] ?? '', format: audio } };
  if (inline) return { type: 'file', file: { file_data: url, filename: filename ?? 'file' } };
  return { type: 'text', text: `[file ${filename ?? url} (${mediaType ?? 'unknown type'})]` };
}

/** A tool result's output as the text contextkit counts (and may clear or cut). */
export function toolOutputText(output: unknown): string {
  if (!isRecord(output)) return output === undefined ? '' : JSON.stringify(output);
  switch (output.type) {
    case 'text':
    case 'error-text':
      return typeof output.value === 'string' ? output.value : '';
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value ?? null);
    case 'execution-denied':
      return `[execution denied${typeof output.reason === 'string' ? `: ${output.reason}` : ''}]`;
    case 'content':
      return Array.isArray(output.value)
        ? output.value
            .map((item: unknown) =>
              isRecord(item) && item.type === 'text' && typeof item.text === 'string'
                ? item.text
                : `[${isRecord(item) ? String(item.type) : 'item'}]`,
            )
            .join('\n')
        : '';
    default:
      return JSON.stringify(output);
  }
}

function argumentsOf(input: unknown): string {
  return typeof input === 'string' ? input : JSON.stringify(input ?? {});
}

function isClientCall(part: Part): boolean {
  return part.type === 'tool-call' && part.providerExecuted !== true;
}

function assistantProxy(content: string | Part[]): OpenAIAssistantMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: string[] = [];
  const reasoning: string[] = [];
  const calls: OpenAIToolCall[] = [];
  for (const part of content) {
    if (part.type === 'text') texts.push(textOf(part));
    else if (part.type === 'reasoning') reasoning.push(textOf(part));
    else if (isClientCall(part)) {
      calls.push({
        id: String(part.toolCallId),
        type: 'function',
        function: { name: String(part.toolName), arguments: argumentsOf(part.input) },
      });
    } else if (part.type === 'tool-call') {
      texts.push(`[${String(part.toolName)} run by the provider: ${argumentsOf(part.input)}]`);
    } else if (part.type === 'tool-result') {
      texts.push(`[${String(part.toolName)} result: ${toolOutputText(part.output)}]`);
    } else if (part.type === 'file') {
      texts.push(`[file ${typeof part.filename === 'string' ? part.filename : String(part.mediaType)}]`);
    }
  }
  // A message of reasoning only still costs tokens and must not vanish as "empty".
  let text = texts.join('');
  if (text === '' && calls.length === 0) text = reasoning.join('\n') || '[reasoning]';
  const message: OpenAIAssistantMessage = { role: 'assistant', content: text === '' ? null : text };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

function userProxy(content: string | Part[]): OpenAIMessage {
  if (typeof content === 'string') return { role: 'user', content };
  const parts: OpenAIContentPart[] = content.map((part) =>
    part.type === 'text' ? { type: 'text', text: textOf(part) } : mediaPart(part),
  );
  return { role: 'user', content: parts };
}

function contentOf(message: AnyModelMessage): string | Part[] {
  const content: unknown = message.content;
  return typeof content === 'string' ? content : Array.isArray(content) ? (content as Part[]) : '';
}

/**
 * How one SDK message stands among the OpenAI messages: the parts each of its proxies stands for
 * (`'string'`: its string content), in order; `'rider'` for a tool message with nothing to count
 * (approvals only), which goes with the proxy before it; `'none'` for what makes nothing (a tool
 * message with string content, an unknown role). Depends on the message alone, so a prompt's
 * messages can be laid out, and converted, one at a time (see `PromptLayout`).
 */
export type MessageLayout = Array<number[] | 'string'> | 'rider' | 'none';

/** The layout of one SDK message (see `MessageLayout`). */
export function layoutOf(message: AnyModelMessage): MessageLayout {
  const content = contentOf(message);
  switch (message.role) {
    case 'system':
    case 'user':
    case 'assistant':
      return [typeof content === 'string' ? 'string' : content.map((_, k) => k)];
    case 'tool': {
      if (typeof content === 'string') return 'none';
      // Each result is a proxy; approvals ride with the result before them (or the first one).
      const groups: number[][] = [];
      let pendingRiders: number[] = [];
      content.forEach((part, k) => {
        if (part.type === 'tool-result') {
          groups.push([...pendingRiders, k]);
          pendingRiders = [];
        } else if (groups.length > 0) groups[groups.length - 1]!.push(k);
        else pendingRiders.push(k);
      });
      return groups.length === 0 ? 'rider' : groups;
    }
    default:
      return 'none';
  }
}

/**
 * How many OpenAI messages one SDK message makes (`layoutOf`'s groups, counted without building
 * them): 0 for a rider or nothing. Cheap enough to run over a whole prompt on every call.
 */
export function proxyCountOf(message: AnyModelMessage): number {
  switch (message.role) {
    case 'system':
    case 'user':
    case 'assistant':
      return 1;
    case 'tool': {
      const content: unknown = message.content;
      if (!Array.isArray(content)) return 0;
      let n = 0;
      for (const part of content as Part[]) if (part.type === 'tool-result') n++;
      return n;
    }
    default:
      return 0;
  }
}

/** Whether an SDK message rides with the proxy before it (`layoutOf` says `'rider'`). */
export function isRider(message: AnyModelMessage): boolean {
  return message.role === 'tool' && Array.isArray(message.content) && proxyCountOf(message) === 0;
}

/**
 * The client-side tool calls and results of the SDK message at `index`, whose proxies start at
 * `first`, as `fromModelMessages` keeps them in its side map.
 */
export function toolPartsOf(
  message: AnyModelMessage,
  index: number,
  groups: ReadonlyArray<number[] | 'string'>,
  first: number,
  calls: Map<string, PartAt>,
  results: Map<string, PartAt>,
): void {
  const content = contentOf(message);
  if (typeof content === 'string') return;
  if (message.role === 'assistant') {
    content.forEach((part, k) => {
      if (isClientCall(part)) calls.set(String(part.toolCallId), { message: index, part: k, proxy: first });
    });
  } else if (message.role === 'tool') {
    groups.forEach((group, g) => {
      if (group === 'string') return;
      const k = group.find((i) => content[i]!.type === 'tool-result')!;
      results.set(String(content[k]!.toolCallId), { message: index, part: k, proxy: first + g });
    });
  }
}

/** The OpenAI messages one SDK message makes, one per group of its layout. */
export function proxiesOf(
  message: AnyModelMessage,
  groups: ReadonlyArray<number[] | 'string'>,
): OpenAIMessage[] {
  const content = contentOf(message);
  switch (message.role) {
    case 'system':
      return [{ role: 'system', content: typeof content === 'string' ? content : '' }];
    case 'user':
      return [userProxy(content)];
    case 'assistant':
      return [assistantProxy(content)];
    default:
      return groups.map((group) => {
        const part = (content as Part[])[
          (group as number[]).find((k) => (content as Part[])[k]!.type === 'tool-result')!
        ]!;
        return { role: 'tool', tool_call_id: String(part.toolCallId), content: toolOutputText(part.output) };
      });
  }
}

/**
 * Converts the SDK's messages (or a model's prompt) to OpenAI Chat Completions messages for
 * contextkit, with the side map that gives them back whole through `toModelMessages`. A tool
 * message becomes one `tool` message per result; an assistant message one message with its text
 * and its client-side tool calls. The input is not changed.
 */
export function fromModelMessages(messages: readonly AnyModelMessage[]): ConvertedModelMessages {
  const proxies: OpenAIMessage[] = [];
  const origins: Origin[] = [];
  const riders = new Map<number, number[]>();
  const leading: number[] = [];
  const calls = new Map<string, PartAt>();
  const results = new Map<string, PartAt>();

  messages.forEach((message, index) => {
    const layout = layoutOf(message);
    if (layout === 'none') return;
    if (layout === 'rider') {
      if (proxies.length === 0) leading.push(index);
      else {
        const list = riders.get(proxies.length - 1) ?? [];
        list.push(index);
        riders.set(proxies.length - 1, list);
      }
      return;
    }
    toolPartsOf(message, index, layout, proxies.length, calls, results);
    proxiesOf(message, layout).forEach((proxy, g) => {
      proxies.push(proxy);
      origins.push({ message: index, parts: layout[g]! });
    });
  });

  const byKey = new Map<string, number[]>();
  proxies.forEach((proxy, i) => {
    const key = JSON.stringify(proxy);
    const list = byKey.get(key) ?? [];
    list.push(i);
    byKey.set(key, list);
  });
  return {
    messages: proxies,
    sideMap: { source: messages, proxies, origins, riders, leading, calls, results, byKey },
  };
}

// ------------------------------------------------------------------------------------ back

/** An OpenAI message of a view, with the proxy it is unchanged, when it is one. */
export interface ProxyEntry {
  message: OpenAIMessage;
  proxy: number | undefined;
}

interface Piece {
  /** SDK message index, or a negative number for a message that has none. */
  group: number;
  role: string;
  /** The SDK message's string content, when the piece is that whole message. */
  text?: string;
  parts: Part[];
}

function plainText(content: OpenAIMessage['content'] | undefined): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) => (p.type === 'text' ? p.text : p.type === 'refusal' ? p.refusal : ''))
    .filter((t) => t !== '')
    .join('\n');
}

/** SDK parts for a user message contextkit wrote or cut. */
function userParts(content: OpenAIMessage['content']): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.map((part): Part => {
    switch (part.type) {
      case 'text':
        return { type: 'text', text: part.text };
      case 'refusal':
        return { type: 'text', text: part.refusal };
      case 'image_url': {
        const inline = DATA_URL.exec(part.image_url.url);
        if (inline) return { type: 'file', data: inline[2] ?? '', mediaType: inline[1] ?? 'image/png' };
        return { type: 'file', data: new URL(part.image_url.url), mediaType: 'image/*' };
      }
      case 'input_audio':
        return {
          type: 'file',
          data: part.input_audio.data,
          mediaType: part.input_audio.format === 'mp3' ? 'audio/mpeg' : `audio/${part.input_audio.format}`,
        };
      default: {
        const inline = part.file.file_data === undefined ? null : DATA_URL.exec(part.file.file_data);
        if (!inline) return { type: 'text', text: `[file ${part.file.filename ?? part.file.file_id ?? ''}]` };
        const out: Part = { type: 'file', data: inline[2] ?? '', mediaType: inline[1] ?? 'application/pdf' };
        if (part.file.filename !== undefined) out.filename = part.file.filename;
        return out;
      }
    }
  });
}

function parseArguments(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/**
 * Rebuilds an assistant message the plan rewrote: its own text, and, from the SDK message it came
 * from (found by its tool calls), the reasoning, provider options and tool-call parts.
 */
function assistantPiece(
  message: OpenAIAssistantMessage,
  side: ModelMessageSideMap,
  fresh: () => number,
): Piece {
  const text = plainText(message.content ?? '');
  const edited = new Map((message.tool_calls ?? []).map((c) => [c.id, c]));
  const firstCall = message.tool_calls?.[0];
  const at = firstCall ? side.calls.get(firstCall.id) : undefined;
  const source = at ? contentOf(side.source[at.message]!) : undefined;
  if (at && Array.isArray(source)) {
    // Only a cut changes the text; an edit of the calls alone (inputs cleared) leaves it as it was.
    const textCut = text !== plainText(side.proxies[at.proxy]?.content ?? '');
    const parts: Part[] = [];
    let textPlaced = false;
    for (const part of source) {
      if (part.type === 'text') {
        if (!textCut) parts.push(part);
        else if (!textPlaced && text !== '') parts.push({ ...part, text });
        textPlaced = true;
      } else if (isClientCall(part)) {
        const call = edited.get(String(part.toolCallId));
        if (!call) continue;
        parts.push(
          call.function.arguments === argumentsOf(part.input)
            ? part
            : { ...part, input: parseArguments(call.function.arguments) },
        );
      } else parts.push(part);
    }
    if (textCut && !textPlaced && text !== '') parts.unshift({ type: 'text', text });
    return { group: at.message, role: 'assistant', parts };
  }
  const parts: Part[] = text === '' ? [] : [{ type: 'text', text }];
  for (const call of message.tool_calls ?? []) {
    parts.push({
      type: 'tool-call',
      toolCallId: call.id,
      toolName: call.function.name,
      input: parseArguments(call.function.arguments),
    });
  }
  return { group: fresh(), role: 'assistant', parts };
}

/** Rebuilds a tool result the plan cleared or cut, on the SDK's own result part. */
function toolPiece(
  message: OpenAIMessage & { role: 'tool' },
  side: ModelMessageSideMap,
  previous: Piece | undefined,
  viewCalls: ReadonlyMap<string, string>,
  fresh: () => number,
): Piece {
  const text = plainText(message.content);
  const at = side.results.get(message.tool_call_id);
  const original = at ? contentOf(side.source[at.message]!)[at.part] : undefined;
  if (at && isRecord(original)) {
    const output = original.output;
    const isError = isRecord(output) && (output.type === 'error-text' || output.type === 'error-json');
    return {
      group: at.message,
      role: 'tool',
      parts: [{ ...(original as Part), output: { type: isError ? 'error-text' : 'text', value: text } }],
    };
  }
  const call = side.calls.get(message.tool_call_id);
  const callPart = call ? contentOf(side.source[call.message]!)[call.part] : undefined;
  const toolName =
    isRecord(callPart) && typeof callPart.toolName === 'string'
      ? callPart.toolName
      : (viewCalls.get(message.tool_call_id) ?? 'tool');
  return {
    group: previous?.role === 'tool' ? previous.group : fresh(),
    role: 'tool',
    parts: [
      {
        type: 'tool-result',
        toolCallId: message.tool_call_id,
        toolName,
        output: { type: 'text', value: text },
      },
    ],
  };
}

function wholePieces(index: number, side: ModelMessageSideMap): Piece[] {
  const message = side.source[index]!;
  const content = contentOf(message);
  return [
    typeof content === 'string'
      ? { group: index, role: message.role, text: content, parts: [] }
      : { group: index, role: message.role, parts: content },
  ];
}

/** Whether `parts` are exactly the SDK message's parts, so the message itself can be given back. */
function isWhole(message: AnyModelMessage, piece: Piece): boolean {
  const content = contentOf(message);
  if (typeof content === 'string') return piece.text === content;
  return (
    piece.text === undefined &&
    piece.parts.length === content.length &&
    piece.parts.every((p, i) => p === content[i])
  );
}

/** How `toModelMessages` writes what it cannot take from the SDK's own messages. */
export interface ToModelMessagesOptions {
  /**
   * What a system message contextkit writes after the conversation has started (a summary) becomes:
   * `user` (default), since most providers (Anthropic, Google) take system messages only at the
   * start, or `system` for providers that take them anywhere (OpenAI).
   */
  systemInside?: 'system' | 'user';
}

/**
 * The SDK messages for a fitted view: each entry that is an unchanged proxy gives back its SDK
 * message (or the parts of it it stands for), rewritten entries are rebuilt on the SDK message
 * they came from, and what contextkit wrote (summary, facts) becomes a system message at the top
 * and, further down, what `systemInside` says.
 */
export function restoreModelMessages(
  entries: readonly ProxyEntry[],
  side: ModelMessageSideMap,
  options: ToModelMessagesOptions = {},
): ModelMessage[] {
  let next = -1;
  const fresh = () => next--;
  const pieces: Piece[] = [];
  const ridersOf = (proxy: number | undefined) => {
    if (proxy === undefined) return;
    for (const index of side.riders.get(proxy) ?? []) pieces.push(...wholePieces(index, side));
  };
  for (const index of side.leading) pieces.push(...wholePieces(index, side));
  let started = false;
  const viewCalls = new Map<string, string>();
  for (const { message, proxy } of entries) {
    const previous = pieces[pieces.length - 1];
    if (message.role === 'assistant')
      for (const c of message.tool_calls ?? []) viewCalls.set(c.id, c.function.name);
    if (proxy !== undefined) {
      const origin = side.origins[proxy]!;
      const source = side.source[origin.message]!;
      const content = contentOf(source);
      pieces.push(
        origin.parts === 'string' || typeof content === 'string'
          ? {
              group: origin.message,
              role: source.role,
              text: typeof content === 'string' ? content : '',
              parts: [],
            }
          : { group: origin.message, role: source.role, parts: origin.parts.map((k) => content[k]!) },
      );
      ridersOf(proxy);
    } else if (message.role === 'tool') {
      pieces.push(toolPiece(message, side, previous, viewCalls, fresh));
      ridersOf(side.results.get(message.tool_call_id)?.proxy);
    } else if (message.role === 'assistant') {
      pieces.push(assistantPiece(message, side, fresh));
      const first = message.tool_calls?.[0];
      ridersOf(first ? side.calls.get(first.id)?.proxy : undefined);
    } else if (message.role === 'user') {
      pieces.push({ group: fresh(), role: 'user', parts: userParts(message.content) });
    } else {
      const text = plainText(message.content);
      pieces.push(
        started && options.systemInside !== 'system'
          ? { group: fresh(), role: 'user', parts: [{ type: 'text', text }] }
          : { group: fresh(), role: 'system', text, parts: [] },
      );
    }
    if (pieces[pieces.length - 1]?.role !== 'system') started = true;
  }

  const out: ModelMessage[] = [];
  for (let i = 0; i < pieces.length; ) {
    const first = pieces[i]!;
    const merged: Piece = { ...first, parts: first.parts.slice() };
    let j = i + 1;
    while (
      j < pieces.length &&
      pieces[j]!.group === first.group &&
      first.group >= 0 &&
      first.text === undefined
    ) {
      merged.parts.push(...pieces[j]!.parts);
      j++;
    }
    i = j;
    const source = first.group >= 0 ? side.source[first.group] : undefined;
    if (source && isWhole(source, merged)) {
      out.push(source as ModelMessage);
      continue;
    }
    const rebuilt: LooseMessage = { role: merged.role, content: merged.text ?? merged.parts };
    if (source?.providerOptions !== undefined) rebuilt.providerOptions = source.providerOptions;
    out.push(rebuilt as unknown as ModelMessage);
  }
  return out;
}

/**
 * Converts contextkit messages (a view, in either format) back to the SDK's `ModelMessage`s. With
 * the side map from `fromModelMessages`, every message that is unchanged comes back as the SDK
 * message it was made from (provider options, reasoning, images and all), and a rewritten one
 * keeps the tool call and options of its original; without it the conversion keeps text, images,
 * files, tool calls and tool results.
 */
export function toModelMessages(
  messages: readonly Message[],
  sideMap?: ModelMessageSideMap,
  options: ToModelMessagesOptions = {},
): ModelMessage[] {
  // The SDK's reasoning comes back from the side map; an Anthropic view's thinking has no place here.
  const openai = convertMessages(messages, 'openai', { dropThinking: true });
  const side: ModelMessageSideMap = sideMap ?? fromModelMessages([]).sideMap;
  const byObject = new Map<object, number>(side.proxies.map((p, i) => [p, i]));
  let last = -1;
  const entries = openai.map((message): ProxyEntry => {
    let proxy = byObject.get(message);
    if (proxy === undefined) proxy = side.byKey.get(JSON.stringify(message))?.find((i) => i > last);
    if (proxy !== undefined) last = proxy;
    return { message, proxy };
  });
  return restoreModelMessages(entries, side, options);
}
