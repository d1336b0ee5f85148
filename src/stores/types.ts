import type { Message, MessageMetadata } from '../messages/types.js';

/**
 * Token counts of one message, by the key of the tokenizer that made them (its encoding, its
 * framing version and the wire format: see `countKey` in src/tokens/count-key.ts): key → tokens.
 */
export type EntryCounts = Record<string, number>;

/** A message as a store keeps it: its sequence number, metadata and the message itself. */
export interface StoredEntry {
  seq: number;
  message: Message;
  metadata: MessageMetadata;
  /** The id the message was added with (`NewEntry.id`), when it had one. */
  id?: string;
  /**
   * The message's stored token counts, by tokenizer, when the store keeps counts and they were
   * made from the message as it reads now (a count whose message changed since is left out):
   * absent when there are none.
   */
  counts?: EntryCounts;
}

/** What is appended: the store assigns the sequence numbers. */
export interface NewEntry {
  message: Message;
  metadata: MessageMetadata;
  /**
   * The caller's id for the message (see `messageIdProblem` for what an id may be): the store keeps
   * at most one entry per id in a conversation's generation, decided atomically with the append.
   */
  id?: string;
  /** Token counts of the message to keep with it (see {@link StoredEntry.counts}). */
  counts?: EntryCounts;
}

/** Counts to keep beside an entry already stored (see {@link ConversationStore.saveCounts}). */
export interface EntryCountsUpdate {
  seq: number;
  counts: EntryCounts;
}

/** Options of {@link ConversationStore.read}. */
export interface ReadOptions {
  /** The first seq to read (default 0). */
  fromSeq?: number;
  /** At most this many entries (default: all). */
  limit?: number;
  /**
   * `false`: the caller needs no token counts (a view served from its stored record has them),
   * so a driver may leave them out and save reading and checking them (the file store's counts
   * file is read whole). Default true.
   */
  counts?: boolean;
}

/** Options of {@link ConversationStore.append}. */
export interface AppendOptions {
  /** Append only when the conversation holds exactly this many entries. */
  expectedSeq?: number;
  /** Append only in this generation (see {@link ConversationStore.epoch}). */
  epoch?: string;
}

/** Per-conversation metadata (compaction plan, guard state, summaries) with its CAS version. */
export interface MetaRecord {
  value: Record<string, unknown> | null;
  /** 0 when nothing was ever written; incremented by every successful `setMeta`. */
  version: number;
}

/** A page of conversation ids. */
export interface ConversationPage {
  ids: string[];
  /** Pass back as `cursor` for the next page; absent on the last page. */
  cursor?: string;
}

/** One entry a store's full-text index found, with its relevance (higher is better). */
export interface StoreSearchHit {
  seq: number;
  score: number;
}

/**
 * Which entries a search may answer with, by store seq: those from `fromSeq` to `toSeq`
 * (inclusive) and, when `seqs` is given (ascending), only those of them. Recall turns its filters
 * (roles, dates, tools, seq range) into this.
 */
export interface SearchWithin {
  fromSeq: number;
  toSeq: number;
  seqs?: readonly number[];
}

/** What a store's search found, and how far its index reaches. */
export interface StoreSearchResult {
  /** Best first. */
  hits: StoreSearchHit[];
  /** Entries the index covers (seqs `0 … indexed - 1`); behind `head` when it must catch up. */
  indexed: number;
  /** How many entries the conversation held when searched. */
  head: number;
}

/**
 * A full-text index a store keeps beside the log (SQLite FTS5, Postgres `tsvector` + GIN),
 * written in the same transaction as each append, so recall searches it instead of building an
 * index in process. A database written before the index existed, or an index left behind, is
 * brought up to the log by `catchUp`; a broken one is rebuilt by `rebuild`. Neither changes the log.
 */
export interface StoreSearch {
  /**
   * The conversation's entries holding any of `words` (lowercased, not stemmed: the store stems
   * them its own way), best first, at most `limit`; with `within`, only entries it allows, chosen
   * in the query itself (a narrow filter's matches never rank out of a capped list).
   */
  find(
    conversationId: string,
    words: readonly string[],
    limit: number,
    within?: SearchWithin,
  ): Promise<StoreSearchResult>;
  /** Indexes the entries the index lacks; resolves with how many entries it then covers. */
  catchUp(conversationId: string): Promise<number>;
  /** Drops the conversation's index and builds it again from the log; resolves as `catchUp`. */
  rebuild(conversationId: string): Promise<number>;
}

/** A subscription to a conversation's generation changes (see {@link ConversationStore.watch}). */
export interface GenerationWatch {
  /**
   * True while every change is being reported; false before the subscription is in place and
   * while its connection is down, when a change may be missed (read the generation then).
   */
  readonly live: boolean;
  /** Ends the subscription. */
  close(): void;
}

/**
 * Durable, ordered conversation logs. Every driver (memory, file, SQLite, Redis, Postgres)
 * implements this and passes the one conformance suite.
 */
export interface ConversationStore {
  /** Which driver this is (`memory`, `file`, …), for reports. */
  readonly kind: string;
  /** Full-text search over the stored entries, for drivers that keep an index (optional). */
  readonly search?: StoreSearch;
  /**
   * Appends a batch atomically and durably; resolves with the sequence number given to the
   * first entry. With `expectedSeq`, rejects with `ConflictError` (appending nothing) unless
   * the conversation currently holds exactly that many entries. With `epoch`, rejects with
   * `EpochConflictError` (appending nothing) when the conversation's generation is another one;
   * a conversation without a generation (new, deleted, or written before generations existed)
   * takes this one. Without `expectedSeq` the store gives the next free sequence numbers, so
   * concurrent writers never lose a race: they read back what others appended before them.
   * Entries with an `id` the conversation already holds (in its generation) append nothing: the
   * call rejects with `DuplicateMessageIdError` saying where each is stored, checked in the same
   * atomic step as the append (so of two writers adding the same id at once, one appends and the
   * other is told), after the generation and before `expectedSeq`. Finding an id costs one index
   * lookup. Ids repeated within a batch are refused (`StoreError`, `invalid_argument`).
   */
  append(conversationId: string, entries: readonly NewEntry[], options?: AppendOptions): Promise<number>;
  /**
   * The conversation's generation: a token `replace`, `pop` and `delete` renew, so a writer
   * that holds an old one knows the log it read was replaced, whatever its length. `null` when
   * the conversation has none (never written, or written before generations existed). A
   * generation never goes back: tokens are never reused, and a deleted conversation keeps a new
   * one (a tombstone holding no entry), so an append already in flight that names the generation
   * it read before the delete is refused instead of bringing that generation back.
   */
  epoch(conversationId: string): Promise<string | null>;
  /**
   * For drivers with server notifications (Redis pub/sub, Postgres `LISTEN`): calls `onChange`
   * after the conversation's generation changes (`replace`, `pop`, `delete`, by any writer),
   * and whenever changes may have been missed (when the subscription comes up, or back after
   * its connection dropped), so a writer holding a generation need not read it before each
   * request. A notification arrives shortly after the change commits, not with it.
   */
  watch?(conversationId: string, onChange: () => void): GenerationWatch;
  /** Entries in sequence order, from `fromSeq` (default 0), at most `limit`. */
  read(conversationId: string, options?: ReadOptions): Promise<StoredEntry[]>;
  /** How many entries the conversation holds (the next sequence number); 0 when absent. */
  head(conversationId: string): Promise<number>;
  /**
   * Replaces the whole log atomically (session restore); sequence numbers restart at 0 and the
   * conversation takes a new generation (`options.epoch`, or a random one).
   */
  replace(conversationId: string, entries: readonly NewEntry[], options?: { epoch?: string }): Promise<void>;
  /**
   * Removes the last entry and resolves with it, in one atomic step (`undefined`, changing
   * nothing, when the log is empty): an entry appended concurrently is either removed or kept
   * whole, never lost. The conversation takes a new generation, as on `replace`, since its log
   * no longer extends the one other writers read.
   */
  pop(conversationId: string): Promise<StoredEntry | undefined>;
  getMeta(conversationId: string): Promise<MetaRecord>;
  /** Compare-and-set: rejects with `ConflictError` when `expectedVersion` is not the current one. */
  setMeta(
    conversationId: string,
    value: Record<string, unknown>,
    options?: { expectedVersion?: number },
  ): Promise<number>;
  /** Conversation ids in lexicographic order, optionally under a prefix, paged by cursor. */
  list(options?: { prefix?: string; cursor?: string; limit?: number }): Promise<ConversationPage>;
  /**
   * Keeps token counts beside entries already stored, merged with those each entry holds (a key
   * given replaces the same key), only while the conversation is in generation `epoch` (`null`:
   * while it has none, as history written before generations): resolves to false, writing
   * nothing, when it is in another one (its entries may not be the ones counted). A seq the log does not hold is skipped. Each count is tied to the message's stored
   * bytes: `read` leaves out a count whose message changed since.
   */
  saveCounts(
    conversationId: string,
    updates: readonly EntryCountsUpdate[],
    options: { epoch: string | null },
  ): Promise<boolean>;
  /**
   * Removes a conversation's log and metadata, atomically, and gives it a new generation
   * (`options.epoch`, or a random one): the conversation is then empty and not listed, but an
   * append naming the generation it had is refused with `EpochConflictError` (see {@link epoch}).
   * No error when absent.
   */
  delete(conversationId: string, options?: { epoch?: string }): Promise<void>;
  close(): Promise<void>;
}
