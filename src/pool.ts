/**
 * Many conversations in one process (issue 32 item 4): a `ContextManager` per conversation, made
 * on first use, kept while used, and closed least recently used first when the pool holds too many
 * or too much; all of them on one shared store, which only `ContextPool.close` closes.
 */

import { ConfigurationError, StoreError } from './errors.js';
import { ContextManager } from './manager.js';
import type { ContextManagerOptions } from './options.js';
import { resolveStore } from './stores/resolve.js';
import type {
  AppendOptions,
  ConversationPage,
  ConversationStore,
  EntryCountsUpdate,
  GenerationWatch,
  MetaRecord,
  NewEntry,
  ReadOptions,
  StoredEntry,
  StoreSearch,
} from './stores/types.js';

/** Options of {@link ContextPool}. */
export interface ContextPoolOptions {
  /** The store every conversation of the pool lives in: a `ConversationStore` or a store URL. */
  store: ConversationStore | string;
  /**
   * Keep at most this many managers (default: no cap): making one more closes the least recently
   * used at once.
   */
  maxManagers?: number;
  /**
   * Keep managers holding at most about this many bytes of messages, together (default: no cap):
   * beyond it the least recently used are closed, but never the most recently used one. What a
   * manager holds is measured as the JSON length of its messages (see {@link ContextPool.bytes}).
   */
  maxBytes?: number;
  /** Options of every manager the pool makes (each gets the pool's store and its conversation id). */
  options?: Omit<ContextManagerOptions, 'store' | 'conversationId'>;
  /**
   * Makes the manager of a conversation instead (default: `new ContextManager({ ...options, store,
   * conversationId })`). It must use the `store` given, the pool's store as seen by this manager
   * (closing it leaves the pool's store open), and `conversationId`.
   */
  create?: (conversationId: string, store: ConversationStore) => ContextManager;
}

/** One pooled manager and what the pool knows of it. */
interface Slot {
  manager: ContextManager;
  /** Its bytes as last measured. */
  bytes: number;
  /** Set when it may hold other messages than when last measured. */
  dirty: boolean;
  /** How far the last measure reached: the messages counted and the last of them. */
  measured: { count: number; last: unknown };
}

/**
 * Conversation memory for many conversations in one process (a server's workers, an agent host):
 * `get(conversationId)` gives the conversation's `ContextManager`, made on first use (its history
 * loaded from the shared store) and the same one after, so concurrent requests of a conversation
 * queue on one manager. Managers are closed least recently used first when there are more than
 * `maxManagers` or they hold more than `maxBytes`; a conversation closed so is loaded again from
 * the store on its next `get`, with the same stored history, plan and guard state. Closing a
 * manager waits for its pending operations, and a manager made again for that conversation reads
 * the store only once the old one is closed, so nothing written is missed. The store is shared:
 * closing a manager (eviction, `release`) leaves it open; `close()` closes every manager, then it.
 *
 * Holding a manager past its eviction is a mistake the pool reports: its store calls then reject
 * with a `StoreError` (code `closed`). Take the manager from `get` for each request rather than
 * keeping it.
 *
 * Size is measured, only with `maxBytes`, as the length of each message's JSON text, in the
 * background after `get` or a store call by the manager: each message once (the messages appended
 * since the last measure, or all of them after a reload), never while the pool is idle. It counts
 * the messages, not what is derived from them (token counts, the view, the recall index), which
 * grows with them: set `maxBytes` with that margin.
 */
export class ContextPool {
  /** The shared store. */
  readonly store: ConversationStore;
  readonly #options: Omit<ContextManagerOptions, 'store' | 'conversationId'>;
  readonly #create: ((conversationId: string, store: ConversationStore) => ContextManager) | undefined;
  readonly #maxManagers: number;
  readonly #maxBytes: number;
  /** The managers, least recently used first (a `Map` keeps insertion order: a use moves one last). */
  readonly #slots = new Map<string, Slot>();
  /** The closing of each conversation's manager that was closed last, until done. */
  readonly #closing = new Map<string, Promise<void>>();
  /** Errors of closing managers evicted in the background, reported by the next `trim()`. */
  #errors: unknown[] = [];
  #trimPending = false;
  #trims: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(options: ContextPoolOptions) {
    const { maxManagers = Number.POSITIVE_INFINITY, maxBytes = Number.POSITIVE_INFINITY } = options;
    if (!(maxManagers >= 1)) throw new ConfigurationError('maxManagers', 'must be at least 1');
    if (!(maxBytes >= 0)) throw new ConfigurationError('maxBytes', 'must be a number of bytes, 0 or more');
    this.store = resolveStore(options.store);
    this.#options = options.options ?? {};
    this.#create = options.create;
    this.#maxManagers = maxManagers;
    this.#maxBytes = maxBytes;
  }

  /** How many managers the pool holds. */
  get size(): number {
    return this.#slots.size;
  }

  /**
   * The bytes the managers hold, as last measured (the JSON length of their messages; 0 without
   * `maxBytes`, which is what measuring is for). `trim()` brings it up to date.
   */
  get bytes(): number {
    let total = 0;
    for (const slot of this.#slots.values()) total += slot.bytes;
    return total;
  }

  /** The conversations whose managers the pool holds, least recently used first. */
  conversations(): string[] {
    return [...this.#slots.keys()];
  }

  /** Whether the pool holds the conversation's manager now (without making it, or using it). */
  has(conversationId: string): boolean {
    return this.#slots.has(conversationId);
  }

  /**
   * The conversation's manager: the one the pool holds (now the most recently used), or a new one
   * that loads the conversation from the store. Making one beyond `maxManagers` closes the least
   * recently used one. Throws a `StoreError` (code `closed`) after `close()`.
   */
  get(conversationId: string): ContextManager {
    if (this.#closed) throw new StoreError(conversationId, 'the context pool is closed', { code: 'closed' });
    const held = this.#slots.get(conversationId);
    if (held) {
      this.#slots.delete(conversationId);
      this.#slots.set(conversationId, held);
      this.#touched(held);
      return held.manager;
    }
    let slot: Slot | undefined;
    const store = new PooledStore(this.store, this.#closing.get(conversationId), () => {
      if (slot && this.#slots.get(conversationId) === slot) this.#touched(slot);
    });
    const manager = this.#create
      ? this.#create(conversationId, store)
      : new ContextManager({ ...this.#options, store, conversationId });
    if (!(manager instanceof ContextManager) || manager.conversationId !== conversationId) {
      throw new ConfigurationError(
        'create',
        `must return a ContextManager of conversation ${JSON.stringify(conversationId)}`,
      );
    }
    slot = { manager, bytes: 0, dirty: true, measured: { count: 0, last: undefined } };
    this.#slots.set(conversationId, slot);
    for (const [id, lru] of this.#slots) {
      if (this.#slots.size <= this.#maxManagers) break;
      this.#evict(id, lru, true);
    }
    this.#touched(slot);
    return manager;
  }

  /**
   * Closes the conversation's manager (waiting for its pending operations), leaving the store and
   * what it holds as they are; the next `get` loads the conversation again. Nothing when the pool
   * holds no manager of it.
   */
  async release(conversationId: string): Promise<void> {
    const slot = this.#slots.get(conversationId);
    if (slot) await this.#evict(conversationId, slot, false);
    else await this.#closing.get(conversationId);
  }

  /**
   * Measures what the managers used since the last trim hold, and closes the least recently used
   * while the pool holds more than `maxBytes` (never the most recently used). Runs by itself after
   * `get` and after store calls; resolves when done, rejecting with the error of any manager that
   * could not be closed cleanly since the last `trim()` (it is out of the pool all the same).
   */
  async trim(): Promise<void> {
    this.#scheduleTrim();
    await this.#trims;
    const errors = this.#errors;
    this.#errors = [];
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, 'closing evicted managers failed');
  }

  /** Closes every manager (waiting for their pending operations), then the store. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closing = [...this.#slots].map(([id, slot]) => this.#evict(id, slot, false));
    const results = await Promise.allSettled([...closing, ...this.#closing.values(), this.#trims]);
    await this.store.close();
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  }

  /** The slot's manager was used: measure it again before the next trim, which is scheduled. */
  #touched(slot: Slot): void {
    if (this.#maxBytes === Number.POSITIVE_INFINITY) return;
    slot.dirty = true;
    this.#scheduleTrim();
  }

  /** One trim after what is running, however many are asked for meanwhile. */
  #scheduleTrim(): void {
    if (this.#trimPending) return;
    this.#trimPending = true;
    this.#trims = this.#trims.then(() => {
      this.#trimPending = false;
      return this.#trimBytes().catch((error: unknown) => {
        this.#errors.push(error);
      });
    });
  }

  async #trimBytes(): Promise<void> {
    if (this.#maxBytes === Number.POSITIVE_INFINITY || this.#closed) return;
    for (const slot of [...this.#slots.values()]) {
      if (slot.dirty && this.#slots.get(slot.manager.conversationId) === slot) await measure(slot);
    }
    let total = this.bytes;
    const slots = [...this.#slots];
    // The most recently used is kept whatever it holds: it is the one in use.
    for (const [id, slot] of slots.slice(0, -1)) {
      if (total <= this.#maxBytes) break;
      total -= slot.bytes;
      this.#evict(id, slot, true);
    }
  }

  /**
   * Takes the manager out of the pool and closes it; a manager made again waits for that. The
   * error of a closing in the `background` (no caller awaits it) is kept for `trim()`.
   */
  #evict(conversationId: string, slot: Slot, background: boolean): Promise<void> {
    this.#slots.delete(conversationId);
    const closed = slot.manager.close();
    const done = closed.then(
      () => undefined,
      () => undefined,
    );
    this.#closing.set(conversationId, done);
    void done.then(() => {
      if (this.#closing.get(conversationId) === done) this.#closing.delete(conversationId);
    });
    if (background) {
      closed.catch((error: unknown) => {
        this.#errors.push(error);
      });
    }
    return closed;
  }
}

/**
 * Brings `slot.bytes` up to the manager's messages: the JSON length of those appended since the
 * last measure, or of all when the history was replaced or reloaded (its messages are new objects).
 */
async function measure(slot: Slot): Promise<void> {
  slot.dirty = false;
  let messages: readonly unknown[];
  try {
    messages = await slot.manager.getMessages();
  } catch {
    // A manager that cannot load (store down) holds nothing yet; measured again when used.
    slot.dirty = true;
    return;
  }
  const { count, last } = slot.measured;
  const extends_ = count > 0 && count <= messages.length && messages[count - 1] === last;
  let bytes = extends_ ? slot.bytes : 0;
  for (let i = extends_ ? count : 0; i < messages.length; i++) bytes += jsonLength(messages[i]);
  slot.bytes = bytes;
  slot.measured = { count: messages.length, last: messages[messages.length - 1] };
}

function jsonLength(value: unknown): number {
  return JSON.stringify(value)?.length ?? 0;
}

/**
 * The pool's store as one manager sees it: every call passed to the shared store (after the
 * closing of the conversation's previous manager, when there is one), `close()` ending only this
 * manager's use of it (later calls reject with a `StoreError`, code `closed`).
 */
class PooledStore implements ConversationStore {
  readonly kind: string;
  readonly search?: StoreSearch;
  readonly watch?: (conversationId: string, onChange: () => void) => GenerationWatch;
  readonly #shared: ConversationStore;
  #before: Promise<void> | undefined;
  readonly #used: () => void;
  #closed = false;

  /**
   * @param before resolves when the conversation's previous manager is closed
   * @param used told of every call that may change what the manager holds
   */
  constructor(shared: ConversationStore, before: Promise<void> | undefined, used: () => void) {
    this.kind = shared.kind;
    this.#shared = shared;
    this.#before = before;
    this.#used = used;
    const search = shared.search;
    if (search) {
      this.search = {
        find: async (id, words, limit, within) =>
          (await this.#use(false)).search!.find(id, words, limit, within),
        catchUp: async (id) => (await this.#use(false)).search!.catchUp(id),
        rebuild: async (id) => (await this.#use(false)).search!.rebuild(id),
      };
    }
    const watch = shared.watch;
    if (watch) this.watch = (id, onChange) => watch.call(shared, id, onChange);
  }

  async #use(changes: boolean): Promise<ConversationStore> {
    if (this.#before) {
      await this.#before;
      this.#before = undefined;
    }
    if (this.#closed) {
      throw new StoreError(
        undefined,
        `the ${this.kind} store is closed for this manager (evicted or released from its pool)`,
        {
          code: 'closed',
        },
      );
    }
    if (changes) this.#used();
    return this.#shared;
  }

  async append(
    conversationId: string,
    entries: readonly NewEntry[],
    options?: AppendOptions,
  ): Promise<number> {
    return (await this.#use(true)).append(conversationId, entries, options);
  }

  async epoch(conversationId: string): Promise<string | null> {
    return (await this.#use(false)).epoch(conversationId);
  }

  async read(conversationId: string, options?: ReadOptions): Promise<StoredEntry[]> {
    return (await this.#use(true)).read(conversationId, options);
  }

  async head(conversationId: string): Promise<number> {
    return (await this.#use(false)).head(conversationId);
  }

  async replace(
    conversationId: string,
    entries: readonly NewEntry[],
    options?: { epoch?: string },
  ): Promise<void> {
    return (await this.#use(true)).replace(conversationId, entries, options);
  }

  async pop(conversationId: string): Promise<StoredEntry | undefined> {
    return (await this.#use(true)).pop(conversationId);
  }

  async getMeta(conversationId: string): Promise<MetaRecord> {
    return (await this.#use(false)).getMeta(conversationId);
  }

  async setMeta(
    conversationId: string,
    value: Record<string, unknown>,
    options?: { expectedVersion?: number },
  ): Promise<number> {
    return (await this.#use(false)).setMeta(conversationId, value, options);
  }

  async list(options?: { prefix?: string; cursor?: string; limit?: number }): Promise<ConversationPage> {
    return (await this.#use(false)).list(options);
  }

  async saveCounts(
    conversationId: string,
    updates: readonly EntryCountsUpdate[],
    options: { epoch: string | null },
  ): Promise<boolean> {
    return (await this.#use(false)).saveCounts(conversationId, updates, options);
  }

  async delete(conversationId: string, options?: { epoch?: string }): Promise<void> {
    return (await this.#use(true)).delete(conversationId, options);
  }

  /** Ends this manager's use of the shared store, which stays open. */
  async close(): Promise<void> {
    this.#closed = true;
  }
}
