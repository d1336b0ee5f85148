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
 * What truncation may cut of a function response: its `content` string, or the string it holds
 * alone under another key (`output`, as Gemini's reference names it), cut in place (`key`); else
 * the response as JSON text, which a cut replaces with `{ content: <the JSON cut> }` (a structured
 * result, a listing of records, has no one long text to cut).
 */
function responseText(response: unknown): { key: string | undefined; text: string } | undefined {
  if (!isRecord(response)) return undefined;
  if (typeof response.content === 'string') return { key: 'content', text: response.content };
  const keys = Object.keys(response);
  const only = keys.length === 1 ? response[keys[0]!] : undefined;
  if (typeof only === 'string') return { key: keys[0], text: only };
  let text: string | undefined;
  try {
    text = JSON.stringify(response);
  } catch {
    return undefined;
  }
  return text === undefined ? undefined : { key: undefined, text };
}

/**
 * The text of a part that truncation may cut: a text part that is neither a thought nor signed,
 * or a function response's text (see `responseText`). Undefined for anything else.
 */
function cuttableText(part: unknown): string | undefined {
  if (!isRecord(part)) return undefined;
  if (part.thoughtSignature !== undefined || part.thought === true) return undefined;
  if (typeof part.text === 'string') return part.text;
  const fr = part.functionResponse as Rec | undefined;
  return responseText(fr?.response)?.text;
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
    const key = fr ? responseText(fr.response)?.key : undefined;
    const response =
      key === undefined ? { content: cut(text) } : { ...(fr?.response as Rec), [key]: cut(text) };
    const next = fr ? { ...part, functionResponse: { ...fr, response } } : { ...part, text: cut(text) };
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
