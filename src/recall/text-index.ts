/**
 * The in-process full-text index recall keeps when the store cannot search: entries go in as
 * they are added, queries come back as scored seqs.
 */
import type { ScoredSeq } from './rank.js';

/** A full-text index over one conversation's entries, by seq. */
export interface TextIndex {
  /** Entries indexed. */
  readonly size: number;
  /** Indexes the text of one entry; seqs arrive in increasing order. */
  add(seq: number, text: string): void;
  /**
   * The entries holding any of `terms` (stemmed, as `searchTerms` gives them), best first by
   * BM25, at most `limit`; with `accept`, only the entries it accepts (a recall's filters).
   */
  search(terms: readonly string[], limit: number, accept?: (seq: number) => boolean): ScoredSeq[];
}
