/**
 * A recall query read once: the words to search for, the people it names and the dates it names.
 */
import { type DaySpan, spansIn } from './day-spans.js';
import { searchWords, termOf } from './terms.js';

/** A query as the indexes and the ranking use it. */
export interface RecallQuery {
  /** Distinct search words, lowercased, unstemmed, in order of first use (what a store's own stemmer takes). */
  words: string[];
  /** The same words stemmed (what the in-process index takes), distinct. */
  terms: string[];
  /** Every lowercased word of the query, stopwords included, for matching speakers' names. */
  names: Set<string>;
  /** The dates the query names. */
  days: DaySpan[];
}

/**
 * Most distinct words a query searches for: enough for any question, and a bound on the work a
 * pasted document used as a query can cause. The first ones are kept.
 */
export const MAX_QUERY_WORDS = 64;

/** Characters of a query that are read: the rest of a 100k-character query is ignored. */
export const MAX_QUERY_CHARS = 4_000;

const NAME_WORD = /[\p{L}\p{N}]+/gu;

/**
 * Reads a query. The dates it names are read as days (to favour turns said then) and their words
 * are searched too, as written (`2024-05-20` in a tool result).
 */
export function readQuery(query: string): RecallQuery {
  const text = query.length > MAX_QUERY_CHARS ? query.slice(0, MAX_QUERY_CHARS) : query;
  const days = spansIn(text);
  const words: string[] = [];
  const terms: string[] = [];
  const seenWords = new Set<string>();
  const seenTerms = new Set<string>();
  for (const word of searchWords(text)) {
    if (seenWords.has(word)) continue;
    if (words.length >= MAX_QUERY_WORDS) break;
    seenWords.add(word);
    words.push(word);
    const term = termOf(word);
    if (!seenTerms.has(term)) {
      seenTerms.add(term);
      terms.push(term);
    }
  }
  const names = new Set<string>();
  for (const m of text.toLowerCase().matchAll(NAME_WORD)) names.add(m[0]);
  return { words, terms, names, days };
}
