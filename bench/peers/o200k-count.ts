/**
 * The measure of fit in the peers benchmark: a request's exact o200k_base count, computed here with
 * gpt-tokenizer directly and OpenAI's per-message framing (3 a message, the role, 3 a tool call, 3
 * to prime the reply), for either format, so that no library under test grades its own count.
 * Images cost what OpenAI bills for their size (read from the PNG header; 765 when unknown).
 */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

type Loose = Record<string, unknown>;

const PER_MESSAGE = 3;
const PER_TOOL_CALL = 3;
const PER_REQUEST = 3;
const UNKNOWN_IMAGE = 765;

function isObject(value: unknown): value is Loose {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Width and height from a base64 PNG's IHDR chunk (bytes 16–23), without decoding the rest. */
function pngSize(base64: string): { w: number; h: number } | undefined {
  const head = Buffer.from(base64.slice(0, 44), 'base64');
  if (head.length < 24 || head.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return { w: head.readUInt32BE(16), h: head.readUInt32BE(20) };
}

/** OpenAI's high-detail tiling: fit in 2048², shortest side to 768, 170 a 512-px tile plus 85. */
function imageTokens(base64: string | undefined, detail: unknown): number {
  if (detail === 'low') return 85;
  const size = base64 === undefined ? undefined : pngSize(base64);
  if (size === undefined) return UNKNOWN_IMAGE;
  let { w, h } = size;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shrink = Math.min(1, 768 / Math.min(w, h));
  w *= shrink;
  h *= shrink;
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

function dataUrlBase64(url: string): string | undefined {
  const comma = url.indexOf(',');
  return url.startsWith('data:') && comma > 0 ? url.slice(comma + 1) : undefined;
}

function partTokens(part: Loose): number {
  switch (part.type) {
    case 'text':
      return typeof part.text === 'string' ? countTokens(part.text) : 0;
    case 'refusal':
      return typeof part.refusal === 'string' ? countTokens(part.refusal) : 0;
    case 'image_url': {
      const image = isObject(part.image_url) ? part.image_url : {};
      const url = typeof image.url === 'string' ? image.url : '';
      return imageTokens(dataUrlBase64(url), image.detail);
    }
    case 'image': {
      const source = isObject(part.source) ? part.source : {};
      return imageTokens(typeof source.data === 'string' ? source.data : undefined, undefined);
    }
    case 'tool_use':
      return PER_TOOL_CALL + countTokens(String(part.name)) + countTokens(JSON.stringify(part.input ?? {}));
    case 'tool_result':
      return contentTokens(part.content);
    case 'thinking':
      return typeof part.thinking === 'string' ? countTokens(part.thinking) : 0;
    case 'redacted_thinking':
      return typeof part.data === 'string' ? countTokens(part.data) : 0;
    default:
      // Documents, audio, files: what their JSON says (rare in these workloads).
      return countTokens(JSON.stringify(part));
  }
}

function contentTokens(content: unknown): number {
  if (typeof content === 'string') return countTokens(content);
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const part of content) if (isObject(part)) n += partTokens(part);
  return n;
}

/** One message's tokens, framing included. */
export function messageTokens(message: unknown): number {
  if (!isObject(message)) return 0;
  let n = PER_MESSAGE + countTokens(String(message.role)) + contentTokens(message.content);
  if (typeof message.name === 'string') n += 1 + countTokens(message.name);
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      const fn = isObject(call) && isObject(call.function) ? call.function : {};
      n += PER_TOOL_CALL + countTokens(String(fn.name ?? '')) + countTokens(String(fn.arguments ?? ''));
    }
  }
  return n;
}

/**
 * Counts requests, remembering each message by its JSON so that the many views of one replay,
 * which share most of their messages, are counted in time proportional to what is new.
 */
export class RequestCounter {
  private readonly memo = new Map<string, number>();

  count(messages: readonly unknown[]): number {
    let n = PER_REQUEST;
    for (const message of messages) {
      const key = JSON.stringify(message);
      let tokens = this.memo.get(key);
      if (tokens === undefined) {
        tokens = messageTokens(message);
        this.memo.set(key, tokens);
      }
      n += tokens;
    }
    return n;
  }

  /** One message's tokens, given its JSON (`key`), memoized like `count`. */
  countOne(message: unknown, key: string): number {
    let tokens = this.memo.get(key);
    if (tokens === undefined) {
      tokens = messageTokens(message);
      this.memo.set(key, tokens);
    }
    return tokens;
  }

  /** Drops what is remembered, between workloads, so memory figures stay about the peers. */
  clear(): void {
    this.memo.clear();
  }
}
