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
 */
import type { Message } from '../messages/types.js';
import type { CachingRules, ModelPricing } from '../tokens/pricing.js';
import type { UsageSample } from './usage.js';

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
}

/** The meter's prediction for the last request beside what the provider reported for it. */
export interface CacheComparison {
  predictedCached: number;
  reportedCached: number;
  predictedWritten: number;
  reportedWritten: number;
  /** `reportedCached - predictedCached`. */
  difference: number;
  /** `|difference|` as a share of the reported input (0 when the provider reported none). */
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

/** Blocks read as they are, compared by their fingerprints. */
const BLOCKS: MeterSource<MeterBlock> = {
  key: (b) => b.key,
  tokens: (b) => b.tokens,
  identity: (b) => b.key,
};

const DEFAULT_CACHING: CachingRules = { mode: 'automatic', minPrefixTokens: 1024, ttlSeconds: 300 };

/** Sweep expired entries once the cache holds this many. */
const SWEEP_AT = 50_000;

/** Meters one conversation's requests to one model; see the module comment. */
export class CostMeter {
  readonly pricing: ModelPricing | undefined;
  private readonly ttl: number;
  /** Prefix fingerprint → when its cache entry expires (ms). */
  private readonly entries = new Map<number, number>();
  private lastAt: number | undefined;
  private sweepAt = SWEEP_AT;
  /** The last request, block by block: what each block was (by identity), its prefix's fingerprint and tokens. */
  private readonly chain: { items: unknown[]; keys: number[]; cum: number[] } = {
    items: [],
    keys: [],
    cum: [],
  };
  /** The last request's bill. */
  last: RequestCost | null = null;
  readonly totals: CostTotals;

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
   * view is neither re-hashed nor re-counted, so a steady turn costs its new messages, not the
   * whole view. `knownShared`: how many leading items the caller knows are the previous request's
   * own (not compared).
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
    const min = caching.minPrefixTokens;
    const automatic = caching.mode === 'automatic';
    const chain = this.chain;
    const idleSeconds = this.lastAt === undefined ? null : Math.max(0, at - this.lastAt) / 1000;
    const cacheExpired = idleSeconds !== null && idleSeconds * 1000 > this.ttl;
    const previousAlive = this.lastAt !== undefined && this.lastAt + this.ttl >= at;
    // The prefix shared with the previous request, by identity (block 0 is the head).
    const n = items.length - from + 1;
    let shared = 0;
    if (chain.items.length > 0 && chain.items[0] === headKey) {
      const limit = Math.min(n, chain.items.length);
      shared = Math.max(1, Math.min(limit, knownShared + 1));
      if (source.identity === undefined) {
        for (;;) {
          while (shared < limit && chain.items[shared] === items[from + shared - 1]) shared++;
          // A re-made object with the same content (a converted or re-rendered message) is the same block.
          if (shared < limit && source.same?.(chain.items[shared], items[from + shared - 1]!)) {
            chain.items[shared] = items[from + shared - 1];
            shared++;
          } else break;
        }
      } else {
        while (shared < limit && chain.items[shared] === source.identity(items[from + shared - 1]!)) shared++;
      }
    }
    // What the previous request had beyond the shared part leaves the chain: its cache entries
    // (every prefix, for automatic caching) keep the previous request's time.
    if (automatic && this.lastAt !== undefined) {
      const expires = this.lastAt + this.ttl;
      for (let i = shared; i < chain.items.length; i++) {
        if (chain.cum[i]! < min) continue;
        const key = chain.keys[i]!;
        if ((this.entries.get(key) ?? -1) < expires) this.entries.set(key, expires);
      }
    }
    if (shared < chain.items.length) {
      chain.items.length = shared;
      chain.keys.length = shared;
      chain.cum.length = shared;
    }
    let key = shared > 0 ? chain.keys[shared - 1]! : 0;
    let sum = shared > 0 ? chain.cum[shared - 1]! : 0;
    for (let i = shared; i < n; i++) {
      if (i === 0) {
        key = extend(key, headKey);
        sum += headTokens;
        chain.items.push(headKey);
      } else {
        const item = items[from + i - 1]!;
        key = extend(key, source.key(item));
        sum += source.tokens(item);
        chain.items.push(source.identity === undefined ? item : source.identity(item));
      }
      chain.keys.push(key);
      chain.cum.push(sum);
    }
    if (this.entries.size >= this.sweepAt) this.sweep(at);
    const entries = this.entries;
    let cached = 0;
    let written = 0;
    if (automatic) {
      // Prefixes in the chain were last sent with the previous request; beyond it, older entries.
      let hit = -1;
      for (let i = n - 1; i >= shared && chain.cum[i]! >= min; i--) {
        if ((entries.get(chain.keys[i]!) ?? -1) >= at) {
          hit = i;
          break;
        }
      }
      if (hit < 0 && previousAlive && shared > 0) hit = shared - 1;
      if (hit < 0 && !previousAlive) {
        for (let i = shared - 1; i >= 0 && chain.cum[i]! >= min; i--) {
          if ((entries.get(chain.keys[i]!) ?? -1) >= at) {
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
        if ((entries.get(chain.keys[i]!) ?? -1) >= at) {
          cached = chain.cum[i]!;
          this.entries.set(chain.keys[i]!, at + this.ttl);
          break;
        }
      }
      if (sum >= min && n > 0) {
        written = sum - cached;
        this.entries.set(chain.keys[n - 1]!, at + this.ttl);
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

  /** Whether a request at `at` would find the cache of the last one expired. */
  expiredAt(at: number): boolean {
    return this.lastAt !== undefined && at - this.lastAt > this.ttl;
  }

  /** The last request's prediction beside the provider's report of it; null before any request. */
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
