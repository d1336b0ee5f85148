import { jsonSchema, type ModelMessage, type Tool, tool } from 'ai';
import type { HistoryEntry } from '../../messages/types.js';
import type { RecallOptions } from '../../recall/recall-hit.js';
import { RecallIndex } from '../../recall/recall-index.js';
import {
  answerRecall,
  RECALL_TOOL_DESCRIPTION,
  RECALL_TOOL_PARAMETERS,
  type RecallSource,
  type RecallToolInput,
} from '../../recall/recall-tool.js';
import { getModelInfo } from '../../tokens/catalog.js';
import { createTokenCounter } from '../../tokens/counter.js';
import { messageKey } from '../fit-through.js';
import { fromModelMessages } from './model-messages.js';

/** Options of the AI SDK `recallTool`. */
export interface RecallToolOptions extends RecallOptions {
  /** Catalog model whose tokenizer counts the hits when there is no source (default `gpt-4o`). */
  model?: string;
}

/**
 * Searches the messages the SDK hands a tool's `execute` (the whole conversation it sends, as
 * `contextMiddleware` receives it before fitting), indexing only what is new since the last call
 * when the conversation grew.
 */
class MessagesSource implements RecallSource {
  #keys: string[] = [];
  #entries: HistoryEntry[] = [];
  #index: RecallIndex;
  readonly #countText: (text: string) => number;
  messages: readonly ModelMessage[] = [];

  constructor(model: string) {
    const info = getModelInfo(model) ?? getModelInfo('gpt-4o');
    const counter = createTokenCounter(info as NonNullable<typeof info>);
    this.#countText = (text) => counter.countText(text);
    this.#index = this.#newIndex();
  }

  #newIndex(): RecallIndex {
    return new RecallIndex({ entries: () => this.#entries, countText: this.#countText, eager: true });
  }

  async recall(query: string, options?: RecallOptions) {
    const proxies = fromModelMessages(this.messages).messages;
    const keys = proxies.map(messageKey);
    const extends_ = this.#keys.length <= keys.length && this.#keys.every((k, i) => k === keys[i]);
    if (!extends_) {
      this.#entries = [];
      this.#keys = [];
      this.#index = this.#newIndex();
    }
    const timestamp = new Date().toISOString();
    for (let seq = this.#entries.length; seq < proxies.length; seq++) {
      this.#entries.push({ seq, message: proxies[seq] as HistoryEntry['message'], metadata: { timestamp } });
    }
    this.#keys = keys;
    this.#index.update();
    return this.#index.recall(query, options);
  }
}

/**
 * The `recall` tool for the AI SDK: `generateText({ model, tools: { ...tools, recall: recallTool(ctx) } })`.
 * With a `ContextManager` (or any `RecallSource`) it searches that conversation's whole stored
 * history; without one it searches the messages the SDK passes to the tool, which are the whole
 * conversation even when `contextMiddleware` sent the model a fitted part of it. The SDK runs a
 * tool only from the `tools` it is given, so the tool goes there (a middleware cannot add it).
 */
export function recallTool(
  source?: RecallSource,
  options: RecallToolOptions = {},
): Tool<RecallToolInput, string> {
  const { model, ...recallOptions } = options;
  const own = source === undefined ? new MessagesSource(model ?? 'gpt-4o') : undefined;
  return tool({
    description: RECALL_TOOL_DESCRIPTION,
    inputSchema: jsonSchema<RecallToolInput>(
      RECALL_TOOL_PARAMETERS as unknown as Parameters<typeof jsonSchema>[0],
    ),
    execute: async (input, { messages }) => {
      if (own) own.messages = messages;
      return answerRecall(source ?? (own as MessagesSource), input, recallOptions);
    },
  });
}
