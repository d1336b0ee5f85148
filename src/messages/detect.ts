/**
 * Which provider format a message or conversation is in. A conversation is stored and returned
 * in one format, so the first message that betrays a format fixes it and a later message that
 * betrays the other one is refused, naming the field that gave it away.
 */

import { FormatMismatchError } from '../errors.js';
import { KNOWN_ANTHROPIC_BLOCKS } from '../formats/anthropic/blocks.js';
import { RESPONSES_ITEM_TYPES, RESPONSES_PART_TYPES } from '../formats/openai-responses/items.js';
import type { MessageFormat } from './types.js';

/** The field that shows a message's format, relative to the message (`content[0].type`). */
export interface FormatEvidence {
  format: MessageFormat;
  /** Path inside the message, e.g. `role`, `tool_calls`, `content[2].type`. */
  field: string;
  /** What was found there, for error messages: `role "tool"`, `a "tool_use" block`. */
  found: string;
  /**
   * Only a block type no format knows (one a future Anthropic API adds): it makes a new
   * conversation Anthropic, but never contradicts a conversation already in a format.
   */
  weak?: boolean;
}

const OPENAI_ROLES = new Set(['tool', 'developer']);
const OPENAI_PARTS = new Set(['image_url', 'input_audio', 'file', 'refusal']);
/** Every documented Anthropic block but `text` (which both formats have). */
const ANTHROPIC_BLOCKS = new Set([...KNOWN_ANTHROPIC_BLOCKS].filter((t) => t !== 'text'));

/** Part types both OpenAI APIs have: they tell Chat Completions from Anthropic only. */
const SHARED_PARTS = new Set(['refusal', 'input_audio']);

/** Display name of a format in messages. */
export function formatName(format: MessageFormat): string {
  if (format === 'openai-responses') return 'OpenAI Responses';
  if (format === 'gemini') return 'Gemini';
  return format === 'openai' ? 'OpenAI' : 'Anthropic';
}

/**
 * A conversation's format as a person reads it: the provider's format, or, for plain text that
 * fits every format (no format detected, `'either'`), `plain text (either format)`.
 */
export function conversationFormatLabel(format: MessageFormat | 'either' | undefined): string {
  return format === undefined || format === 'either' ? 'plain text (either format)' : formatName(format);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The first field of a message that only one provider's format has, or undefined when the message
 * fits either (plain string content, text parts only) or is not a message at all. Used both to
 * detect a conversation's format and to point at the culprit when formats are mixed.
 */
export function formatEvidence(message: unknown): FormatEvidence | undefined {
  if (!isRecord(message)) return undefined;
  // Gemini contents: `parts` instead of `content`, and the model's role.
  if (Array.isArray(message.parts)) return { format: 'gemini', field: 'parts', found: 'a "parts" array' };
  if (message.role === 'model') return { format: 'gemini', field: 'role', found: 'role "model"' };
  // Responses API items: a `type` (function_call, reasoning, message, …) or Responses parts.
  if (typeof message.type === 'string' && RESPONSES_ITEM_TYPES.has(message.type)) {
    return { format: 'openai-responses', field: 'type', found: `a "${message.type}" item` };
  }
  if (Array.isArray(message.content)) {
    const k = message.content.findIndex(
      (p: unknown) =>
        isRecord(p) && !SHARED_PARTS.has(String(p.type)) && RESPONSES_PART_TYPES.has(String(p.type)),
    );
    if (k >= 0) {
      const type = (message.content[k] as Record<string, unknown>).type;
      return { format: 'openai-responses', field: `content[${k}].type`, found: `an "${String(type)}" part` };
    }
  }
  const role = message.role;
  if (typeof role === 'string' && OPENAI_ROLES.has(role)) {
    return { format: 'openai', field: 'role', found: `role "${role}"` };
  }
  if ('tool_calls' in message && message.tool_calls !== undefined) {
    return { format: 'openai', field: 'tool_calls', found: 'a "tool_calls" field' };
  }
  if ('tool_call_id' in message && message.tool_call_id !== undefined) {
    return { format: 'openai', field: 'tool_call_id', found: 'a "tool_call_id" field' };
  }
  const content = message.content;
  if (!Array.isArray(content)) return undefined;
  let weak: FormatEvidence | undefined;
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i];
    if (!isRecord(block) || typeof block.type !== 'string') continue;
    if (OPENAI_PARTS.has(block.type)) {
      return { format: 'openai', field: `content[${i}].type`, found: `a "${block.type}" content part` };
    }
    if (ANTHROPIC_BLOCKS.has(block.type)) {
      return { format: 'anthropic', field: `content[${i}].type`, found: `a "${block.type}" content block` };
    }
    if (!weak && block.type !== 'text') {
      const found = `an unknown "${block.type}" content block`;
      weak = { format: 'anthropic', field: `content[${i}].type`, found, weak: true };
    }
  }
  return weak;
}

/**
 * The format a single message is in, or `'either'` when it fits both (a message with string
 * content or only text parts can be sent to either provider as it is).
 */
export function detectMessageFormat(message: unknown): MessageFormat | 'either' {
  return formatEvidence(message)?.format ?? 'either';
}

/**
 * The format a conversation is in once `message` (at `index`) joins it, given the format so far
 * (undefined while every message fitted either). Throws `FormatMismatchError` naming the field of
 * `messages[index]` that belongs to the other format, so nothing mixed is ever stored.
 */
export function resolveConversationFormat(
  current: MessageFormat | undefined,
  message: unknown,
  index: number,
  earlier?: () => readonly unknown[],
): MessageFormat | undefined {
  const evidence = formatEvidence(message);
  if (!evidence || (evidence.weak && current !== undefined)) return current;
  if (current === undefined || current === evidence.format) return evidence.format;
  // A developer message fits both OpenAI APIs: a conversation it alone made "openai" is a
  // Responses one once a Responses item comes (and stays one when a developer message follows).
  if (current === 'openai-responses' && evidence.format === 'openai' && evidence.field === 'role')
    return current;
  if (current === 'openai' && evidence.format === 'openai-responses' && earlier) {
    const onlyDeveloper = earlier().every((m) => {
      const e = formatEvidence(m);
      return (
        e === undefined || (e.format === 'openai' && e.field === 'role' && e.found === 'role "developer"')
      );
    });
    if (onlyDeveloper) return evidence.format;
  }
  throw new FormatMismatchError(
    `messages[${index}].${evidence.field}`,
    `${formatName(evidence.format)} (${evidence.found})`,
    formatName(current),
  );
}

/**
 * The format of a whole conversation, or undefined when every message fits either. Throws
 * `FormatMismatchError` at the first message that contradicts the ones before it.
 */
export function detectConversationFormat(messages: readonly unknown[]): MessageFormat | undefined {
  let format: MessageFormat | undefined;
  for (let i = 0; i < messages.length; i++)
    format = resolveConversationFormat(format, messages[i], i, () => messages.slice(0, i));
  return format;
}
