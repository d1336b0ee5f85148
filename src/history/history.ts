/**
 * The stored log of one conversation: entries with their sequence numbers and metadata, the store
 * that keeps them, and what happens when another writer appended first. Nothing here decides what a
 * view holds; the history is never compacted.
 */

import { ConflictError, InvalidMessageError } from '../errors.js';
import { resolveConversationFormat } from '../messages/detect.js';
import { freezeDeep } from '../messages/freeze.js';
import { jsonValueIssues } from '../messages/json-limits.js';
import type { HistoryEntry, Message, MessageFormat, MessageMetadata } from '../messages/types.js';
import { validateMessage } from '../messages/validate-message.js';
import type { AddMessageOptions } from '../options.js';
import type { ConversationStore, NewEntry } from '../stores/types.js';

/** How many times an append that lost a race takes in the other writer's tail and tries again. */
const APPEND_ATTEMPTS = 20;

/** Options of {@link History}. */
export interface HistoryOptions {
  /** Where entries persist; `null` keeps them in this process only. */
  store: ConversationStore | null;
  conversationId: string;
  /** Clock for the timestamps stamped on new messages. */
  now: () => Date;
}

/**
 * One conversation's entries, in memory and (when there is a store) durably: appended before
 * `add` resolves, taken in from other writers on conflict or `sync()`, replaced or cleared whole.
 */
export class History {
  readonly store: ConversationStore | null;
  readonly conversationId: string;
  private readonly now: () => Date;
  private list: HistoryEntry[] = [];
  private conversationFormat: MessageFormat | undefined;
  /** Seq the store will give the next persisted entry. */
  private storeHead = 0;
  private ephemeral = false;
  private resumed = false;
  /** Bumped when the log is replaced or cleared: what was derived from the old entries is stale. */
  private generationCounter = 0;

  constructor(options: HistoryOptions) {
    this.store = options.store;
    this.conversationId = options.conversationId;
    this.now = options.now;
  }

  /** The entries, oldest first (frozen objects; the array is this history's own: do not change it). */
  get entries(): readonly HistoryEntry[] {
    return this.list;
  }

  /** The conversation's format once a message has shown it. */
  get format(): MessageFormat | undefined {
    return this.conversationFormat;
  }

  /** Whether any entry is ephemeral (views then cannot be persisted as plans). */
  get hasEphemeral(): boolean {
    return this.ephemeral;
  }

  /** True when the entries came from the store (a resumed conversation). */
  get loadedFromStore(): boolean {
    return this.resumed;
  }

  /** Changes whenever the entries are replaced or cleared, never on append. */
  get generation(): number {
    return this.generationCounter;
  }

  /** The stored messages, oldest first. */
  messages(): Message[] {
    return this.list.map((e) => e.message as Message);
  }

  /** Reads the conversation from the store; resolves with its metadata (plan, guard state, …). */
  async load(): Promise<Record<string, unknown> | null> {
    if (!this.store) return null;
    const stored = await this.store.read(this.conversationId);
    const meta = await this.store.getMeta(this.conversationId);
    this.reset();
    for (const e of stored) this.push(e.message, e.metadata);
    this.storeHead = stored.length;
    this.resumed = stored.length > 0;
    return meta.value;
  }

  /**
   * Validates a copy of `message` (the caller's object is never changed or frozen), stamps its
   * metadata, persists it unless ephemeral, and appends it. An invalid message throws
   * `InvalidMessageError` naming the field; nothing is stored then.
   */
  async add(message: unknown, options: AddMessageOptions = {}): Promise<HistoryEntry> {
    const seq = this.list.length;
    const copy = plainCopy(message, `messages[${seq}]`);
    const format = resolveConversationFormat(this.conversationFormat, copy, seq);
    const valid = validateMessage(copy, `messages[${seq}]`, format);
    const given =
      options.metadata === undefined ? {} : plainCopy(options.metadata, `messages[${seq}].metadata`);
    const metadata: MessageMetadata = {
      ...(given as Partial<MessageMetadata>),
      timestamp: typeof given.timestamp === 'string' ? given.timestamp : this.now().toISOString(),
    };
    if (options.critical) metadata.critical = true;
    if (options.pinned) metadata.pinned = true;
    if (options.ephemeral) metadata.ephemeral = true;
    if (this.store && !options.ephemeral) await this.persist([{ message: valid, metadata }]);
    return this.push(valid, metadata);
  }

  /** Appends to the store; when another writer got there first, takes in its messages and retries. */
  private async persist(batch: NewEntry[]): Promise<void> {
    const store = this.store!;
    for (let attempt = 0; ; attempt++) {
      try {
        await store.append(this.conversationId, batch, { expectedSeq: this.storeHead });
        this.storeHead += batch.length;
        return;
      } catch (err) {
        if (!(err instanceof ConflictError) || attempt >= APPEND_ATTEMPTS) throw err;
        await this.takeTail();
      }
    }
  }

  /**
   * Takes in what other writers appended since this history last read the store; resolves with the
   * number of entries taken in. Requests never re-read the store (that would put I/O on every turn).
   */
  async takeTail(): Promise<number> {
    if (!this.store) return 0;
    const tail = await this.store.read(this.conversationId, { fromSeq: this.storeHead });
    for (const e of tail) this.push(e.message, e.metadata);
    this.storeHead += tail.length;
    return tail.length;
  }

  /**
   * Replaces the whole log (session restore). As the seed contract says for file-backed managers,
   * when the history was resumed from its store the store is authoritative: unless `replace` is set
   * the call changes nothing and resolves to false.
   */
  async replace(messages: readonly unknown[], options: { replace?: boolean } = {}): Promise<boolean> {
    if (this.resumed && !options.replace) return false;
    if (!Array.isArray(messages)) {
      throw new InvalidMessageError([{ path: 'messages', message: 'expected an array of messages' }]);
    }
    let format: MessageFormat | undefined;
    const valid: Message[] = messages.map((m, i) => {
      const copy = plainCopy(m, `messages[${i}]`);
      format = resolveConversationFormat(format, copy, i);
      return validateMessage(copy, `messages[${i}]`, format);
    });
    const stamp = this.now().toISOString();
    const batch = valid.map((message) => ({ message, metadata: { timestamp: stamp } as MessageMetadata }));
    if (this.store) {
      await this.store.replace(this.conversationId, batch);
      await this.saveMeta({ plan: null });
    }
    this.reset();
    for (const e of batch) this.push(e.message, e.metadata);
    this.storeHead = batch.length;
    return true;
  }

  /** Removes every entry, and the stored conversation with its metadata. */
  async clear(): Promise<void> {
    if (this.store) await this.store.delete(this.conversationId);
    this.reset();
    this.storeHead = 0;
  }

  /**
   * Merges `patch` into the conversation's stored metadata. Losing a race to another writer is not
   * an error: what is kept there (plans, guard state) any process can make again.
   */
  async saveMeta(patch: Record<string, unknown>): Promise<void> {
    if (!this.store) return;
    try {
      const current = await this.store.getMeta(this.conversationId);
      await this.store.setMeta(
        this.conversationId,
        { ...(current.value ?? {}), ...patch },
        { expectedVersion: current.version },
      );
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
    }
  }

  private push(message: Message, metadata: MessageMetadata): HistoryEntry {
    const seq = this.list.length;
    this.conversationFormat = resolveConversationFormat(this.conversationFormat, message, seq);
    const entry: HistoryEntry = Object.freeze({
      seq,
      message: freezeDeep(message),
      metadata: freezeDeep(metadata),
    });
    this.list.push(entry);
    if (metadata.ephemeral) this.ephemeral = true;
    return entry;
  }

  private reset(): void {
    this.list = [];
    this.conversationFormat = undefined;
    this.ephemeral = false;
    this.resumed = false;
    this.generationCounter++;
  }
}

/**
 * A deep copy of a JSON-like value, so what is stored and frozen is never the caller's object.
 * Refuses first, with the path, what would not survive JSON or a walk (see `jsonValueIssues`):
 * nesting deeper than `MAX_JSON_DEPTH`, `NaN`, `±Infinity`, `-0`, and values JSON would change.
 */
function plainCopy<T>(value: T, path: string): T {
  const issues = jsonValueIssues(value, path);
  if (issues.length > 0) throw new InvalidMessageError(issues);
  try {
    return structuredClone(value);
  } catch {
    throw new InvalidMessageError([{ path, message: 'expected a plain JSON object' }]);
  }
}
