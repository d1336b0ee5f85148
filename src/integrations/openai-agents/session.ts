import { randomUUID } from 'node:crypto';
import type { AgentInputItem, Session } from '@openai/agents';
import {
  ConfigurationError,
  ConflictError,
  DuplicateMessageIdError,
  InvalidMessageError,
  MessageIdConflictError,
  StoreError,
} from '../../errors.js';
import type { CompactionReceipt } from '../../events.js';
import { firstDifference } from '../../history/message-diff.js';
import { ContextManager, type ContextManagerOptions } from '../../manager.js';
import type { ResponsesItem } from '../../messages/responses-types.js';
import type { Message, MessageMetadata } from '../../messages/types.js';
import { checkOptionNamesOf } from '../../option-names.js';
import type { RecallHit, RecallOptions } from '../../recall/recall-hit.js';
import { MemoryStore } from '../../stores/memory.js';
import { messageIdProblem } from '../../stores/message-id.js';
import { resolveStore } from '../../stores/resolve.js';
import type { ConversationStore, NewEntry } from '../../stores/types.js';
import { fitThrough, messageKey, syncThrough } from '../fit-through.js';
import { checkStorable } from '../storable.js';
import { agentItemIssue, agentItemsToResponses, responsesToAgentItems } from './agent-items.js';

/**
 * The Agents SDK's placeholder for an item id no API issued (`FAKE_ID`-like: the Chat Completions
 * model and other providers fill `id` with a constant): never an item's identity.
 */
const PLACEHOLDER_IDS = new Set(['__fake_id__', 'FAKE_ID']);

/**
 * Each item with the id that identifies it, if any: a string `id` the API issued (`msg_…`,
 * `fc_…`, `rs_…`), not a placeholder, and not shared by another item of the batch (a constant one
 * would be). Items without one (user input, function results) are stored as they come.
 */
function identified(items: readonly AgentInputItem[]): Array<{ item: AgentInputItem; id?: string }> {
  const idOf = (item: AgentInputItem): string | undefined => {
    const id = (item as { id?: unknown }).id;
    return typeof id === 'string' && messageIdProblem(id) === undefined && !PLACEHOLDER_IDS.has(id)
      ? id
      : undefined;
  };
  const seen = new Map<string, number>();
  for (const item of items) {
    const id = idOf(item);
    if (id !== undefined) seen.set(id, (seen.get(id) ?? 0) + 1);
  }
  return items.map((item) => {
    const id = idOf(item);
    return id !== undefined && seen.get(id) === 1 ? { item, id } : { item };
  });
}

/** Options of `new ContextkitSession(…)`: where items are stored, under which id, and the budget `getItems` fits. */
export interface ContextkitSessionOptions {
  /** Where the items are kept: a store, or `memory:` / `file:DIR` / … Default: a new in-memory store. */
  store?: ConversationStore | string;
  /** The conversation id in the store (what `getSessionId()` returns); a random UUID by default. */
  conversationId?: string;
  /**
   * The context's limit: tokens of the history `getItems` returns (the seeds' `max_tokens`; not the
   * provider's output `max_tokens`). By default the model's window from the catalog.
   */
  maxTokens?: number;
  /** Catalog model id that decides the tokenizer and the default budget. */
  model?: string;
  /** Options of the manager that plans the fitted history (strategy, thresholds, counter…). */
  options?: Omit<ContextManagerOptions, 'store' | 'conversationId'>;
  /**
   * The agent is given the `recall` tool (`recallTool(session)`): the session's search index is
   * then kept up to date as items are fitted, not built on the first search.
   */
  recall?: boolean;
}

/** The session's items as last read (see `ContextkitSession.current`); the arrays only grow. */
interface HeldItems {
  epoch: string | null;
  clearedAt: number;
  items: AgentInputItem[];
  messages: ResponsesItem[];
  keys: string[];
}

/** How many times `getItems` reads again when the conversation is replaced while it reads. */
const READ_ATTEMPTS = 5;

/** The key of the session's record in its conversation's metadata. */
const META_KEY = 'agentsSession';

/** What the session keeps in its conversation's metadata: where its items start since the last clear. */
interface SessionMeta {
  /** Seq of the first stored item of the session since its last `clearSession` (0: never cleared). */
  clearedAt: number;
}

function sessionMetaOf(value: Record<string, unknown> | null): SessionMeta {
  const record = value?.[META_KEY] as { clearedAt?: unknown } | undefined;
  const at = record?.clearedAt;
  return { clearedAt: typeof at === 'number' && Number.isInteger(at) && at >= 0 ? at : 0 };
}

/**
 * A session for the OpenAI Agents SDK (`run(agent, input, { session })`) that keeps every item in
 * a contextkit store, as the SDK gave it, and gives the model a history fitted to the budget:
 * `getItems()` returns the session's items with old tool outputs cleared and old turns summarized or
 * dropped as `ContextManager` plans it over their Responses API form (`agentItemsToResponses`:
 * the `'openai-responses'` format, one item for one item), never a `function_call_result` without its
 * `function_call` or the reverse. `getAllItems()` returns the session's items unfitted.
 *
 * `clearSession()` never deletes: it writes, durably and at once, in the conversation's metadata,
 * that the session's items now start after what is stored (a `setMeta`, so a process that exits
 * right after it has still cleared). The stored items stay, and `recall` keeps searching all of
 * them. So under `OpenAIResponsesCompactionSession`, which clears the session it wraps and writes
 * back what `responses.compact` returned (the user messages and one `compaction` item), the
 * write-back starts the session's items and stands in the view for the range it replaced, while
 * that range stays stored and searchable. `deleteSession()` removes everything stored.
 *
 * The budget covers the history only: the agent's instructions, its tools and the new input come
 * on top, so leave room for them. The store's conversation holds Agents SDK items, not chat
 * messages: open it with this class, not with a `ContextManager`.
 */
export class ContextkitSession implements Session {
  /** The conversation id in the store (the SDK's session id: `getSessionId()`). */
  readonly conversationId: string;
  private readonly store: ConversationStore;
  private readonly settings: ContextkitSessionOptions;
  /** Plans over the session's items' messages; kept while they only grow, so its plan holds. */
  private manager: ContextManager;
  /** Holds every stored item, cleared or not, for `recall`. */
  private archive: ContextManager;
  /** The session's items as last read (see `current`). */
  private held: HeldItems | null = null;

  constructor(options: ContextkitSessionOptions = {}) {
    checkOptionNamesOf('ContextkitSession', options, [
      'store',
      'conversationId',
      'maxTokens',
      'model',
      'options',
      'recall',
    ]);
    if (
      options.conversationId !== undefined &&
      (typeof options.conversationId !== 'string' || options.conversationId === '')
    ) {
      throw new ConfigurationError('conversationId', 'must be a non-empty string');
    }
    this.settings = options;
    this.conversationId = options.conversationId ?? randomUUID();
    this.store = options.store === undefined ? new MemoryStore() : resolveStore(options.store);
    this.manager = this.newManager();
    this.archive = this.newManager();
  }

  private newManager(): ContextManager {
    const model = this.settings.model ?? this.settings.options?.model;
    return new ContextManager({
      ...this.settings.options,
      ...(model !== undefined ? { model } : {}),
      ...(this.settings.recall ? { recall: true } : {}),
    });
  }

  async getSessionId(): Promise<string> {
    return this.conversationId;
  }

  /** Where the session's items start in the store (see the class note). */
  private async clearedAt(): Promise<number> {
    return sessionMetaOf((await this.store.getMeta(this.conversationId)).value).clearedAt;
  }

  /** The session's items since its last clear, in order, never fitted. */
  async getAllItems(): Promise<AgentInputItem[]> {
    return (await this.current()).items.slice();
  }

  /**
   * The session's items since its last clear with their Responses forms and keys, as last read,
   * brought up to the store: only the items stored since are read and converted (issue 32 item 4:
   * a call costs the new items, not the history). Read whole again when the session was cleared,
   * or its conversation replaced or popped (another generation) since.
   */
  private async current(): Promise<HeldItems> {
    const id = this.conversationId;
    for (let attempt = 1; ; attempt++) {
      const [meta, epoch] = await Promise.all([this.store.getMeta(id), this.store.epoch(id)]);
      const { clearedAt } = sessionMetaOf(meta.value);
      const kept = this.held;
      const held: HeldItems =
        kept && kept.epoch === epoch && kept.clearedAt === clearedAt
          ? kept
          : { epoch, clearedAt, items: [], messages: [], keys: [] };
      const entries = await this.store.read(id, { fromSeq: clearedAt + held.items.length });
      // A replace or pop between the reads: the rows read may be of another generation.
      if ((await this.store.epoch(id)) !== epoch) {
        this.held = null;
        if (attempt < READ_ATTEMPTS) continue;
        throw new StoreError(
          id,
          `the session's conversation was replaced ${READ_ATTEMPTS} times while it was being read; try again`,
          { code: 'conflict' },
        );
      }
      const items = entries.map((e) => e.message as unknown as AgentInputItem);
      const messages = agentItemsToResponses(items, held.items.length);
      held.items.push(...items);
      held.messages.push(...messages);
      for (const m of messages) held.keys.push(messageKey(m as Message));
      this.held = held;
      return held;
    }
  }

  /** Every stored item, those before a `clearSession` included, in order, never fitted. */
  async getStoredItems(): Promise<AgentInputItem[]> {
    const entries = await this.store.read(this.conversationId);
    return entries.map((e) => e.message as unknown as AgentInputItem);
  }

  /**
   * The history to send: the session's items fitted to the budget (see the class note). With
   * `limit`, at most the newest `limit` of those, starting after any result whose call the limit
   * cut off.
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const { items, messages, keys } = await this.current();
    if (items.length === 0 || limit === 0) return [];
    const request = this.settings.maxTokens !== undefined ? { tokenBudget: this.settings.maxTokens } : {};
    const fitView = () =>
      fitThrough<ResponsesItem>(this.manager, messages, request, keys, 'openai-responses');
    let view = await fitView();
    if (!view) {
      // The session's items were rewritten (a clear, popItem, another writer): plan afresh.
      this.manager = this.newManager();
      view = await fitView();
    }
    // With the recall tool, its index follows the store as the agent runs, not on the first search.
    if (this.settings.recall) await this.syncArchive();
    const fitted = responsesToAgentItems(view!, items);
    return limit === undefined ? fitted : newest(fitted, limit);
  }

  /**
   * Searches every stored item, those before a `clearSession` included (see
   * `ContextManager.recall`); what `recallTool(session)` runs. A hit's `seq` is the message's place
   * in the store as contextkit reads its items (a function call and its output are messages of
   * their own).
   */
  async recall(query: string, options?: RecallOptions): Promise<RecallHit[]> {
    await this.syncArchive();
    return this.archive.recall(query, options);
  }

  /** Brings the archive up to every stored item. */
  private async syncArchive(): Promise<void> {
    const messages = agentItemsToResponses(await this.getStoredItems());
    const keys = messages.map((m) => messageKey(m as Message));
    if (!(await syncThrough(this.archive, messages, keys))) {
      this.archive = this.newManager();
      await syncThrough(this.archive, messages, keys);
    }
  }

  /**
   * Compacts the fitted history as the model's `compact` tool asks (see
   * `ContextManager.requestCompaction`): what `compactTool(session)` runs. The next `getItems`
   * returns the compacted view.
   */
  async requestCompaction(options: { focus?: string } = {}): Promise<CompactionReceipt | null> {
    const manager = await this.syncedManager();
    const request = this.settings.maxTokens !== undefined ? { tokenBudget: this.settings.maxTokens } : {};
    return manager.requestCompaction({ ...request, ...options });
  }

  /** The manager that fits the session's items, holding them all (a new one when they were rewritten). */
  private async syncedManager(): Promise<ContextManager> {
    const { messages, keys } = await this.current();
    if (!(await syncThrough(this.manager, messages, keys))) {
      this.manager = this.newManager();
      await syncThrough(this.manager, messages, keys);
    }
    return this.manager;
  }

  /**
   * Appends items; refuses (`InvalidMessageError` with the item's path, nothing stored) any that
   * JSON would change, and Responses API items in their own spelling (`function_call_output`,
   * `call_id`), which the SDK cannot send: give the SDK's (`function_call_result`, `callId`).
   */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;
    items.forEach((item, i) => {
      checkStorable(item, `items[${i}]`);
      const issue = agentItemIssue(item, `items[${i}]`);
      if (issue) throw new InvalidMessageError([issue]);
    });
    const timestamp = new Date().toISOString();
    const metadata: MessageMetadata = { timestamp, source: 'openai-agents' };
    let entries: NewEntry[] = identified(items).map(({ item, id }) =>
      id === undefined
        ? { message: item as unknown as Message, metadata }
        : { message: item as unknown as Message, metadata, id },
    );
    // An item whose id the session already holds (a step retried after its write committed, by
    // this process or another) is not stored again; one the session cleared since is stored anew,
    // without its id. The store decides atomically with the append, for the whole batch.
    for (let attempt = 0; entries.length > 0; attempt++) {
      try {
        await this.store.append(this.conversationId, entries);
        return;
      } catch (error) {
        if (!(error instanceof DuplicateMessageIdError) || attempt >= entries.length) throw error;
        const clearedAt = await this.clearedAt();
        const held = new Map(error.held.map((h) => [h.id, h.seq]));
        const next: NewEntry[] = [];
        for (const entry of entries) {
          const seq = entry.id === undefined ? undefined : held.get(entry.id);
          if (seq === undefined) next.push(entry);
          else if (seq < clearedAt) next.push({ message: entry.message, metadata: entry.metadata });
          else await this.checkSame(entry.id as string, seq, entry.message);
        }
        entries = next;
      }
    }
  }

  /** The item stored under `id` at `seq` is `message`, or `MessageIdConflictError` names both. */
  private async checkSame(id: string, seq: number, message: Message): Promise<void> {
    const [stored] = await this.store.read(this.conversationId, { fromSeq: seq, limit: 1 });
    if (stored === undefined) return;
    const difference = firstDifference(stored.message, message);
    if (difference !== undefined) {
      throw new MessageIdConflictError(id, seq, difference.path, difference.stored, difference.added);
    }
  }

  /**
   * Removes the newest item of the session and returns it, in one atomic step of the store
   * (`ConversationStore.pop`); `undefined` when the session has none since its last clear.
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    if ((await this.store.head(this.conversationId)) <= (await this.clearedAt())) return undefined;
    const last = await this.store.pop(this.conversationId);
    return last?.message as unknown as AgentInputItem | undefined;
  }

  /**
   * Clears the session without deleting anything: its items now start after what is stored,
   * written to the store before this resolves (see the class note). Stored items stay for
   * `recall`; `deleteSession` removes them.
   */
  async clearSession(): Promise<void> {
    for (;;) {
      const meta = await this.store.getMeta(this.conversationId);
      const head = await this.store.head(this.conversationId);
      const value: Record<string, unknown> = { ...(meta.value ?? {}), [META_KEY]: { clearedAt: head } };
      try {
        await this.store.setMeta(this.conversationId, value, { expectedVersion: meta.version });
        break;
      } catch (error) {
        // Another writer changed the metadata in between: read it again.
        if (!(error instanceof ConflictError)) throw error;
      }
    }
    this.manager = this.newManager();
  }

  /** Removes the session's stored items and metadata for good. */
  async deleteSession(): Promise<void> {
    await this.store.delete(this.conversationId);
    this.manager = this.newManager();
    this.archive = this.newManager();
  }
}

/** The newest `limit` items, without a result whose call falls before the cut. */
function newest(items: readonly AgentInputItem[], limit: number): AgentInputItem[] {
  const tail = items.slice(Math.max(0, items.length - limit));
  const calls = new Set<string>();
  return tail.filter((item) => {
    const record = item as Record<string, unknown>;
    if (typeof record.callId !== 'string') return true;
    if (typeof record.type === 'string' && /_(result|output)$/.test(record.type))
      return calls.has(record.callId);
    calls.add(record.callId);
    return true;
  });
}
