/**
 * Merging facts: what compaction keeps grows, it is never replaced. The seed's guard lost every
 * earlier fact when an extraction came back empty; here a merge can only add.
 */
import type { ExtractedFact } from './types.js';

/** Identity of a fact: the same value in the same category is the same fact, whatever its key. */
export function factIdentity(fact: Pick<ExtractedFact, 'category' | 'value'>): string {
  return `${fact.category}\u0000${fact.value}`;
}

/**
 * `kept` and `added` as one list: deduplicated by (category, value), keeping the occurrence with
 * the earliest `seq` (the kept one on a tie), ordered by `seq` and, within a seq, kept facts first
 * in their order, then added ones in theirs. Every fact of `kept` is in the result.
 */
export function mergeFacts(
  kept: readonly ExtractedFact[],
  added: readonly ExtractedFact[] = [],
): ExtractedFact[] {
  const byIdentity = new Map<string, { fact: ExtractedFact; order: number }>();
  let order = 0;
  for (const fact of [...kept, ...added]) {
    const id = factIdentity(fact);
    const existing = byIdentity.get(id);
    if (existing === undefined) byIdentity.set(id, { fact, order: order++ });
    else if (fact.seq < existing.fact.seq) byIdentity.set(id, { fact, order: existing.order });
  }
  return [...byIdentity.values()]
    .sort((a, b) => a.fact.seq - b.fact.seq || a.order - b.order)
    .map((item) => item.fact);
}
