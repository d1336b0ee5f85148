/**
 * The facts block: how kept facts travel inside a prompt, as a marked markdown list the model
 * reads easily and contextkit can read back (a system prompt written by an earlier process, a
 * view saved to a file). The seed's wire format, with contextkit's own markers and the source
 * message of each fact.
 */
import { type ExtractedFact, FACT_CATEGORIES, type FactCategory } from './types.js';

/** Opens the block. */
export const FACTS_OPEN = '<!-- contextkit:facts -->';
/** Closes the block. */
export const FACTS_CLOSE = '<!-- /contextkit:facts -->';
/** The heading line inside the block. */
export const FACTS_HEADING = '## Key facts (preserved across compaction)';

const CATEGORIES = new Set<string>(FACT_CATEGORIES);

/**
 * Backslashes and line breaks are escaped so that every fact stays on one line whatever its
 * value; in keys `[` is escaped too, since ` [category]:` ends the key.
 */
function escapeValue(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

function escapeKey(text: string): string {
  return escapeValue(text).replace(/\[/g, '\\[');
}

function unescapeText(text: string): string {
  return text.replace(/\\([\\nr[])/g, (_, c: string) => (c === 'n' ? '\n' : c === 'r' ? '\r' : c));
}

/**
 * The block for `facts`: the open marker, the heading, one line `- key [category]: value (msg 12)`
 * per fact in the given order, the close marker. No facts give the empty string (no block at all,
 * rather than an empty one that reads as "nothing is known"). Spans are not rendered.
 */
export function renderFactsBlock(facts: readonly ExtractedFact[]): string {
  if (facts.length === 0) return '';
  const lines = [FACTS_OPEN, FACTS_HEADING];
  for (const fact of facts) {
    lines.push(`- ${escapeKey(fact.key)} [${fact.category}]: ${escapeValue(fact.value)} (msg ${fact.seq})`);
  }
  lines.push(FACTS_CLOSE);
  return lines.join('\n');
}

const LINE = /^- ((?:[^\\[]|\\.)*?) \[([a-z]+)\]: (.*?)(?: \(msg (-?\d+)\))?$/;

/**
 * The facts in every block found in `text` (anything outside the markers is ignored), in order.
 * Reverses `renderFactsBlock` exactly, except for `span`, which is not rendered. Lines of the seed's
 * format without `(msg N)` are read with `seq` -1; an unknown category is read as `other`.
 */
export function parseFactsBlock(text: string): ExtractedFact[] {
  const facts: ExtractedFact[] = [];
  let from = 0;
  for (;;) {
    const open = text.indexOf(FACTS_OPEN, from);
    if (open === -1) break;
    const bodyStart = open + FACTS_OPEN.length;
    const close = text.indexOf(FACTS_CLOSE, bodyStart);
    const body = text.slice(bodyStart, close === -1 ? text.length : close);
    for (const line of body.split('\n')) {
      const match = LINE.exec(line.replace(/\r$/, ''));
      if (!match) continue;
      const category = match[2] as string;
      facts.push({
        key: unescapeText(match[1] as string),
        value: unescapeText(match[3] as string),
        category: CATEGORIES.has(category) ? (category as FactCategory) : 'other',
        seq: match[4] === undefined ? -1 : Number(match[4]),
      });
    }
    if (close === -1) break;
    from = close + FACTS_CLOSE.length;
  }
  return facts;
}
