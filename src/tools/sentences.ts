/**
 * Cutting text into the units an extractive summary keeps or leaves out: sentences of prose, lines
 * of tool output, and pieces of overlong lines cut only at a space or a comma. Every unit is a
 * verbatim slice of its text, so a path, id or number is never cut or changed.
 */

/** Longer units are cut at a separator; a unit that has none (a base64 blob) is left out. */
export const MAX_UNIT_CHARS = 320;

/** Words that end with a period without ending the sentence. */
const ABBREVIATIONS = new Set([
  'e.g',
  'i.e',
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'st',
  'vs',
  'no',
  'approx',
  'fig',
  'inc',
  'ltd',
  'jr',
  'sr',
]);

const BOUNDARY = /[.!?]+["')\]]*\s+/g;

/**
 * The sentences of one line of prose, trimmed, in order. A boundary is `.`, `!` or `?` (with any
 * closing quote or bracket) followed by space and then not a lowercase letter, and not after an
 * abbreviation (`e.g.`, `Dr.`), so `src/x.ts` and `1.5` never split.
 */
export function splitSentences(line: string): string[] {
  const out: string[] = [];
  let from = 0;
  BOUNDARY.lastIndex = 0;
  for (let match = BOUNDARY.exec(line); match !== null; match = BOUNDARY.exec(line)) {
    const end = match.index + match[0].length;
    const next = line[end];
    if (next === undefined || (next >= 'a' && next <= 'z')) continue;
    if (line[match.index] === '.') {
      const wordStart = line.lastIndexOf(' ', match.index - 1) + 1;
      if (ABBREVIATIONS.has(line.slice(wordStart, match.index).toLowerCase())) continue;
    }
    pushTrimmed(out, line.slice(from, end));
    from = end;
  }
  pushTrimmed(out, line.slice(from));
  return out;
}

function pushTrimmed(out: string[], text: string): void {
  const trimmed = text.trim();
  if (trimmed !== '') out.push(trimmed);
}

/**
 * `text` in pieces of at most `MAX_UNIT_CHARS`, cut after the last `, `, `; `, `,` or space that
 * fits. A stretch with no such separator is dropped: it is a blob, not something to read.
 */
export function splitLong(text: string): string[] {
  if (text.length <= MAX_UNIT_CHARS) return [text];
  const out: string[] = [];
  let from = 0;
  while (text.length - from > MAX_UNIT_CHARS) {
    const window = text.slice(from, from + MAX_UNIT_CHARS + 1);
    let cut = Math.max(window.lastIndexOf(', '), window.lastIndexOf('; ')) + 2;
    if (cut < 2) cut = window.lastIndexOf(',') + 1;
    if (cut < 1) cut = window.lastIndexOf(' ') + 1;
    if (cut < 1) {
      // No separator: skip to the next one (or the end) and drop what lies between.
      const next = text.slice(from).search(/[ ,]/);
      if (next === -1) return out;
      from += next + 1;
      continue;
    }
    pushTrimmed(out, text.slice(from, from + cut));
    from += cut;
  }
  pushTrimmed(out, text.slice(from));
  return out;
}

/** One unit of a text, which of its lines it is on, and its place among the text's units. */
export interface TextUnit {
  text: string;
  line: number;
  place: number;
}

/**
 * The units of a text: its lines, each cut into sentences when `prose`, and overlong pieces cut
 * further. Tool output is read by lines (log lines, JSON, tables) and only long lines are cut.
 */
export function textUnits(text: string, prose: boolean): TextUnit[] {
  const out: TextUnit[] = [];
  const lines = text.split('\n');
  for (let line = 0; line < lines.length; line += 1) {
    const content = lines[line] as string;
    if (content.trim() === '') continue;
    const pieces = prose || content.length > MAX_UNIT_CHARS ? splitSentences(content) : [content.trim()];
    for (const piece of pieces)
      for (const unit of splitLong(piece)) out.push({ text: unit, line, place: out.length });
  }
  return out;
}
