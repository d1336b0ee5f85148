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
    return c.bpe(String(response.name ?? '')) + c.fields(response.response) + c.fields(response.parts);
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
