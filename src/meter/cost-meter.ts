/**
 * What each request was billed for its input, by its provider's caching rules: the tokens read
 * from the prompt cache, written to it and sent fresh, and their price. The meter sees the views
 * sent and their times, nothing else, and follows the documented rules (`src/tokens/pricing.ts`):
 *
 * - `automatic` (OpenAI): every prompt of `minPrefixTokens` or more is cached; a request reads the
 *   longest prefix it shares with an earlier request still alive, counted as `minPrefixTokens`
 *   plus whole `increment`s; nothing is billed for writing.
 * - `breakpoints` (Anthropic, with the breakpoint on the last block as automatic caching places
 *   it): a request reads the longest earlier cache entry that is exactly its prefix and ends at
 *   most `lookbackBlocks` blocks before its breakpoint, and writes the rest when the whole
 *   prompt reaches `minPrefixTokens`. A hit refreshes the entry's TTL.
 *
 * An entry lives `ttlSeconds` after its last use. Prefixes are compared by message: one message is
 * one block, and tool definitions with the request framing are the first block. (A provider that
 * matches by content block reads a little more where a message only grew, as when a converted
 * tool result and the next user text merge into one Anthropic user turn: there the meter predicts
 * a miss from that message on.) Requests of a
 * conversation go one after another, as the manager sends them.
 *
 * What the meter keeps: the last request as a chain of blocks (by identity, with prefix tokens
 * and, for breakpoints, each prefix's entry by position), and, where a request cut the chain,
 * the blocks that left as a fork. A fork's entries are fingerprinted only when a later request
 * passes through the fork's first block again; until then no request can read them. So a steady
 * turn hashes nothing. The rules are checked against a reference that fingerprints every prefix
 * of every request (`cost-meter.test.ts`).
 */
import type { Message } from '../messages/types.js';
import type { CachingRules, ModelPricing } from '../tokens/pricing.js';
import type { UsageIteration, UsageSample } from './usage.js';

/** One block of a request: a fingerprint of its content and its tokens. */
export interface MeterBlock {
  key: number;
  tokens: number;
}

/**
 * How the meter reads the items of a request (`CostMeter.billView`): their block fingerprints and
 * tokens, and what makes two items the same block.
 */
export interface MeterSource<T> {
  /** The fingerprint of an item's content. */
  key(item: T): number;
  /** Its tokens. */
  tokens(item: T): number;
  /** What makes two items the same block (default: the item itself, by identity). */
  identity?(item: T): unknown;
  /** Two items have the same key only when they are the same object (keys need not be compared). */
  keysByIdentity?: boolean;
  /**
   * Asked where identity fails (only without `identity`): whether a re-made item has the content
   * of the previous request's item there, so that it still counts as shared.
   */
  same?(previous: unknown, item: T): boolean;
}

/** What one request was billed for its input. */
export interface RequestCost {
  /** When it was sent (ms since the epoch): the time of its newest message. */
  at: number;
  /** Every input token: `cachedTokens + writtenTokens + freshTokens`. */
  inputTokens: number;
  /** Read from the prompt cache. */
  cachedTokens: number;
  /** Written to the prompt cache (billed apart only where the provider charges for it). */
  writtenTokens: number;
  /** Neither read nor written. */
  freshTokens: number;
  /** USD billed for the input, where the model's prices are known. */
  price?: number;
  /** USD the same input would cost with no cache at all. */
  uncachedPrice?: number;
  /** Seconds since the previous request; null for the first. */
  idleSeconds: number | null;
  /** The previous request's cache had expired by this one (idle longer than the TTL). */
  cacheExpired: boolean;
}

/** Sums over the requests metered so far. */
export interface CostTotals {
  requests: number;
  inputTokens: number;
  cachedTokens: number;
  writtenTokens: number;
  freshTokens: number;
  price?: number;
  uncachedPrice?: number;
  /**
   * Compactions the provider ran on its server (Anthropic `usage.iterations`), whose steps are
   * in the sums above: the input of every step after the one sent, and here the output the
   * compaction steps wrote (in `price` too, at the output price). Absent before the first.
   */
  serverCompactions?: { count: number; outputTokens: number };
}

/** The meter's prediction for the last request beside what the provider reported for it. */
export interface CacheComparison {
  predictedCached: number;
  reportedCached: number;
  predictedWritten: number;
  reportedWritten: number;
  /** `reportedCached - predictedCached`. */
  difference: number;
  /** Every input token the provider reported for the request (cached, written and fresh). */
  reportedInput: number;
  /**
   * `|difference| / reportedInput`: how far the prediction of cached tokens was off, as a share
   * of the request's whole reported input (0 when the provider reported none). Above 0.05 the
   * manager warns (`cache_mismatch`).
   */
  relative: number;
}

const fingerprints = new WeakMap<object, number>();

/** A 53-bit hash of a string (two multiplicative 32-bit lanes). */
export function hashString(text: string, seed = 0): number {
  let a = 0xdeadbeef ^ seed;
  let b = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 2654435761);
    b = Math.imul(b ^ c, 1597334677);
  }
  a = Math.imul(a ^ (a >>> 16), 2246822507) ^ Math.imul(b ^ (b >>> 13), 3266489909);
  b = Math.imul(b ^ (b >>> 16), 2246822507) ^ Math.imul(a ^ (a >>> 13), 3266489909);
  return 4294967296 * (2097151 & b) + (a >>> 0);
}

/** A fingerprint of a message's (or any JSON value's) content, memoized per object. */
export function messageFingerprint(message: Message | object): number {
  let key = fingerprints.get(message);
  if (key === undefined) {
    key = hashString(JSON.stringify(message));
    fingerprints.set(message, key);
  }
  return key;
}

const objectKeys = new WeakMap<object, number>();
let nextObjectKey = 1;

/**
 * A key for an object that is one per object, at the cost of a lookup: the cheap block key of a
 * message the manager stores (frozen, so its content cannot change under the same object).
 */
export function objectKey(value: object): number {
  let key = objectKeys.get(value);
  if (key === undefined) {
    key = nextObjectKey++;
    objectKeys.set(value, key);
  }
  return key;
}

/** The fingerprint of a prefix extended by one block. */
function extend(prefix: number, block: number): number {
  const lo = Math.imul((prefix >>> 0) ^ (block >>> 0), 2654435761);
  const hi = Math.imul(((prefix / 4294967296) | 0) ^ ((block / 4294967296) | 0) ^ (lo >>> 15), 1597334677);
  return 4294967296 * (2097151 & (hi ^ (lo >>> 7))) + ((lo ^ Math.imul(hi, 2246822507)) >>> 0);
}

const NO_FORKS: readonly Fork[] = [];

/** Removes the elements of `a` from `at` on and returns them (a short tail is popped, not cut by length). */
function cutAt<T>(a: T[], at: number): T[] {
  if (a.length <= at) return [];
  const out = a.slice(at);
  if (a.length - at <= 16) while (a.length > at) a.pop();
  else a.length = at;
  return out;
}

/** Blocks read as they are, compared by their fingerprints. */
const BLOCKS: MeterSource<MeterBlock> = {
  key: (b) => b.key,
  tokens: (b) => b.tokens,
  identity: (b) => b.key,
};

const DEFAULT_CACHING: CachingRules = { mode: 'automatic', minPrefixTokens: 1024, ttlSeconds: 300 };

/** Sweep expired entries once the cache holds this many. */
const SWEEP_AT = 50_000;

/**
 * Blocks an earlier request had beyond what the chain kept when a later request cut it: the
 * first at chain position `at`. Their cache entries are not fingerprinted while nothing can reach
 * them: a request reaches them only through `items[0]` at `at` (the fork is then opened and its
 * entries, with those of the forks it holds, go into the fingerprinted cache).
 */
interface Fork {
  at: number;
  /** The blocks, as the chain held them (by identity). */
  items: unknown[];
  /** Tokens of the prefix through each block. */
  cum: number[];
  /** Fingerprints of those prefixes, as far as the chain had them. */
  keys: number[];
  /**
   * Breakpoints: when the entry of the prefix through each block expires (-1: no entry); null for
   * automatic caching, where every prefix expires at `until`.
   */
  expires: number[] | null;
  /** The latest expiry of any entry here or in `forks` (with automatic caching, that of every prefix here). */
  until: number;
  /** Forks further on that this one cut off: reachable only through it. */
  forks: readonly Fork[];
}

/** Meters one conversation's requests to one model: tokens sent, cached and billed, and their cost. */
export class CostMeter {
  readonly pricing: ModelPricing | undefined;
  private readonly ttl: number;
  /**
   * Prefix fingerprint → when its cache entry expires (ms): entries of prefixes off the chain that
   * a request could reach (opened forks). Entries of the chain's own prefixes are kept by position.
   */
  private readonly entries = new Map<number, number>();
  /** No entry in `entries` lives past this. */
  private entriesUntil = 0;
  private lastAt: number | undefined;
  private sweepAt = SWEEP_AT;
  /**
   * The last request, block by block: what each block was (by identity), the tokens of its prefix,
   * for breakpoints when that prefix's entry expires (-1: none), and the prefixes' fingerprints,
   * made only when needed (`keys` may be shorter than `items`).
   */
  private readonly chain: { items: unknown[]; cum: number[]; expires: number[]; keys: number[] } = {
    items: [],
    cum: [],
    expires: [],
    keys: [],
  };
  /** What fingerprints the chain's blocks (for sources without `identity`). */
  private keySource: MeterSource<unknown> | null = null;
  /** Where requests left the chain, by position; none of them is open. */
  private forks: Fork[] = [];
  private forkSweepAt = 64;
  /** The last request's bill. */
  last: RequestCost | null = null;
  readonly totals: CostTotals;
  /**
   * Whether the requests carry a cache breakpoint. With `breakpoints` caching (Anthropic, Claude
   * on Bedrock) nothing is cached unless one is sent: "Prompt caching … caches the prefix up to a
   * block marked `cache_control`" (platform.claude.com/docs/en/build-with-claude/prompt-caching).
   * While false such a meter bills every input token fresh. `automatic` caching ignores it.
   */
  breakpointsSent = true;
  /**
   * A reply reported cache reads or writes: the requests carry a breakpoint the meter cannot see
   * in the messages (Anthropic's automatic caching, a top-level `cache_control` on the request,
   * which "applies the cache breakpoint to the last cacheable block"; prompt-caching page above).
   */
  breakpointsSeen = false;

  constructor(pricing: ModelPricing | undefined) {
    this.pricing = pricing;
    this.ttl = (pricing?.caching.ttlSeconds ?? 300) * 1000;
    this.totals = { requests: 0, inputTokens: 0, cachedTokens: 0, writtenTokens: 0, freshTokens: 0 };
    if (pricing) {
      this.totals.price = 0;
      this.totals.uncachedPrice = 0;
    }
  }

  /** Bills a request sent at `at` (ms) made of `blocks`, and remembers what it cached. */
  bill(at: number, blocks: readonly MeterBlock[]): RequestCost {
    const first = blocks[0];
    return first === undefined
      ? this.billView(at, 0, 0, blocks, BLOCKS)
      : this.billView(at, first.key, first.tokens, blocks, BLOCKS, 1);
  }

  /**
   * Bills a request made of a head block (tool definitions and framing: `headKey`, `headTokens`)
   * and one block per item of `items` from index `from` on, read through `source`. Items are
   * compared with the previous request's by identity first: the shared prefix of a prefix-stable
   * view is neither re-hashed nor re-counted, and nothing is fingerprinted unless a request could
   * read an entry off the chain, so a steady turn costs its new messages, not the whole view.
   * `knownShared`: how many leading items the caller knows are the previous request's own (not
   * compared).
   */
  billView<T>(
    at: number,
    headKey: number,
    headTokens: number,
    items: readonly T[],
    source: MeterSource<T>,
    from = 0,
    knownShared = 0,
  ): RequestCost {
    const caching = this.pricing?.caching ?? DEFAULT_CACHING;
    const automatic = caching.mode === 'automatic';
    // No breakpoint sent: no prefix is ever long enough to be written, so none is read either.
    const min = automatic || this.breakpointsSent ? caching.minPrefixTokens : Number.POSITIVE_INFINITY;
    const chain = this.chain;
    const ttl = this.ttl;
    const byIdentity = source.identity !== undefined;
    if (this.keySource !== (byIdentity ? null : source)) {
      // Blocks another source put in the chain and the forks are fingerprinted by it.
      if (this.keySource) this.settleKeys();
      this.keySource = byIdentity ? null : (source as MeterSource<unknown>);
    }
    const idleSeconds = this.lastAt === undefined ? null : Math.max(0, at - this.lastAt) / 1000;
    const cacheExpired = idleSeconds !== null && idleSeconds * 1000 > ttl;
    const previousAlive = this.lastAt !== undefined && this.lastAt + ttl >= at;
    // The prefix shared with the previous request, by identity (block 0 is the head).
    const n = items.length - from + 1;
    const m = chain.items.length;
    let shared = 0;
    let changed = m;
    if (m > 0 && chain.items[0] === headKey) {
      const limit = Math.min(n, m);
      shared = Math.max(1, Math.min(limit, knownShared + 1));
      if (!byIdentity) {
        for (;;) {
          while (shared < limit && chain.items[shared] === items[from + shared - 1]) shared++;
          // A re-made object with the same content (a converted or re-rendered message) is the same block.
          if (shared < limit && source.same?.(chain.items[shared], items[from + shared - 1]!)) {
            chain.items[shared] = items[from + shared - 1];
            if (shared < changed) changed = shared;
            shared++;
          } else break;
        }
      } else {
        while (shared < limit && chain.items[shared] === source.identity!(items[from + shared - 1]!))
          shared++;
      }
    }
    if (shared < changed) changed = shared;
    if (shared < m) this.cut(shared, this.lastAt! + ttl);
    let sum = shared > 0 ? chain.cum[shared - 1]! : 0;
    for (let i = shared; i < n; i++) {
      if (i === 0) {
        sum += headTokens;
        chain.items.push(headKey);
        if (byIdentity) chain.keys.push(extend(0, headKey));
      } else {
        const item = items[from + i - 1]!;
        sum += source.tokens(item);
        if (byIdentity) {
          const id = source.identity!(item);
          chain.items.push(id);
          chain.keys.push(extend(chain.keys[i - 1]!, source.key(item)));
        } else chain.items.push(item);
      }
      chain.cum.push(sum);
      if (!automatic) chain.expires.push(-1);
    }
    if (this.forks.length > 0) this.reviewForks(changed, at, min);
    // Entries off the chain, only where a request could reach one.
    let keyed = false;
    if (this.entries.size > 0) {
      if (this.entriesUntil >= at) {
        keyed = true;
        this.keyUpTo(n - 1);
        if (this.entries.size >= this.sweepAt) this.sweep(at);
      } else this.entries.clear();
    }
    const entries = this.entries;
    const keys = chain.keys;
    let cached = 0;
    let written = 0;
    if (automatic) {
      // Prefixes in the chain were last sent with the previous request; beyond it, older entries.
      let hit = -1;
      if (keyed) {
        for (let i = n - 1; i >= shared && chain.cum[i]! >= min; i--) {
          if ((entries.get(keys[i]!) ?? -1) >= at) {
            hit = i;
            break;
          }
        }
      }
      if (hit < 0 && previousAlive && shared > 0) hit = shared - 1;
      if (hit < 0 && !previousAlive && keyed) {
        for (let i = shared - 1; i >= 0 && chain.cum[i]! >= min; i--) {
          if ((entries.get(keys[i]!) ?? -1) >= at) {
            hit = i;
            break;
          }
        }
      }
      if (hit >= 0 && chain.cum[hit]! >= min) {
        const step = caching.increment ?? 1;
        cached = min + Math.floor((chain.cum[hit]! - min) / step) * step;
      }
    } else {
      const lookback = caching.lookbackBlocks ?? n;
      for (let i = n - 1; i >= Math.max(0, n - 1 - lookback); i--) {
        const expires = keyed ? Math.max(chain.expires[i]!, entries.get(keys[i]!) ?? -1) : chain.expires[i]!;
        if (expires >= at) {
          cached = chain.cum[i]!;
          chain.expires[i] = at + ttl;
          break;
        }
      }
      if (sum >= min && n > 0) {
        written = sum - cached;
        chain.expires[n - 1] = at + ttl;
      }
    }
    this.lastAt = this.lastAt === undefined ? at : Math.max(this.lastAt, at);
    const fresh = sum - cached - written;
    const p = this.pricing;
    const cost: RequestCost = p
      ? {
          at,
          inputTokens: sum,
          cachedTokens: cached,
          writtenTokens: written,
          freshTokens: fresh,
          price: (cached * p.cacheRead + written * p.cacheWrite + fresh * p.input) / 1e6,
          uncachedPrice: (sum * p.input) / 1e6,
          idleSeconds,
          cacheExpired,
        }
      : {
          at,
          inputTokens: sum,
          cachedTokens: cached,
          writtenTokens: written,
          freshTokens: fresh,
          idleSeconds,
          cacheExpired,
        };
    this.add(cost);
    this.last = cost;
    return cost;
  }

  /**
   * Adds the steps the provider ran beyond the request `billView` predicted, from the usage it
   * reported: with a server compaction the first step read what was sent (the prediction) and
   * each later one read the compacted context again, billed as reported; the compaction step's
   * summary is billed as output. "To calculate the total tokens consumed and billed for a request,
   * sum across all entries in the usage.iterations array"
   * (platform.claude.com/docs/en/build-with-claude/compaction). Nothing without a compaction step.
   */
  billIterations(iterations: readonly UsageIteration[]): void {
    if (!iterations.some((it) => it.type === 'compaction')) return;
    const t = this.totals;
    const p = this.pricing;
    t.serverCompactions ??= { count: 0, outputTokens: 0 };
    const server = t.serverCompactions;
    iterations.forEach((it, i) => {
      if (it.type === 'compaction') {
        server.count++;
        server.outputTokens += it.outputTokens;
        if (p && t.price !== undefined) t.price += (it.outputTokens * p.output) / 1e6;
      }
      if (i === 0) return;
      const input = it.inputTokens + it.cacheReadTokens + it.cacheWriteTokens;
      t.inputTokens += input;
      t.cachedTokens += it.cacheReadTokens;
      t.writtenTokens += it.cacheWriteTokens;
      t.freshTokens += it.inputTokens;
      if (p && t.price !== undefined && t.uncachedPrice !== undefined) {
        t.price +=
          (it.cacheReadTokens * p.cacheRead + it.cacheWriteTokens * p.cacheWrite + it.inputTokens * p.input) /
          1e6;
        t.uncachedPrice += (input * p.input) / 1e6;
      }
    });
  }

  /** Whether a request at `at` would find the cache of the last one expired. */
  expiredAt(at: number): boolean {
    return this.lastAt !== undefined && at - this.lastAt > this.ttl;
  }

  /** The last request's prediction beside the provider's report of it; null before any request. */
  /**
   * Learns from a reply that the requests carry a breakpoint: when the provider reported cache
   * reads or writes for a request the meter billed uncached, that request wrote its prefix (what
   * the provider does at a breakpoint on its last block), so it is billed as written, and later
   * requests read it. Called before {@link compare}.
   */
  learnBreakpoints(reported: UsageSample): void {
    if (this.breakpointsSeen || reported.cacheReadTokens + reported.cacheWriteTokens === 0) return;
    this.breakpointsSeen = true;
    const last = this.last;
    const caching = this.pricing?.caching;
    if (!last || this.breakpointsSent || caching?.mode !== 'breakpoints' || this.lastAt === undefined) return;
    const n = this.chain.items.length;
    if (n === 0 || this.chain.cum[n - 1]! < caching.minPrefixTokens) return;
    this.chain.expires[n - 1] = this.lastAt + this.ttl;
    const written = last.freshTokens;
    last.writtenTokens += written;
    last.freshTokens = 0;
    this.totals.writtenTokens += written;
    this.totals.freshTokens -= written;
    const p = this.pricing!;
    const extra = (written * (p.cacheWrite - p.input)) / 1e6;
    if (last.price !== undefined) last.price += extra;
    if (this.totals.price !== undefined) this.totals.price += extra;
  }

  compare(reported: UsageSample): CacheComparison | null {
    const last = this.last;
    if (!last) return null;
    const difference = reported.cacheReadTokens - last.cachedTokens;
    return {
      predictedCached: last.cachedTokens,
      reportedCached: reported.cacheReadTokens,
      predictedWritten: last.writtenTokens,
      reportedWritten: reported.cacheWriteTokens,
      difference,
      reportedInput: reported.totalInputTokens,
      relative: reported.totalInputTokens > 0 ? Math.abs(difference) / reported.totalInputTokens : 0,
    };
  }

  private add(cost: RequestCost): void {
    const t = this.totals;
    t.requests++;
    t.inputTokens += cost.inputTokens;
    t.cachedTokens += cost.cachedTokens;
    t.writtenTokens += cost.writtenTokens;
    t.freshTokens += cost.freshTokens;
    if (cost.price !== undefined && t.price !== undefined) t.price += cost.price;
    if (cost.uncachedPrice !== undefined && t.uncachedPrice !== undefined)
      t.uncachedPrice += cost.uncachedPrice;
  }

  /**
   * The chain keeps its first `at` blocks: the rest become a fork, holding the forks further on
   * (reachable only through it from now on). With automatic caching every prefix that leaves was
   * cached until `until`; with breakpoints each keeps its entry's expiry.
   */
  private cut(at: number, until: number): void {
    const chain = this.chain;
    const forks = this.forks;
    let held: readonly Fork[] = NO_FORKS;
    if (forks.length > 0 && forks[forks.length - 1]!.at > at) {
      let k = forks.length;
      while (k > 0 && forks[k - 1]!.at > at) k--;
      held = cutAt(forks, k);
    }
    const automatic = (this.pricing?.caching ?? DEFAULT_CACHING).mode === 'automatic';
    const expires = automatic ? null : cutAt(chain.expires, at);
    let latest = automatic ? until : -1;
    if (expires) for (const e of expires) if (e > latest) latest = e;
    for (const f of held) if (f.until > latest) latest = f.until;
    forks.push({
      at,
      items: cutAt(chain.items, at),
      cum: cutAt(chain.cum, at),
      keys: cutAt(chain.keys, at),
      expires,
      until: latest,
      forks: held,
    });
  }

  /**
   * Once the chain changed from position `changed` on: a fork there that the chain now passes
   * through (the same block at its position, or the chain ends before it) is opened, its entries
   * fingerprinted into `entries`; forks that expired are dropped. Forks before `changed` are as
   * they were: closed (they are sorted by position).
   */
  private reviewForks(changed: number, at: number, min: number): void {
    const forks = this.forks;
    const items = this.chain.items;
    for (let k = forks.length - 1; k >= 0 && forks[k]!.at >= changed; k--) {
      const f = forks[k]!;
      if (f.until < at) forks.splice(k, 1);
      else if (f.at >= items.length || this.sameBlock(items[f.at], f.items[0])) {
        forks.splice(k, 1);
        this.open(f, f.at > 0 ? this.keyUpTo(f.at - 1) : 0, at, min);
      }
    }
    if (forks.length >= this.forkSweepAt) {
      this.forks = forks.filter((f) => f.until >= at);
      this.forkSweepAt = Math.max(64, this.forks.length * 2);
    }
  }

  /** Puts a fork's live entries, and those of the forks it holds, into `entries`. */
  private open(f: Fork, base: number, at: number, min: number): void {
    if (f.until < at) return;
    const keys = this.forkKeys(f, base);
    for (let j = 0; j < f.items.length; j++) {
      const expires = f.expires ? f.expires[j]! : f.cum[j]! >= min ? f.until : -1;
      if (expires >= at && (this.entries.get(keys[j]!) ?? -1) < expires) {
        this.entries.set(keys[j]!, expires);
        if (expires > this.entriesUntil) this.entriesUntil = expires;
      }
    }
    for (const g of f.forks) this.open(g, keys[g.at - f.at - 1]!, at, min);
  }

  /** Fingerprints every prefix of the chain and of the forks (before the source changes). */
  private settleKeys(): void {
    this.keyUpTo(this.chain.items.length - 1);
    const settle = (f: Fork, base: number): void => {
      const keys = this.forkKeys(f, base);
      for (const g of f.forks) settle(g, keys[g.at - f.at - 1]!);
    };
    for (const f of this.forks) settle(f, f.at > 0 ? this.chain.keys[f.at - 1]! : 0);
  }

  /** A fork's prefix fingerprints, all made (`base`: the fingerprint of the prefix before it). */
  private forkKeys(f: Fork, base: number): number[] {
    this.extendKeys(f.keys, f.items, f.at, base, f.items.length - 1);
    return f.keys;
  }

  /** Whether two chain blocks are the same block: by identity, or where that is not enough, by fingerprint. */
  private sameBlock(a: unknown, b: unknown): boolean {
    if (a === b) return true;
    const source = this.keySource;
    return (
      source !== null && !source.keysByIdentity && typeof a === 'object' && source.key(a) === source.key(b)
    );
  }

  /** The chain's prefix fingerprints made up to position `i`; returns the one at `i`. */
  private keyUpTo(i: number): number {
    if (i < 0) return 0;
    const keys = this.chain.keys;
    this.extendKeys(keys, this.chain.items, 0, 0, i);
    return keys[i]!;
  }

  /**
   * Makes `keys` (the prefix fingerprints of `items`, the first at chain position `at`, after a
   * prefix fingerprinted `base`) up to index `i`. Position 0 holds the head's fingerprint itself.
   */
  private extendKeys(keys: number[], items: readonly unknown[], at: number, base: number, i: number): void {
    let key = keys.length > 0 ? keys[keys.length - 1]! : base;
    for (let j = keys.length; j <= i; j++) {
      key = extend(key, at + j === 0 ? (items[0] as number) : this.keySource!.key(items[j]));
      keys.push(key);
    }
  }

  private sweep(at: number): void {
    for (const [key, expires] of this.entries) if (expires < at) this.entries.delete(key);
    this.sweepAt = Math.max(SWEEP_AT, this.entries.size * 2);
  }
}

/**
 * The blocks of a request: tool definitions and framing (`fixedTokens`, fingerprinted by
 * `fixedKey`) first, then one block per message with its tokens from `count`.
 */
export function requestBlocks(
  messages: readonly Message[],
  count: (message: Message) => number,
  fixedTokens: number,
  fixedKey = 0,
): MeterBlock[] {
  const blocks: MeterBlock[] = [{ key: hashString(`fixed:${fixedKey}:${fixedTokens}`), tokens: fixedTokens }];
  for (const m of messages) blocks.push({ key: messageFingerprint(m), tokens: count(m) });
  return blocks;
}

/** The cost figures `usage()` carries: the last request, the session so far, the last comparison. */
export interface UsageCost {
  /** The catalog id the requests were billed as. */
  model: string;
  /**
   * The currency of every price here: `USD`, as the catalog's prices are. `usage()` gives prices
   * rounded to a billionth of a dollar, so sums of per-token prices carry no float noise.
   */
  currency: 'USD';
  last: RequestCost;
  totals: CostTotals;
  /** Where the prices were read, when they are known. */
  pricing?: string;
  /** The last `recordUsage` with cache figures, beside the meter's prediction for that request. */
  reported?: CacheComparison;
}

/** Sums the costs of a list of requests (for reports and benchmarks). */
export function sumCosts(costs: readonly RequestCost[], priced: boolean): CostTotals {
  const t: CostTotals = { requests: 0, inputTokens: 0, cachedTokens: 0, writtenTokens: 0, freshTokens: 0 };
  if (priced) {
    t.price = 0;
    t.uncachedPrice = 0;
  }
  for (const c of costs) {
    t.requests++;
    t.inputTokens += c.inputTokens;
    t.cachedTokens += c.cachedTokens;
    t.writtenTokens += c.writtenTokens;
    t.freshTokens += c.freshTokens;
    if (t.price !== undefined) t.price += c.price ?? 0;
    if (t.uncachedPrice !== undefined) t.uncachedPrice += c.uncachedPrice ?? 0;
  }
  return t;
}
