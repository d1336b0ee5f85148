import { CONVERSATION_START_TEXT, OMITTED_START_TEXT, TURN_BREAK_TEXT } from '../compaction/placeholders.js';
import { midConversationMessage } from '../compaction/summary-message.js';
import type { CompactionReceipt } from '../events.js';
import { wireFormat } from '../formats/registry.js';
import { freezeDeep } from '../messages/freeze.js';
import type { Message, MessageFormat } from '../messages/types.js';

/** The start notices of each format, one object each, so views stay byte-stable. */
const NOTICES = new Map<string, { omitted: Message; start: Message; turnBreak: Message | undefined }>();

function noticesOf(format: MessageFormat): {
  omitted: Message;
  start: Message;
  turnBreak: Message | undefined;
} {
  let notices = NOTICES.get(format);
  if (notices === undefined) {
    const wire = wireFormat(format);
    notices = {
      omitted: freezeDeep(wire.textMessage('user', OMITTED_START_TEXT)),
      start: freezeDeep(wire.textMessage('user', CONVERSATION_START_TEXT)),
      turnBreak: wire.turnBreaks && freezeDeep(wire.turnBreaks.message(TURN_BREAK_TEXT) as Message),
    };
    NOTICES.set(format, notices);
  }
  return notices;
}

/**
 * A view in a format whose requests open with a user turn (`WireFormat.userTurnFirst`: Anthropic,
 * Gemini): where it opens with the model's turn, the notice to put first (saying that earlier
 * messages were left out, when they were) and where it goes.
 */
export function startNotice(
  messages: readonly Message[],
  /** Whether older messages were left out of the view: asked only where a notice is due. */
  omitted: () => boolean,
  format: MessageFormat,
): { at: number; message: Message } | undefined {
  if (!wireFormat(format).userTurnFirst) return undefined;
  const first = messages.findIndex((m) => m.role !== 'system');
  if (first < 0 || messages[first]!.role === 'user') return undefined;
  const notices = noticesOf(format);
  return { at: first, message: omitted() ? notices.omitted : notices.start };
}

/**
 * Where a view in a format whose turns hold limited media (`WireFormat.turnBreaks`: Converse)
 * needs a turn of the model's between two user messages, and the message to put there.
 */
export function turnBreaks(
  messages: readonly Message[],
  format: MessageFormat,
): { at: readonly number[]; message: Message } | undefined {
  const at = wireFormat(format).turnBreaks?.at(messages);
  if (at === undefined || at.length === 0) return undefined;
  return { at, message: noticesOf(format).turnBreak! };
}

/** The note that tells the model what the last compaction took out of its view. */
export function compactionNote(receipt: CompactionReceipt, format: MessageFormat): Message {
  const parts: string[] = [];
  if (receipt.summarized.length > 0)
    parts.push(`${receipt.summarized.length} older messages were summarized`);
  if (receipt.dropped.length > 0) parts.push(`${receipt.dropped.length} older messages were left out`);
  if (receipt.cleared.length > 0) parts.push(`${receipt.cleared.length} old tool results were cleared`);
  if (receipt.truncated.length > 0) parts.push(`${receipt.truncated.length} long texts were shortened`);
  const what = parts.length > 0 ? parts.join(', ') : 'the conversation was compacted';
  const facts = receipt.facts.kept > 0 ? ' Key facts from them are listed near the top.' : '';
  const content = `[contextkit: to fit the context window, ${what}.${facts} The full history is kept; ask if you need something that is no longer shown.]`;
  return midConversationMessage(format, content);
}

/**
 * A short message at the very end of a view telling the model how much room is left
 * (`budgetNotice`), in the shape the compaction note takes in each format. Never stored.
 */
export function budgetNote(content: string, format: MessageFormat): Message {
  return midConversationMessage(format, content);
}
