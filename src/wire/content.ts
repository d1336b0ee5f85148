/**
 * Small readers over a message in either format, so the rest of contextkit can ask "what text is
 * in this?" or "which calls does it answer?" without branching on the provider each time.
 *
 * They read defensively (a field of the wrong type is treated as absent) because the request
 * validator runs them over messages that may have failed shape validation.
 */

import { DETECTION_ORDER } from '../formats/registry.js';
import type { MessageReader } from '../formats/wire-format.js';
import type { Message } from '../messages/types.js';

/** The formats' readers for shapes only they have, in detection order (gathered on first use). */
let readers: readonly MessageReader[] | undefined;

/**
 * The reader of the format whose own shape `message` has (Gemini's `parts`, a Responses item
 * without a role), or undefined for a message the shared readers below know (string content,
 * typed parts and blocks). The callers of these readers hold no format: the shape tells.
 */
export function ownReader(message: Message): MessageReader | undefined {
  readers ??= DETECTION_ORDER.flatMap((f) => (f.reader ? [f.reader] : []));
  for (const reader of readers) if (reader.owns(message)) return reader;
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function blocksOf(message: Message): readonly unknown[] | undefined {
  const content: unknown = message.content;
  return Array.isArray(content) ? content : undefined;
}

function pushText(out: string[], value: unknown): void {
  if (typeof value === 'string' && value.length > 0) out.push(value);
}

/** Text of an Anthropic tool_result's content, or of a document's text source. */
function pushNestedText(out: string[], content: unknown): void {
  if (typeof content === 'string') {
    pushText(out, content);
    return;
  }
  if (!Array.isArray(content)) return;
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (block.type === 'text') pushText(out, block.text);
    else if (block.type === 'document') pushDocumentText(out, block);
  }
}

function pushDocumentText(out: string[], block: Record<string, unknown>): void {
  const source = block.source;
  if (!isRecord(source)) return;
  if (source.type === 'text') pushText(out, source.data);
  else if (source.type === 'content') pushNestedText(out, source.content);
}

/**
 * All the readable text a message carries, joined by newlines: plain content, text parts and
 * blocks, refusals, tool results (OpenAI `tool` messages and Anthropic `tool_result` blocks) and
 * text documents. Summaries, fact extraction and search read conversations through this, so it
 * leaves out what is not conversation text: tool-call arguments, images, base64 data and thinking
 * blocks (the model's private reasoning, never shown to the user).
 */
export function messageText(message: Message): string {
  const own = ownReader(message)?.text;
  if (own) return own(message);
  const content: unknown = message.content;
  if (typeof content === 'string') return content;
  const out: string[] = [];
  if (Array.isArray(content)) {
    for (const block of content) {
      if (!isRecord(block)) continue;
      switch (block.type) {
        case 'text':
        case 'input_text':
        case 'output_text':
          pushText(out, block.text);
          break;
        case 'refusal':
          pushText(out, block.refusal);
          break;
        case 'tool_result':
          pushNestedText(out, block.content);
          break;
        case 'document':
          pushDocumentText(out, block);
          break;
      }
    }
  }
  if (message.role === 'assistant' && 'refusal' in message) pushText(out, message.refusal);
  // A Responses API output item (function, custom tool, local shell): its text output.
  if (message.role === undefined && typeof message.output === 'string') pushText(out, message.output);
  return out.join('\n');
}

/**
 * The role of a message, or for a Responses API item without one (a call, an output, reasoning)
 * its item type, so listings and breakdowns can name every entry.
 */
export function roleOf(message: Message): string {
  return message.role ?? ownReader(message)?.kind?.(message) ?? 'item';
}

/** Whether the message asks for tool calls, in either format: the start of a tool exchange. */
export function hasToolCalls(message: Message): boolean {
  const own = ownReader(message)?.hasCalls;
  if (own) return own(message);
  if (message.role !== 'assistant') return false;
  if ('tool_calls' in message && Array.isArray(message.tool_calls) && message.tool_calls.length > 0)
    return true;
  const blocks = blocksOf(message);
  if (!blocks) return false;
  for (const block of blocks) if (isRecord(block) && block.type === 'tool_use') return true;
  return false;
}

/**
 * Ids of the tool calls an assistant message makes, in order (OpenAI `tool_calls[].id`, Anthropic
 * `tool_use` ids). Duplicates are kept: real logs reuse ids, and pairing is positional.
 */
export function toolCallIds(message: Message): string[] {
  const own = ownReader(message)?.callIds;
  if (own) return own(message);
  const ids: string[] = [];
  if (message.role !== 'assistant') return ids;
  if ('tool_calls' in message && Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls as unknown[]) {
      if (isRecord(call) && typeof call.id === 'string') ids.push(call.id);
    }
  }
  const blocks = blocksOf(message);
  if (blocks) {
    for (const block of blocks) {
      if (isRecord(block) && block.type === 'tool_use' && typeof block.id === 'string') ids.push(block.id);
    }
  }
  return ids;
}

/**
 * Ids of the tool calls a message answers, in order: an OpenAI `tool` message's `tool_call_id`,
 * or the `tool_use_id` of each Anthropic `tool_result` block.
 */
export function toolResultIds(message: Message): string[] {
  const own = ownReader(message)?.resultIds;
  if (own) return own(message);
  if (message.role === 'tool') {
    const id: unknown = message.tool_call_id;
    return typeof id === 'string' ? [id] : [];
  }
  const ids: string[] = [];
  if (message.role !== 'user') return ids;
  const blocks = blocksOf(message);
  if (!blocks) return ids;
  for (const block of blocks) {
    if (isRecord(block) && block.type === 'tool_result' && typeof block.tool_use_id === 'string') {
      ids.push(block.tool_use_id);
    }
  }
  return ids;
}

/**
 * Whether the message carries tool results: an OpenAI `tool` message, or an Anthropic user
 * message with at least one `tool_result` block. Such a message belongs to the exchange before it.
 */
export function isToolResultMessage(message: Message): boolean {
  const own = ownReader(message)?.isResult;
  if (own) return own(message);
  if (message.role === 'tool') return true;
  if (message.role !== 'user') return false;
  const blocks = blocksOf(message);
  if (!blocks) return false;
  for (const block of blocks) if (isRecord(block) && block.type === 'tool_result') return true;
  return false;
}

/**
 * Whether a user message says something of its own besides tool results: non-empty text, an
 * image, a document, audio or a file. An Anthropic user message that only returns tool results is
 * not a user turn, so "the latest user message" must skip it. False for every other role.
 */
export function hasNonToolResultContent(message: Message): boolean {
  if (message.role !== 'user') return false;
  const own = ownReader(message)?.hasUserContent;
  if (own) return own(message);
  const content: unknown = message.content;
  if (typeof content === 'string') return content.length > 0;
  if (!Array.isArray(content)) return false;
  for (const block of content) {
    if (!isRecord(block) || block.type === 'tool_result') continue;
    if (block.type === 'text') {
      if (typeof block.text === 'string' && block.text.length > 0) return true;
      continue;
    }
    return true;
  }
  return false;
}
