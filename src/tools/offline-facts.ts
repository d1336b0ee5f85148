/**
 * The offline fact extractor: deterministic, no network, linear in the size of the entries.
 * JSON in tool calls and results (and any message that is one JSON value) is walked and each
 * value is named after its key; everything else is scanned with the patterns of `text-facts.ts`.
 */
import type { HistoryEntry } from '../messages/types.js';
import { entrySegments, type Segment } from './entry-segments.js';
import { type JsonFact, jsonFacts, jsonPath, parseJsonText } from './json-facts.js';
import { mergeFacts } from './merge-facts.js';
import { textFactKey, textFacts } from './text-facts.js';
import type { ExtractedFact, ExtractFactsOptions, FactCategory } from './types.js';

/**
 * At most this many new facts per entry: a 500 KB log or search result would otherwise add
 * thousands. Which ones: from JSON, the most useful categories first (ids before emails, urls,
 * paths, dates, amounts … before `other`), earlier before later; from text, the first found in the
 * patterns' priority order (see `text-facts.ts`). Facts already known (from `previousFacts` or an
 * earlier entry) are not counted and never dropped.
 */
export const MAX_NEW_FACTS_PER_ENTRY = 50;

/** Which JSON facts win when an entry has more than the cap; lower is kept first. */
const CATEGORY_RANK: Record<FactCategory, number> = {
  identifier: 0,
  email: 1,
  url: 2,
  path: 3,
  phone: 4,
  date: 5,
  amount: 6,
  name: 7,
  address: 8,
  time: 9,
  number: 10,
  other: 11,
};

const SPAN_RADIUS = 30;

function textSpan(text: string, start: number, end: number): string {
  const from = Math.max(0, start - SPAN_RADIUS);
  const to = Math.min(text.length, end + SPAN_RADIUS);
  return (
    (from > 0 ? '…' : '') + text.slice(from, to).replace(/\s+/g, ' ').trim() + (to < text.length ? '…' : '')
  );
}

/** The facts kept so far, by category, for cheap membership tests. */
class KnownFacts {
  private readonly byCategory = new Map<FactCategory, Set<string>>();
  has(category: FactCategory, value: string): boolean {
    return this.byCategory.get(category)?.has(value) === true;
  }
  add(category: FactCategory, value: string): void {
    let set = this.byCategory.get(category);
    if (set === undefined) {
      set = new Set();
      this.byCategory.set(category, set);
    }
    set.add(value);
  }
}

/** Numbers keys that are only a category name (`date`, `date_2`, …), continuing from earlier facts. */
class KeyNumbering {
  private readonly counts = new Map<string, number>();
  constructor(previous: readonly ExtractedFact[]) {
    for (const fact of previous) {
      const match = /^(.*?)(?:_(\d+))?$/.exec(fact.key);
      const base = match?.[1] ?? fact.key;
      const n = match?.[2] === undefined ? 1 : Number(match[2]);
      this.counts.set(base, Math.max(this.counts.get(base) ?? 0, n));
    }
  }
  next(base: string): string {
    const n = (this.counts.get(base) ?? 0) + 1;
    this.counts.set(base, n);
    return n > 1 ? `${base}_${n}` : base;
  }
}

/** The JSON facts to keep: new ones, the best `limit` of them by category rank, in walk order. */
function pickJsonFacts(found: JsonFact[], limit: number, isNew: (f: JsonFact) => boolean): JsonFact[] {
  const fresh: JsonFact[] = [];
  const seen = new Set<string>();
  for (const fact of found) {
    if (!isNew(fact)) continue;
    const id = `${fact.category}\u0000${fact.value}`;
    if (seen.has(id)) continue;
    seen.add(id);
    fresh.push(fact);
  }
  if (fresh.length <= limit) return fresh;
  const order = fresh.map((_, i) => i);
  order.sort(
    (a, b) =>
      CATEGORY_RANK[(fresh[a] as JsonFact).category] - CATEGORY_RANK[(fresh[b] as JsonFact).category] ||
      a - b,
  );
  return order
    .slice(0, limit)
    .sort((a, b) => a - b)
    .map((i) => fresh[i] as JsonFact);
}

/**
 * The offline extractor over several batches of entries, keeping what it knows between them: a
 * planner that reads a long history a chunk at a time (to stop once it has enough) pays for each
 * entry once, not for the facts found so far again with every chunk.
 */
export class OfflineFactExtractor {
  private readonly previous: readonly ExtractedFact[];
  private readonly categories: ReadonlySet<FactCategory> | undefined;
  private readonly known = new KnownFacts();
  private readonly keys: KeyNumbering;
  private readonly added: ExtractedFact[] = [];
  /** Tool names by call id, across batches, to label results whose call came in an earlier one. */
  private readonly callNames = new Map<string, string>();

  constructor(options: ExtractFactsOptions = {}) {
    this.previous = options.previousFacts ?? [];
    this.categories = options.categories ? new Set(options.categories) : undefined;
    for (const fact of this.previous) this.known.add(fact.category, fact.value);
    this.keys = new KeyNumbering(this.previous);
  }

  /** How many facts the result holds so far (previous ones included). */
  get size(): number {
    return this.previous.length + this.added.length;
  }

  /** The facts found so far that were not among the previous ones, in the order found. */
  get found(): readonly ExtractedFact[] {
    return this.added;
  }

  /** Reads more entries: at most `MAX_NEW_FACTS_PER_ENTRY` new facts from each. */
  add(entries: readonly HistoryEntry[]): this {
    // Facts of unwanted categories count as known: they still claim their text, but are not kept.
    const isKnown = (category: FactCategory, value: string): boolean =>
      (this.categories !== undefined && !this.categories.has(category)) || this.known.has(category, value);
    const keep = (fact: ExtractedFact): void => {
      this.known.add(fact.category, fact.value);
      this.added.push(fact);
    };
    let remaining = 0;
    let currentSeq = Number.NaN;
    for (const segment of entrySegments(entries, this.callNames)) {
      if (segment.seq !== currentSeq) {
        currentSeq = segment.seq;
        remaining = MAX_NEW_FACTS_PER_ENTRY;
      }
      if (segment.role === 'system' || remaining <= 0) continue;
      remaining -= segmentFacts(segment, remaining, isKnown, this.keys, keep);
    }
    return this;
  }

  /** The previous facts and every one found since, merged (see `mergeFacts`). */
  facts(): ExtractedFact[] {
    return mergeFacts(this.previous, this.added);
  }
}

/**
 * Facts of `entries` merged into `options.previousFacts` (see `mergeFacts`: none is ever dropped),
 * at most `MAX_NEW_FACTS_PER_ENTRY` new ones per entry. System messages are skipped: they stay in
 * every view, so their facts need no keeping.
 */
export function extractFactsOffline(
  entries: readonly HistoryEntry[],
  options: ExtractFactsOptions = {},
): ExtractedFact[] {
  return new OfflineFactExtractor(options).add(entries).facts();
}

/** Keeps up to `limit` new facts of one segment; returns how many it kept. */
function segmentFacts(
  segment: Segment,
  limit: number,
  isKnown: (category: FactCategory, value: string) => boolean,
  keys: KeyNumbering,
  keep: (fact: ExtractedFact) => void,
): number {
  const parsed = parseJsonText(segment.text);
  if (parsed !== undefined) {
    const picked = pickJsonFacts(jsonFacts(parsed), limit, (f) => !isKnown(f.category, f.value));
    for (const found of picked) {
      keep({
        key: found.key ?? keys.next(found.category),
        value: found.value,
        category: found.category,
        seq: segment.seq,
        span: `${segment.label}: ${jsonPath(found.at)}`,
      });
    }
    return picked.length;
  }
  const found = textFacts(segment.text, { limit, isKnown });
  for (const fact of found) {
    keep({
      key: textFactKey(segment.text, fact) ?? keys.next(fact.category),
      value: fact.value,
      category: fact.category,
      seq: segment.seq,
      span: textSpan(segment.text, fact.start, fact.end),
    });
  }
  return found.length;
}
