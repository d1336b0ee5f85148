/**
 * How a Gemini view shows a stored message: a plain text message (one that fits every format)
 * as a Content of text parts, and empty text parts (which generateContent refuses) left out.
 */

import { freezeDeep } from '../../messages/freeze.js';
import type { Message } from '../../messages/types.js';

type Loose = Record<string, unknown>;

/** The texts of a plain message: its string content, text parts and refusal. */
export function plainTexts(message: Loose): string[] {
  const content = message.content;
  const texts =
    typeof content === 'string'
      ? [content]
      : Array.isArray(content)
        ? content.map((p) => String((p as Loose).text ?? ''))
        : [];
  if (typeof message.refusal === 'string') texts.push(message.refusal);
  return texts;
}

function asGemini(message: Loose): Message | undefined {
  // generateContent refuses empty text parts and contents without parts (Content.parts is
  // required: https://cloud.google.com/vertex-ai/generative-ai/docs/reference/java/1.2.0/com.google.cloud.vertexai.api.ContentOrBuilder).
  const parts = plainTexts(message)
    .filter((text) => text.length > 0)
    .map((text) => ({ text }));
  if (parts.length === 0) return undefined;
  const role = message.role === 'assistant' ? 'model' : String(message.role);
  return freezeDeep({ role, parts }) as unknown as Message;
}

function isEmptyTextPart(part: unknown): boolean {
  const p = part as Loose;
  return typeof p === 'object' && p !== null && p.text === '' && p.thoughtSignature === undefined;
}

function hasEmptyText(content: Loose): boolean {
  return Array.isArray(content.parts) && content.parts.some(isEmptyTextPart);
}

function withoutEmptyText(content: Loose): Message | undefined {
  const parts = (content.parts as unknown[]).filter((p) => !isEmptyTextPart(p));
  return parts.length === 0 ? undefined : (freezeDeep({ ...content, parts }) as unknown as Message);
}

/** The message a Gemini view shows for a stored one (see `WireFormat.shownMessage`). */
export function shownGemini(message: Message, native: boolean): Message | undefined {
  const loose = message as unknown as Loose;
  if (native) return hasEmptyText(loose) ? withoutEmptyText(loose) : message;
  return asGemini(loose);
}
