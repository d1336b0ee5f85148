import type { CompactionPlan } from './compaction/plan.js';
import { type CompactionReceipt, ContextEmitter, type ContextEventName, type Listener } from './events.js';
import type { AnthropicRequestParts } from './formats/anthropic/request.js';
import type { ContextGuard, GuardConversation } from './guard/guard.js';
import type { AnthropicContextManagement } from './guard/provider-compaction.js';
import type { History } from './history/history.js';
import { AfterAdded } from './manager-added.js';
import { ManagerCounting } from './manager-counting.js';
import {
  composeParts,
  type ManagerParts,
  type ManagerSettings,
  resetDerived,
  restoreMeta,
} from './manager-parts.js';
import {
  anthropicBody,
  anthropicOptions,
  anthropicRequest,
  fitRequest,
  type RequestHost,
  recoverFromOverflow,
} from './manager-requests.js';
import { addedMessage, UnloadedCalls } from './manager-stored-view.js';
import { handleToolCall } from './manager-tool-calls.js';
import { recordUsage } from './manager-usage.js';
import type { ContextMeasurer } from './measure/measurer.js';
import type { GeminiContent } from './messages/gemini-types.js';
import type { ResponsesItem } from './messages/responses-types.js';
import type {
  AnthropicUserMessage,
  HistoryEntry,
  Message,
  MessageFormat,
  OpenAIToolMessage,
} from './messages/types.js';
import { removedUsageMethod, type UsageInput } from './meter/usage-reader.js';
import {
  type AddedMessage,
  type AddMessageOptions,
  type ContextManagerOptions,
  checkAddMessageOptions,
  checkAddMessagesArguments,
  checkOptions,
  type RequestOptions,
  type Usage,
} from './options.js';
import type { RecallHit, RecallOptions } from './recall/recall-hit.js';

export type {
  AddedMessage,
  AddMessageOptions,
  ContextManagerOptions,
  ProviderInfo,
  RequestOptions,
  Usage,
} from './options.js';

/**
 * Conversation memory for one agent conversation: stores every message, and before each model
 * call returns a view that fits the budget, is valid for the provider, keeps what matters and
 * leaves the stored history whole. The README's "What every view holds" lists what each view keeps.
 */
export class ContextManager {
  readonly options: ManagerSettings;
  readonly conversationId: string;
  /** Counts, resolves budgets, learns from usage (usable alone: see `ContextMeasurer`). */
  readonly measurer: ContextMeasurer;
  /** Decides when to compact, warn or decline, and fits views (usable alone: see `ContextGuard`). */
  readonly guard: ContextGuard;
  /** Whether the recall tool is offered (`recall: true`). */
  readonly recallEnabled: boolean;
  private readonly emitter = new ContextEmitter();
  private readonly history: History;
  private readonly conversation: GuardConversation;
  private queue: Promise<unknown>;
  /** The parts the manager is composed of (`composeParts`), lent to its helpers. */
  private readonly parts: ManagerParts;
  /** How the conversation is counted: ahead of requests, in the background, whole (`ManagerCounting`). */
  private readonly counting: ManagerCounting;
  /** What follows a store of new messages: warnings and events (`AfterAdded`). */
  private readonly after: AfterAdded;
  /** What answering a request needs of the manager (`RequestHost`). */
  private readonly requests: RequestHost;
  /** False until the stored conversation was read; every operation first retries a failed load. */
  private loaded: boolean;
  /** Calls answered before the conversation is loaded, and the stored view record (`storedView`). */
  private readonly unloaded: UnloadedCalls;

  constructor(options: ContextManagerOptions = {}) {
    checkOptions(options);
    const parts = composeParts(options, this.emitter, () => resetDerived(this.parts));
    this.parts = parts;
    this.options = parts.settings;
    this.conversationId = parts.settings.conversationId;
    this.history = parts.history;
    this.measurer = parts.measurer;
    this.guard = parts.guard;
    this.conversation = parts.conversation;
    this.recallEnabled = parts.settings.recall;
    this.counting = new ManagerCounting(parts);
    this.after = new AfterAdded(parts, this.emitter);
    this.requests = {
      parts,
      counting: this.counting,
      enqueue: (op) => this.enqueue(op),
      afterFit: (r) => this.unloaded.keep(r),
    };
    this.unloaded = new UnloadedCalls(
      parts,
      this.after,
      (op) => this.enqueue(op),
      (r) => this.counting.beforeView(r),
    );
    // With a store, the conversation is read by the first call that needs it (a request may need
    // only the view's rows: `storedView`).
    this.loaded = !parts.store;
    this.queue = Promise.resolve();
  }

  /** Subscribes to an event; returns a function that unsubscribes. */
  on<E extends ContextEventName>(event: E, listener: Listener<E>): () => void {
    return this.emitter.on(event, listener);
  }

  /** Unsubscribes a listener. */
  off<E extends ContextEventName>(event: E, listener: Listener<E>): void {
    this.emitter.off(event, listener);
  }

  /**
   * Runs operations one at a time, in call order, so a request sees a consistent history. Before
   * the conversation is loaded, `unloaded` (when given) may answer instead, without loading it.
   */
  private enqueue<T>(
    op: () => Promise<T> | T,
    unloaded?: () => Promise<{ served: T } | undefined>,
  ): Promise<T> {
    const run = this.queue.then(async () => {
      if (!this.loaded) {
        const answer = unloaded ? await unloaded() : undefined;
        if (answer) return answer.served;
        // A store that could not be read (down, or a stored entry that is not a message) fails
        // each operation with its error until it can, rather than letting one run on a partial history.
        await this.load();
      }
      return op();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async load(): Promise<void> {
    const meta = await this.history.load();
    this.loaded = true;
    restoreMeta(this.conversation, meta, this.history.storeEpoch, (code, message) =>
      this.measurer.warn(code, message),
    );
    this.unloaded.loaded(meta);
  }

  /**
   * Validates and stores a message (a copy: the caller's object is never changed). Rejects a
   * malformed message with `InvalidMessageError` naming the field; nothing is stored then. With a
   * store, the store numbers the message and what other writers appended before it is taken in
   * (checked like a loaded history), so concurrent managers never lose a race; a conversation
   * another writer replaced or cleared is reloaded first (`context:warn` `history_replaced`). A
   * store that cannot take it rejects with a `StoreError`, and the message is in neither.
   *
   * With `{ id }`, a message whose id the conversation already holds is not stored again
   * (whichever process added it first; the store decides atomically with the append): the call
   * resolves with `duplicate: true` and the first add's seq. The same id with another message
   * rejects with `MessageIdConflictError`; a bad id or an unknown option with
   * `InvalidArgumentError`, before anything is stored.
   */
  addMessage(message: unknown, options: AddMessageOptions = {}): Promise<AddedMessage> {
    try {
      checkAddMessageOptions(options);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.enqueue(
      async () => {
        const { entry, duplicate } = await this.history.add(message, options);
        // A duplicate stored nothing, but what other writers appended before it was taken in.
        this.parts.recallIndex.update();
        if (!duplicate) await this.after.added([entry], options);
        return addedMessage(entry.seq, duplicate, options);
      },
      // Not loaded yet: appended unread, when the stored view record says enough (`storedView`).
      () => this.unloaded.addOne(message, options),
    );
  }

  /**
   * `addMessage` for several messages that stand or fall together (the items of one provider
   * reply): every one is validated before any is stored, and they are appended in one batch, so
   * when one is refused (`InvalidMessageError` naming it) or the store fails, none is stored and
   * a retry stores each once. Takes no `id` (one id names one message: add them one by one).
   */
  addMessages(messages: readonly unknown[], options: AddMessageOptions = {}): Promise<void> {
    try {
      checkAddMessagesArguments(messages, options);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.enqueue(
      async () => {
        const entries = await this.history.addAll(messages, options);
        this.parts.recallIndex.update();
        await this.after.added(entries, options);
      },
      () => this.unloaded.addAll(messages, options),
    );
  }

  /**
   * Takes in what other writers appended to the store since this manager last read it (or, when
   * another writer replaced or cleared the conversation, its whole new history, with a
   * `context:warn`). Requests do not re-read the log (that would put its I/O on every turn), only
   * its generation; every append takes in what others appended before it. Resolves with the
   * number of messages taken in.
   */
  sync(): Promise<number> {
    return this.enqueue(async () => {
      const taken = await this.history.takeTail();
      this.parts.recallIndex.update();
      return taken;
    });
  }

  /**
   * The seq in the store of a message a view returned unchanged (the very object, as views share
   * the history's objects; a view served without loading the history included), so an integration
   * can map a view's messages back to what it stored, without a map of the whole history:
   * undefined for what a plan edited or made (a cleared result, a summary), a copy, an ephemeral
   * message, or without a store. A lookup by identity, answered at once.
   */
  storedSeqOf(message: Message): number | undefined {
    return (
      this.history.storedSeqOf(message) ??
      this.unloaded.storedSeqOf(message, this.loaded ? this.history.storeEpoch : undefined)
    );
  }

  /** The full stored history, never compacted (ephemeral messages included). */
  getMessages(): Promise<Message[]> {
    return this.enqueue(() => this.history.messages());
  }

  /** The stored entries with their seqs and metadata. */
  getEntries(): Promise<HistoryEntry[]> {
    return this.enqueue(() => this.history.entries.slice());
  }

  /**
   * Replaces the history (session restore). As the seed contract says for file-backed managers,
   * when the history was resumed from a store the store is authoritative and the call is ignored
   * (with a `context:warn`); pass `{ replace: true }` to replace it anyway.
   */
  setMessages(messages: readonly unknown[], options: { replace?: boolean } = {}): Promise<void> {
    return this.enqueue(async () => {
      if (!(await this.history.replace(messages, options))) {
        this.measurer.warn(
          'set_messages_ignored',
          `setMessages ignored: conversation ${this.conversationId} was resumed from its store, which is authoritative (pass { replace: true } to replace it)`,
        );
        return;
      }
      this.after.warnFutureBlocks(messages as Message[]);
      resetDerived(this.parts);
      // The first request counts: its tokenizer (a rank table of ~170 ms to load, once per
      // process) is loaded now, with the history, rather than inside that request.
      if (messages.length > 0) this.measurer.defaultCounter(this.history.format).countText('.');
    });
  }

  /** Removes every message (and the stored conversation). */
  clear(): Promise<void> {
    return this.enqueue(async () => {
      await this.history.clear();
      resetDerived(this.parts);
    });
  }

  /** Tokens of the whole stored history with the configured model's counter. */
  getTokenCount(): Promise<number> {
    // What a cold start left bounded is counted first, in slices (it may be most of the history).
    return this.enqueue(() => this.counting.tokenCount());
  }

  /**
   * The messages to send now: within the budget, valid for the provider, with system, pinned and
   * critical messages, the latest user message and the tool exchange in progress kept. Stored
   * history is never changed. Throws `ContextOverflowError` when what must be kept cannot fit.
   * With a store, first checks the conversation's generation (one small read): a history another
   * writer replaced or cleared is reloaded, with a `context:warn`, before the view is built.
   */
  getMessagesForRequest(request: RequestOptions = {}): Promise<Message[]> {
    return this.enqueue(
      () => fitRequest(this.requests, request),
      // Not loaded yet: served from the stored view record and the rows the view holds, when it can.
      () => this.unloaded.request(request),
    );
  }

  /**
   * `getMessagesForRequest` as the body of an Anthropic Messages request: `system` and `messages`
   * (`toRequest(view, 'anthropic')`), and with `providerCompaction` on and a model with server compaction,
   * the `context_management` edits and the `betas` they need. Spread it into
   * `client.beta.messages.create({ model, max_tokens, ...body })` (or send the betas as the
   * `anthropic-beta` header). The reply's compaction block, added as any reply, starts the next view.
   */
  getAnthropicRequest(
    request: RequestOptions = {},
  ): Promise<AnthropicRequestParts & Partial<AnthropicContextManagement>> {
    return this.enqueue(
      () => anthropicRequest(this.requests, request),
      // Not loaded yet: served from the stored view record (never with provider compaction, which
      // needs the whole history: `serveStoredView` declines it).
      async () => {
        const served = await this.unloaded.request(anthropicOptions(request));
        return served && { served: anthropicBody(this.conversation, served.served) };
      },
    );
  }

  /**
   * Makes a new plan now when the view is over the trigger (or always, with `force`), and returns
   * its receipt; resolves to null when nothing needed doing.
   */
  compact(options: { force?: boolean } & RequestOptions = {}): Promise<CompactionReceipt | null> {
    return this.enqueue(() =>
      this.guard.compact(
        this.conversation,
        this.measurer.resolve(options, this.history.format),
        !!options.force,
      ),
    );
  }

  /**
   * Compacts as the model's `compact` tool asks (see src/compaction/compact-tool.ts): now, with the
   * last request's settings (or `request`'s), down to the target, or to half the view when it is
   * already below the target, the summarizer favouring `focus`. The new plan applies from the next
   * request on; resolves with its receipt (the tool's result), or null when `onBeforeCompaction`
   * vetoed it. Stored history is not changed.
   */
  requestCompaction(options: { focus?: string } & RequestOptions = {}): Promise<CompactionReceipt | null> {
    const { focus, ...request } = options;
    return this.enqueue(() =>
      this.guard.compactRequested(
        this.conversation,
        this.measurer.resolve({ ...(this.measurer.last?.request ?? {}), ...request }, this.history.format),
        focus,
      ),
    );
  }

  /**
   * Learns from what the provider billed for the last request (or for `messages`): the per-model
   * correction the fast estimate uses from the next request on. Outliers are damped and the
   * first sample moves the estimate only a little (see `createCalibration`). Takes contextkit's
   * own counts (`{ model, inputTokens, cacheReadTokens, cacheWriteTokens }`) or any provider's
   * response or usage object: OpenAI Chat Completions and Responses, Anthropic Messages (with
   * `usage.iterations` and applied context edits), Gemini `usageMetadata`, Bedrock Converse. For
   * the last request, the provider's cache figures are also set beside the cost meter's prediction.
   */
  recordUsage(usageOrResponse: UsageInput, messages?: readonly Message[]): Promise<void> {
    const record = (format: MessageFormat | undefined) =>
      recordUsage(this.parts, format, this.emitter, usageOrResponse, messages);
    // After a request served from the stored view record, without loading the history.
    return this.enqueue(
      () => record(this.history.format),
      () => this.unloaded.whenFormatKnown(record),
    );
  }

  /**
   * Was `recordUsage` from an OpenAI Chat Completions or Responses response; removed: rejects
   * with `InvalidArgumentError`.
   * @deprecated Call `recordUsage(response)`, which reads any provider's usage.
   */
  recordOpenAIUsage(..._removed: unknown[]): Promise<void> {
    return removedUsageMethod('recordOpenAIUsage');
  }

  /**
   * Was `recordUsage` from an Anthropic Messages response; removed: rejects with `InvalidArgumentError`.
   * @deprecated Call `recordUsage(response)`, which reads any provider's usage.
   */
  recordAnthropicUsage(..._removed: unknown[]): Promise<void> {
    return removedUsageMethod('recordAnthropicUsage');
  }

  /**
   * After the provider refused a request as too long: tightens the budget from the numbers in its
   * error (or by 15% when it gives none) and returns a smaller valid view. Before any request, the
   * stored history is fitted to the configured budget so tightened. Once per request: a second
   * overflow for the same request, or an error that is not an overflow, is thrown back as it is.
   */
  recoverFromOverflow(err: unknown): Promise<Message[]> {
    return recoverFromOverflow(this.measurer, err, (request) => this.getMessagesForRequest(request));
  }

  /** Figures of the last request (or of the whole history against the configured budget). */
  usage(): Usage {
    return this.counting.usage(this.options);
  }

  /** The current compaction plan, if any (for reports and tests). */
  currentPlan(): CompactionPlan | null {
    const plan = this.conversation.view.plan;
    return plan ? structuredClone(plan) : null;
  }

  /** The conversation's format once a message has shown it. */
  get messageFormat(): MessageFormat | undefined {
    return this.history.format ?? this.unloaded.format;
  }

  /**
   * Searches the whole stored history (what left the view included) and returns the best hits,
   * each with its neighbouring turns, their texts together within `maxTokens` (default 1,000,
   * counted with the conversation's counter); at most `limit` (default 5). An empty query gives
   * `[]`. Nothing stored changes. See src/recall/ for the index and the ranking.
   */
  recall(query: string, options: RecallOptions = {}): Promise<RecallHit[]> {
    return this.enqueue(() => this.parts.recallIndex.recall(query, options));
  }

  /**
   * Handles a tool call the model made, for provider-SDK users: given an OpenAI `tool_calls[i]`,
   * a Responses `function_call` item, an Anthropic `tool_use` block or a Gemini `functionCall`
   * part, returns the tool result message (in the conversation's format) when it is a call of
   * `recall` (the hits) or `compact` (the receipt of the compaction `requestCompaction` plans for
   * the next request), else `null`. Arguments that cannot be read give a result saying so (marked
   * as an error for Anthropic), not an exception. The result is not added to the conversation:
   * add it as you add any tool result.
   */
  handleToolCall(
    call: unknown,
  ): Promise<OpenAIToolMessage | AnthropicUserMessage | GeminiContent | ResponsesItem | null> {
    return handleToolCall(
      {
        format: () => this.history.format,
        enqueue: (op) => this.enqueue(op),
        requestCompaction: (args) => this.requestCompaction(args),
        recall: (q, o) => this.parts.recallIndex.recall(q, o),
      },
      call,
    );
  }

  /** Waits for pending operations, then closes the store. */
  async close(): Promise<void> {
    // Not through enqueue: closing needs no loaded history (it may be what cannot load).
    await this.queue;
    await this.measurer.stopCounting();
    await this.parts.counts.settled();
    this.history.unwatch();
    await this.history.store?.close();
  }
}
