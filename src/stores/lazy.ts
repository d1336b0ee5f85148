/**
 * A store that connects on first use, so a store URL that needs an asynchronous open
 * (`sqlite:`, `redis://`, `postgres://`) can be given to a synchronous constructor.
 */

import { StoreError } from '../errors.js';
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
  StoreSearchResult,
} from './types.js';

/**
 * Opens the store behind it on the first call (every call waits for that open) and then passes
 * every call through. An open that fails rejects that call with the opener's own error (as
 * `openStore` gives it) and is tried again on the next call, so a store that was down is used
 * once it is up. `search` is offered when the driver keeps a full-text index.
 */
export class LazyStore implements ConversationStore {
  readonly kind: string;
  readonly search?: StoreSearch;
  readonly #open: () => Promise<ConversationStore>;
  #opening: Promise<ConversationStore> | undefined;
  #closed = false;

  /**
   * @param kind the driver's name (`sqlite`, `redis`, `postgres`), reported before it opens
   * @param open opens the store; called again after a failure
   * @param searches whether the driver keeps a full-text index (`search`)
   */
  constructor(kind: string, open: () => Promise<ConversationStore>, searches: boolean) {
    this.kind = kind;
    this.#open = open;
    if (searches) {
      const search = async (): Promise<StoreSearch> => {
        const store = await this.#store();
        if (!store.search) {
          throw new StoreError(undefined, `the ${kind} store keeps no search index`, { code: 'no_search' });
        }
        return store.search;
      };
      this.search = {
        find: async (id, words, limit, within): Promise<StoreSearchResult> =>
          (await search()).find(id, words, limit, within),
        catchUp: async (id) => (await search()).catchUp(id),
        rebuild: async (id) => (await search()).rebuild(id),
      };
    }
  }

  #store(): Promise<ConversationStore> {
    if (this.#closed) {
      return Promise.reject(
        new StoreError(undefined, `the ${this.kind} store is closed`, { code: 'closed' }),
      );
    }
    this.#opening ??= this.#open().catch((error: unknown) => {
      this.#opening = undefined;
      throw error;
    });
    return this.#opening;
  }

  async append(
    conversationId: string,
    entries: readonly NewEntry[],
    options?: AppendOptions,
  ): Promise<number> {
    return (await this.#store()).append(conversationId, entries, options);
  }

  async epoch(conversationId: string): Promise<string | null> {
    return (await this.#store()).epoch(conversationId);
  }

  async read(conversationId: string, options?: ReadOptions): Promise<StoredEntry[]> {
    return (await this.#store()).read(conversationId, options);
  }

  async head(conversationId: string): Promise<number> {
    return (await this.#store()).head(conversationId);
  }

  async replace(
    conversationId: string,
    entries: readonly NewEntry[],
    options?: { epoch?: string },
  ): Promise<void> {
    return (await this.#store()).replace(conversationId, entries, options);
  }

  /**
   * Reports generation changes once the store is open and watches (`ConversationStore.watch`);
   * not live before that, so the caller reads the generation meanwhile.
   */
  watch(conversationId: string, onChange: () => void): GenerationWatch {
    let inner: GenerationWatch | undefined;
    let closed = false;
    this.#store().then(
      (store) => {
        if (!closed && store.watch) inner = store.watch(conversationId, onChange);
      },
      () => undefined,
    );
    return {
      get live() {
        return inner?.live ?? false;
      },
      close() {
        closed = true;
        inner?.close();
      },
    };
  }

  async saveCounts(
    conversationId: string,
    updates: readonly EntryCountsUpdate[],
    options: { epoch: string | null },
  ): Promise<boolean> {
    return (await this.#store()).saveCounts(conversationId, updates, options);
  }

  async pop(conversationId: string): Promise<StoredEntry | undefined> {
    return (await this.#store()).pop(conversationId);
  }

  async getMeta(conversationId: string): Promise<MetaRecord> {
    return (await this.#store()).getMeta(conversationId);
  }

  async setMeta(
    conversationId: string,
    value: Record<string, unknown>,
    options?: { expectedVersion?: number },
  ): Promise<number> {
    return (await this.#store()).setMeta(conversationId, value, options);
  }

  async list(options?: { prefix?: string; cursor?: string; limit?: number }): Promise<ConversationPage> {
    return (await this.#store()).list(options);
  }

  async delete(conversationId: string, options?: { epoch?: string }): Promise<void> {
    return (await this.#store()).delete(conversationId, options);
  }

  /** Closes the store if it was opened (waiting for an open in progress); later calls reject. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const opening = this.#opening;
    if (!opening) return;
    const store = await opening.catch(() => undefined);
    await store?.close();
  }
}
