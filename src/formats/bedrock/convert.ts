/**
 * Conversion between Bedrock Converse messages and Anthropic messages, the hub the other formats
 * go through. Converse was shaped after Claude's Messages API, so most blocks map one to one:
 *
 * - `text` and `{type: "text"}`; the stored system prompt's text blocks (a system message after
 *   the conversation started becomes a user message: Converse's `system` stands before them);
 * - `image` with `bytes` and a base64 image block (`image/<format>`);
 * - `document`: PDF bytes and a base64 PDF, text sources and text documents (its `name` is the
 *   Anthropic `title`, made to fit Bedrock's name rule on the way in);
 * - `toolUse {toolUseId, name, input}` and `tool_use {id, name, input}`;
 * - `toolResult {toolUseId, content, status}` and `tool_result` (`json` goes as its JSON text,
 *   `status: "error"` as `is_error`);
 * - `reasoningContent` with a signed `reasoningText` and `thinking`, `redactedContent` and
 *   `redacted_thinking`: signed reasoning moves as it is, never edited;
 * - a `cachePoint` after a block and `cache_control` on that block.
 *
 * What cannot go across is listed in one `InvalidMessageError` (code `not_convertible`): S3 and
 * URL sources, video, audio, citations, search results, guard content, server-tool and MCP
 * blocks, and reasoning without a signature; with `{ dropThinking: true }` reasoning is left out
 * instead (an assistant turn left with nothing goes too).
 */
import { InvalidMessageError, type MessageIssue } from '../../errors.js';
import type {
  BedrockContentBlock,
  BedrockDocument,
  BedrockImage,
  BedrockMessage,
  BedrockSystemBlock,
  BedrockToolResultContent,
} from '../../messages/bedrock-types.js';
import type { AnthropicContentBlock, AnthropicMessage, AnthropicTextBlock } from '../../messages/types.js';
import { isRecord, memberOf } from './blocks.js';

type Rec = Record<string, unknown>;

/** Options of the conversions (see the module note). */
export interface BedrockConvertOptions {
  dropThinking?: boolean;
}

const IMAGE_FORMATS = new Set(['png', 'jpeg', 'gif', 'webp']);
const TEXT_DOCUMENTS = new Set(['txt', 'md', 'csv', 'html']);

/** Base64 bytes as UTF-8 text (no Node Buffer: the core also runs in browsers). */
function textOfBase64(bytes: string): string {
  return new TextDecoder().decode(Uint8Array.from(atob(bytes), (c) => c.charCodeAt(0)));
}

function notConvertible(issues: MessageIssue[]): void {
  if (issues.length > 0) throw new InvalidMessageError(issues, 'not_convertible');
}

function cannot(issues: MessageIssue[], path: string, what: string): void {
  issues.push({ path, message: `${what} has no Anthropic counterpart and cannot be converted` });
}

// ------------------------------------------------------------------------------ Bedrock → Anthropic

function imageToAnthropic(
  image: BedrockImage,
  path: string,
  issues: MessageIssue[],
): AnthropicContentBlock | null {
  const source = image.source as Rec;
  if (typeof source.bytes !== 'string') {
    cannot(issues, `${path}.source`, 'an S3 image source');
    return null;
  }
  return {
    type: 'image',
    source: { type: 'base64', media_type: `image/${image.format}`, data: source.bytes },
  };
}

function documentToAnthropic(
  doc: BedrockDocument,
  path: string,
  issues: MessageIssue[],
): AnthropicContentBlock | null {
  const source = doc.source as Rec;
  const title = { title: doc.name };
  if (typeof source.text === 'string')
    return {
      type: 'document',
      source: { type: 'text', media_type: 'text/plain', data: source.text },
      ...title,
    };
  if (Array.isArray(source.content))
    return {
      type: 'document',
      source: {
        type: 'content',
        content: (source.content as Rec[]).map((c) => ({ type: 'text', text: String(c.text ?? '') })),
      },
      ...title,
    };
  if (typeof source.bytes === 'string' && (doc.format === 'pdf' || doc.format === undefined))
    return {
      type: 'document',
      source: { type: 'base64', media_type: 'application/pdf', data: source.bytes },
      ...title,
    };
  if (typeof source.bytes === 'string' && TEXT_DOCUMENTS.has(String(doc.format)))
    return {
      type: 'document',
      source: { type: 'text', media_type: 'text/plain', data: textOfBase64(source.bytes) },
      ...title,
    };
  cannot(
    issues,
    `${path}.source`,
    `a ${doc.format ?? 'document'} document from ${Object.keys(source)[0] ?? 'nowhere'}`,
  );
  return null;
}

function resultContentToAnthropic(
  content: readonly BedrockToolResultContent[],
  path: string,
  issues: MessageIssue[],
): Array<AnthropicTextBlock | AnthropicContentBlock> {
  const out: Array<AnthropicTextBlock | AnthropicContentBlock> = [];
  content.forEach((c, k) => {
    const r = c as Rec;
    const at = `${path}[${k}]`;
    if (typeof r.text === 'string') out.push({ type: 'text', text: r.text });
    else if ('json' in r) out.push({ type: 'text', text: JSON.stringify(r.json) });
    else if (isRecord(r.image)) {
      const image = imageToAnthropic(r.image as unknown as BedrockImage, `${at}.image`, issues);
      if (image) out.push(image);
    } else if (isRecord(r.document)) {
      const doc = documentToAnthropic(r.document as unknown as BedrockDocument, `${at}.document`, issues);
      if (doc) out.push(doc);
    } else cannot(issues, at, `a "${Object.keys(r)[0]}" result block`);
  });
  return out;
}

function blockToAnthropic(
  block: Rec,
  path: string,
  issues: MessageIssue[],
  options: BedrockConvertOptions,
): AnthropicContentBlock | 'cache' | null {
  const member = memberOf(block);
  const value = member ? block[member] : undefined;
  const at = `${path}.${member}`;
  switch (member) {
    case 'text':
      return { type: 'text', text: String(value) };
    case 'cachePoint':
      return 'cache';
    case 'image':
      return imageToAnthropic(value as BedrockImage, at, issues);
    case 'document':
      return documentToAnthropic(value as BedrockDocument, at, issues);
    case 'toolUse': {
      const use = value as Rec;
      return { type: 'tool_use', id: String(use.toolUseId), name: String(use.name), input: use.input ?? {} };
    }
    case 'toolResult': {
      const result = value as Rec;
      const content = resultContentToAnthropic(
        (Array.isArray(result.content) ? result.content : []) as BedrockToolResultContent[],
        `${at}.content`,
        issues,
      );
      const out: Rec = { type: 'tool_result', tool_use_id: String(result.toolUseId) };
      if (content.length > 0) out.content = content;
      if (result.status === 'error') out.is_error = true;
      return out as unknown as AnthropicContentBlock;
    }
    case 'reasoningContent': {
      if (options.dropThinking) return null;
      const r = value as Rec;
      if (typeof r.redactedContent === 'string')
        return { type: 'redacted_thinking', data: r.redactedContent };
      const text = isRecord(r.reasoningText) ? r.reasoningText : {};
      if (typeof text.signature !== 'string') {
        issues.push({
          path: at,
          message:
            'reasoning without a signature cannot go to Anthropic (thinking blocks are signed); pass { dropThinking: true } to leave it out',
        });
        return null;
      }
      return { type: 'thinking', thinking: String(text.text), signature: text.signature };
    }
    default:
      cannot(issues, path, `a "${member ?? Object.keys(block)[0]}" block`);
      return null;
  }
}

/** Bedrock Converse messages as Anthropic messages (see the module note); throws for what cannot go. */
export function bedrockToAnthropic(
  messages: readonly BedrockMessage[],
  options: BedrockConvertOptions = {},
): AnthropicMessage[] {
  const issues: MessageIssue[] = [];
  const out: AnthropicMessage[] = [];
  messages.forEach((m, i) => {
    const blocks: AnthropicContentBlock[] = [];
    (m.content as unknown as Rec[]).forEach((b, k) => {
      const path = `messages[${i}].content[${k}]`;
      if (m.role === 'system' && isRecord(b.guardContent)) {
        cannot(issues, `${path}.guardContent`, 'guard content');
        return;
      }
      const converted = blockToAnthropic(b, path, issues, options);
      if (converted === 'cache') {
        const previous = blocks[blocks.length - 1] as Rec | undefined;
        const point = b.cachePoint as Rec;
        if (previous)
          blocks[blocks.length - 1] = {
            ...previous,
            cache_control: point.ttl ? { type: 'ephemeral', ttl: point.ttl } : { type: 'ephemeral' },
          } as unknown as AnthropicContentBlock;
      } else if (converted) blocks.push(converted);
    });
    if (blocks.length === 0 && m.role === 'assistant' && options.dropThinking) return;
    if (m.role === 'system') out.push({ role: 'system', content: blocks as AnthropicTextBlock[] });
    else out.push({ role: m.role, content: blocks });
  });
  notConvertible(issues);
  return out;
}

// ------------------------------------------------------------------------------ Anthropic → Bedrock

/** A document name Bedrock takes: alphanumerics, single whitespace, hyphens, parentheses, brackets. */
export function bedrockDocumentName(name: string | undefined, fallback: string): string {
  const cleaned = (name ?? '')
    .replace(/[^a-zA-Z0-9\s\-()[\]]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200)
    .trim();
  return cleaned.length > 0 ? cleaned : fallback;
}

function imageToBedrock(source: Rec, path: string, issues: MessageIssue[]): BedrockContentBlock | null {
  const format = String(source.media_type ?? '').replace(/^image\//, '');
  if (source.type !== 'base64' || !IMAGE_FORMATS.has(format)) {
    issues.push({
      path: `${path}.source`,
      message: `a ${String(source.type)} ${String(source.media_type ?? '')} image has no Bedrock counterpart (bytes of png, jpeg, gif or webp) and cannot be converted`,
    });
    return null;
  }
  return { image: { format: format as BedrockImage['format'], source: { bytes: String(source.data) } } };
}

function documentToBedrock(
  block: Rec,
  path: string,
  issues: MessageIssue[],
  n: number,
): BedrockContentBlock | null {
  const source = block.source as Rec;
  const name = bedrockDocumentName(
    typeof block.title === 'string' ? block.title : undefined,
    `document ${n}`,
  );
  const extra: Rec = {};
  if (typeof block.context === 'string') extra.context = block.context;
  if (source.type === 'base64' && source.media_type === 'application/pdf')
    return { document: { name, format: 'pdf', source: { bytes: String(source.data) }, ...extra } };
  if (source.type === 'text')
    return { document: { name, format: 'txt', source: { text: String(source.data) }, ...extra } };
  if (source.type === 'content') {
    const content =
      typeof source.content === 'string' ? [{ text: source.content }] : (source.content as Rec[]);
    if (content.every((c) => typeof c.text === 'string'))
      return {
        document: {
          name,
          format: 'txt',
          source: { content: content.map((c) => ({ text: String(c.text) })) },
          ...extra,
        },
      };
  }
  issues.push({
    path: `${path}.source`,
    message: `a ${String(source.type)} document has no Bedrock counterpart and cannot be converted`,
  });
  return null;
}

function resultToBedrock(block: Rec, path: string, issues: MessageIssue[]): BedrockContentBlock {
  const content: BedrockToolResultContent[] = [];
  const raw = block.content;
  if (typeof raw === 'string') {
    if (raw.length > 0) content.push({ text: raw });
  } else if (Array.isArray(raw))
    (raw as Rec[]).forEach((c, k) => {
      const at = `${path}.content[${k}]`;
      if (c.type === 'text') content.push({ text: String(c.text) });
      else if (c.type === 'image') {
        const image = imageToBedrock(c.source as Rec, at, issues);
        if (image) content.push(image as BedrockToolResultContent);
      } else if (c.type === 'document') {
        const doc = documentToBedrock(c, at, issues, k + 1);
        if (doc) content.push(doc as BedrockToolResultContent);
      } else
        issues.push({ path: at, message: `a "${String(c.type)}" result block has no Bedrock counterpart` });
    });
  if (content.length === 0 && block.is_error === true)
    content.push({ text: '[the tool reported an error with no output]' });
  const out: Rec = { toolUseId: String(block.tool_use_id), content };
  if (block.is_error === true) out.status = 'error';
  return { toolResult: out as never };
}

function blockToBedrock(
  block: Rec,
  path: string,
  issues: MessageIssue[],
  options: BedrockConvertOptions,
  n: number,
): BedrockContentBlock | null {
  switch (block.type) {
    case 'text':
      return { text: String(block.text) };
    case 'image':
      return imageToBedrock(block.source as Rec, path, issues);
    case 'document':
      return documentToBedrock(block, path, issues, n);
    case 'tool_use':
      return { toolUse: { toolUseId: String(block.id), name: String(block.name), input: block.input ?? {} } };
    case 'tool_result':
      return resultToBedrock(block, path, issues);
    case 'thinking':
      if (options.dropThinking) return null;
      return {
        reasoningContent: {
          reasoningText: { text: String(block.thinking), signature: String(block.signature) },
        },
      };
    case 'redacted_thinking':
      if (options.dropThinking) return null;
      return { reasoningContent: { redactedContent: String(block.data) } };
    default:
      issues.push({
        path,
        message: `a "${String(block.type)}" block has no Bedrock counterpart and cannot be converted`,
      });
      return null;
  }
}

function cachePointFor(control: unknown): BedrockContentBlock {
  const ttl = isRecord(control) && (control.ttl === '5m' || control.ttl === '1h') ? control.ttl : undefined;
  return { cachePoint: ttl ? { type: 'default', ttl } : { type: 'default' } };
}

/** Anthropic messages as Bedrock Converse messages (see the module note); throws for what cannot go. */
export function anthropicToBedrock(
  messages: readonly AnthropicMessage[],
  options: BedrockConvertOptions = {},
): BedrockMessage[] {
  const issues: MessageIssue[] = [];
  const out: BedrockMessage[] = [];
  let documents = 0;
  messages.forEach((m, i) => {
    const raw =
      typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content as unknown as Rec[]);
    const blocks: BedrockContentBlock[] = [];
    raw.forEach((b, k) => {
      if (b.type === 'document') documents++;
      const converted = blockToBedrock(b, `messages[${i}].content[${k}]`, issues, options, documents);
      if (!converted) return;
      blocks.push(converted);
      if (b.cache_control !== undefined) blocks.push(cachePointFor(b.cache_control));
    });
    if (blocks.length === 0 && m.role === 'assistant' && options.dropThinking) return;
    // Converse's system prompt only exists before the messages: a system message after the
    // conversation started becomes a user message (as it does for Gemini's system instruction).
    const started = m.role === 'system' && out.some((o) => o.role !== 'system');
    if (m.role === 'system' && !started)
      out.push({ role: 'system', content: blocks as BedrockSystemBlock[] });
    else out.push({ role: started ? 'user' : (m.role as 'user' | 'assistant'), content: blocks });
  });
  notConvertible(issues);
  return out;
}
