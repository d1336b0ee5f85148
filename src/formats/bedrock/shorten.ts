/**
 * Shortening Bedrock messages in their own shape: a tool result cleared to a placeholder (its
 * `toolUseId` and `status` kept), texts cut in the middle, tool inputs emptied. Reasoning is never
 * edited, and an assistant message holding reasoning keeps its text as it is (the reasoning's
 * signature covers the turn it was given in). Each function returns a new frozen message, or
 * undefined when there is nothing to do at that place.
 */
import { freezeDeep } from '../../messages/freeze.js';
import type { Message } from '../../messages/types.js';
import { blocksOf, isRecord, memberOf } from './blocks.js';

type Rec = Record<string, unknown>;

/** A text truncation may cut: block `block` of the message, and `inner` inside a tool result (-1 for none). */
export interface BedrockTextPart {
  block: number;
  inner: number;
  text: string;
}

function holdsReasoning(message: Message): boolean {
  return blocksOf(message).some((b) => memberOf(b) === 'reasoningContent');
}

function withBlocks(message: Message, blocks: readonly Rec[]): Message {
  return freezeDeep({ role: message.role, content: blocks }) as unknown as Message;
}

/** The texts of a message truncation may cut: text blocks and the text inside tool results. */
export function bedrockTextParts(message: Message): BedrockTextPart[] {
  if (message.role === 'assistant' && holdsReasoning(message)) return [];
  const parts: BedrockTextPart[] = [];
  blocksOf(message).forEach((b, block) => {
    const member = memberOf(b);
    if (member === 'text' && typeof b.text === 'string' && b.text.length > 0)
      parts.push({ block, inner: -1, text: b.text });
    else if (member === 'toolResult' && isRecord(b.toolResult) && Array.isArray(b.toolResult.content))
      (b.toolResult.content as Rec[]).forEach((c, inner) => {
        const text = resultText(c);
        if (text !== undefined && text.length > 0) parts.push({ block, inner, text });
      });
  });
  return parts;
}

/**
 * The text of a tool result's content block that truncation may cut: a `text` block's, or a `json`
 * block's document as JSON text (a cut makes it a `text` block of that text, cut: a listing of
 * records has no one long text to cut). Undefined for anything else (images, documents).
 */
function resultText(c: Rec): string | undefined {
  if (typeof c.text === 'string') return c.text;
  if (!('json' in c)) return undefined;
  try {
    return JSON.stringify(c.json);
  } catch {
    return undefined;
  }
}

/** The message with the text at (`block`, `inner`) replaced by `cut(text)`; undefined when there is none. */
export function bedrockTruncated(
  message: Message,
  block: number,
  inner: number,
  cut: (text: string) => string,
): Message | undefined {
  const blocks = blocksOf(message);
  const b = blocks[block];
  if (!b) return undefined;
  let next: Rec;
  if (inner < 0) {
    if (memberOf(b) !== 'text' || typeof b.text !== 'string') return undefined;
    next = { text: cut(b.text) };
  } else {
    const result = b.toolResult;
    if (!isRecord(result) || !Array.isArray(result.content)) return undefined;
    const c = result.content[inner] as Rec | undefined;
    const text = c && resultText(c);
    if (text === undefined) return undefined;
    const content = (result.content as Rec[]).slice();
    content[inner] = { text: cut(text) };
    next = { toolResult: { ...result, content } };
  }
  const out = blocks.slice();
  out[block] = next;
  return withBlocks(message, out);
}

/**
 * The message with the tool result at `block` cleared to `text`: its content becomes that one text
 * block; `toolUseId` and `status` stay, so the call is still answered as it was.
 */
export function bedrockClearedResult(message: Message, block: number, text: string): Message | undefined {
  const blocks = blocksOf(message);
  const result = blocks[block]?.toolResult;
  if (!isRecord(result)) return undefined;
  const cleared: Rec = { toolUseId: result.toolUseId, content: [{ text }] };
  if (result.status !== undefined) cleared.status = result.status;
  const out = blocks.slice();
  out[block] = { toolResult: cleared };
  return withBlocks(message, out);
}

/** The assistant message with the inputs of its `indices`-th tool calls emptied (`{}`). */
export function bedrockInputsCleared(message: Message, indices: ReadonlySet<number>): Message {
  if (message.role !== 'assistant') return message;
  let n = -1;
  let changed = false;
  const blocks = blocksOf(message).map((b) => {
    if (!isRecord(b.toolUse)) return b;
    n++;
    if (!indices.has(n)) return b;
    changed = true;
    return { toolUse: { ...b.toolUse, input: {} } };
  });
  return changed ? withBlocks(message, blocks) : message;
}

/**
 * Whether `message` is in Converse's shape: a content array whose blocks are keyed by their
 * member, with no `type` (what the shared shortening asks before editing blocks in place).
 */
export function isConverseMessage(message: Message): boolean {
  const content = (message as { content?: unknown }).content;
  return (
    Array.isArray(content) &&
    content.length > 0 &&
    content.every((b) => isRecord(b) && !('type' in b) && memberOf(b) !== undefined)
  );
}
