import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import {
  type BaseMessage,
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
  type StoredMessage,
} from '@langchain/core/messages';
import { ConfigurationError } from '../../errors.js';
import { ContextManager } from '../../manager.js';
import type { MessageMetadata } from '../../messages/types.js';
import { checkOptionNamesOf } from '../../option-names.js';
import type { RecallHit, RecallOptions } from '../../recall/recall-hit.js';
import { MemoryStore } from '../../stores/memory.js';
import { resolveStore } from '../../stores/resolve.js';
import type { ConversationStore } from '../../stores/types.js';
import { validateMessage } from '../../wire/validate-message.js';
import { checkStorable } from '../storable.js';
import { toBaseMessages, toOpenAIMessage } from './base-messages.js';

/** Options of `new ContextkitChatMessageHistory(…)`: the store and the conversation id. */
export interface ContextkitChatMessageHistoryOptions {
  /** Where the messages are kept: a store, or `memory:` / `file:DIR` / … Default: a new in-memory store. */
  store?: ConversationStore | string;
  /** The conversation id in the store. */
  conversationId: string;
}

function isStoredMessage(value: unknown): value is StoredMessage {
  return typeof value === 'object' && value !== null && 'type' in value && 'data' in value;
}

/**
 * A LangChain chat message history (for `RunnableWithMessageHistory` and the like) kept in a
 * contextkit store. Each message is stored as the OpenAI message contextkit plans with, so a
 * `ContextManager` on the same store and conversation id reads the same conversation, with the
 * LangChain message itself (ids, tool calls, provider fields) in the entry's metadata so it comes
 * back exactly. Messages written by others (a `ContextManager`) are converted.
 */
export class ContextkitChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ['contextkit', 'langchain'];
  /** The conversation id in the store. */
  readonly conversationId: string;
  private readonly store: ConversationStore;
  /** Reads the stored conversation for `recall`; never closed (the store is the history's). */
  private reader: ContextManager | undefined;

  constructor(options: ContextkitChatMessageHistoryOptions) {
    super();
    checkOptionNamesOf('ContextkitChatMessageHistory', options, ['store', 'conversationId']);
    if (typeof options?.conversationId !== 'string' || options.conversationId === '') {
      throw new ConfigurationError('conversationId', 'must be a non-empty string');
    }
    this.conversationId = options.conversationId;
    this.store = options.store === undefined ? new MemoryStore() : resolveStore(options.store);
  }

  async getMessages(): Promise<BaseMessage[]> {
    const entries = await this.store.read(this.conversationId);
    return entries.map((entry) => {
      const stored = entry.metadata.langchain;
      if (isStoredMessage(stored)) return mapStoredMessagesToChatMessages([stored])[0]!;
      return toBaseMessages([entry.message])[0]!;
    });
  }

  async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  /**
   * Stores the messages; refuses them all (`InvalidMessageError` with the path, nothing stored)
   * when one holds what JSON would change or nests too deep, or gives a message no conversation
   * may hold (a `ToolMessage` without its `tool_call_id`).
   */
  override async addMessages(messages: BaseMessage[]): Promise<void> {
    if (messages.length === 0) return;
    messages.forEach((message, i) => {
      // The fields LangChain keeps (its own lc_* bookkeeping repeats them); checked before
      // LangChain's serializer walks them.
      for (const [key, value] of Object.entries(message)) {
        if (!key.startsWith('lc_')) checkStorable(value, `messages[${i}].${key}`);
      }
    });
    const head = await this.store.head(this.conversationId);
    const converted = messages.map((message, i) =>
      validateMessage(toOpenAIMessage(message, head + i), `messages[${i}]`, 'openai'),
    );
    const timestamp = new Date().toISOString();
    const stored = mapChatMessagesToStoredMessages(messages);
    await this.store.append(
      this.conversationId,
      converted.map((message, i) => {
        const metadata: MessageMetadata = { timestamp, source: 'langchain', langchain: stored[i] };
        return { message, metadata };
      }),
    );
  }

  override async clear(): Promise<void> {
    await this.store.delete(this.conversationId);
  }

  /**
   * Searches every stored message (see `ContextManager.recall`); what `recallTool(history)` runs.
   * A manager over the same store reads the conversation, taking in what was added since.
   */
  async recall(query: string, options?: RecallOptions): Promise<RecallHit[]> {
    const head = await this.store.head(this.conversationId);
    if (this.reader === undefined || (await this.reader.getEntries()).length > head) {
      // New, or the history was cleared or cut: read it again from the store.
      this.reader = new ContextManager({ store: this.store, conversationId: this.conversationId });
    }
    await this.reader.sync();
    return this.reader.recall(query, options);
  }
}
