/**
 * The stored log of one conversation: entries with their sequence numbers and metadata, the store
 * that keeps them, and what happens when another writer appended first. Nothing here decides what a
 * view holds; the history is never compacted.
 */

import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import {
  ConflictError,
  DuplicateMessageIdError,
  EpochConflictError,
  InvalidMessageError,
  InvalidStoredMessageError,
  MessageIdConflictError,
  StoreError,
} from '../errors.js';
import { freezeDeep } from '../messages/freeze.js';
import { jsonValueIsClean, jsonValueIssues } from '../messages/json-limits.js';
import type { HistoryEntry, Message, MessageFormat, MessageMetadata } from '../messages/types.js';
import type { AddMessageOptions } from '../options.js';
import { forEachInSlices, mapInSlices, Slices } from '../slices.js';
import { mergeCounts } from '../stores/entry-counts.js';
import type {
  ConversationStore,
  EntryCounts,
  EntryCountsUpdate,
  GenerationWatch,
  NewEntry,
  StoredEntry,
} from '../stores/types.js';
import { newEpoch } from '../stores/validate.js';
import { resolveConversationFormat } from '../wire/detect.js';
import { validateJsonCheckedMessage, validateMessage } from '../wire/validate-message.js';
import { firstDifference } from './message-diff.js';

/**
 * How many times an append retries after finding the conversation replaced under it (each retry
 * first reloads it). Appends never retry for other writers' appends: the store numbers them.
 */
const EPOCH_ATTEMPTS = 5;
/** How many times a whole read is retried when a replace lands between its two epoch checks. */
const READ_ATTEMPTS = 5;
/** `saveCounts` writes the counts of this many entries per call to the store. */
const SAVE_COUNTS_AT_ONCE = 1_024;

/**
 * How many times an identified add retries when the store said the id was held but the entry
 * holding it was gone by the time it was read (popped or replaced in between).
 */
const ID_ATTEMPTS = 5;

/** What `History.add` did: the entry, and whether it was already there (an id held). */
export interface AddResult {
  entry: HistoryEntry;
  duplicate: boolean;
}

/** What to do with a stored entry that is not a valid message. */
export type InvalidStoredPolicy = 'error' | 'skip';

/**
 * Token counts of new messages, kept with them in the store (issue 24 item 3): `one` for a
 * message added, `all` (counting in slices that yield) for a whole history set at once.
 */
export interface EntryCounter {
  one(message: Message, format: MessageFormat | undefined): EntryCounts | undefined;
  all(
    messages: readonly Message[],
    format: MessageFormat | undefined,
  ): Promise<Array<EntryCounts | undefined>>;
}

/** Options of {@link History}. */
export interface HistoryOptions {
  /** Where entries persist; `null` keeps them in this process only. */
  store: ConversationStore | null;
  conversationId: string;
  /** Clock for the timestamps stamped on new messages. */
  now: () => Date;
  /**
   * A stored entry that is not a valid message: `error` (default) rejects the load with an
   * `InvalidStoredMessageError` naming its seq; `skip` leaves it out and warns.
   */
  invalidStored?: InvalidStoredPolicy;
  /** Told about skipped entries and about a conversation another writer replaced or cleared. */
  onWarn?: (code: string, message: string) => void;
  /** Called after the entries were reloaded because another writer replaced or cleared them. */
  onReloaded?: () => void;
  /** Counts new messages so their counts are stored with them (default: none stored). */
  counter?: EntryCounter;
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
  /** The store's generation of the entries held (`null`: it had none when they were read). */
  private epoch: string | null = null;
  private readonly invalidStored: InvalidStoredPolicy;
  /** A bad stored entry met behind `storeHead`: appends are refused until it is taken in. */
  private invalid: InvalidStoredMessageError | null = null;
  private readonly onWarn: (code: string, message: string) => void;
  private readonly onReloaded: () => void;
  private readonly counter: EntryCounter | undefined;
  /** The store's report of generation changes (`ConversationStore.watch`), once a request asked. */
  private watch: GenerationWatch | null = null;
  /** Set when the watch reported a change (or may have missed one) not yet checked. */
  private generationReported = true;
  /** The entries added with an id, by id (the first, should the store hold an id twice). */
  private ids = new Map<string, HistoryEntry>();
  /**
   * Each stored message of this history's entries: its seq in the store and the counts the store
   * holds for it, by message object. A `Map` rather than a `WeakMap`: it holds nothing the entries
   * do not (it is replaced with them), and a 100k-message load filled a `WeakMap` for about 40 ms
   * more and made every garbage collection meanwhile trace it as ephemerons.
   */
  private stored = new Map<object, StoredMessage>();

  constructor(options: HistoryOptions) {
    this.store = options.store;
    this.conversationId = options.conversationId;
    this.now = options.now;
    this.invalidStored = options.invalidStored ?? 'error';
    this.onWarn = options.onWarn ?? (() => undefined);
    this.onReloaded = options.onReloaded ?? (() => undefined);
    this.counter = options.counter;
  }

  /** Whether `message` (an entry's) is in the store, so counts can be kept with it. */
  isStored(message: object): boolean {
    return this.stored.has(message);
  }

  /**
   * The seq in the store of `message` when it is one of this history's stored messages, as this
   * very object (a view shows a message the plan left alone as the history's object), else
   * undefined: for what a plan edited or made, a copy, an ephemeral message, any other object.
   */
  storedSeqOf(message: object): number | undefined {
    return this.stored.get(message)?.seq;
  }

  /** The token counts the store holds for a stored message (checked against its bytes by the store). */
  countsOf(message: object): EntryCounts | undefined {
    return this.stored.get(message)?.counts;
  }

  /**
   * Keeps counts made after the messages were stored (a resumed history without them, another
   * tokenizer) beside them in the store, in the generation held: a conversation replaced
   * meanwhile keeps none. Resolves to false when nothing was kept.
   */
  async saveCounts(counted: ReadonlyArray<{ message: object; counts: EntryCounts }>): Promise<boolean> {
    if (!this.store) return false;
    const updates: EntryCountsUpdate[] = [];
    const held: StoredMessage[] = [];
    for (const { message, counts } of counted) {
      const stored = this.stored.get(message);
      if (!stored) continue;
      updates.push({ seq: stored.seq, counts });
      held.push(stored);
    }
    // A part at a time, the event loop let run between parts: a resumed history of 100k messages
    // stored without counts would otherwise be one long write (synchronous with SQLite).
    const slices = new Slices();
    let kept = false;
    for (let from = 0; from < updates.length; from += SAVE_COUNTS_AT_ONCE) {
      const part = updates.slice(from, from + SAVE_COUNTS_AT_ONCE);
      if (!(await this.store.saveCounts(this.conversationId, part, { epoch: this.epoch }))) return kept;
      kept = true;
      part.forEach((update, i) => {
        const stored = held[from + i]!;
        stored.counts = mergeCounts(stored.counts, update.counts);
      });
      if (from + SAVE_COUNTS_AT_ONCE < updates.length) await slices.pause();
    }
    return kept;
  }

  /** Remembers where a message is stored and the counts stored with it. */
  private remember(message: object, seq: number, counts: EntryCounts | undefined): void {
    this.stored.set(message, { seq, counts });
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

  /**
   * Whether each entry held is the stored one at its own seq, and only those: no ephemeral entry,
   * none left out as invalid (what a stored view record refers to by seq must be these).
   */
  get storedInOrder(): boolean {
    return this.store !== null && !this.ephemeral && this.list.length === this.storeHead;
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
    const whole = await this.readWhole();
    const meta = await this.store.getMeta(this.conversationId);
    await this.adopt(whole.entries, whole.epoch);
    return meta.value;
  }

  /**
   * The whole log with the generation it belongs to: the generation is read before and after,
   * and since a generation never comes back, two equal readings mean no replace came between.
   */
  private async readWhole(): Promise<{ entries: StoredEntry[]; epoch: string | null }> {
    const store = this.store!;
    for (let attempt = 1; ; attempt++) {
      const before = await store.epoch(this.conversationId);
      const entries = await store.read(this.conversationId);
      const after = await store.epoch(this.conversationId);
      if (before === after) return { entries, epoch: after };
      if (attempt >= READ_ATTEMPTS) {
        throw new StoreError(
          this.conversationId,
          `the conversation was replaced ${READ_ATTEMPTS} times while it was being read; try again`,
          { code: 'conflict' },
        );
      }
    }
  }

  /**
   * Takes `entries` (checked) as the whole history, in generation `epoch`: checked and frozen in
   * slices that yield (a long history is read on a cold start), then taken in at once, so nothing
   * reads a half-taken history meanwhile. One pass: each entry is checked, its format resolved
   * once, frozen and remembered as it comes.
   */
  private async adopt(entries: readonly StoredEntry[], epoch: string | null): Promise<void> {
    const next: EntryList = { list: [], format: undefined, ephemeral: false };
    const messages: Message[] = [];
    const earlier = () => messages;
    // The new messages are no entries of this history yet: they are remembered with them.
    const stored = new Map<object, StoredMessage>();
    await forEachInSlices(entries, (entry) => {
      const checked = this.checkStored(entry, next.format, earlier);
      if (!checked) return;
      next.format = checked.format;
      messages.push(checked.message);
      next.list.push(frozenEntry(next.list.length, checked.message, entry.metadata, entry.id));
      if (entry.metadata.ephemeral) next.ephemeral = true;
      stored.set(checked.message, { seq: entry.seq, counts: entry.counts });
    });
    this.reset();
    this.take(next);
    this.stored = stored;
    this.storeHead = entries.length;
    this.epoch = epoch;
    this.resumed = entries.length > 0;
    this.invalid = null;
  }

  /**
   * Validates a message the store returned, as `add` validates a new one: a bad one is an
   * `InvalidStoredMessageError` with its seq (also for metadata JSON would not hold), or under
   * `invalidStored: 'skip'` left out with a warning. Never silently either way. Resolves the format
   * against what is held so far (`earlier`: the messages before it), as `add` does, and gives the
   * conversation's format with the message.
   */
  private checkStored(
    entry: StoredEntry,
    format: MessageFormat | undefined,
    earlier: () => readonly unknown[],
  ): { message: Message; format: MessageFormat | undefined } | null {
    try {
      return storedMessageOf(entry, format, earlier);
    } catch (err) {
      if (!(err instanceof InvalidMessageError)) throw err;
      const error = new InvalidStoredMessageError(this.conversationId, entry.seq, err.issues);
      if (this.invalidStored !== 'skip') throw error;
      this.onWarn('invalid_stored_message', `${error.message.replace(/ \(pass .*\)$/, '')}; skipped`);
      return null;
    }
  }

  /** Checks entries the store returned, all before any is taken in, then appends them. */
  private ingest(entries: readonly StoredEntry[]): void {
    const checked = this.checkAll(
      entries,
      this.conversationFormat,
      this.list.map((e) => e.message),
    );
    entries.forEach((e, i) => {
      const message = checked[i];
      if (message) this.remember(this.push(message, e.metadata, e.id).message, e.seq, e.counts);
    });
  }

  /**
   * `checkStored` over `entries` in order, after the messages `held`, the format resolved as they
   * go: a developer message first and Responses items after it load as they were stored.
   */
  private checkAll(
    entries: readonly StoredEntry[],
    start: MessageFormat | undefined,
    held: readonly unknown[],
  ): Array<Message | null> {
    let format = start;
    const before: unknown[] = [...held];
    const earlier = () => before;
    return entries.map((e) => {
      const checked = this.checkStored(e, format, earlier);
      if (!checked) return null;
      format = checked.format;
      before.push(checked.message);
      return checked.message;
    });
  }

  /**
   * Another writer replaced or cleared the conversation: takes in the whole new history, and
   * warns unless it still begins with what this history held (as when two writers first meet on
   * a conversation written before generations existed).
   */
  private async reloadReplaced(): Promise<void> {
    const held = this.list.filter((e) => !e.metadata.ephemeral).map((e) => JSON.stringify(e.message));
    const whole = await this.readWhole();
    const prefix = whole.entries.slice(0, held.length).map((e) => JSON.stringify(e.message));
    const same = prefix.length === held.length && prefix.every((text, i) => text === held[i]);
    await this.adopt(whole.entries, whole.epoch);
    this.onReloaded();
    if (same) return;
    this.onWarn(
      'history_replaced',
      `conversation ${JSON.stringify(this.conversationId)} was replaced or cleared by another writer; took in its ${whole.entries.length} stored messages in place of the ${held.length} held`,
    );
  }

  /**
   * Validates a copy of `message` (the caller's object is never changed or frozen), stamps its
   * metadata, persists it unless ephemeral, and appends it. An invalid message throws
   * `InvalidMessageError` naming the field; nothing is stored then. When another writer's entry
   * before it is not a valid message, the message is stored but the call rejects with that
   * `InvalidStoredMessageError`, and later calls reject with it before storing anything, until
   * `takeTail` can take the entry in. The entry resolved has seq -1 when the conversation was
   * replaced as the message was stored (the history was then reloaded from the store).
   *
   * With `options.id` (checked by the caller), an id the conversation already holds stores
   * nothing: the store refuses it atomically with the append, what other writers appended is taken
   * in, and the entry holding the id is resolved with `duplicate: true` when its message is the
   * same (metadata, timestamps included, are not compared: a retry stamps a new time), else
   * `MessageIdConflictError`. Without a store, or for an ephemeral message, the id is checked
   * against this history only.
   */
  async add(message: unknown, options: AddMessageOptions = {}): Promise<AddResult> {
    if (this.invalid && !options.ephemeral) throw this.invalid;
    const seq = this.list.length;
    const copy = plainCopy(message, `messages[${seq}]`);
    const format = resolveConversationFormat(this.conversationFormat, copy, seq, () =>
      this.list.map((e) => e.message),
    );
    const valid = validateMessage(copy, `messages[${seq}]`, format);
    const metadata = this.metadataOf(options, seq);
    const id = options.id;
    if (!this.store || options.ephemeral) {
      const held = id === undefined ? undefined : this.ids.get(id);
      if (held) return { entry: sameMessage(held, id as string, valid), duplicate: true };
      return { entry: this.push(valid, metadata, id), duplicate: false };
    }
    const counts = this.counter?.one(valid, format);
    const entry: NewEntry = counts ? { message: valid, metadata, counts } : { message: valid, metadata };
    if (id !== undefined) entry.id = id;
    for (let attempt = 1; ; attempt++) {
      let stored: number | null;
      try {
        stored = await this.persist([entry]);
      } catch (err) {
        if (!(err instanceof DuplicateMessageIdError) || id === undefined) throw err;
        // Held by the store: take in what others appended (the entry holding it among them).
        await this.takeTail();
        const held = this.ids.get(id);
        if (held) return { entry: sameMessage(held, id, valid), duplicate: true };
        // Gone since the store answered (popped, replaced) or left out as invalid: add it again.
        if (attempt >= ID_ATTEMPTS) throw err;
        continue;
      }
      if (stored === null) {
        // Stored, but another writer replaced the conversation at once: the history is theirs now.
        return {
          entry: Object.freeze({ seq: -1, message: freezeDeep(valid), metadata: freezeDeep(metadata) }),
          duplicate: false,
        };
      }
      const added = this.push(valid, metadata, id);
      this.remember(added.message, stored, counts);
      return { entry: added, duplicate: false };
    }
  }

  /** A new message's metadata: the caller's (copied), its timestamp or now, and the option flags. */
  private metadataOf(options: AddMessageOptions, seq: number): MessageMetadata {
    const given =
      options.metadata === undefined ? {} : plainCopy(options.metadata, `messages[${seq}].metadata`);
    const metadata: MessageMetadata = {
      ...(given as Partial<MessageMetadata>),
      timestamp: typeof given.timestamp === 'string' ? given.timestamp : this.now().toISOString(),
    };
    if (options.critical) metadata.critical = true;
    if (options.pinned) metadata.pinned = true;
    if (options.ephemeral) metadata.ephemeral = true;
    return metadata;
  }

  /**
   * Appends `messages` without reading the conversation, for a manager that has not loaded it
   * (src/manager-stored-view.ts): each validated as `add` validates it, in `format` (the
   * conversation's, as its stored view record names it), stamped as `add` stamps it, appended in one
   * batch naming the generation `epoch` (a conversation replaced since refuses it). Nothing is
   * taken into this history. Resolves with the entries as stored, or undefined, having stored
   * nothing, when this cannot say what `add` would: a message not valid in `format` or showing
   * another, one `refuse` names, an id the conversation holds, another generation (the caller
   * then loads the conversation and adds as always, with `add`'s errors).
   */
  async appendUnloaded(
    messages: readonly unknown[],
    options: AddMessageOptions,
    format: MessageFormat | undefined,
    epoch: string,
    refuse: (message: Message) => boolean,
  ): Promise<HistoryEntry[] | undefined> {
    if (!this.store || options.ephemeral) return undefined;
    if (messages.length === 0) return [];
    const batch: NewEntry[] = [];
    for (const [i, message] of messages.entries()) {
      let valid: Message;
      try {
        const copy = plainCopy(message, `messages[${i}]`);
        if (!keepsFormat(format, copy, i)) return undefined;
        valid = validateMessage(copy, `messages[${i}]`, format);
      } catch (err) {
        if (err instanceof InvalidMessageError) return undefined;
        throw err;
      }
      if (refuse(valid)) return undefined;
      const metadata = this.metadataOf(options, i);
      const counts = this.counter?.one(valid, format);
      const entry: NewEntry = counts ? { message: valid, metadata, counts } : { message: valid, metadata };
      if (options.id !== undefined) entry.id = options.id;
      batch.push(entry);
    }
    let seq: number;
    try {
      seq = await this.store.append(this.conversationId, batch, { epoch });
    } catch (err) {
      if (err instanceof EpochConflictError || err instanceof DuplicateMessageIdError) return undefined;
      throw err;
    }
    return batch.map((e, i) => frozenEntry(seq + i, e.message, e.metadata, e.id));
  }

  /**
   * `add` for several messages at once (no ids), all or nothing (a provider's reply of several items):
   * every message is validated before any is stored, then they are appended to the store in one
   * batch, so a refused message leaves none of them stored and a retry stores each once. The
   * entries resolved have seq -1 when the conversation was replaced as they were stored.
   */
  async addAll(messages: readonly unknown[], options: AddMessageOptions = {}): Promise<HistoryEntry[]> {
    if (this.invalid && !options.ephemeral) throw this.invalid;
    if (messages.length === 0) return [];
    const base = this.list.length;
    let format = this.conversationFormat;
    const valid: Message[] = [];
    const metadatas: MessageMetadata[] = [];
    for (let i = 0; i < messages.length; i++) {
      const seq = base + i;
      const copy = plainCopy(messages[i], `messages[${seq}]`);
      format = resolveConversationFormat(format, copy, seq, () => [
        ...this.list.map((e) => e.message),
        ...valid,
      ]);
      valid.push(validateMessage(copy, `messages[${seq}]`, format));
      metadatas.push(this.metadataOf(options, seq));
    }
    if (!this.store || options.ephemeral) return valid.map((m, i) => this.push(m, metadatas[i]!));
    const counts = valid.map((m) => this.counter?.one(m, format));
    const batch: NewEntry[] = valid.map((message, i) => {
      const c = counts[i];
      return c ? { message, metadata: metadatas[i]!, counts: c } : { message, metadata: metadatas[i]! };
    });
    const stored = await this.persist(batch);
    if (stored === null) {
      // Stored, but another writer replaced the conversation at once: the history is theirs now.
      return valid.map((m, i) =>
        Object.freeze({ seq: -1, message: freezeDeep(m), metadata: freezeDeep(metadatas[i]!) }),
      );
    }
    return valid.map((m, i) => {
      const entry = this.push(m, metadatas[i]!);
      this.remember(entry.message, stored + i, counts[i]);
      return entry;
    });
  }

  /**
   * Appends to the store, which gives the sequence number, so a writer never loses a race to
   * other writers (no retry, no starvation); what they appended before it is read back, so this
   * history holds the store's one order. The append names the generation held, so a conversation
   * replaced or cleared meanwhile is reloaded first. Resolves with the seq the store gave the
   * first entry, or null when the entry is stored but the history reloaded after it was (it is
   * then in the history only if the store kept it).
   */
  private async persist(batch: NewEntry[]): Promise<number | null> {
    const store = this.store!;
    for (let attempt = 1; ; attempt++) {
      const epoch = this.epoch ?? newEpoch();
      let seq: number;
      try {
        seq = await store.append(this.conversationId, batch, { epoch });
      } catch (err) {
        if (!(err instanceof EpochConflictError) || attempt >= EPOCH_ATTEMPTS) throw err;
        await this.reloadReplaced();
        continue;
      }
      this.epoch = epoch;
      if (seq > this.storeHead) {
        const gap = await store.read(this.conversationId, {
          fromSeq: this.storeHead,
          limit: seq - this.storeHead,
        });
        if (gap.length !== seq - this.storeHead || (await store.epoch(this.conversationId)) !== epoch) {
          await this.reloadReplaced();
          return null;
        }
        try {
          this.ingest(gap);
        } catch (err) {
          if (err instanceof InvalidStoredMessageError) this.invalid = err;
          throw err;
        }
      } else if (seq < this.storeHead) {
        // The log was deleted and this append began it again.
        await this.reloadReplaced();
        return null;
      }
      this.storeHead = seq + batch.length;
      return seq;
    }
  }

  /**
   * Reloads the history when another writer replaced or cleared the conversation (its generation
   * changed), so a request is never built from a replaced history. On a store that reports
   * generation changes (`ConversationStore.watch`: Redis, Postgres) this costs no round trip while
   * nothing was reported and the subscription is live (the event loop is let run once first, so
   * a notification already received is taken in); otherwise it is one small read.
   */
  async checkGeneration(): Promise<void> {
    if (!this.store) return;
    if (this.store.watch && !this.watch) {
      this.watch = this.store.watch(this.conversationId, () => {
        this.generationReported = true;
      });
    }
    if (this.watch) {
      await yieldToEventLoop();
      if (this.watch.live && !this.generationReported) return;
    }
    // Cleared before the read: a change reported during it is read again next time.
    this.generationReported = false;
    if ((await this.store.epoch(this.conversationId)) !== this.epoch) await this.reloadReplaced();
  }

  /** Ends the generation subscription, if any (before the store closes). */
  unwatch(): void {
    this.watch?.close();
    this.watch = null;
  }

  /**
   * Takes in what other writers appended since this history last read the store; resolves with the
   * number of entries taken in (a replaced conversation is reloaded whole). Requests do not read the
   * log (that would put its I/O on every turn), only its generation (`checkGeneration`).
   */
  async takeTail(): Promise<number> {
    if (!this.store) return 0;
    const tail = await this.store.read(this.conversationId, { fromSeq: this.storeHead });
    if ((await this.store.epoch(this.conversationId)) !== this.epoch) {
      const before = this.list.length;
      await this.reloadReplaced();
      return Math.max(0, this.list.length - before);
    }
    const before = this.list.length;
    this.ingest(tail);
    this.storeHead += tail.length;
    this.invalid = null;
    return this.list.length - before;
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
    // In slices that yield: a session restored whole may be long (nothing is changed meanwhile).
    const slices = new Slices();
    const valid: Message[] = await mapInSlices(
      messages,
      (m, i) => {
        const copy = plainCopy(m, `messages[${i}]`);
        format = resolveConversationFormat(format, copy, i, () => messages.slice(0, i));
        return validateMessage(copy, `messages[${i}]`, format);
      },
      slices,
    );
    const stamp = this.now().toISOString();
    // With a store, counted here (in slices that yield) to be kept with the messages; without
    // one, the first request counts them (also in slices that yield).
    const counts = this.store && this.counter ? await this.counter.all(valid, format) : [];
    const batch: NewEntry[] = await mapInSlices(
      valid,
      (message, i) => {
        const entry: NewEntry = { message, metadata: { timestamp: stamp } as MessageMetadata };
        const given = counts[i];
        if (given) entry.counts = given;
        return entry;
      },
      slices,
    );
    const epoch = newEpoch();
    if (this.store) {
      await this.store.replace(this.conversationId, batch, { epoch });
      await this.saveMeta({ plan: null });
    }
    const next = await entryList(batch, slices);
    // The table of stored messages is filled in slices too (100,000 entries held the event loop
    // ~30 ms in one stretch), and taken with the entries at once.
    const stored: Map<object, StoredMessage> = new Map();
    if (this.store) {
      await forEachInSlices(
        next.list,
        (entry) => stored.set(entry.message, { seq: entry.seq, counts: batch[entry.seq]!.counts }),
        slices,
      );
    }
    this.reset();
    this.take(next);
    this.stored = stored;
    this.storeHead = batch.length;
    this.epoch = epoch;
    return true;
  }

  /**
   * Removes every entry, and the stored conversation with its metadata. The conversation takes a
   * new generation, which this history holds: a writer still holding the old one is refused and
   * reloads (it never writes the cleared history's generation back).
   */
  async clear(): Promise<void> {
    const epoch = newEpoch();
    if (this.store) await this.store.delete(this.conversationId, { epoch });
    this.reset();
    this.storeHead = 0;
    this.epoch = this.store ? epoch : null;
  }

  /** The conversation's stored metadata (null without a store, or when none was written). */
  async readMeta(): Promise<Record<string, unknown> | null> {
    return this.store ? (await this.store.getMeta(this.conversationId)).value : null;
  }

  /** The store generation this history holds (null: none yet, or no store). */
  get storeEpoch(): string | null {
    return this.epoch;
  }

  /**
   * Compare-and-set of the conversation's metadata: `change` is given what is stored now and
   * returns the patch to merge into it, or null to write nothing; a lost race is retried from a
   * fresh read (another writer's change is never overwritten). Resolves with what was stored when
   * `change` returned null (null without a store), or undefined once the patch is written.
   */
  async updateMeta(
    change: (stored: Record<string, unknown> | null) => Record<string, unknown> | null,
  ): Promise<Record<string, unknown> | null | undefined> {
    if (!this.store) return null;
    for (let attempt = 1; ; attempt++) {
      const current = await this.store.getMeta(this.conversationId);
      const patch = change(current.value);
      if (patch === null) return current.value;
      try {
        await this.store.setMeta(
          this.conversationId,
          { ...(current.value ?? {}), ...patch },
          { expectedVersion: current.version },
        );
        return undefined;
      } catch (err) {
        if (!(err instanceof ConflictError) || attempt >= READ_ATTEMPTS) throw err;
      }
    }
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

  /** Takes a list `entryList` built as this history's entries (after `reset`). */
  private take(next: EntryList): void {
    this.list = next.list;
    for (let i = 0; i < next.list.length; i++) {
      const entry = next.list[i]!;
      if (entry.id !== undefined && !this.ids.has(entry.id)) this.ids.set(entry.id, entry);
    }
    this.conversationFormat = next.format;
    this.ephemeral = next.ephemeral;
  }

  private push(message: Message, metadata: MessageMetadata, id?: string): HistoryEntry {
    const seq = this.list.length;
    this.conversationFormat = resolveConversationFormat(this.conversationFormat, message, seq, () =>
      this.list.map((e) => e.message),
    );
    const entry = frozenEntry(seq, message, metadata, id);
    this.list.push(entry);
    if (id !== undefined && !this.ids.has(id)) this.ids.set(id, entry);
    if (metadata.ephemeral) this.ephemeral = true;
    return entry;
  }

  private reset(): void {
    this.list = [];
    this.stored = new Map();
    this.ids = new Map();
    this.conversationFormat = undefined;
    this.ephemeral = false;
    this.resumed = false;
    this.generationCounter++;
  }
}

/** Where a stored message of a history is stored, and the counts the store holds for it. */
interface StoredMessage {
  seq: number;
  counts: EntryCounts | undefined;
}

/**
 * A stored entry's message checked as a load checks it (`InvalidMessageError` when it is not one):
 * what `add` refuses (a number JSON cannot hold, such as a hand-edited 1e999 read back as Infinity;
 * nesting no walk may take) first, metadata included, then the message in the conversation's format
 * as resolved against `format` and the messages before it (`earlier`); with that format.
 */
export function storedMessageOf(
  entry: Pick<StoredEntry, 'seq' | 'message' | 'metadata'>,
  format: MessageFormat | undefined,
  earlier: () => readonly unknown[],
): { message: Message; format: MessageFormat | undefined } {
  const path = `stored entry ${entry.seq}`;
  checkStoredValues(entry, path);
  const resolved = resolveConversationFormat(format, entry.message, entry.seq, earlier);
  // Its depth is bounded now: the shape check does not walk it for that again.
  return { message: validateJsonCheckedMessage(entry.message, path, resolved), format: resolved };
}

/**
 * `storedMessageOf` for a stored entry taken without the messages before it (a row a stored view
 * record serves): undefined when it would not keep the conversation in `format` (see `keepsFormat`),
 * else the message checked as a load checks it, whose format is then `format` (told once, not
 * again). `InvalidMessageError` when it is not a message.
 */
export function storedMessageKeeping(
  entry: Pick<StoredEntry, 'seq' | 'message' | 'metadata'>,
  format: MessageFormat | undefined,
): Message | undefined {
  if (!keepsFormat(format, entry.message, entry.seq)) return undefined;
  const path = `stored entry ${entry.seq}`;
  checkStoredValues(entry, path);
  return validateJsonCheckedMessage(entry.message, path, format);
}

/** Refuses (`InvalidMessageError`) a stored message or metadata JSON would not hold (see `storedMessageOf`). */
function checkStoredValues(entry: Pick<StoredEntry, 'message' | 'metadata'>, path: string): void {
  if (jsonValueIsClean(entry.message) && jsonValueIsClean(entry.metadata)) return;
  const issues = jsonValueIssues(entry.message, path);
  const metadataIssues = jsonValueIssues(entry.metadata, `${path}.metadata`);
  if (issues.length > 0 || metadataIssues.length > 0)
    throw new InvalidMessageError([...issues, ...metadataIssues]);
}

/**
 * Whether a message at `seq` leaves a conversation in `format` in that format, told without the
 * messages before it: false when it shows another (or would move the conversation to one, which
 * only the earlier messages can decide). What is appended or served without loading the history
 * must keep it (see `appendUnloaded`, src/manager-stored-view.ts).
 */
export function keepsFormat(format: MessageFormat | undefined, message: unknown, seq: number): boolean {
  let asked = false;
  const resolved = resolveConversationFormat(format, message, seq, () => {
    asked = true;
    return [];
  });
  return !asked && resolved === format;
}

/** A history entry, frozen deep (its message and metadata frozen in place). */
export function frozenEntry(
  seq: number,
  message: Message,
  metadata: MessageMetadata,
  id?: string,
): HistoryEntry {
  const entry: { -readonly [K in keyof HistoryEntry]: HistoryEntry[K] } = {
    seq,
    message: freezeDeep(message),
    metadata: freezeDeep(metadata),
  };
  if (id !== undefined) entry.id = id;
  return Object.freeze(entry);
}

/** Entries built off to the side, with the format they resolve to, to be taken in at once. */
interface EntryList {
  list: HistoryEntry[];
  format: MessageFormat | undefined;
  ephemeral: boolean;
}

/**
 * The entries `push` would append to an empty history, one by one, for `items` (frozen, numbered
 * from 0, the format resolved as they go), built in slices that yield.
 */
async function entryList(
  items: ReadonlyArray<{ message: Message; metadata: MessageMetadata; id?: string | undefined }>,
  slices: Slices,
): Promise<EntryList> {
  const next: EntryList = { list: [], format: undefined, ephemeral: false };
  const messages = () => next.list.map((e) => e.message);
  await forEachInSlices(
    items,
    ({ message, metadata, id }, seq) => {
      // `messages` reads the entries before this one, as `push` reads the list so far.
      next.format = resolveConversationFormat(next.format, message, seq, messages);
      next.list.push(frozenEntry(seq, message, metadata, id));
      if (metadata.ephemeral) next.ephemeral = true;
    },
    slices,
  );
  return next;
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

/**
 * `held` when it holds the same message as `added` (compared as JSON values: key order aside),
 * else a `MessageIdConflictError` naming the id, the entry and where the two differ.
 */
function sameMessage(held: HistoryEntry, id: string, added: Message): HistoryEntry {
  const difference = firstDifference(held.message, added);
  if (difference === undefined) return held;
  throw new MessageIdConflictError(id, held.seq, difference.path, difference.stored, difference.added);
}
