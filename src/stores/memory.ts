/**
 * The default store: conversation logs in this process's memory, gone when it exits.
 */

import { ConflictError, DuplicateMessageIdError, EpochConflictError, StoreError } from '../errors.js';
import { checkSaveCounts, mergeCounts, withCounts } from './entry-counts.js';
import { validateConversationId } from './keys.js';
import { listOptions, pageIds } from './page.js';
import type {
  AppendOptions,
  ConversationPage,
  ConversationStore,
  EntryCountsUpdate,
  MetaRecord,
  NewEntry,
  ReadOptions,
  StoredEntry,
} from './types.js';
import {
  batchIds,
  checkAppendArguments,
  checkDeleteArguments,
  checkEntryValues,
  checkReplaceArguments,
  checkSetMetaArguments,
  newEpoch,
  readRange,
} from './validate.js';

function copy<T>(conversationId: string, value: T): T {
  try {
    return structuredClone(value);
  } catch (cause) {
    throw new StoreError(conversationId, `cannot store a value that cannot be copied: ${String(cause)}`, {
      cause,
      code: 'invalid_argument',
    });
  }
}

/** A stored copy of a new entry, with its counts when it has any. */
function stored(conversationId: string, seq: number, entry: NewEntry): StoredEntry {
  const base: StoredEntry = {
    seq,
    message: copy(conversationId, entry.message),
    metadata: copy(conversationId, entry.metadata),
  };
  if (entry.id !== undefined) base.id = entry.id;
  return withCounts(base, entry.counts === undefined ? undefined : { ...entry.counts });
}

/** Each id's seq in a log. */
function idIndex(log: readonly StoredEntry[]): Map<string, number> {
  const ids = new Map<string, number>();
  for (const entry of log) if (entry.id !== undefined && !ids.has(entry.id)) ids.set(entry.id, entry.seq);
  return ids;
}

/**
 * Keeps every conversation in a `Map`, copying values on the way in and out (so neither the
 * caller's later mutations nor mutations of what `read` returned reach the store) and
 * otherwise behaving exactly like the durable drivers: store-assigned sequence numbers,
 * `expectedSeq` conflicts, all-or-nothing batches, metadata compare-and-set.
 */
export class MemoryStore implements ConversationStore {
  readonly kind = 'memory';
  readonly #logs = new Map<string, StoredEntry[]>();
  readonly #meta = new Map<string, MetaRecord>();
  readonly #epochs = new Map<string, string>();
  /** Per conversation, each message id's seq (the index `append` looks ids up in). */
  readonly #ids = new Map<string, Map<string, number>>();
  #closed = false;

  #open(...conversationId: [unknown] | []): void {
    if (this.#closed) throw new StoreError(undefined, 'the memory store is closed', { code: 'closed' });
    if (conversationId.length > 0) validateConversationId(conversationId[0]);
  }

  async append(
    conversationId: string,
    entries: readonly NewEntry[],
    options?: AppendOptions,
  ): Promise<number> {
    this.#open(conversationId);
    const { expected, epoch } = checkAppendArguments(conversationId, entries, options);
    const log = this.#logs.get(conversationId) ?? [];
    const head = log.length;
    const current = this.#epochs.get(conversationId) ?? null;
    if (epoch !== undefined && current !== null && current !== epoch) {
      throw new EpochConflictError(conversationId, epoch, current);
    }
    const ids = this.#ids.get(conversationId);
    const held = batchIds(entries).flatMap(({ id }) => {
      const seq = ids?.get(id);
      return seq === undefined ? [] : [{ id, seq }];
    });
    if (held.length > 0) throw new DuplicateMessageIdError(conversationId, held);
    if (expected !== undefined && expected !== head) throw new ConflictError(conversationId, expected, head);
    // Copy the whole batch before touching the log, so a value that cannot be copied leaves
    // nothing half-appended.
    checkEntryValues(conversationId, entries, { depthOnly: true });
    const copies = entries.map((entry, i) => stored(conversationId, head + i, entry));
    checkEntryValues(conversationId, copies);
    if (copies.length > 0) {
      log.push(...copies);
      this.#logs.set(conversationId, log);
      for (const entry of copies) {
        if (entry.id === undefined) continue;
        const index = this.#ids.get(conversationId) ?? new Map<string, number>();
        index.set(entry.id, entry.seq);
        this.#ids.set(conversationId, index);
      }
      if (epoch !== undefined && current === null) this.#epochs.set(conversationId, epoch);
    }
    return head;
  }

  async read(conversationId: string, options?: ReadOptions): Promise<StoredEntry[]> {
    this.#open(conversationId);
    const { fromSeq, limit } = readRange(conversationId, options);
    const log = this.#logs.get(conversationId) ?? [];
    const end = Math.min(log.length, fromSeq + limit);
    return log.slice(fromSeq, end).map((entry) => copy(conversationId, entry));
  }

  async head(conversationId: string): Promise<number> {
    this.#open(conversationId);
    return this.#logs.get(conversationId)?.length ?? 0;
  }

  async epoch(conversationId: string): Promise<string | null> {
    this.#open(conversationId);
    return this.#epochs.get(conversationId) ?? null;
  }

  async replace(
    conversationId: string,
    entries: readonly NewEntry[],
    options?: { epoch?: string },
  ): Promise<void> {
    this.#open(conversationId);
    const epoch = checkReplaceArguments(conversationId, entries, options);
    checkEntryValues(conversationId, entries, { depthOnly: true });
    const log = entries.map((entry, seq) => stored(conversationId, seq, entry));
    checkEntryValues(conversationId, log);
    if (log.length === 0) this.#logs.delete(conversationId);
    else this.#logs.set(conversationId, log);
    this.#ids.set(conversationId, idIndex(log));
    this.#epochs.set(conversationId, epoch);
  }

  async pop(conversationId: string): Promise<StoredEntry | undefined> {
    this.#open(conversationId);
    const log = this.#logs.get(conversationId);
    const last = log?.pop();
    if (!log || !last) return undefined;
    if (last.id !== undefined) this.#ids.get(conversationId)?.delete(last.id);
    if (log.length === 0) this.#logs.delete(conversationId);
    this.#epochs.set(conversationId, newEpoch());
    return last;
  }

  /**
   * Merges counts into the entries held, in generation `epoch` only. The store's copies never
   * change once appended, so a count kept here always belongs to its message.
   */
  async saveCounts(
    conversationId: string,
    updates: readonly EntryCountsUpdate[],
    options: { epoch: string | null },
  ): Promise<boolean> {
    this.#open(conversationId);
    const epoch = checkSaveCounts(conversationId, updates, options);
    if ((this.#epochs.get(conversationId) ?? null) !== epoch) return false;
    const log = this.#logs.get(conversationId) ?? [];
    for (const { seq, counts } of updates) {
      const entry = log[seq];
      if (entry) entry.counts = mergeCounts(entry.counts, counts);
    }
    return true;
  }

  async getMeta(conversationId: string): Promise<MetaRecord> {
    this.#open(conversationId);
    const record = this.#meta.get(conversationId);
    return record ? copy(conversationId, record) : { value: null, version: 0 };
  }

  async setMeta(
    conversationId: string,
    value: Record<string, unknown>,
    options?: { expectedVersion?: number },
  ): Promise<number> {
    this.#open(conversationId);
    const expected = checkSetMetaArguments(conversationId, value, options);
    const current = this.#meta.get(conversationId)?.version ?? 0;
    if (expected !== undefined && expected !== current) {
      throw new ConflictError(conversationId, expected, current, 'version');
    }
    const version = current + 1;
    this.#meta.set(conversationId, { value: copy(conversationId, value), version });
    return version;
  }

  async list(options?: { prefix?: string; cursor?: string; limit?: number }): Promise<ConversationPage> {
    this.#open();
    const checked = listOptions(options);
    return pageIds(new Set([...this.#logs.keys(), ...this.#meta.keys()]), checked);
  }

  async delete(conversationId: string, options?: { epoch?: string }): Promise<void> {
    this.#open(conversationId);
    const epoch = checkDeleteArguments(conversationId, options);
    this.#logs.delete(conversationId);
    this.#meta.delete(conversationId);
    this.#ids.delete(conversationId);
    // The generation is renewed, not removed: see `ConversationStore.epoch`.
    this.#epochs.set(conversationId, epoch);
  }

  /** Marks the store closed; later calls reject. The data is dropped with the instance. */
  async close(): Promise<void> {
    this.#closed = true;
  }
}
