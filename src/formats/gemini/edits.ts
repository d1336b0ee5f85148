/**
 * Shortening Gemini contents in their own shape: a `functionResponse` cleared to a placeholder
 * (its name and id kept), texts cut in the middle. Thoughts and signed parts are never edited, and
 * neither are the model's parts (a `functionCall` may carry a thought signature), so tool inputs
 * stay as they are. Each function returns a new frozen content, or undefined when there is nothing
 * to do at that place.
 */
import { freezeDeep } from '../../messages/freeze.js';
import type { Message } from '../../messages/types.js';
import type { EditableText, MessageEdits } from '../wire-format.js';
import { geminiParts } from './parts.js';

type Rec = Record<string, unknown>;

function isRecord(value: unknown): value is Rec {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The text of a part that truncation may cut: a text part that is neither a thought nor signed,
 * or a function response's `response.content` string. Undefined for anything else.
 */
function cuttableText(part: unknown): string | undefined {
  if (!isRecord(part)) return undefined;
  if (part.thoughtSignature !== undefined || part.thought === true) return undefined;
  if (typeof part.text === 'string') return part.text;
  const fr = part.functionResponse as Rec | undefined;
  const response = fr?.response as Rec | undefined;
  return typeof response?.content === 'string' ? response.content : undefined;
}

function withParts(message: Message, parts: readonly unknown[]): Message {
  return freezeDeep({ ...message, parts } as unknown as Message);
}

/** How a plan edits Gemini contents (see the module note). */
export const geminiEdits: MessageEdits = {
  owns: (message) => geminiParts(message) !== undefined,
  textParts(message) {
    const out: EditableText[] = [];
    (geminiParts(message) ?? []).forEach((part, block) => {
      const text = cuttableText(part);
      if (text !== undefined && text.length > 0) out.push({ block, inner: -1, slotBlock: block, text });
    });
    return out;
  },
  truncated(message, block, _inner, cut) {
    const parts = geminiParts(message);
    const part = parts?.[block] as Rec | undefined;
    const text = cuttableText(part);
    if (!parts || !part || text === undefined) return undefined;
    const fr = part.functionResponse as Rec | undefined;
    const next = fr
      ? { ...part, functionResponse: { ...fr, response: { ...(fr.response as object), content: cut(text) } } }
      : { ...part, text: cut(text) };
    const out = parts.slice();
    out[block] = next;
    return withParts(message, out);
  },
  // The model's parts are never edited (see the module note).
  inputsCleared: (message) => message,
};

/** The content with the `functionResponse` at `block` answering with `text`; name and id stay. */
export function geminiClearedResult(message: Message, block: number, text: string): Message | undefined {
  const parts = geminiParts(message);
  const old = parts?.[block] as Rec | undefined;
  if (!parts || !old || !isRecord(old.functionResponse)) return undefined;
  const fr = old.functionResponse;
  const cleared: Rec = { name: fr.name, response: { content: text } };
  if (fr.id !== undefined) cleared.id = fr.id;
  const out = parts.slice();
  out[block] = { ...old, functionResponse: cleared };
  return withParts(message, out);
}

/** A `functionResponse`'s share of its content: the length of its JSON beside the whole content's parts. */
export function geminiResultSize(
  message: Message,
  block: number,
): { part: number; whole: number } | undefined {
  const parts = geminiParts(message);
  if (!parts) return undefined;
  const size = (part: unknown) => JSON.stringify(part ?? null)?.length ?? 0;
  return { part: size(parts[block]), whole: parts.reduce((n: number, p) => n + size(p), 0) };
}
