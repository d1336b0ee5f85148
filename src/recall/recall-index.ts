/**
 * The search index over a conversation's whole history, behind `ctx.recall()`. It searches in the
 * store when the store keeps a full-text index (SQLite FTS5, Postgres), otherwise in an index it
 * keeps in process, fed as messages are added; either way the same ranking (rank.ts) and the
 * same hit texts (fit-hits.ts) follow. Searching never changes what is stored.
 */
import { InvalidArgumentError } from '../errors.js';
import type { HistoryEntry, Message, Role } from '../messages/types.js';
import type { ConversationStore, SearchWithin, StoreSearch, StoreSearchResult } from '../stores/types.js';
import { toolResultIds } from '../wire/content.js';
import { fitHits } from './fit-hits.js';
import { PostingsIndex } from './postings-index.js';
import { type RecallQuery, readQuery } from './query.js';
import { type RankWeights, rankGroups, type ScoredSeq, type TurnFacts } from './rank.js';
import type { RecallFilters, RecallHit, RecallOptions, RecallRole } from './recall-hit.js';
import type { TextIndex } from './text-index.js';
import { indexedText, searchText, type TurnText, turnText } from './turn-text.js';

/** How a {@link RecallIndex} reaches the history, counts tokens, and reports trouble. */
export interface RecallIndexOptions {
  /** The conversation's entries, in seq order (the manager's own array: read, never changed). */
  entries: () => readonly HistoryEntry[];
  /**
   * A number that changes whenever the entries are replaced or cleared (never on append): when it
   * changes, what was read is forgotten, as by `reset()`.
   */
  generation?: () => number;
  /** Tokens of a text, with the conversation's counter. */
  countText: (text: string) => number;
  /** The conversation's store: searched when it keeps a full-text index. */
  store?: ConversationStore;
  conversationId?: string;
  /** The in-process index, when the store cannot search (default `PostingsIndex`). */
  createIndex?: () => TextIndex;
  /**
   * Keep the in-process index up to date from the first `update` (default), rather than from the
   * first `recall`.
   */
  eager?: boolean;
  /** Weights of the ranking rules (default `DEFAULT_WEIGHTS`; for experiments). */
  weights?: Partial<RankWeights>;
  /** A recoverable problem: a store index that failed and was rebuilt, or given up for the in-process one. */
  onWarn?: (code: string, message: string) => void;
}

/** Index candidates read per hit asked for: the ranking needs more than the hits it returns. */
const CANDIDATES_PER_HIT = 40;
/** Bounds on the options, so one call's work stays bounded whatever it asks. */
const MAX_LIMIT = 50;
const MAX_TOKENS = 100_000;

/** Most hits a page may skip: deeper than this, a search should say more, not page further. */
const MAX_OFFSET = 500;
/**
 * Most candidates asked of a store's index under a filter: enough that a filter keeping one turn
 * in a hundred still finds its best ones, and a bound on one call's work.
 */
const MAX_FILTERED_CANDIDATES = 20_000;

/** The options with their defaults, or `InvalidArgumentError` saying which one is wrong and why. */
function checkOptions(options: RecallOptions): { limit: number; maxTokens: number; offset: number } {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError(
      'options',
      `expected an object, got ${options === null ? 'null' : typeof options}`,
    );
  }
  const limit = options.limit ?? 5;
  const maxTokens = options.maxTokens ?? 1_000;
  const offset = options.offset ?? 0;
  if (!Number.isInteger(offset) || offset < 0 || offset > MAX_OFFSET) {
    throw new InvalidArgumentError(
      'offset',
      `expected a whole number from 0 to ${MAX_OFFSET}, got ${String(offset)}`,
    );
  }
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new InvalidArgumentError(
      'limit',
      `expected a whole number from 1 to ${MAX_LIMIT}, got ${String(limit)}`,
    );
  }
  if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > MAX_TOKENS) {
    throw new InvalidArgumentError(
      'maxTokens',
      `expected a whole number from 1 to ${MAX_TOKENS}, got ${String(maxTokens)}`,
    );
  }
  return { limit, maxTokens, offset };
}

/** The filters of one call, read and checked. */
interface ReadFilters {
  /** Some filter was given. */
  any: boolean;
  roles?: ReadonlySet<RecallRole>;
  toolName?: string;
  /** Epoch milliseconds, inclusive. */
  start?: number;
  end?: number;
  fromSeq?: number;
  toSeq?: number;
}

/** Which entries may be hits, and how many may. */
interface Acceptor {
  test: (seq: number) => boolean;
  allowed: number;
  /**
   * Under a filter, the entry seqs it allows: from `from` to `to`, and only `seqs` of them when
   * not every one between is allowed (what a store's search is told, see `SearchWithin`).
   */
  within?: { from: number; to: number; seqs?: number[] };
}

const ROLES: readonly RecallRole[] = ['system', 'user', 'assistant', 'tool'];
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/;
const DAY_MS = 86_400_000;

/** A date filter as epoch milliseconds: a date alone is its first (`start`) or last (`end`) millisecond, UTC. */
function readDate(name: 'startDate' | 'endDate', value: unknown): number {
  const text = typeof value === 'string' ? value.trim() : '';
  const dateOnly = DATE_ONLY.test(text);
  const ms = dateOnly
    ? Date.parse(`${text}T00:00:00Z`)
    : DATE_TIME.test(text)
      ? Date.parse(text)
      : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new InvalidArgumentError(
      name,
      `expected an ISO 8601 date such as "2023-05-01" or "2023-05-01T14:30:00Z", got ${JSON.stringify(value)}`,
    );
  }
  return dateOnly && name === 'endDate' ? ms + DAY_MS - 1 : ms;
}

function readSeq(name: 'fromSeq' | 'toSeq', value: unknown): number {
  if (!Number.isInteger(value) || (value as number) < 0) {
    throw new InvalidArgumentError(name, `expected a whole number from 0, got ${String(value)}`);
  }
  return value as number;
}

/** The filters of `options`, or `InvalidArgumentError` naming the one that is wrong. */
function readFilters(options: RecallFilters): ReadFilters {
  const out: ReadFilters = { any: false };
  if (options.role !== undefined) {
    const given = typeof options.role === 'string' ? [options.role] : options.role;
    if (!Array.isArray(given) || given.length === 0 || given.some((r) => !ROLES.includes(r))) {
      throw new InvalidArgumentError(
        'role',
        `expected one of ${ROLES.map((r) => `"${r}"`).join(', ')} or a non-empty list of them, got ${JSON.stringify(options.role)}`,
      );
    }
    out.roles = new Set(given);
  }
  if (options.toolName !== undefined) {
    if (typeof options.toolName !== 'string' || options.toolName === '') {
      throw new InvalidArgumentError(
        'toolName',
        `expected a tool's name, got ${JSON.stringify(options.toolName)}`,
      );
    }
    out.toolName = options.toolName;
  }
  if (options.startDate !== undefined) out.start = readDate('startDate', options.startDate);
  if (options.endDate !== undefined) out.end = readDate('endDate', options.endDate);
  if (out.start !== undefined && out.end !== undefined && out.start > out.end) {
    throw new InvalidArgumentError('endDate', `${options.endDate} is before startDate ${options.startDate}`);
  }
  if (options.fromSeq !== undefined) out.fromSeq = readSeq('fromSeq', options.fromSeq);
  if (options.toSeq !== undefined) out.toSeq = readSeq('toSeq', options.toSeq);
  if (out.fromSeq !== undefined && out.toSeq !== undefined && out.fromSeq > out.toSeq) {
    throw new InvalidArgumentError('toSeq', `${out.toSeq} is below fromSeq ${out.fromSeq}`);
  }
  out.any = Object.keys(out).length > 1;
  return out;
}

/** Searches one conversation's history; the manager composes one and feeds it. */
export class RecallIndex {
  readonly #options: RecallIndexOptions;
  readonly #search: StoreSearch | undefined;
  /** Set once the store's index failed even after a rebuild: search in process from then on. */
  #storeFailed = false;
  /** Call id → tool name of the calls read so far (the latest call with an id wins, as in the atoms). */
  #callNames = new Map<string, string>();
  /**
   * For each tool-result entry, the names of the calls it answers as they were when it was read,
   * in the order of its result ids, joined by newlines (one short string per result).
   */
  #resultNames = new Map<number, string>();
  /** Entries read (speaker and day known, indexed in process when there is an index). */
  #read = 0;
  #speakers: Array<string | undefined> = [];
  #days: number[] = [];
  /** What the filters read of each entry read: its role, when it was stored, the tools it names. */
  #roles: Array<RecallRole | undefined> = [];
  #times: number[] = [];
  #tools: string[] = [];
  /** Entries holding recall's own calls or results only: never hits. */
  #recallOnly = new Set<number>();
  /** Entry seq of each store seq, when some entries are ephemeral (not stored); null while they are equal. */
  #entryOfStoreSeq: number[] | null = null;
  #stored = 0;
  #text: TextIndex | null = null;
  #textHead = 0;
  #generation: number | undefined;

  constructor(options: RecallIndexOptions) {
    this.#options = options;
    this.#search = options.store?.search;
  }

  /** Whether the store's own index is what is searched. */
  get searchesStore(): boolean {
    return this.#search !== undefined && !this.#storeFailed;
  }

  /**
   * Takes in the entries added since the last call. Cheap: with a store that searches it only
   * notes them; otherwise it indexes them, once the in-process index exists (from the first
   * update when `eager`, else from the first recall).
   */
  update(): void {
    this.#checkGeneration();
    if (this.#text === null && this.#options.eager && !this.searchesStore) this.#textUpTo(this.#read);
    if (this.#text !== null) this.#readUpTo(this.#options.entries().length);
  }

  #checkGeneration(): void {
    const generation = this.#options.generation?.();
    if (generation === this.#generation) return;
    this.reset();
    this.#generation = generation;
  }

  /** Forgets everything read: the history was replaced or cleared. */
  reset(): void {
    this.#callNames = new Map();
    this.#resultNames = new Map();
    this.#read = 0;
    this.#speakers = [];
    this.#days = [];
    this.#roles = [];
    this.#times = [];
    this.#tools = [];
    this.#recallOnly = new Set();
    this.#entryOfStoreSeq = null;
    this.#stored = 0;
    this.#text = null;
    this.#textHead = 0;
  }

  #newTextIndex(): TextIndex {
    return this.#options.createIndex?.() ?? new PostingsIndex();
  }

  /** Reads entries up to `end`: speaker, day, store seq, and the in-process index when there is one. */
  #readUpTo(end: number): void {
    const entries = this.#options.entries();
    for (let seq = this.#read; seq < end; seq++) {
      const entry = entries[seq] as HistoryEntry;
      const text = turnText(entry, this.#callNames);
      const answered = toolResultIds(entry.message as Message);
      if (answered.length > 0) {
        this.#resultNames.set(seq, answered.map((id) => this.#callNames.get(id) ?? '').join('\n'));
      }
      this.#speakers.push(text.speaker?.toLowerCase());
      this.#days.push(text.day?.first ?? Number.NaN);
      this.#roles.push(text.role);
      this.#times.push(Date.parse(entry.metadata.timestamp));
      this.#tools.push(text.tools.join('\n'));
      if (text.recallOnly) this.#recallOnly.add(seq);
      if (entry.metadata.ephemeral) {
        this.#entryOfStoreSeq ??= Array.from({ length: this.#stored }, (_, i) => i);
      } else {
        this.#entryOfStoreSeq?.push(seq);
        this.#stored++;
      }
      if (this.#text !== null && this.#textHead === seq) {
        this.#text.add(seq, indexedText(text.search));
        this.#textHead++;
      }
    }
    this.#read = Math.max(this.#read, end);
  }

  /** Brings the in-process index up to the entries (building it from the start when new). */
  #textUpTo(end: number): TextIndex {
    if (this.#text === null) {
      this.#text = this.#newTextIndex();
      this.#textHead = 0;
    }
    const text = this.#text;
    const entries = this.#options.entries();
    for (let seq = this.#textHead; seq < end; seq++) {
      text.add(seq, searchText((entries[seq] as HistoryEntry).message));
    }
    this.#textHead = Math.max(this.#textHead, end);
    return text;
  }

  /**
   * The hits for `query`, best first, their texts together within `maxTokens`. An empty query
   * (or one of stopwords only) gives `[]`; a very long one is read up to its first 4,000
   * characters. Throws `InvalidArgumentError` for a query that is not a string or bad options.
   */
  async recall(query: string, options: RecallOptions = {}): Promise<RecallHit[]> {
    if (typeof query !== 'string') {
      throw new InvalidArgumentError(
        'query',
        `expected a string, got ${query === null ? 'null' : typeof query}`,
      );
    }
    const { limit, maxTokens, offset } = checkOptions(options);
    const filter = readFilters(options);
    this.#checkGeneration();
    const q = readQuery(query);
    if (q.words.length === 0 && q.days.length === 0) return [];
    const entries = this.#options.entries();
    const count = entries.length;
    // In process, the index is fed while the entries are read (the first call reads them all once).
    if (!this.searchesStore) this.#textUpTo(this.#read);
    this.#readUpTo(count);
    const accept = this.#acceptor(filter, count);
    const wanted = limit + offset;
    const scored =
      q.words.length === 0 || accept.allowed === 0
        ? []
        : await this.#find(q, wanted * CANDIDATES_PER_HIT, count, accept);
    const facts = (seq: number): TurnFacts => {
      const speaker = this.#speakers[seq];
      const day = this.#days[seq] as number;
      return {
        ...(speaker !== undefined ? { speaker } : {}),
        ...(Number.isNaN(day) ? {} : { day }),
      };
    };
    const days = this.#days;
    const groups = rankGroups({
      scored,
      count,
      query: q,
      facts,
      *seqsBetween(first, last) {
        for (let seq = 0; seq < count; seq++) {
          const day = days[seq] as number;
          if (day >= first && day <= last && accept.test(seq)) yield seq;
        }
      },
      limit: wanted,
      ...(this.#options.weights ? { weights: this.#options.weights } : {}),
    });
    const turns = new Map<number, TurnText>();
    const turn = (seq: number): TurnText => {
      let t = turns.get(seq);
      if (t === undefined) {
        // A result is labelled with the calls it answered when it was read (ids can be reused).
        const entry = entries[seq] as HistoryEntry;
        const names = new Map<string, string>();
        const known = this.#resultNames.get(seq)?.split('\n') ?? [];
        toolResultIds(entry.message as Message).forEach((id, i) => {
          if (known[i]) names.set(id, known[i] as string);
        });
        t = turnText(entry, names);
        turns.set(seq, t);
      }
      return t;
    };
    const fitted = fitHits({
      groups: groups.slice(offset),
      count,
      turn,
      countText: this.#options.countText,
      maxTokens,
      terms: new Set(q.terms),
    });
    return fitted.map((hit) => {
      const seq = hit.group.centers[0] as number;
      const entry = entries[seq] as HistoryEntry;
      return {
        seq,
        role: entry.message.role as Role,
        text: hit.text,
        score: Math.round(hit.group.score * 1000) / 1000,
        timestamp: entry.metadata.timestamp,
      };
    });
  }

  /**
   * Which of the `count` entries read may be hits under `filter`, and how many: never recall's own
   * turns.
   */
  #acceptor(filter: ReadFilters, count: number): Acceptor {
    const from = Math.max(0, filter.fromSeq ?? 0);
    const to = Math.min(count - 1, filter.toSeq ?? count - 1);
    const roles = this.#roles;
    const times = this.#times;
    const tools = this.#tools;
    const recallOnly = this.#recallOnly;
    const test = (seq: number): boolean => {
      if (seq < from || seq > to || recallOnly.has(seq)) return false;
      if (filter.roles !== undefined && !filter.roles.has(roles[seq] as RecallRole)) return false;
      if (filter.start !== undefined || filter.end !== undefined) {
        const time = times[seq] as number;
        if (Number.isNaN(time)) return false;
        if (filter.start !== undefined && time < filter.start) return false;
        if (filter.end !== undefined && time > filter.end) return false;
      }
      return filter.toolName === undefined || (tools[seq] as string).split('\n').includes(filter.toolName);
    };
    if (!filter.any) {
      // Only recall's own turns are left out: the count stays within a few of the whole.
      return { test, allowed: recallOnly.size === 0 ? count : count - recallOnly.size };
    }
    const seqs: number[] = [];
    for (let seq = from; seq <= to; seq++) if (test(seq)) seqs.push(seq);
    const allowed = seqs.length;
    if (allowed === 0) return { test, allowed };
    const first = seqs[0] as number;
    const last = seqs[allowed - 1] as number;
    const within = last - first + 1 === allowed ? { from: first, to: last } : { from: first, to: last, seqs };
    return { test, allowed, within };
  }

  /** Candidates from the store's index when it has one (catching it up or rebuilding it as needed), else in process. */
  async #find(q: RecallQuery, k: number, count: number, accept: Acceptor): Promise<ScoredSeq[]> {
    const search = this.#search;
    if (search !== undefined && !this.#storeFailed) {
      const id = this.#options.conversationId ?? 'default';
      // Under a filter the store is told which entries it allows, and ranks only those (asked
      // for a capped list of every match and filtered afterwards, a narrow filter's matches
      // ranked out of the list: issue 31 item 4). Without one, only recall's own turns are left
      // out, and it is asked for as many more candidates.
      const within = accept.within === undefined ? undefined : this.#storeWithin(accept.within);
      const storeK =
        accept.allowed >= count || within !== undefined
          ? k
          : Math.min(MAX_FILTERED_CANDIDATES, Math.max(k, Math.ceil((k * count) / accept.allowed)));
      const pick = (hits: ScoredSeq[]) =>
        accept.allowed >= count ? hits : hits.filter((h) => accept.test(h.seq)).slice(0, k);
      if (accept.within !== undefined && within === undefined) return [];
      try {
        return pick(this.#fromStore(await this.#storeFind(search, id, q, storeK, within), count));
      } catch (error) {
        this.#options.onWarn?.(
          'recall_index_rebuilt',
          `recall: the store's search index failed (${String(error instanceof Error ? error.message : error)}); rebuilding it`,
        );
        try {
          await search.rebuild(id);
          return pick(this.#fromStore(await search.find(id, q.words, storeK, within), count));
        } catch (again) {
          this.#storeFailed = true;
          this.#options.onWarn?.(
            'recall_index_in_process',
            `recall: the store's search index cannot be rebuilt (${String(again instanceof Error ? again.message : again)}); searching in process instead`,
          );
        }
      }
    }
    const test = accept.allowed >= count ? undefined : accept.test;
    try {
      return this.#textUpTo(count).search(q.terms, k, test);
    } catch (error) {
      this.#options.onWarn?.(
        'recall_index_rebuilt',
        `recall: the in-process index failed (${String(error instanceof Error ? error.message : error)}); rebuilding it`,
      );
      this.#text = null;
      return this.#textUpTo(count).search(q.terms, k, test);
    }
  }

  async #storeFind(
    search: StoreSearch,
    id: string,
    q: RecallQuery,
    k: number,
    within: SearchWithin | undefined,
  ): Promise<StoreSearchResult> {
    const found = await search.find(id, q.words, k, within);
    if (found.indexed >= found.head) return found;
    await search.catchUp(id);
    return search.find(id, q.words, k, within);
  }

  /**
   * Entry seqs a filter allows as store seqs (they differ when some entries are ephemeral: those
   * are not stored, so never a store's hit); undefined when it allows no stored entry.
   */
  #storeWithin(within: NonNullable<Acceptor['within']>): SearchWithin | undefined {
    const map = this.#entryOfStoreSeq;
    if (map === null) {
      return within.seqs === undefined
        ? { fromSeq: within.from, toSeq: within.to }
        : { fromSeq: within.from, toSeq: within.to, seqs: within.seqs };
    }
    // `map` is ascending: the store seq of an entry seq is where it stands in it.
    const storeSeqs: number[] = [];
    const entrySeqs =
      within.seqs ?? Array.from({ length: within.to - within.from + 1 }, (_, i) => within.from + i);
    let at = lowerBound(map, within.from);
    for (const seq of entrySeqs) {
      while (at < map.length && (map[at] as number) < seq) at++;
      if (at < map.length && map[at] === seq) storeSeqs.push(at);
    }
    if (storeSeqs.length === 0) return undefined;
    const fromSeq = storeSeqs[0] as number;
    const toSeq = storeSeqs[storeSeqs.length - 1] as number;
    return toSeq - fromSeq + 1 === storeSeqs.length
      ? { fromSeq, toSeq }
      : { fromSeq, toSeq, seqs: storeSeqs };
  }

  /** Store seqs to entry seqs (they differ when some entries are ephemeral), within the entries read. */
  #fromStore(found: StoreSearchResult, count: number): ScoredSeq[] {
    const map = this.#entryOfStoreSeq;
    const out: ScoredSeq[] = [];
    for (const hit of found.hits) {
      const seq = map === null ? hit.seq : map[hit.seq];
      if (seq !== undefined && seq < count) out.push({ seq, score: hit.score });
    }
    return out;
  }
}

/** The first index of ascending `values` holding at least `value`. */
function lowerBound(values: readonly number[], value: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((values[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
