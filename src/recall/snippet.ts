/**
 * The part of a long text that matches a query: what recall shows of a tool result of 60,000
 * characters, so one huge result cannot take the whole hit budget.
 */
import { termOf } from './terms.js';

const WORD = /[\p{L}\p{N}]+/gu;

/** Characters of a text scanned for matches: a bound on the work one enormous text can cause. */
const SCAN_CHARS = 200_000;

/** Where the query's terms occur in `text` (word start offsets), and which term each is. */
function matchesIn(text: string, terms: ReadonlySet<string>): Array<{ at: number; term: string }> {
  const out: Array<{ at: number; term: string }> = [];
  if (terms.size === 0) return out;
  const scanned = text.length > SCAN_CHARS ? text.slice(0, SCAN_CHARS) : text;
  for (const m of scanned.toLowerCase().matchAll(WORD)) {
    const term = termOf(m[0]);
    if (terms.has(term)) out.push({ at: m.index, term });
  }
  return out;
}

/** The `width` characters of `text` holding the most distinct matching terms (the first such). */
function bestWindow(text: string, terms: ReadonlySet<string>, width: number): number {
  const matches = matchesIn(text, terms);
  if (matches.length === 0) return 0;
  let best = 0;
  let bestStart = matches[0]?.at ?? 0;
  const inWindow = new Map<string, number>();
  let lo = 0;
  for (let hi = 0; hi < matches.length; hi++) {
    const h = matches[hi] as { at: number; term: string };
    inWindow.set(h.term, (inWindow.get(h.term) ?? 0) + 1);
    while ((matches[lo] as { at: number }).at < h.at - width * 0.8) {
      const l = matches[lo] as { term: string };
      const n = (inWindow.get(l.term) ?? 1) - 1;
      if (n === 0) inWindow.delete(l.term);
      else inWindow.set(l.term, n);
      lo++;
    }
    if (inWindow.size > best) {
      best = inWindow.size;
      bestStart = (matches[lo] as { at: number }).at;
    }
  }
  // Some context before the first match of the window.
  return Math.max(0, bestStart - Math.floor(width * 0.1));
}

/**
 * `text` cut to at most `maxTokens` (counted with `countText`) around where the query's `terms`
 * occur most densely, with `…` where it was cut; the start of the text when nothing matches.
 * Returns `text` itself when it fits, and '' when not even a few words fit.
 */
export function snippet(
  text: string,
  terms: ReadonlySet<string>,
  maxTokens: number,
  countText: (text: string) => number,
): string {
  if (maxTokens <= 0) return '';
  // A text many times longer than the budget is cut without counting it whole (a 60k-character result).
  if (text.length <= maxTokens * 8 && countText(text) <= maxTokens) return text;
  // Start from a generous guess of characters per token and narrow down on the real count.
  let width = Math.min(text.length, maxTokens * 4);
  for (let attempt = 0; attempt < 6 && width >= 8; attempt++) {
    let start = bestWindow(text, terms, width);
    let end = Math.min(text.length, start + width);
    if (end - start < width) start = Math.max(0, end - width);
    // Whole words at the cut ends.
    while (start > 0 && start < end && /[\p{L}\p{N}]/u.test(text[start - 1] as string)) start++;
    while (end < text.length && end > start && /[\p{L}\p{N}]/u.test(text[end] as string)) end--;
    const piece = `${start > 0 ? '…' : ''}${text.slice(start, end).trim()}${end < text.length ? '…' : ''}`;
    const tokens = countText(piece);
    if (tokens <= maxTokens) return piece;
    width = Math.floor((width * maxTokens) / tokens) - 4;
  }
  return '';
}
