/**
 * The public store API: the conversation-log interface and its built-in drivers, store URLs,
 * id encoding, the key-value `Persistence` and the TTL `Cache`. SQLite, Redis and Postgres
 * drivers are separate entry points, reached through `openStore`.
 */

export type { CacheEntry, CacheOptions, InvalidateScope } from './cache.js';
export { FileStore, type FileStoreOptions } from './file.js';
export type { HistoryPagesOptions } from './history-pages.js';
export { validateConversationId } from './keys.js';
export { MemoryStore } from './memory.js';
export type { Persistence } from './persistence.js';
export { openStore, type ResolveStoreOptions, resolveStore } from './resolve.js';
export type {
  AppendOptions,
  ConversationPage,
  ConversationStore,
  MetaRecord,
  NewEntry,
  SearchWithin,
  StoredEntry,
  StoreSearch,
  StoreSearchHit,
  StoreSearchResult,
} from './types.js';
