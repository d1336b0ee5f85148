/**
 * The npm search libraries compared for recall's in-process index, each behind recall's
 * `TextIndex` with recall's own words and stemming, so only the library differs: MiniSearch,
 * FlexSearch and Orama, beside recall's own `PostingsIndex` (src/recall/postings-index.ts).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { create, insert, search } from '@orama/orama';
import FlexSearch from 'flexsearch';
import MiniSearch from 'minisearch';
import { PostingsIndex } from '../../src/recall/postings-index.js';
import type { ScoredSeq } from '../../src/recall/rank.js';
import { searchTerms } from '../../src/recall/terms.js';
import type { TextIndex } from '../../src/recall/text-index.js';

/** A library under test: its name, version and how to make an index. */
export interface Candidate {
  name: string;
  version: string;
  create: () => TextIndex;
}

const splitTerms = (text: string): string[] => text.split(' ');

interface Doc {
  id: number;
  text: string;
}

const splitQuery = (query: string): string[] => query.split(' ');
const asIs = (term: string): string => term;

/** MiniSearch: an inverted index in a radix tree, BM25+ scoring; it scores every entry a query matches. */
export class MiniSearchIndex implements TextIndex {
  readonly #index = new MiniSearch<Doc>({
    fields: ['text'],
    storeFields: [],
    tokenize: searchTerms,
    processTerm: asIs,
    searchOptions: {
      combineWith: 'OR',
      prefix: false,
      fuzzy: false,
      tokenize: splitQuery,
      processTerm: asIs,
      bm25: { k: 1.2, b: 0.75, d: 0.5 },
    },
  });

  get size(): number {
    return this.#index.documentCount;
  }

  add(seq: number, text: string): void {
    this.#index.add({ id: seq, text });
  }

  search(terms: readonly string[], limit: number): ScoredSeq[] {
    if (terms.length === 0 || limit <= 0) return [];
    const results = this.#index.search(terms.join(' '));
    const out: ScoredSeq[] = [];
    for (const r of results) {
      out.push({ seq: r.id as number, score: r.score });
      if (out.length >= limit) break;
    }
    return out;
  }
}

/**
 * FlexSearch orders its results but gives no score: the rank stands in for one (1 / (rank + 1)).
 * `suggest` returns entries holding some of the words, not only all of them.
 */
class FlexSearchIndex implements TextIndex {
  readonly #index = new FlexSearch.Index({ tokenize: 'strict', encode: splitTerms, resolution: 9 });
  size = 0;

  add(seq: number, text: string): void {
    this.#index.add(seq, searchTerms(text).join(' '));
    this.size++;
  }

  search(terms: readonly string[], limit: number): ScoredSeq[] {
    if (terms.length === 0) return [];
    const ids = this.#index.search(terms.join(' '), { limit, suggest: true }) as number[];
    return ids.map((seq, rank) => ({ seq, score: 1 / (rank + 1) }));
  }
}

/** Orama keeps each document it indexes (its text here) beside the index, as it is designed to. */
class OramaIndex implements TextIndex {
  readonly #db = create({
    schema: { text: 'string' } as const,
    components: {
      tokenizer: { language: 'english', normalizationCache: new Map(), tokenize: splitTerms },
    },
  });
  size = 0;

  add(seq: number, text: string): void {
    insert(this.#db, { id: String(seq), text: searchTerms(text).join(' ') });
    this.size++;
  }

  search(terms: readonly string[], limit: number): ScoredSeq[] {
    if (terms.length === 0) return [];
    const result = search(this.#db, {
      term: terms.join(' '),
      properties: ['text'],
      limit,
      threshold: 1,
    }) as { hits: Array<{ id: string; score: number }> };
    return result.hits.map((hit) => ({ seq: Number(hit.id), score: hit.score }));
  }
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The installed version (some packages do not export their package.json). */
function versionOf(name: string): string {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8'));
  return (manifest as { version: string }).version;
}

/** The indexes compared: recall's own first, then the libraries. */
export const CANDIDATES: readonly Candidate[] = [
  { name: 'contextkit PostingsIndex', version: '(own)', create: () => new PostingsIndex() },
  { name: 'minisearch', version: versionOf('minisearch'), create: () => new MiniSearchIndex() },
  { name: 'flexsearch', version: versionOf('flexsearch'), create: () => new FlexSearchIndex() },
  { name: '@orama/orama', version: versionOf('@orama/orama'), create: () => new OramaIndex() },
];
