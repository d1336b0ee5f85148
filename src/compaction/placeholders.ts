import { formatInt } from '../format-number.js';

/**
 * The words contextkit puts in a view in place of what it left out. They tell the model what
 * happened and what it can do about it, and they are deterministic so views stay byte-stable.
 */

/** Stands in for a tool result cleared from the view. */
export function clearedResultText(toolName: string, tokens: number): string {
  return `[contextkit: the result of this ${toolName} call (about ${formatInt(tokens)} tokens) was cleared to save context. Call ${toolName} again if you need it.]`;
}

/** Marks where the middle of an oversized text was cut. */
export function truncationMarker(removedChars: number): string {
  return `\n\n[… contextkit: ${formatInt(removedChars)} characters cut from the middle of this text to fit the context window …]\n\n`;
}

/** Opens an Anthropic view whose first kept message is the assistant's (the API wants a user first). */
export const OMITTED_START_TEXT =
  '[contextkit: earlier messages of this conversation are omitted from this request.]';

/** Opens an Anthropic view of a conversation that itself starts with the assistant. */
export const CONVERSATION_START_TEXT = '[contextkit: start of the conversation.]';
