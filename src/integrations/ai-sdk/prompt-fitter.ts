import type { ModelMessage } from 'ai';
import { OMITTED_START_TEXT } from '../../compaction/placeholders.js';
import { ConfigurationError } from '../../errors.js';
import type { ContextEvents } from '../../events.js';
import { ContextManager, type ContextManagerOptions, type RequestOptions } from '../../manager.js';
import type { ToolDefinition } from '../../messages/types.js';
import { checkOptionNamesOf } from '../../option-names.js';
import type { ConversationStore } from '../../stores/types.js';
import { createModelCatalog, type ModelCatalog } from '../../tokens/catalog.js';
import { FACTS_OPEN } from '../../tools/facts-block.js';
import { type FittedEntry, fitThrough, messageKey } from '../fit-through.js';
import {
  type AnyModelMessage,
  fromModelMessages,
  type ModelMessageSideMap,
  type ProxyEntry,
  restoreModelMessages,
} from './model-messages.js';

/** The names `FitOptions` takes (`contextPrepareStep` adds `tools`). */
export const FIT_OPTION_NAMES = [
  'manager',
  'options',
  'maxTokens',
  'model',
  'conversations',
  'store',
  'conversationId',
  'onWarning',
] as const;

/** How the AI SDK integrations fit messages: shared by the middleware and the `prepareStep` helper. */
export interface FitOptions {
  /**
   * A manager of your own: its history must be a prefix of every prompt (the SDK sends the whole
   * conversation each call); the rest of the prompt is added to it, so it is stored and its plan
   * lives on. Without one, in-memory managers are made from `options` and reused while the prompt
   * grows (each step of a tool loop extends the last), so the plan and the prompt cache hold.
   * Not with `store` (which makes the manager of the stored conversation).
   */
  manager?: ContextManager;
  /**
   * Options for the managers made here (ignored with `manager`): the in-memory ones, each keeping
   * its own history, or, with `store`, the stored conversation's. Store and conversation id are
   * given to the middleware itself.
   */
  options?: Omit<ContextManagerOptions, 'store' | 'conversationId'>;
  /**
   * The context's limit: tokens of the messages and tools each call may send (the seeds'
   * `max_tokens`; not the provider's output `max_tokens`). By default the model's window from the catalog.
   */
  maxTokens?: number;
  /** Catalog model id that decides the tokenizer and the default budget; by default the SDK model's id when the catalog knows it. */
  model?: string;
  /** How many conversations keep their in-memory manager between calls (default 16; 0 makes a new one every call). Not with `store`. */
  conversations?: number;
  /**
   * Where the conversation is kept between calls, with `conversationId`: a store, or a store URL
   * as `ContextManager` takes it (`sqlite:PATH`, `redis://…`; opened once per middleware, so a
   * worker that makes a middleware per request passes a store it keeps open). Each call then adds
   * only the prompt's messages the store does not hold yet (the stored prefix is told by a digest
   * kept in the conversation's metadata) and serves its view from the stored plan and view record,
   * so a call costs its new messages and its view, not the prompt, in a new process too. A prompt
   * that does not extend the stored conversation (history edited, another conversation) replaces
   * it, with a `context:warn` `prompt_replaced_conversation` (see `onWarning`).
   */
  store?: ConversationStore | string;
  /** The conversation in `store` (required with it): one middleware serves one conversation. */
  conversationId?: string;
  /** Called with each `context:warn` the managers made here raise (not those of a `manager` of your own). */
  onWarning?: (warning: ContextEvents['context:warn']) => void;
}

/** What the SDK's call tells the fitter besides the prompt. */
export interface FitRequest {
  modelId?: string;
  provider?: string;
  tools?: readonly ToolDefinition[];
}

/** The catalog model to count with: the one configured, else the SDK model's when the catalog knows it. */
export function modelFor(
  settings: FitOptions,
  catalog: ModelCatalog,
  modelId: string | undefined,
): string | undefined {
  if (settings.model !== undefined) return settings.model;
  if (settings.options?.model !== undefined) return undefined;
  return modelId !== undefined && catalog.get(modelId) ? modelId : undefined;
}

/** The manager's request options for one SDK call. */
export function requestOptionsFor(
  settings: FitOptions,
  catalog: ModelCatalog,
  request: FitRequest,
): RequestOptions {
  const model = modelFor(settings, catalog, request.modelId);
  return {
    ...(settings.maxTokens !== undefined ? { tokenBudget: settings.maxTokens } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(request.tools && request.tools.length > 0 ? { tools: request.tools } : {}),
  };
}

/**
 * The SDK messages for a fitted view: its entries given back as the SDK's own messages, what
 * contextkit wrote placed for the provider, and the prompt opened right after a server compaction.
 */
export function sdkPrompt(
  entries: readonly ProxyEntry[],
  sideMap: ModelMessageSideMap,
  provider: string | undefined,
): ModelMessage[] {
  // OpenAI takes system messages anywhere; the other providers only at the start.
  const systemInside = provider?.startsWith('openai') ? 'system' : 'user';
  // Also when the whole conversation is fitted, as its compaction may leave that reply first.
  return openedAtCompaction(restoreModelMessages(entries, sideMap, { systemInside }));
}

/**
 * Where the messages Anthropic still reads start after its server-side compaction: the index of the
 * last assistant message holding a compaction part, or -1. `@ai-sdk/anthropic` (3.x, for `ai` 6)
 * returns a `compaction` block as a text part whose provider metadata is `{ anthropic: { type:
 * 'compaction' } }`, which the SDK keeps as `providerOptions` on the response message, and sends a
 * text part so marked back as a `compaction` block (anthropic-messages-language-model.ts and
 * convert-to-anthropic-messages-prompt.ts in vercel/ai). The API drops every block before the
 * last compaction block (platform.claude.com/docs/en/build-with-claude/compaction, "How
 * compaction works"), as the core's `LiveEntries` does for Anthropic histories.
 */
function serverCompactionStart(messages: readonly AnyModelMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (holdsCompactionPart(messages[i]!)) return i;
  return -1;
}

/** Whether an SDK message is an assistant reply holding an Anthropic compaction part. */
export function holdsCompactionPart(message: AnyModelMessage): boolean {
  if (message.role !== 'assistant' || !Array.isArray(message.content)) return false;
  for (const part of message.content as readonly { type: string; providerOptions?: unknown }[]) {
    const anthropic = (part.providerOptions as { anthropic?: { type?: unknown } } | undefined)?.anthropic;
    // An empty one is a failed compaction (streamed with no content), which the server ignores.
    const text = (part as { text?: unknown }).text;
    if (part.type === 'text' && anthropic?.type === 'compaction' && typeof text === 'string' && text !== '')
      return true;
  }
  return false;
}

/**
 * Opens a prompt that starts at the reply holding the compaction: the Messages API refuses a first
 * message that is not the user's ("the first message must use the user role"), and drops this one
 * unread, as it precedes the compaction block: not counted.
 */
export function openedAtCompaction(prompt: ModelMessage[]): ModelMessage[] {
  let first = 0;
  while (first < prompt.length && prompt[first]!.role === 'system') first++;
  // The facts block is a user message before the first turn (issue 30): before the compaction
  // block the API would drop it unread, so it goes right after the reply holding the block.
  const facts = isFactsBlock(prompt[first]) && first + 1 < prompt.length ? prompt[first] : undefined;
  const opening = prompt[facts ? first + 1 : first];
  if (opening?.role !== 'assistant' || !holdsCompactionPart(opening)) return prompt;
  const notice: ModelMessage = { role: 'user', content: [{ type: 'text', text: OMITTED_START_TEXT }] };
  if (!facts) return [...prompt.slice(0, first), notice, ...prompt.slice(first)];
  return [...prompt.slice(0, first), notice, opening, facts, ...prompt.slice(first + 2)];
}

/** Whether an SDK message is contextkit's facts block (a user message opening with `FACTS_OPEN`). */
function isFactsBlock(message: ModelMessage | undefined): boolean {
  if (message?.role !== 'user') return false;
  const content = message.content;
  const text = typeof content === 'string' ? content : content[0]?.type === 'text' ? content[0].text : '';
  return text.startsWith(FACTS_OPEN);
}

/**
 * The messages the provider reads: the leading system messages (sent as the top-level `system`,
 * which no compaction drops) and everything from the last server compaction on.
 */
function liveMessages(messages: readonly AnyModelMessage[]): readonly AnyModelMessage[] {
  const start = serverCompactionStart(messages);
  if (start < 0) return messages;
  let system = 0;
  while (system < start && messages[system]!.role === 'system') system++;
  return system === 0 ? messages.slice(start) : [...messages.slice(0, system), ...messages.slice(start)];
}

interface PooledManager {
  manager: ContextManager;
  keys: string[];
  busy: boolean;
}

/** Fits SDK messages to a budget through a contextkit manager, and gives back SDK messages. */
export class PromptFitter {
  private readonly pool: PooledManager[] = [];
  private readonly capacity: number;
  private readonly catalog = createModelCatalog();

  constructor(private readonly settings: FitOptions = {}) {
    checkOptionNamesOf('contextMiddleware', settings, FIT_OPTION_NAMES);
    this.capacity = settings.conversations ?? 16;
    if (!Number.isInteger(this.capacity) || this.capacity < 0) {
      throw new ConfigurationError('conversations', 'must be a whole number ≥ 0');
    }
  }

  /**
   * Fits `messages` to the budget. After an Anthropic server compaction, only what the API reads
   * (see `serverCompactionStart`) is counted, fitted and sent, unless a `manager` of your own
   * holds the whole conversation: then it is all fitted, as its history must be a prefix.
   */
  async fit(all: readonly AnyModelMessage[], request: FitRequest = {}): Promise<ModelMessage[]> {
    const messages = this.settings.manager ? all : liveMessages(all);
    const { messages: proxies, sideMap } = fromModelMessages(messages);
    const keys = proxies.map(messageKey);
    // The server's summary stands for all before it: pinned, contextkit's compaction keeps it
    // verbatim, as the core keeps a compaction item, and the SDK's message comes back as it was.
    const pinned = new Set<number>();
    sideMap.origins.forEach((origin, i) => {
      if (holdsCompactionPart(messages[origin.message]!)) pinned.add(i);
    });
    const options = requestOptionsFor(this.settings, this.catalog, request);
    let fitted: FittedEntry[] | undefined;
    if (this.settings.manager) {
      fitted = await fitThrough(this.settings.manager, proxies, options, keys, 'openai', pinned);
      if (!fitted) {
        throw new ConfigurationError(
          'manager',
          `the manager's history (conversation ${this.settings.manager.conversationId}) is not a prefix of this prompt: give each conversation its own manager, or none`,
        );
      }
    } else {
      const lease = this.lease(keys);
      try {
        fitted = await fitThrough(lease.manager, proxies, options, keys, 'openai', pinned);
        if (!fitted) {
          // Its history went astray (a message it refused half-way): start that conversation over.
          lease.manager = this.newManager();
          fitted = await fitThrough(lease.manager, proxies, options, keys, 'openai', pinned);
        }
        lease.keys = keys;
      } catch (err) {
        const at = this.pool.indexOf(lease);
        if (at >= 0) this.pool.splice(at, 1);
        throw err;
      } finally {
        lease.busy = false;
      }
    }
    return sdkPrompt(
      fitted!.map(({ message, seq }) => ({ message, proxy: seq })),
      sideMap,
      request.provider,
    );
  }

  /** An in-memory manager made from `options`, its warnings passed to `onWarning`. */
  private newManager(): ContextManager {
    const manager = new ContextManager(this.settings.options);
    if (this.settings.onWarning) manager.on('context:warn', this.settings.onWarning);
    return manager;
  }

  /** The idle pooled manager whose history is the longest prefix of `keys`, or a new one. */
  private lease(keys: readonly string[]): PooledManager {
    let best: PooledManager | undefined;
    for (const entry of this.pool) {
      if (entry.busy || entry.keys.length > keys.length) continue;
      if (best && best.keys.length >= entry.keys.length) continue;
      if (entry.keys.every((k, i) => k === keys[i])) best = entry;
    }
    if (best) {
      // Most recently used last, so the least recently used is the one evicted.
      this.pool.splice(this.pool.indexOf(best), 1);
      this.pool.push(best);
      best.busy = true;
      return best;
    }
    const entry: PooledManager = { manager: this.newManager(), keys: [], busy: true };
    if (this.capacity > 0) {
      this.pool.push(entry);
      const idle = this.pool.findIndex((e) => !e.busy);
      if (this.pool.length > this.capacity && idle >= 0) this.pool.splice(idle, 1);
    }
    return entry;
  }
}
