import { randomUUID } from 'node:crypto';
import type { AgentInputItem, Session } from '@openai/agents';
import { ConfigurationError, InvalidMessageError } from '../../errors.js';
import type { ResponsesItem } from '../../formats/openai-responses/items.js';
import { ContextManager, type ContextManagerOptions } from '../../manager.js';
import type { Message, MessageMetadata } from '../../messages/types.js';
import type { RecallHit, RecallOptions } from '../../recall/recall-hit.js';
import { MemoryStore } from '../../stores/memory.js';
import { resolveStore } from '../../stores/resolve.js';
import type { ConversationStore } from '../../stores/types.js';
import { fitThrough, messageKey, syncThrough } from '../fit-through.js';
import { checkStorable } from '../storable.js';
import { agentItemIssue, agentItemsToResponses, responsesToAgentItems } from './agent-items.js';

/** Options of `new ContextkitSession(…)`: where items are stored, under which id, and the budget `getItems` fits. */
export interface ContextkitSessionOptions {
  /** Where the items are kept: a store, or `memory:` / `file:DIR` / … Default: a new in-memory store. */
  store?: ConversationStore | string;
  /** The conversation id in the store; a random UUID by default. */
  sessionId?: string;
  /** Token budget of the history `getItems` returns; by default the model's window from the catalog. */
  budget?: number;
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

/**
 * A session for the OpenAI Agents SDK (`run(agent, input, { session })`) that keeps every item in
 * a contextkit store, as the SDK gave it, and gives the model a history fitted to the budget:
 * `getItems()` returns the stored items with old tool outputs cleared and old turns summarized or
 * dropped as `ContextManager` plans it over their Responses API form (`agentItemsToResponses`:
 * the `'openai-responses'` format, one item for one item), never a `function_call_result` without its
 * `function_call` or the reverse. `getAllItems()` returns everything stored.
 *
 * The budget covers the history only: the agent's instructions, its tools and the new input come
 * on top, so leave room for them. The store's conversation holds Agents SDK items, not chat
 * messages: open it with this class, not with a `ContextManager`.
 */
export class ContextkitSession implements Session {
  readonly sessionId: string;
  private readonly store: ConversationStore;
  private readonly settings: ContextkitSessionOptions;
  /** Plans over the items' messages; kept while the stored items only grow, so its plan holds. */
  private manager: ContextManager;
  /**
   * `clearSession` was called and not yet carried out: if the next write is a compaction's
   * write-back (`OpenAIResponsesCompactionSession`), the stored items stay; otherwise they go first.
   */
  private clearPending = false;

  constructor(options: ContextkitSessionOptions = {}) {
    if (
      options.sessionId !== undefined &&
      (typeof options.sessionId !== 'string' || options.sessionId === '')
    ) {
      throw new ConfigurationError('sessionId', 'must be a non-empty string');
    }
    this.settings = options;
    this.sessionId = options.sessionId ?? randomUUID();
    this.store = options.store === undefined ? new MemoryStore() : resolveStore(options.store);
    this.manager = this.newManager();
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
    return this.sessionId;
  }

  /** Every stored item, in order, never fitted. */
  async getAllItems(): Promise<AgentInputItem[]> {
    await this.settleClear();
    const entries = await this.store.read(this.sessionId);
    return entries.map((e) => e.message as unknown as AgentInputItem);
  }

  /**
   * The history to send: the stored items fitted to the budget (see the class note). With
   * `limit`, at most the newest `limit` of those, starting after any result whose call the limit
   * cut off.
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const items = await this.getAllItems();
    if (items.length === 0 || limit === 0) return [];
    const messages = agentItemsToResponses(items);
    const keys = messages.map((m) => messageKey(m as Message));
    const request = this.settings.budget !== undefined ? { tokenBudget: this.settings.budget } : {};
    const fitView = () =>
      fitThrough<ResponsesItem>(this.manager, messages, request, keys, 'openai-responses');
    let view = await fitView();
    if (!view) {
      // The stored items were rewritten (popItem, another writer): plan afresh.
      this.manager = this.newManager();
      view = await fitView();
    }
    const fitted = responsesToAgentItems(view!, items);
    return limit === undefined ? fitted : newest(fitted, limit);
  }

  /**
   * Searches every stored item (see `ContextManager.recall`); what `recallTool(session)` runs. A
   * hit's `seq` is the message's place in the session as contextkit reads its items (a function
   * call and its output are messages of their own).
   */
  async recall(query: string, options?: RecallOptions): Promise<RecallHit[]> {
    const items = await this.getAllItems();
    const messages = agentItemsToResponses(items);
    const keys = messages.map((m) => messageKey(m as Message));
    if (!(await syncThrough(this.manager, messages, keys))) {
      this.manager = this.newManager();
      await syncThrough(this.manager, messages, keys);
    }
    return this.manager.recall(query, options);
  }

  /**
   * Appends items; refuses (`InvalidMessageError` with the item's path, nothing stored) any that
   * JSON would change, and Responses API items in their own spelling (`function_call_output`,
   * `call_id`), which the SDK cannot send: give the SDK's (`function_call_result`, `callId`).
   * Right after `clearSession`, items holding a `compaction` item are what
   * `OpenAIResponsesCompactionSession` writes back after `responses.compact` (the user messages
   * and the compaction item): they are appended after the stored items, which stay, and
   * `getItems` sends from them on (the compaction item stands for what came before); any other
   * items clear the session first, as asked.
   */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;
    items.forEach((item, i) => {
      checkStorable(item, `items[${i}]`);
      const issue = agentItemIssue(item, `items[${i}]`);
      if (issue) throw new InvalidMessageError([issue]);
    });
    if (this.clearPending && items.some((item) => (item as { type?: unknown }).type === 'compaction'))
      this.clearPending = false;
    await this.settleClear();
    const timestamp = new Date().toISOString();
    const metadata: MessageMetadata = { timestamp, source: 'openai-agents' };
    await this.store.append(
      this.sessionId,
      items.map((item) => ({ message: item as unknown as Message, metadata })),
    );
  }

  /** Removes the newest stored item and returns it, in one atomic step of the store (`ConversationStore.pop`). */
  async popItem(): Promise<AgentInputItem | undefined> {
    await this.settleClear();
    const last = await this.store.pop(this.sessionId);
    return last?.message as unknown as AgentInputItem | undefined;
  }

  /**
   * Clears the session: carried out at the next call, unless that call writes back a compaction
   * (see `addItems`), which keeps the stored items.
   */
  async clearSession(): Promise<void> {
    this.clearPending = true;
  }

  private async settleClear(): Promise<void> {
    if (!this.clearPending) return;
    this.clearPending = false;
    await this.store.delete(this.sessionId);
    this.manager = this.newManager();
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
