/**
 * How text becomes search terms, the same way for what is indexed and for what is asked: words
 * (letters and digits of any script), lowercased, without English stopwords, Porter-stemmed.
 */
import { stem } from './stem.js';

/**
 * Function words that say nothing about what a turn is about. Question words are here too: "what
 * did Caroline research" is about Caroline and research, and every other turn has a "what".
 */
const STOPWORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have ' +
    'having he her here hers herself him himself his how i if in into is it its itself just me more most ' +
    'my myself no nor not now of off on once only or other our ours ourselves out over own same she ' +
    'should so some such than that the their theirs them themselves then there these they this those ' +
    'through to too under until up very was we were what when where which while who whom why will with ' +
    'would you your yours yourself yourselves s t d ll m re ve don didn doesn isn wasn aren weren won ' +
    'let lets get got also yeah oh ok okay hey hi hello really much many like well'
  ).split(' '),
);

/** Letters (any script) and digits; everything else separates words. */
const WORD = /[\p{L}\p{N}]+/gu;

/**
 * Stems are memoized: a conversation reuses a small vocabulary over and over. Words with digits
 * (ids, numbers: rarely repeated, and returned as they are) are not, and the memo starts over
 * when full, so it stays a few megabytes.
 */
const stems = new Map<string, string>();
const STEM_MEMO_LIMIT = 50_000;
const HAS_DIGIT = /\d/;

function stemOf(word: string): string {
  if (HAS_DIGIT.test(word)) return word;
  let s = stems.get(word);
  if (s === undefined) {
    s = stem(word);
    if (stems.size >= STEM_MEMO_LIMIT) stems.clear();
    stems.set(word, s);
  }
  return s;
}

/** Words too long to be words (base64, hashes in a log): kept, but cut so they cannot bloat an index. */
const MAX_TERM_LENGTH = 40;

/**
 * The words of `text` worth searching for, lowercased and not yet stemmed, in order, repeats kept:
 * stopwords and one-letter words are left out, digits are kept whatever their length.
 */
export function searchWords(text: string): string[] {
  const out: string[] = [];
  for (let word of text.toLowerCase().match(WORD) ?? []) {
    if (word.length === 1 && !(word >= '0' && word <= '9')) continue;
    if (STOPWORDS.has(word)) continue;
    if (word.length > MAX_TERM_LENGTH) word = word.slice(0, MAX_TERM_LENGTH);
    out.push(word);
  }
  return out;
}

/** The search terms of `text`: its words (see `searchWords`) stemmed, in order, repeats kept. */
export function searchTerms(text: string): string[] {
  return searchWords(text).map(stemOf);
}

/** The stem of one lowercase word, memoized. */
export function termOf(word: string): string {
  return stemOf(word);
}
