import type { ModelMessage } from 'ai';
import { OMITTED_START_TEXT } from '../../compaction/placeholders.js';
import { ConfigurationError } from '../../errors.js';
import { ContextManager, type ContextManagerOptions } from '../../manager.js';
import type { ToolDefinition } from '../../messages/types.js';
import { checkOptionNamesOf } from '../../option-names.js';
import { createModelCatalog } from '../../tokens/catalog.js';
import { FACTS_OPEN } from '../../tools/facts-block.js';
import { type FittedEntry, fitThrough, messageKey } from '../fit-through.js';
import { type AnyModelMessage, fromModelMessages, restoreModelMessages } from './model-messages.js';

/** The names `FitOptions` takes (`contextPrepareStep` adds `tools`). */
export const FIT_OPTION_NAMES = ['manager', 'options', 'maxTokens', 'model', 'conversations'] as const;

/** How the AI SDK integrations fit messages: shared by the middleware and the `prepareStep` helper. */
export interface FitOptions {
  /**
   * A manager of your own: its history must be a prefix of every prompt (the SDK sends the whole
   * conversation each call); the rest of the prompt is added to it, so it is stored and its plan
   * lives on. Without one, in-memory managers are made from `options` and reused while the prompt
   * grows (each step of a tool loop extends the last), so the plan and the prompt cache hold.
   */
  manager?: ContextManager;
  /** Options for the in-memory managers (ignored with `manager`); each keeps its own history, so no store. */
  options?: Omit<ContextManagerOptions, 'store' | 'conversationId'>;
  /**
   * The context's limit: tokens of the messages and tools each call may send (the seeds'
   * `max_tokens`; not the provider's output `max_tokens`). By default the model's window from the catalog.
   */
  maxTokens?: number;
  /** Catalog model id that decides the tokenizer and the default budget; by default the SDK model's id when the catalog knows it. */
  model?: string;
  /** How many conversations keep their in-memory manager between calls (default 16; 0 makes a new one every call). */
  conversations?: number;
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
function holdsCompactionPart(message: AnyModelMessage): boolean {
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
function openedAtCompaction(prompt: ModelMessage[]): ModelMessage[] {
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

  /** The catalog model to count with: the one configured, else the SDK model's when known. */
  modelFor(modelId: string | undefined): string | undefined {
    if (this.settings.model !== undefined) return this.settings.model;
    if (this.settings.options?.model !== undefined) return undefined;
    return modelId !== undefined && this.catalog.get(modelId) ? modelId : undefined;
  }

  /**
   * Fits `messages` to the budget. After an Anthropic server compaction, only what the API reads
   * (see `serverCompactionStart`) is counted, fitted and sent, unless a `manager` of your own
   * holds the whole conversation: then it is all fitted, as its history must be a prefix.
   */
  async fit(
    all: readonly AnyModelMessage[],
    request: { modelId?: string; provider?: string; tools?: readonly ToolDefinition[] } = {},
  ): Promise<ModelMessage[]> {
    const messages = this.settings.manager ? all : liveMessages(all);
    const { messages: proxies, sideMap } = fromModelMessages(messages);
    const keys = proxies.map(messageKey);
    // The server's summary stands for all before it: pinned, contextkit's compaction keeps it
    // verbatim, as the core keeps a compaction item, and the SDK's message comes back as it was.
    const pinned = new Set<number>();
    sideMap.origins.forEach((origin, i) => {
      if (holdsCompactionPart(messages[origin.message]!)) pinned.add(i);
    });
    const model = this.modelFor(request.modelId);
    const options = {
      ...(this.settings.maxTokens !== undefined ? { tokenBudget: this.settings.maxTokens } : {}),
      ...(model !== undefined ? { model } : {}),
      ...(request.tools && request.tools.length > 0 ? { tools: request.tools } : {}),
    };
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
          lease.manager = new ContextManager(this.settings.options);
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
    // OpenAI takes system messages anywhere; the other providers only at the start.
    const systemInside = request.provider?.startsWith('openai') ? 'system' : 'user';
    const prompt = restoreModelMessages(
      fitted!.map(({ message, seq }) => ({ message, proxy: seq })),
      sideMap,
      { systemInside },
    );
    // Also with a manager of your own, whose compaction may leave that reply first.
    return openedAtCompaction(prompt);
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
    const entry: PooledManager = { manager: new ContextManager(this.settings.options), keys: [], busy: true };
    if (this.capacity > 0) {
      this.pool.push(entry);
      const idle = this.pool.findIndex((e) => !e.busy);
      if (this.pool.length > this.capacity && idle >= 0) this.pool.splice(idle, 1);
    }
    return entry;
  }
}
