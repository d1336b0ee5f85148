/**
 * Which provider format a message or conversation is in. A conversation is stored and returned
 * in one format, so the first message that betrays a format fixes it and a later message that
 * betrays the other one is refused, naming the field that gave it away.
 */

import { FormatMismatchError } from '../errors.js';
import { DETECTION_ORDER, FORMATS, WIRE_FORMATS } from '../formats/registry.js';
import type { MessageFormat } from '../messages/types.js';

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

/** The formats that claim content block types, in detection order. */
const BLOCK_CLAIMERS = DETECTION_ORDER.filter((f) => f.blockEvidence !== undefined);
/** The format a block type no format knows makes a new conversation (see `FormatEvidence.weak`). */
const UNKNOWN_CLAIMER = WIRE_FORMATS.find((f) => f.claimsUnknownBlocks === true);

/** Display name of a format in messages. */
export function formatName(format: MessageFormat): string {
  return (FORMATS as Record<string, { label: string } | undefined>)[format]?.label ?? String(format);
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
  // Message-level fields first (Gemini's `parts`, Responses items, OpenAI's roles and fields).
  for (const format of DETECTION_ORDER) {
    const evidence = format.messageEvidence(message);
    if (evidence) return { format: format.name as MessageFormat, ...evidence };
  }
  const content = message.content;
  if (!Array.isArray(content)) return undefined;
  let weak: FormatEvidence | undefined;
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i];
    if (!isRecord(block) || typeof block.type !== 'string') continue;
    for (const format of BLOCK_CLAIMERS) {
      const found = format.blockEvidence!(block.type);
      if (found) return { format: format.name as MessageFormat, field: `content[${i}].type`, found };
    }
    if (!weak && UNKNOWN_CLAIMER && block.type !== 'text') {
      const found = `an unknown "${block.type}" content block`;
      weak = {
        format: UNKNOWN_CLAIMER.name as MessageFormat,
        field: `content[${i}].type`,
        found,
        weak: true,
      };
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
  // A format may take another's evidence (a developer message fits both OpenAI APIs): the
  // conversation stays in it, or, when every earlier message fits it, moves to it.
  if (FORMATS[current].accepts?.(evidence, false)) return current;
  const joining = FORMATS[evidence.format];
  if (joining.accepts && earlier) {
    const fits = earlier().every((m) => {
      const e = formatEvidence(m);
      return e === undefined || joining.accepts!(e, true);
    });
    if (fits) return evidence.format;
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
