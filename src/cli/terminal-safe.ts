/**
 * What the CLI prints from data (ids, previews, tool names, roles, error messages quoting them)
 * is shown with its control characters escaped, so a message cannot clear the screen, set the
 * window title, reorder a line with a bidirectional override or start a line of its own.
 *
 * Escaped: C0 controls and DEL (`\u001b`), C1 controls (`\u009b`), the bidirectional marks,
 * embeddings, overrides and isolates (`\u202e`, `\u2066`…), the line and paragraph separators,
 * and lone surrogates. The `\uXXXX` form is valid inside JSON strings, so JSON output stays JSON
 * and parses to the same value.
 */

/** Every character a terminal may act on, apart from `\n`. */
const CONTROLS_BUT_NEWLINE =
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/** The same and `\n`: for one field inside a line. */
const CONTROLS =
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function escapeChar(ch: string): string {
  return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** One field of a line (an id, a preview, a tool name): every control character escaped, `\n` too. */
export function escapeField(text: string): string {
  return text.replace(CONTROLS, escapeChar);
}

/** Whole output: every control character escaped except the `\n` that ends lines. */
export function terminalSafe(text: string): string {
  return text.replace(CONTROLS_BUT_NEWLINE, escapeChar);
}

/** Writes command output to standard output, terminal-safe (see {@link terminalSafe}). */
export function writeOut(text: string): boolean {
  return process.stdout.write(terminalSafe(text));
}
