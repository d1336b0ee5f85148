import { formatInt } from '../format-number.js';
import type { ToolEffect } from '../messages/tool-effect.js';
import { quotedData } from '../tools/quoted-data.js';

/**
 * The words contextkit puts in a view in place of what it left out. They tell the model what
 * happened and what it can do about it, and they are deterministic so views stay byte-stable.
 */

/** The longest outcome line a placeholder quotes, in characters. */
const MAX_OUTCOME_CHARS = 80;

/**
 * How a tool result ended, in one line, for its placeholder: the exit code where the text gives
 * one (`exit code 1`), else its first non-blank line (`ok`, `File written.`, `Error: …`), cut to
 * `MAX_OUTCOME_CHARS`; `error: ` before it when the result is flagged as an error. Empty when
 * the result holds no text (and is not an error).
 */
export function resultOutcome(text: string, isError = false): string {
  // A long log says how it ended at its start or its end: only those are read.
  const ends =
    text.length > 2 * OUTCOME_SCAN ? `${text.slice(0, OUTCOME_SCAN)}\n${text.slice(-OUTCOME_SCAN)}` : text;
  const exit = EXIT_CODE.exec(ends);
  let line = exit ? `exit code ${exit[1]}` : firstLine(ends);
  if (line.length > MAX_OUTCOME_CHARS) line = `${line.slice(0, MAX_OUTCOME_CHARS - 1).trimEnd()}…`;
  if (isError) return line === '' ? 'error' : `error: ${line}`;
  return line;
}

/** Characters read at each end of a result for its outcome. */
const OUTCOME_SCAN = 2000;

const EXIT_CODE =
  /\b(?:exit(?:ed)?\s+(?:with\s+)?(?:code|status)|exit_?code|return_?code|exited with)\s*[:=]?\s*(-?\d+)\b/i;

function firstLine(text: string): string {
  const match = /\S[^\r\n]*/.exec(text);
  return match ? match[0].trim() : '';
}

/**
 * Stands in for a tool result cleared from the view (the README\'s "What every view holds", 9). It says what the call
 * was and that it ran, with its outcome line quoted as data (`resultOutcome`), and suggests
 * calling again only for a tool that only reads (`effect`): a model told "call edit again" redoes
 * the edit. Deterministic, so views stay byte-stable.
 */
export function clearedResultText(
  toolName: string,
  tokens: number,
  effect: ToolEffect = 'write',
  outcome = '',
): string {
  const said = outcome === '' ? '' : ` It ended: ${quotedData(outcome)}.`;
  const head = `[contextkit: this ${toolName} call ran; its result (about ${formatInt(tokens)} tokens) was cleared to save context.${said}`;
  return effect === 'read'
    ? `${head} Call ${toolName} again if you need its content (it only reads).]`
    : `${head} Its effect is done: do not call ${toolName} again to repeat it.]`;
}

/** Marks where the middle of an oversized text was cut. */
export function truncationMarker(removedChars: number): string {
  return `\n\n[… contextkit: ${formatInt(removedChars)} characters cut from the middle of this text to fit the context window …]\n\n`;
}

/** Opens an Anthropic view whose first kept message is the assistant's (the API wants a user first). */
export const OMITTED_START_TEXT =
  '[contextkit: earlier messages of this conversation are omitted from this request.]';

/**
 * The model's turn a view puts between two user messages that one turn could not hold together
 * (`WireFormat.turnBreaks`: Converse's documents and images per turn), where what stood between
 * them was left out.
 */
export const TURN_BREAK_TEXT = '[contextkit: messages between these turns are omitted from this request.]';

/** Opens an Anthropic view of a conversation that itself starts with the assistant. */
export const CONVERSATION_START_TEXT = '[contextkit: start of the conversation.]';
