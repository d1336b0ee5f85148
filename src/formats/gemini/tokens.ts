/**
 * Tokens of a Gemini content's parts, for the shared counter: text and code tokenized, calls and
 * responses framed like tool calls and results, media by `geminiMediaTokens`, a thought signature
 * scaled by its size like encrypted reasoning.
 */
import type { BlockCounting } from '../wire-format.js';
import { geminiMediaTokens } from './media.js';

type Rec = Record<string, unknown>;

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/** Nesting past which a value is not walked further (stored values are bounded well below it). */
const MAX_DEPTH = 256;

/**
 * Tokens of a JSON value as its text reads: each string by its own tokens (not those of its
 * escapes) and one for its quotes, numbers as written, one for each key's punctuation and each
 * object or array. Within 0.2% of the o200k count of the JSON text on listings of records and
 * configs, and a string's own count (plus a few) for `{ content: text }`, where the JSON text would
 * count the escapes of its quotes and line breaks too (12% more on a source file).
 */
function jsonValueTokens(value: unknown, c: BlockCounting, depth = 0): number {
  if (typeof value === 'string') return c.bpe(value) + 1;
  if (typeof value === 'number') return c.bpe(String(value));
  if (typeof value === 'boolean' || value === null) return 1;
  if (typeof value !== 'object' || depth > MAX_DEPTH) return 0;
  let n = 1;
  if (Array.isArray(value)) {
    for (const item of value) n += jsonValueTokens(item, c, depth + 1);
    return n;
  }
  for (const [key, item] of Object.entries(value)) n += c.bpe(key) + 1 + jsonValueTokens(item, c, depth + 1);
  return n;
}

/** BPE tokens of one part; adds its non-text cost through `c.fixed`. */
function partTokens(part: Rec, c: BlockCounting): number {
  if (typeof part.thoughtSignature === 'string') c.fixed(c.encrypted(part.thoughtSignature));
  if (typeof part.text === 'string') return c.bpe(part.text);
  const media = (part.inlineData ?? part.fileData) as Rec | undefined;
  if (typeof media === 'object' && media !== null) {
    const mimeType = typeof media.mimeType === 'string' ? media.mimeType : '';
    const data = typeof media.data === 'string' ? media.data : undefined;
    c.fixed(geminiMediaTokens(c.provider, mimeType, data, part.videoMetadata));
    return 0;
  }
  const call = part.functionCall as Rec | undefined;
  if (typeof call === 'object' && call !== null) {
    c.fixed(c.perToolCall);
    return c.bpe(String(call.name ?? '')) + c.bpe(jsonText(call.args ?? {}));
  }
  const response = part.functionResponse as Rec | undefined;
  if (typeof response === 'object' && response !== null) {
    c.fixed(c.perToolResult);
    // The response as its JSON reads: its keys, numbers and punctuation count too (its strings
    // alone were a third of a listing of records).
    return (
      c.bpe(String(response.name ?? '')) +
      jsonValueTokens(response.response ?? {}, c) +
      c.fields(response.parts)
    );
  }
  return c.fields(part.executableCode) + c.fields(part.codeExecutionResult);
}

/** BPE tokens of a content's `parts` (0 for a message without them). */
export function geminiPartsTokens(message: Rec, c: BlockCounting): number {
  const parts = message.parts;
  if (!Array.isArray(parts)) return 0;
  let text = 0;
  for (const part of parts as unknown[]) {
    if (typeof part === 'object' && part !== null) text += partTokens(part as Rec, c);
  }
  return text;
}
