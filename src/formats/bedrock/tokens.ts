/**
 * Tokens of one Bedrock content block, counted as Claude counts the same content through its own
 * API (Bedrock bills Claude's tokens): text by the tokenizer or estimate the counter uses, a
 * tool call's name and JSON input and a tool result's content with the tool framing, images by
 * their dimensions read from the bytes (Anthropic's `width × height / 750`, through the counter's
 * `image`), PDFs by their pages, reasoning text as text and redacted reasoning by its size. A
 * cache point costs nothing. S3 sources are out of sight: one default image or page.
 */
import { blocksOf, isRecord, memberOf } from './blocks.js';

type Rec = Record<string, unknown>;

/** What the shared counter lends a format to count a block it does not walk itself. */
export interface BlockCounting {
  /** Tokens of a text (exact or estimated, as the counter does). */
  bpe(text: string): number;
  /** Adds tokens that are not text (framing, media), which an estimate factor does not scale. */
  fixed(n: number): void;
  /** Tokens of an image from its base64 bytes (undefined: dimensions unknown). */
  image(base64: string | undefined): number;
  /** Tokens of a PDF from its base64 bytes (undefined: pages unknown). */
  pdf(base64: string | undefined): number;
  /** Tokens of encrypted content of `bytes` base64 characters. */
  encrypted(base64: string): number;
  perToolCall: number;
  perToolResult: number;
}

function bytesOf(source: unknown): string | undefined {
  return isRecord(source) && typeof source.bytes === 'string' ? source.bytes : undefined;
}

function mediaTokens(member: string, value: Rec, c: BlockCounting): number {
  if (member === 'image') {
    c.fixed(c.image(bytesOf(value.source)));
    return 0;
  }
  if (member === 'document') {
    let text = typeof value.name === 'string' ? c.bpe(value.name) : 0;
    if (typeof value.context === 'string') text += c.bpe(value.context);
    const source = isRecord(value.source) ? value.source : {};
    if (typeof source.text === 'string') return text + c.bpe(source.text);
    if (Array.isArray(source.content))
      return text + (source.content as Rec[]).reduce((n, b) => n + c.bpe(String(b.text ?? '')), 0);
    const bytes = bytesOf(source);
    if (value.format === undefined || value.format === 'pdf') c.fixed(c.pdf(bytes));
    else if (bytes !== undefined) return text + c.bpe(atob(bytes));
    else c.fixed(c.pdf(undefined));
    return text;
  }
  // Video and audio: Claude takes neither; counted by their encoded size like other opaque data.
  const bytes = bytesOf(value.source);
  if (bytes !== undefined) c.fixed(c.encrypted(bytes));
  return 0;
}

/** BPE tokens of one block; adds its non-text cost through `c.fixed`. */
export function bedrockBlockTokens(block: Rec, c: BlockCounting): number {
  const member = memberOf(block);
  if (member === undefined) return 0;
  const value = block[member];
  switch (member) {
    case 'text':
      return typeof value === 'string' ? c.bpe(value) : 0;
    case 'cachePoint':
      return 0;
    case 'toolUse': {
      const use = value as Rec;
      c.fixed(c.perToolCall);
      return c.bpe(String(use.name ?? '')) + c.bpe(JSON.stringify(use.input ?? {}));
    }
    case 'toolResult': {
      c.fixed(c.perToolResult);
      const content = isRecord(value) && Array.isArray(value.content) ? (value.content as Rec[]) : [];
      let text = 0;
      for (const inner of content) {
        if (typeof inner.text === 'string') text += c.bpe(inner.text);
        else if ('json' in inner) text += c.bpe(JSON.stringify(inner.json));
        else {
          const kind = Object.keys(inner)[0];
          if (kind && isRecord(inner[kind])) text += mediaTokens(kind, inner[kind] as Rec, c);
        }
      }
      return text;
    }
    case 'reasoningContent': {
      const r = value as Rec;
      if (typeof r.redactedContent === 'string') {
        c.fixed(c.encrypted(r.redactedContent));
        return 0;
      }
      const t = isRecord(r.reasoningText) ? r.reasoningText : {};
      return c.bpe(String(t.text ?? ''));
    }
    case 'guardContent': {
      const g = value as Rec;
      if (isRecord(g.text)) return c.bpe(String(g.text.text ?? ''));
      if (isRecord(g.image)) c.fixed(c.image(bytesOf(g.image.source)));
      return 0;
    }
    case 'image':
    case 'document':
    case 'video':
    case 'audio':
      return isRecord(value) ? mediaTokens(member, value, c) : 0;
    default:
      // citationsContent, searchResult: their strings, as text.
      return c.bpe(JSON.stringify(value));
  }
}

/** BPE tokens of a Bedrock message's blocks (framing and role are the counter's). */
export function bedrockContentTokens(message: unknown, c: BlockCounting): number {
  let n = 0;
  for (const b of blocksOf(message)) n += bedrockBlockTokens(b, c);
  return n;
}
