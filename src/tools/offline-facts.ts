/**
 * The offline fact extractor: deterministic, no network, linear in the size of the entries.
 * JSON in tool calls and results (and any message that is one JSON value) is walked and each
 * value is named after its key; everything else is scanned with the patterns of `text-facts.ts`.
 */
import type { HistoryEntry } from '../messages/types.js';
import { entrySegments, type Segment } from './entry-segments.js';
import { categoryOf } from './facts-block.js';
import { type JsonFact, jsonFacts, jsonPath, type PathNode, parseJsonText } from './json-facts.js';
import { mergeFacts } from './merge-facts.js';
import {
  focusHits,
  NAME_WEIGHT,
  type ResultFocus,
  resultFacts,
  resultFocus,
  squash,
} from './result-facts.js';
import { factKey, textFactKey, textFacts } from './text-facts.js';
import type { ExtractedFact, ExtractFactsOptions, FactCategory } from './types.js';

/**
 * At most this many new facts per entry, and per tool result it holds: a 500 KB log or search
 * result would otherwise add thousands. Each tool result has its own allowance, whichever format
 * carries it: an OpenAI tool message holds one result, an Anthropic, Bedrock or Gemini user turn
 * every result of a parallel call, and the second result of such a turn must not go without facts
 * because the first one had many. Which ones: from JSON, the most useful categories first (ids
 * before emails, urls, paths, dates, amounts … before `other`), earlier before later; from text,
 * the first found in the patterns' priority order (see `text-facts.ts`). Facts already known (from
 * `previousFacts` or an earlier entry) are not counted and never dropped.
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

/** The JSON facts to keep: new ones, the best `limit` of them by relevance then category rank. */
function pickJsonFacts(
  found: JsonFact[],
  limit: number,
  isNew: (f: JsonFact) => boolean,
  relevance: readonly number[],
): number[] {
  const fresh: number[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < found.length; i += 1) {
    const fact = found[i] as JsonFact;
    if (!isNew(fact)) continue;
    const id = `${fact.category}\u0000${fact.value}`;
    if (seen.has(id)) continue;
    seen.add(id);
    fresh.push(i);
  }
  const relevant = fresh.some((i) => (relevance[i] ?? 0) > 0);
  if (fresh.length <= limit && !relevant) return fresh;
  const rank = (i: number) => CATEGORY_RANK[(found[i] as JsonFact).category];
  // Relevant values first, best first; the rest by category, in walk order.
  const order = fresh
    .slice()
    .sort((a, b) => (relevance[b] ?? 0) - (relevance[a] ?? 0) || rank(a) - rank(b) || a - b)
    .slice(0, limit);
  const firsts = order.filter((i) => (relevance[i] ?? 0) > 0);
  const others = order.filter((i) => (relevance[i] ?? 0) === 0).sort((a, b) => a - b);
  return [...firsts, ...others];
}

/**
 * How much each JSON value answers the focus. A value whose own key is a name the focus holds
 * (`maxConnections` asked for) ranks as a definition; the keys on a value's path add the focus
 * terms they hold (`databases.replica.maxConnections` when the replica is asked about); inside an
 * array's item (a record: a flight, a search hit, a row), a name of the current request that
 * another value of the record holds adds its weight, unless most records hold it. The call's own
 * argument values do not spread to records: the whole result is about them.
 */
function jsonRelevance(
  found: readonly JsonFact[],
  focus: ResultFocus,
  /** Names a value's own key may be asked by (the turn's request too): those make a definition. */
  named: ResultFocus = focus,
): number[] {
  const out = new Array<number>(found.length).fill(0);
  if (focus.terms.size === 0 && named.terms.size === 0) return out;
  const recordOf = (fact: JsonFact): PathNode | undefined => {
    for (let n: PathNode | undefined = fact.at; n !== undefined; n = n.parent) {
      if (typeof n.step === 'number') return n;
    }
    return undefined;
  };
  const records = found.map(recordOf);
  const recordCount = new Set(records.filter((r) => r !== undefined)).size;
  // Per record, the request's names its values hold; per name, how many records hold it.
  const recordNames = new Map<PathNode, Map<string, number>>();
  const termRecords = new Map<string, number>();
  const own = new Array<number>(found.length).fill(0);
  const definition = new Array<boolean>(found.length).fill(false);
  for (let i = 0; i < found.length; i += 1) {
    const fact = found[i] as JsonFact;
    const at = fact.at;
    const ownKey = typeof at.step === 'string' ? squash(at.step) : undefined;
    const path = jsonPath(at);
    for (const w of focusHits(path, focus).values()) own[i] = (own[i] as number) + w;
    if (ownKey !== undefined && (named.terms.get(ownKey) ?? 0) >= NAME_WEIGHT) {
      definition[i] = true;
      if (!focus.terms.has(ownKey)) own[i] = (own[i] as number) + NAME_WEIGHT;
    }
    const record = records[i];
    if (record === undefined || focus.requestTerms.size === 0) continue;
    for (const [term, w] of focusHits(fact.value, focus)) {
      if (w < NAME_WEIGHT || !focus.requestTerms.has(term)) continue;
      let terms = recordNames.get(record);
      if (terms === undefined) {
        terms = new Map();
        recordNames.set(record, terms);
      }
      if (!terms.has(term)) termRecords.set(term, (termRecords.get(term) ?? 0) + 1);
      terms.set(term, w);
    }
  }
  const common = Math.max(3, recordCount / 4);
  return own.map((sum, i) => {
    let total = sum;
    const record = records[i];
    const terms = record === undefined ? undefined : recordNames.get(record);
    if (terms) for (const [term, w] of terms) if ((termRecords.get(term) ?? 0) <= common) total += w;
    if (definition[i]) return 100 + total;
    return total > 0 ? 2 + total : 0;
  });
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
  /** Each call's arguments by call id, and the latest by tool name: what a result was read for. */
  private readonly callArguments = new Map<string, string>();
  private readonly callArgumentsByName = new Map<string, string>();
  /** The arguments of the latest message of calls, for a result whose call has no id or name. */
  private latestCalls: { seq: number; texts: string[] } = { seq: -1, texts: [] };
  /**
   * The latest message's calls by tool name, in order, not yet answered by a result without an
   * id: a Gemini turn of parallel calls names no ids, and its responses answer them in order.
   */
  private unanswered = new Map<string, string[]>();
  private readonly request: string | undefined;

  constructor(options: ExtractFactsOptions = {}) {
    this.previous = options.previousFacts ?? [];
    this.request = options.request;
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

  /**
   * The user's message the results read next answer (their turn's request): what the user asked
   * when the agent made the calls, beside the current request.
   */
  private turnRequest: string | undefined;

  /**
   * Learns the calls in `entries` without reading them for facts: the calls of results read later
   * (a cleared result whose call stays in the view), so each result is read for what its call asked;
   * and, when given, the request of the turn those results belong to (`null`: none).
   */
  knowCalls(entries: readonly HistoryEntry[], turnRequest?: string | null): this {
    if (turnRequest !== undefined) this.turnRequest = turnRequest ?? undefined;
    for (const segment of entrySegments(entries, this.callNames)) {
      if (segment.kind === 'call') this.noteCall(segment);
    }
    return this;
  }

  private noteCall(segment: Segment): void {
    if (segment.callId !== undefined) this.callArguments.set(segment.callId, segment.text);
    if (segment.toolName !== undefined) this.callArgumentsByName.set(segment.toolName, segment.text);
    if (this.latestCalls.seq !== segment.seq) {
      this.latestCalls = { seq: segment.seq, texts: [] };
      this.unanswered = new Map();
    }
    this.latestCalls.texts.push(segment.text);
    if (segment.callId === undefined && segment.toolName !== undefined) {
      const queue = this.unanswered.get(segment.toolName);
      if (queue) queue.push(segment.text);
      else this.unanswered.set(segment.toolName, [segment.text]);
    }
  }

  /** The arguments of the call a result without an id answers: the next of its tool's unanswered calls. */
  private answeredCall(segment: Segment): string | undefined {
    if (segment.callId !== undefined || segment.toolName === undefined) return undefined;
    if (this.latestCalls.seq >= segment.seq) return undefined;
    return this.unanswered.get(segment.toolName)?.shift();
  }

  /**
   * What a result was read for: its call's arguments (by id; else, without one, the next call of
   * its tool in the latest message of calls; else by tool name), the request of
   * its turn and the current one. A JSON result is ranked by its arguments and the current
   * request only (`json`): its keys already name every value, and an older turn's words lifting
   * whole records (every flight of a search) would push out the ids other results gave, as the
   * tau-bench runs show.
   */
  private focusOf(segment: Segment): { text: ResultFocus; json: ResultFocus } {
    const args =
      (segment.callId !== undefined ? this.callArguments.get(segment.callId) : undefined) ??
      this.answeredCall(segment) ??
      (segment.toolName !== undefined ? this.callArgumentsByName.get(segment.toolName) : undefined) ??
      (this.latestCalls.seq >= 0 && this.latestCalls.seq < segment.seq
        ? this.latestCalls.texts.join('\n')
        : undefined);
    const request =
      this.turnRequest === undefined || this.turnRequest === this.request
        ? this.request
        : this.request === undefined
          ? this.turnRequest
          : `${this.turnRequest}\n${this.request}`;
    return { text: resultFocus(args, request), json: resultFocus(args, this.request) };
  }

  /**
   * Reads more entries: at most `MAX_NEW_FACTS_PER_ENTRY` new facts from each tool result, and as
   * many from the rest of each entry.
   */
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
      if (segment.kind === 'call') this.noteCall(segment);
      else if (segment.role === 'user' && segment.kind === 'text') this.turnRequest = segment.text;
      if (segment.role === 'system') continue;
      if (segment.kind === 'result') {
        // A result's own allowance: the results of one turn are each read for what they were read for.
        segmentFacts(segment, MAX_NEW_FACTS_PER_ENTRY, isKnown, this.keys, keep, this.focusOf(segment));
      } else if (remaining > 0) {
        remaining -= segmentFacts(segment, remaining, isKnown, this.keys, keep);
      }
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
 * at most `MAX_NEW_FACTS_PER_ENTRY` new ones per entry and per tool result. System messages are
 * skipped: they stay in every view, so their facts need no keeping.
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
  /** For a tool result: what it was read for (its facts are then ranked by it). */
  focus?: { text: ResultFocus; json: ResultFocus },
): number {
  const parsed = parseJsonText(segment.text);
  if (parsed !== undefined) {
    const found = jsonFacts(parsed);
    const relevance = focus === undefined ? [] : jsonRelevance(found, focus.json, focus.text);
    const picked = pickJsonFacts(found, limit, (f) => !isKnown(f.category, f.value), relevance);
    for (const i of picked) {
      const fact = found[i] as JsonFact;
      const kept: ExtractedFact = {
        key: fact.key ?? keys.next(fact.category),
        value: fact.value,
        category: fact.category,
        seq: segment.seq,
        span: `${segment.label}: ${jsonPath(fact.at)}`,
      };
      if ((relevance[i] ?? 0) > 0) kept.relevance = relevance[i] as number;
      keep(kept);
    }
    return picked.length;
  }
  if (focus !== undefined) {
    // A tool result: what it was read for first, never its line numbers or counters.
    const found = resultFacts(segment.text, { focus: focus.text, limit, isKnown, categoryOf });
    for (const fact of found) {
      const key = fact.key === undefined ? undefined : factKey(fact.key);
      const kept: ExtractedFact = {
        key: key === undefined || key === '' ? keys.next(fact.category) : key,
        value: fact.value,
        category: fact.category,
        seq: segment.seq,
        span: textSpan(segment.text, fact.start, fact.end),
      };
      if (fact.relevance > 0) kept.relevance = fact.relevance;
      keep(kept);
    }
    return found.length;
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
