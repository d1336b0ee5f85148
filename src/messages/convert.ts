/**
 * Conversion between OpenAI Chat Completions and Anthropic Messages, so a conversation stored in
 * one format can be sent to the other provider (and the CLI can print a view in either).
 *
 * It keeps everything both formats can hold: text, tool calls (ids, names, arguments up to JSON
 * re-serialisation), tool results, images and PDF documents. An OpenAI → Anthropic → OpenAI round
 * trip gives the same conversation back, except for what is listed here (a single text part comes
 * back as a string, `developer` as `system`, a reused call id renamed). What one side cannot hold
 * is replaced by a bracketed note or dropped, as listed:
 *
 * - OpenAI → Anthropic: `detail` of an image and `name` of a message are dropped; audio parts and
 *   OpenAI file ids become a short bracketed text note; tool-call arguments that are not a JSON
 *   object are kept as `{ "_raw": "<arguments>" }` (and restored by `toOpenAI`); empty arguments
 *   become `{}`; a system or developer message after the conversation has started becomes a user
 *   message (an Anthropic system prompt only exists at the top); empty text parts are left out
 *   (Anthropic refuses them) and an empty tool output becomes a `tool_result` without content.
 *   Tool-call ids are made valid for Anthropic (`^[a-zA-Z0-9_-]+$`) and unique within the
 *   conversation: real logs reuse ids across turns, Anthropic refuses that, so a reused id gets a
 *   `_2`, `_3`… suffix, and the results that answer it (paired by position) follow it.
 * - Anthropic → OpenAI (and Gemini): thinking and redacted thinking blocks (signed or encrypted
 *   reasoning) have no place in another provider's format. `convertMessages` refuses them (one
 *   `not_convertible` error listing every path) unless `{ dropThinking: true }` is passed;
 *   `toOpenAI` and `dropThinking` drop them, and an assistant message left with nothing is dropped
 *   too. Gemini's thought parts and thought signatures go the same way. `is_error` becomes an
 *   `Error: ` prefix on the result text; images and documents inside a tool result move to a user
 *   message after the tool messages (OpenAI tool messages hold text only), with a note in the
 *   result; image and document `file` sources and URL documents become bracketed text notes;
 *   `cache_control` and `citations` are dropped.
 */

import { InvalidMessageError, type MessageIssue } from '../errors.js';
import { ASSISTANT_ONLY_BLOCKS, isFutureBlockType, THINKING_BLOCKS } from './anthropic-blocks.js';
import { anthropicToGemini, geminiToAnthropic } from './convert-gemini.js';
import { chatToResponses, responsesToChat } from './convert-responses.js';
import { detectConversationFormat } from './detect.js';
import type { GeminiMessage } from './gemini-parts.js';
import { parseJsonWithinDepth } from './json-limits.js';
import type {
  AnthropicContentBlock,
  AnthropicDocumentBlock,
  AnthropicImageBlock,
  AnthropicMessage,
  AnthropicTextBlock,
  AnthropicToolResultBlock,
  Message,
  MessageFormat,
  OpenAIAssistantMessage,
  OpenAIContentPart,
  OpenAIMessage,
  OpenAITextPart,
  OpenAIToolCall,
} from './types.js';

const DATA_URL = /^data:([^;,]+)((?:;[^;,]*)*?);base64,(.*)$/s;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function textBlock(text: string): AnthropicTextBlock {
  return { type: 'text', text };
}

function textPart(text: string): OpenAITextPart {
  return { type: 'text', text };
}

// ================================================================================== to Anthropic

/** Turns a tool-call arguments string into a `tool_use` input object (see the module note). */
function argumentsToInput(args: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  try {
    const parsed: unknown = parseJsonWithinDepth(args);
    if (isRecord(parsed)) return parsed;
  } catch {
    // Not JSON: kept raw below.
  }
  return { _raw: args };
}

/** Makes tool-call ids valid and unique for Anthropic, remembering which it gave out. */
class ToolIdAllocator {
  private readonly used = new Set<string>();

  allocate(original: string): string {
    const base = original.replace(/[^a-zA-Z0-9_-]/g, '_') || 'toolu';
    let id = base;
    for (let n = 2; this.used.has(id); n++) id = `${base}_${n}`;
    this.used.add(id);
    return id;
  }

  /** The id a result must use when it answers no known call: made valid, not reserved. */
  static sanitize(original: string): string {
    return original.replace(/[^a-zA-Z0-9_-]/g, '_') || 'toolu';
  }
}

function imageFromUrl(url: string): AnthropicImageBlock {
  const match = DATA_URL.exec(url);
  if (match)
    return { type: 'image', source: { type: 'base64', media_type: match[1] ?? '', data: match[3] ?? '' } };
  return { type: 'image', source: { type: 'url', url } };
}

function openaiPartToBlock(part: OpenAIContentPart): AnthropicContentBlock | undefined {
  switch (part.type) {
    case 'text':
      return part.text.trim() === '' ? undefined : textBlock(part.text);
    case 'refusal':
      return part.refusal.trim() === '' ? undefined : textBlock(part.refusal);
    case 'image_url':
      return imageFromUrl(part.image_url.url);
    case 'input_audio':
      return textBlock(
        `[audio input (${part.input_audio.format}) omitted: Anthropic messages cannot carry audio]`,
      );
    case 'file': {
      const match = part.file.file_data === undefined ? null : DATA_URL.exec(part.file.file_data);
      if (match) {
        const doc: AnthropicDocumentBlock = {
          type: 'document',
          source: { type: 'base64', media_type: match[1] ?? '', data: match[3] ?? '' },
        };
        if (part.file.filename !== undefined) doc.title = part.file.filename;
        return doc;
      }
      const name = part.file.filename ?? part.file.file_id ?? 'unnamed';
      return textBlock(`[file ${name} omitted: an OpenAI file is not available to Anthropic]`);
    }
  }
}

function partsToBlocks(
  content: string | readonly OpenAIContentPart[] | null | undefined,
): AnthropicContentBlock[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content.trim() === '' ? [] : [textBlock(content)];
  const blocks: AnthropicContentBlock[] = [];
  for (const part of content) {
    const block = openaiPartToBlock(part);
    if (block) blocks.push(block);
  }
  return blocks;
}

function systemToAnthropic(content: string | readonly OpenAITextPart[]): string | AnthropicTextBlock[] {
  if (typeof content === 'string') return content;
  return content.filter((p) => p.text.trim() !== '').map((p) => textBlock(p.text));
}

function assistantToAnthropic(
  message: OpenAIAssistantMessage,
  ids: ToolIdAllocator,
): { message: AnthropicMessage; calls: Array<{ original: string; id: string; answered: boolean }> } {
  const calls = message.tool_calls ?? [];
  const blocks = partsToBlocks(message.content);
  const refusal = message.refusal;
  if (
    typeof refusal === 'string' &&
    refusal.trim() !== '' &&
    !blocks.some((b) => b.type === 'text' && b.text === refusal)
  ) {
    blocks.push(textBlock(refusal));
  }
  if (calls.length === 0) {
    if (typeof message.content === 'string' && blocks.length <= 1) {
      return { message: { role: 'assistant', content: message.content }, calls: [] };
    }
    return { message: { role: 'assistant', content: blocks.length > 0 ? blocks : '' }, calls: [] };
  }
  const pending = calls.map((call) => {
    const id = ids.allocate(call.id);
    blocks.push({
      type: 'tool_use',
      id,
      name: call.function.name,
      input: argumentsToInput(call.function.arguments),
    });
    return { original: call.id, id, answered: false };
  });
  return { message: { role: 'assistant', content: blocks }, calls: pending };
}

function toolResultContent(content: string | readonly OpenAITextPart[]): AnthropicToolResultBlock['content'] {
  if (typeof content === 'string') return content === '' ? undefined : content;
  const blocks = content.filter((p) => p.text.trim() !== '').map((p) => textBlock(p.text));
  return blocks.length > 0 ? blocks : undefined;
}

/**
 * Converts OpenAI Chat Completions messages to Anthropic Messages (see the module note for what
 * cannot be carried over). Consecutive `tool` messages become one user message of `tool_result`
 * blocks in order, and a user message right after them joins that message after the results, as
 * Anthropic requires. The input is not changed.
 */
export function toAnthropic(messages: readonly OpenAIMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  const ids = new ToolIdAllocator();
  let calls: Array<{ original: string; id: string; answered: boolean }> = [];
  /** The user message collecting the current run of tool results, while it is the last one out. */
  let results: AnthropicContentBlock[] | undefined;
  let started = false;

  const pushUser = (content: string | readonly OpenAIContentPart[]): void => {
    if (results) {
      results.push(...partsToBlocks(content));
    } else if (typeof content === 'string') {
      out.push({ role: 'user', content });
    } else {
      const blocks = partsToBlocks(content);
      out.push({ role: 'user', content: blocks.length > 0 ? blocks : '' });
    }
    results = undefined;
  };

  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'developer':
        if (!started) {
          out.push({ role: 'system', content: systemToAnthropic(message.content) });
        } else {
          pushUser(message.content);
          calls = [];
        }
        continue;
      case 'tool': {
        const call = calls.find((c) => c.original === message.tool_call_id && !c.answered);
        if (call) call.answered = true;
        const block: AnthropicToolResultBlock = {
          type: 'tool_result',
          tool_use_id: call ? call.id : ToolIdAllocator.sanitize(message.tool_call_id),
        };
        const content = toolResultContent(message.content);
        if (content !== undefined) block.content = content;
        if (results) {
          results.push(block);
        } else {
          results = [block];
          out.push({ role: 'user', content: results });
        }
        started = true;
        continue;
      }
      case 'user':
        pushUser(message.content);
        calls = [];
        break;
      case 'assistant': {
        const converted = assistantToAnthropic(message, ids);
        out.push(converted.message);
        calls = converted.calls;
        results = undefined;
        break;
      }
    }
    started = true;
  }
  return out;
}

// ================================================================================== to OpenAI

/** Restores the arguments string of a tool call from a `tool_use` input. */
function inputToArguments(input: unknown): string {
  if (isRecord(input)) {
    const keys = Object.keys(input);
    if (keys.length === 1 && keys[0] === '_raw' && typeof input._raw === 'string') return input._raw;
  }
  return JSON.stringify(input ?? {});
}

function imageToPart(block: AnthropicImageBlock): OpenAIContentPart {
  const source = block.source;
  switch (source.type) {
    case 'base64':
      return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
    case 'url':
      return { type: 'image_url', image_url: { url: source.url } };
    case 'file':
      return textPart(`[image file ${source.file_id} omitted: an Anthropic file is not available to OpenAI]`);
  }
}

function documentToParts(block: AnthropicDocumentBlock): OpenAIContentPart[] {
  const source = block.source;
  switch (source.type) {
    case 'base64':
      return [
        {
          type: 'file',
          file: {
            file_data: `data:${source.media_type};base64,${source.data}`,
            filename: block.title ?? 'document',
          },
        },
      ];
    case 'text':
      return source.data === '' ? [] : [textPart(source.data)];
    case 'content':
      if (typeof source.content === 'string') return source.content === '' ? [] : [textPart(source.content)];
      return source.content.flatMap((b) => (b.type === 'text' ? [textPart(b.text)] : [imageToPart(b)]));
    case 'url':
      return [textPart(`[document ${block.title ?? source.url} at ${source.url}]`)];
    case 'file':
      return [
        textPart(`[document file ${source.file_id} omitted: an Anthropic file is not available to OpenAI]`),
      ];
  }
}

/** OpenAI parts for the blocks a user or assistant can show (text, images, documents). */
function blockToParts(block: AnthropicContentBlock): OpenAIContentPart[] {
  switch (block.type) {
    case 'text':
      return [textPart(block.text)];
    case 'image':
      return [imageToPart(block)];
    case 'document':
      return documentToParts(block);
    default:
      return [];
  }
}

/** A `tool` message's content for a result, and any media that must travel in a user message. */
function resultToOpenAI(block: AnthropicToolResultBlock): {
  content: string | OpenAITextPart[];
  media: OpenAIContentPart[];
} {
  const content = block.content;
  const prefix = block.is_error === true ? 'Error: ' : '';
  if (content === undefined) return { content: prefix.trim(), media: [] };
  if (typeof content === 'string') return { content: prefix + content, media: [] };
  const texts: OpenAITextPart[] = [];
  const media: OpenAIContentPart[] = [];
  for (const inner of content) {
    if (inner.type === 'text') {
      texts.push(textPart(inner.text));
      continue;
    }
    const parts = inner.type === 'image' ? [imageToPart(inner)] : documentToParts(inner);
    for (const part of parts) {
      if (part.type === 'text') texts.push(part);
      else {
        media.push(part);
        texts.push(textPart(`[${part.type === 'file' ? 'document' : 'image'} in the next user message]`));
      }
    }
  }
  if (prefix !== '') return { content: prefix + texts.map((t) => t.text).join('\n'), media };
  return { content: texts, media };
}

function userPartsContent(parts: OpenAIContentPart[], preferString: boolean): string | OpenAIContentPart[] {
  const only = parts[0];
  if (preferString && parts.length === 1 && only?.type === 'text') return only.text;
  return parts;
}

function assistantToOpenAI(content: readonly AnthropicContentBlock[]): OpenAIAssistantMessage | undefined {
  const texts: OpenAIContentPart[] = [];
  const calls: OpenAIToolCall[] = [];
  for (const block of content) {
    if (block.type === 'tool_use') {
      calls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: inputToArguments(block.input) },
      });
    } else {
      for (const part of blockToParts(block)) {
        texts.push(
          part.type === 'text' ? part : textPart(`[${part.type} omitted from an assistant message]`),
        );
      }
    }
  }
  if (texts.length === 0 && calls.length === 0)
    return content.length === 0 ? { role: 'assistant', content: '' } : undefined;
  const only = texts[0];
  const text: OpenAIAssistantMessage['content'] =
    texts.length === 0
      ? calls.length > 0
        ? null
        : ''
      : texts.length === 1 && only?.type === 'text'
        ? only.text
        : texts;
  const message: OpenAIAssistantMessage = { role: 'assistant', content: text };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

/**
 * Converts Anthropic messages (with the system prompt as `role: "system"` messages) to OpenAI
 * Chat Completions messages (see the module note for what cannot be carried over). A user message
 * with `tool_result` blocks becomes one `tool` message per result, in order, followed by a user
 * message with its other blocks if it has any. The input is not changed.
 */
export function toOpenAI(messages: readonly AnthropicMessage[]): OpenAIMessage[] {
  const out: OpenAIMessage[] = [];
  for (const message of messages) {
    const content = message.content;
    if (message.role === 'system') {
      out.push({
        role: 'system',
        content:
          typeof content === 'string'
            ? content
            : (content as AnthropicTextBlock[]).map((b) => textPart(b.text)),
      });
      continue;
    }
    if (typeof content === 'string') {
      out.push({ role: message.role, content });
      continue;
    }
    if (message.role === 'assistant') {
      const converted = assistantToOpenAI(content);
      if (converted) out.push(converted);
      continue;
    }
    const parts: OpenAIContentPart[] = [];
    const media: OpenAIContentPart[] = [];
    let hadResults = false;
    for (const block of content) {
      if (block.type === 'tool_result') {
        hadResults = true;
        const result = resultToOpenAI(block);
        out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: result.content });
        media.push(...result.media);
      } else {
        parts.push(...blockToParts(block));
      }
    }
    const rest = [...media, ...parts];
    if (rest.length > 0 || !hadResults)
      out.push({ role: 'user', content: userPartsContent(rest, hadResults) });
  }
  return out;
}

// ================================================================================== either way

/** Anthropic blocks with no OpenAI counterpart: server tools, MCP, uploads, search results, future blocks. */
const NO_OPENAI_COUNTERPART = new Set([...ASSISTANT_ONLY_BLOCKS, 'container_upload', 'search_result']);

/** Options of `convertMessages`. */
export interface ConvertOptions {
  /**
   * Leave out the reasoning no other provider can take, instead of refusing it: Anthropic
   * `thinking` and `redacted_thinking` blocks (to the OpenAI formats and Gemini), and Gemini thought
   * parts and thought signatures (to any other format). An assistant or model turn left with
   * nothing goes too. Their signature or encrypted data cannot go across; pass this when the
   * reasoning of earlier turns need not be sent, e.g. a conversation handed to another provider
   * (the view does). Default `false`: they are listed in the `not_convertible` error with the other
   * parts that cannot go across.
   */
  dropThinking?: boolean;
}

/**
 * Throws `InvalidMessageError` (code `not_convertible`) listing every Anthropic block that cannot
 * go to an OpenAI format as it is (they would otherwise be left out without a word).
 */
function notConvertibleBlocks(
  messages: readonly Message[],
  to: MessageFormat,
  options: ConvertOptions,
): void {
  const issues: MessageIssue[] = [];
  const target = to === 'openai' ? 'Chat Completions' : 'Responses API';
  messages.forEach((m, i) => {
    if (!Array.isArray(m.content)) return;
    (m.content as unknown as Array<Record<string, unknown>>).forEach((b, k) => {
      const type = String(b.type);
      const path = `messages[${i}].content[${k}]`;
      if (NO_OPENAI_COUNTERPART.has(type) || isFutureBlockType(b.type))
        issues.push({
          path,
          message: `a "${type}" block has no ${target} counterpart and cannot be converted`,
        });
      else if (THINKING_BLOCKS.has(type) && options.dropThinking !== true)
        issues.push({
          path,
          message: `a "${type}" block (signed Anthropic reasoning) cannot go to the ${target}; pass { dropThinking: true } to leave it out`,
        });
    });
  });
  if (issues.length > 0) throw new InvalidMessageError(issues, 'not_convertible');
}

/** Whether a system message comes after the conversation started. */
function hasLateSystem(messages: readonly Message[]): boolean {
  const first = messages.findIndex((m) => m.role !== 'system');
  return first !== -1 && messages.slice(first).some((m) => m.role === 'system');
}

/**
 * Returns `messages` in format `to`, converting from the format they are detected to be in. When
 * they already are (or fit either format) the result is a new array of the same message objects,
 * except that messages fitting either format and holding a system message after the first turn
 * go to Anthropic through the OpenAI reading (that system message becomes a user turn).
 * Throws `FormatMismatchError` when the input mixes the two formats, and `InvalidMessageError`
 * (code `not_convertible`, every path listed) for what cannot go across: see the module note and
 * `ConvertOptions.dropThinking`.
 */
export function convertMessages(
  messages: readonly Message[],
  to: 'openai',
  options?: ConvertOptions,
): OpenAIMessage[];
export function convertMessages(
  messages: readonly Message[],
  to: 'anthropic',
  options?: ConvertOptions,
): AnthropicMessage[];
export function convertMessages(
  messages: readonly Message[],
  to: MessageFormat,
  options?: ConvertOptions,
): Message[];
export function convertMessages(
  messages: readonly Message[],
  to: MessageFormat,
  options: ConvertOptions = {},
): Message[] {
  const from = detectConversationFormat(messages);
  // Gemini goes through Anthropic's blocks both ways (see convert-gemini.ts); text-only messages
  // that fit every other format still need Gemini's parts.
  if (to === 'gemini' && from !== 'gemini')
    return anthropicToGemini(
      from === 'anthropic' || from === undefined
        ? (messages as AnthropicMessage[])
        : convertMessages(messages, 'anthropic', options),
      options,
    );
  if (from === 'gemini' && to !== 'gemini') {
    const anthropic = geminiToAnthropic(messages as GeminiMessage[], options);
    return to === 'anthropic' ? anthropic : convertMessages(anthropic, to, options);
  }
  // A conversation valid in both shapes passes as it is, unless it holds a system message after
  // the conversation started (a summary standing after a kept user turn): the Anthropic system
  // prompt exists only at the top, so it goes through the OpenAI reading, which makes it a user turn.
  if (from === undefined && to === 'anthropic' && hasLateSystem(messages)) {
    return toAnthropic(messages as OpenAIMessage[]);
  }
  // Messages that fit both Chat Completions and Anthropic (text only) are Chat messages to the Responses API.
  if (from === undefined && to === 'openai-responses') return chatToResponses(messages as OpenAIMessage[]);
  if (from === undefined || from === to) return messages.slice();
  // The Responses API goes through Chat Completions (see convert-responses.ts for what is lossless).
  if (from === 'openai-responses') {
    const chat = responsesToChat(messages);
    return to === 'openai' ? chat : toAnthropic(chat);
  }
  if (from === 'anthropic') notConvertibleBlocks(messages, to, options);
  if (to === 'openai-responses')
    return chatToResponses(
      from === 'anthropic' ? toOpenAI(messages as AnthropicMessage[]) : (messages as OpenAIMessage[]),
    );
  return to === 'anthropic'
    ? toAnthropic(messages as OpenAIMessage[])
    : toOpenAI(messages as AnthropicMessage[]);
}
