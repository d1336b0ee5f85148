import { COMPACT_TOOL_NAME, compactReceiptText, readCompactCall } from './compaction/compact-tool.js';
import { isStated } from './compaction/fact-candidates.js';
import type { CompactionPlan } from './compaction/plan.js';
import { decodePlan } from './compaction/plan.js';
import type { Level } from './compaction/zones.js';
import { InvalidArgumentError, InvalidMessageError } from './errors.js';
import { type CompactionReceipt, ContextEmitter, type ContextEventName, type Listener } from './events.js';
import type { AnthropicRequestParts } from './formats/anthropic/request.js';
import { WIRE_FORMATS, wireFormat } from './formats/registry.js';
import type { WireFormat } from './formats/wire-format.js';
import { appliedEditsOf } from './guard/applied-edits.js';
import type { ContextGuard, GuardConversation } from './guard/guard.js';
import type { ContextMeasurer, ResolvedRequest } from './guard/measurer.js';
import { isContextOverflowError, overflowNumbers } from './guard/overflow-errors.js';
import type { AnthropicContextManagement } from './guard/provider-compaction.js';
import {
  type UsageCounts,
  type UsageSample,
  usageFromAnthropic,
  usageFromCounts,
  usageFromOpenAI,
} from './guard/usage.js';
import { resetUsageWarning } from './guard/usage-warning.js';
import type { History } from './history/history.js';
import type { LiveEntries } from './history/live-entries.js';
import type { StoredCounts } from './manager-counts.js';
import {
  compareCache,
  composeParts,
  copyUsage,
  type ManagerSettings,
  recordProviderContext,
} from './manager-parts.js';
import type { GeminiContent } from './messages/gemini-types.js';
import type { ResponsesItem } from './messages/responses-types.js';
import type {
  AnthropicUserMessage,
  HistoryEntry,
  Message,
  MessageFormat,
  OpenAIToolMessage,
} from './messages/types.js';
import {
  type AddedMessage,
  type AddMessageOptions,
  type ContextManagerOptions,
  checkAddMessageOptions,
  checkOptions,
  type RequestOptions,
  type Usage,
} from './options.js';
import type { RecallHit, RecallOptions } from './recall/recall-hit.js';
import type { RecallIndex } from './recall/recall-index.js';
import { readRecallCall, recallAnswer, recallResultMessage } from './recall/recall-tool.js';
import { roleOf } from './wire/content.js';
import { toolResultMessage } from './wire/tool-result.js';

export type {
  AddedMessage,
  AddMessageOptions,
  ContextManagerOptions,
  ProviderInfo,
  RequestOptions,
  Usage,
} from './options.js';

/** `getAnthropicRequest`'s body: the Anthropic Messages format's request builder (`toAnthropicRequest`). */
function anthropicRequest(view: readonly Message[]): AnthropicRequestParts {
  return wireFormat('anthropic').toRequest(view) as AnthropicRequestParts;
}

let futureBlocks: WireFormat<Message>['futureBlockTypes'] | null = null;

/** The block types in a message no format documents, as the format that claims them reads them. */
function unknownBlockReader(): WireFormat<Message>['futureBlockTypes'] {
  if (futureBlocks === null) futureBlocks = WIRE_FORMATS.find((f) => f.claimsUnknownBlocks)?.futureBlockTypes;
  return futureBlocks;
}

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
  /** Token counts kept with the stored messages (`StoredCounts`). */
  private readonly counts: StoredCounts;
  /** Searches the whole history for `recall` and the recall tool (src/recall/). */
  private readonly recallIndex: RecallIndex;
  private readonly conversation: GuardConversation;
  /** What the provider still reads after its own compaction (`LiveEntries`). */
  private readonly live: LiveEntries;
  private queue: Promise<unknown>;
  /** Block types no format knows that were already warned about (one warning per type). */
  private readonly warnedBlocks = new Set<string>();
  /** False until the stored conversation was read; every operation first retries a failed load. */
  private loaded: boolean;
  /** How far `countAhead` counted the entries, for which counter and history generation. */
  private counted = { key: '', upTo: 0 };

  constructor(options: ContextManagerOptions = {}) {
    checkOptions(options);
    const parts = composeParts(options, this.emitter, () => this.resetDerived());
    this.options = parts.settings;
    this.conversationId = parts.settings.conversationId;
    this.history = parts.history;
    this.measurer = parts.measurer;
    this.counts = parts.counts;
    this.guard = parts.guard;
    this.conversation = parts.conversation;
    this.live = parts.live;
    this.recallIndex = parts.recallIndex;
    this.recallEnabled = parts.settings.recall;
    this.loaded = !parts.store;
    this.queue = parts.store ? this.load().catch(() => undefined) : Promise.resolve();
  }

  /** Subscribes to an event; returns a function that unsubscribes. */
  on<E extends ContextEventName>(event: E, listener: Listener<E>): () => void {
    return this.emitter.on(event, listener);
  }

  /** Unsubscribes a listener. */
  off<E extends ContextEventName>(event: E, listener: Listener<E>): void {
    this.emitter.off(event, listener);
  }

  /** Runs operations one at a time, in call order, so a request sees a consistent history. */
  private enqueue<T>(op: () => Promise<T> | T): Promise<T> {
    const run = this.queue.then(async () => {
      // A store that could not be read (down, or a stored entry that is not a message) fails
      // each operation with its error until it can, rather than letting one run on a partial history.
      if (!this.loaded) await this.load();
      return op();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async load(): Promise<void> {
    const meta = await this.history.load();
    this.loaded = true;
    const c = this.conversation;
    c.view.reset();
    c.view.setPlan(decodePlan(meta?.plan));
    const guard = meta?.guard as { level?: Level; usage?: number } | undefined;
    if (guard)
      c.state = { level: guard.level ?? undefined, usage: guard.usage, usageWarning: resetUsageWarning() };
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
    return this.enqueue(async () => {
      const { entry, duplicate } = await this.history.add(message, options);
      const added: AddedMessage = { seq: entry.seq, duplicate };
      if (options.id !== undefined) added.id = options.id;
      // A duplicate stored nothing, but what other writers appended before it was taken in.
      this.recallIndex.update();
      if (!duplicate) await this.afterAdded([entry], options);
      return added;
    });
  }

  /**
   * `addMessage` for several messages that stand or fall together (the items of one provider
   * reply): every one is validated before any is stored, and they are appended in one batch, so
   * when one is refused (`InvalidMessageError` naming it) or the store fails, none is stored and
   * a retry stores each once. Takes no `id` (one id names one message: add them one by one).
   */
  addMessages(messages: readonly unknown[], options: AddMessageOptions = {}): Promise<void> {
    if (!Array.isArray(messages)) {
      return Promise.reject(
        new InvalidMessageError([{ path: 'messages', message: 'expected an array of messages' }]),
      );
    }
    try {
      checkAddMessageOptions(options);
      if (options.id !== undefined) {
        throw new InvalidArgumentError(
          'options.id',
          'addMessages takes no id; add identified messages with addMessage',
        );
      }
    } catch (err) {
      return Promise.reject(err);
    }
    return this.enqueue(async () => {
      const entries = await this.history.addAll(messages, options);
      this.recallIndex.update();
      await this.afterAdded(entries, options);
    });
  }

  /** What follows a store of new entries: warnings, a server compaction's reset, the events. */
  private async afterAdded(entries: readonly HistoryEntry[], options: AddMessageOptions): Promise<void> {
    this.warnFutureBlocks(entries.map((e) => e.message));
    const stored = this.history.format;
    for (const entry of entries) {
      if (stored !== undefined && wireFormat(stored).isCompactionStart?.(entry.message)) {
        // The server compacted: a plan kept beside the history was made on the view it replaced.
        await this.conversation.save?.({ plan: null });
        this.emitter.emit('context:provider_context', { provider: 'anthropic', compactionSeq: entry.seq });
      }
    }
    if (!this.emitter.has('context:message_added')) return;
    const format = this.history.format ?? 'openai';
    for (const entry of entries) {
      this.emitter.emit('context:message_added', {
        seq: entry.seq,
        role: roleOf(entry.message),
        ephemeral: !!options.ephemeral,
        tokens: this.measurer.count(this.measurer.defaultCounter(this.history.format), entry.message, format),
      });
    }
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
      this.recallIndex.update();
      return taken;
    });
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
      this.warnFutureBlocks(messages as Message[]);
      this.resetDerived();
      // The first request counts: its tokenizer (a rank table of ~170 ms to load, once per
      // process) is loaded now, with the history, rather than inside that request.
      if (messages.length > 0) this.measurer.defaultCounter(this.history.format).countText('.');
    });
  }

  /**
   * Counts the entries the request's counter has not counted yet before the view is built, in
   * slices that yield (see `ContextMeasurer.countAhead`): the view then finds every count in the
   * memo. Only an optimization: the memo, keyed by message, keeps counts right whatever happens.
   * A count the store kept with a message under this counter is taken instead of counting, and
   * what had to be counted is kept in the store for next time (`StoredCounts`).
   */
  private countAhead(r: ResolvedRequest): void | Promise<void> {
    // The entries the provider reads: a new server compaction starts them again (`LiveEntries`).
    const entries = this.conversation.entries;
    const key = `${r.counter.id}#${r.format}#${this.history.generation}#${this.live.compactionSeq ?? ''}`;
    const from = this.counted.key === key ? Math.min(this.counted.upTo, entries.length) : 0;
    this.counts.use(r.counter, r.format);
    const stored = this.counts.lookup(r.counter);
    const done = this.measurer.countAhead(r.counter, entries, from, r.format, stored, {
      budget: r.budget,
      exact: this.keptEverywhere(entries),
    });
    const finish = (upTo: number) => {
      this.counted = { key, upTo };
      this.counts.keep(entries, from, r.counter);
    };
    if (typeof done === 'number') return finish(done);
    return done.then(finish);
  }

  /**
   * Whether the entry at an index stays in every view whatever a plan does, so a cold start counts
   * it exactly even among the older messages it bounds (see `ContextMeasurer.countAhead`):
   * system and developer messages, critical and pinned ones, a server compaction item, the
   * entries up to the first user message (the task), and the latest request of the user.
   */
  private keptEverywhere(entries: readonly HistoryEntry[]): (index: number) => boolean {
    const wire = wireFormat(this.conversation.format ?? this.history.format ?? 'openai');
    let task = entries.findIndex((e) => roleOf(e.message) === 'user');
    if (task < 0) task = entries.length;
    let latest = entries.length - 1;
    while (
      latest > task &&
      !(roleOf(entries[latest]!.message) === 'user' && isStated(entries[latest]!.message))
    ) {
      latest--;
    }
    return (index) => {
      if (index <= task || index === latest) return true;
      const { message, metadata } = entries[index]!;
      const role = roleOf(message);
      if (role === 'system' || role === 'developer' || metadata.critical || metadata.pinned) return true;
      return wire.holdsCompaction?.(message) ?? false;
    };
  }

  /**
   * What a cold start left bounded (see `ContextMeasurer.countAhead`) is counted after the
   * request, in the background (never in the queue: no request waits for it), and the counts are
   * kept in the store as those of any request.
   */
  private countBounded(r: ResolvedRequest): void {
    if (!this.measurer.hasBounds(r.counter)) return;
    const entries = this.conversation.entries;
    void this.measurer
      .countBounded(r.counter, r.format)
      .then(() => {
        if (!this.measurer.hasBounds(r.counter)) this.counts.keep(entries, 0, r.counter);
      })
      .catch((err: unknown) =>
        this.measurer.warn('count_failed', `counting in the background failed: ${String(err)}`),
      );
  }

  /** One `context:warn` (`unknown_block`) per block type no format knows, the first time it is stored. */
  private warnFutureBlocks(messages: readonly Message[]): void {
    const futureBlockTypes = unknownBlockReader();
    if (futureBlockTypes === undefined) return;
    for (const message of messages) {
      for (const type of futureBlockTypes(message)) {
        if (this.warnedBlocks.has(type)) continue;
        this.warnedBlocks.add(type);
        this.measurer.warn(
          'unknown_block',
          `content block type "${type}" is not one contextkit knows: stored and sent as it came, counted by an estimate`,
        );
      }
    }
  }

  /** Forgets what was derived from entries that were replaced or cleared. */
  private resetDerived(): void {
    this.measurer.forgetBounds();
    this.live.reset();
    this.conversation.view.reset();
    this.conversation.state.usageWarning = resetUsageWarning();
    this.conversation.state.budgetNoticed = undefined;
    this.recallIndex.update();
  }

  /** Removes every message (and the stored conversation). */
  clear(): Promise<void> {
    return this.enqueue(async () => {
      await this.history.clear();
      this.resetDerived();
    });
  }

  /** Tokens of the whole stored history with the configured model's counter. */
  getTokenCount(): Promise<number> {
    return this.enqueue(async () => {
      // What a cold start left bounded is counted first, in slices (it may be most of the history).
      const counter = this.measurer.defaultCounter(this.history.format);
      if (this.measurer.hasBounds(counter))
        await this.measurer.countBounded(counter, this.history.format ?? 'openai');
      return this.storedTokens();
    });
  }

  /** Exact tokens of the stored history (never the bounds a cold start left, see `countAhead`). */
  private storedTokens(): number {
    const format = this.history.format;
    const counter = this.measurer.defaultCounter(format);
    const messages = this.history.messages();
    this.counts.seed(counter, messages);
    let sum = 0;
    for (const m of messages) sum += this.measurer.countExact(counter, m, format ?? 'openai');
    return sum;
  }

  /**
   * The messages to send now: within the budget, valid for the provider, with system, pinned and
   * critical messages, the latest user message and the tool exchange in progress kept. Stored
   * history is never changed. Throws `ContextOverflowError` when what must be kept cannot fit.
   * With a store, first checks the conversation's generation (one small read): a history another
   * writer replaced or cleared is reloaded, with a `context:warn`, before the view is built.
   */
  getMessagesForRequest(request: RequestOptions = {}): Promise<Message[]> {
    return this.enqueue(() => this.fitRequest(request));
  }

  private async fitRequest(request: RequestOptions): Promise<Message[]> {
    await this.history.checkGeneration();
    const prepared = this.measurer.prepare(request, this.history.format);
    const r = prepared instanceof Promise ? await prepared : prepared;
    const counting = this.countAhead(r);
    if (counting) await counting;
    // Counts taken from the store for what a view can hold, checked together: ones that add up
    // to too little are counted again before the view is planned (issue 31: a view is never over
    // its budget because a stored figure was wrong), and the right ones kept in their place.
    const mismatches = this.measurer.storedMismatches;
    await this.measurer.recheckStoredCounts(r.counter, this.conversation.entries, r.format, r.budget);
    if (this.measurer.storedMismatches !== mismatches)
      this.counts.keep(this.conversation.entries, 0, r.counter);
    // The atoms and the view built ahead in slices too (a cold start): the guard finds them built.
    const c = this.conversation;
    const building = c.view.buildAhead(c.entries, c.format ?? r.format, r.counter);
    if (building) await building;
    const decision = await this.guard.fit(this.conversation, r, request);
    this.countBounded(r);
    this.prepareAhead();
    if (decision.action === 'decline') throw decision.error;
    return decision.messages!;
  }

  /**
   * Summaries prepared ahead (`summaryAhead`): the preparation the request found due runs after it,
   * in the queue (so it sees a history no operation is changing), never inside the request; the
   * model's answer is a promise the guard keeps, which no request awaits.
   */
  private prepareAhead(): void {
    const prepare = this.guard.preparation(this.conversation);
    if (!prepare) return;
    // The queue's own failures (a store that cannot load) are the next operation's to report.
    setImmediate(() => this.enqueue(prepare).catch(() => undefined));
  }

  /**
   * `getMessagesForRequest` as the body of an Anthropic Messages request: `system` and `messages`
   * (`toAnthropicRequest`), and with `providerCompaction` on and a model with server compaction,
   * the `context_management` edits and the `betas` they need. Spread it into
   * `client.beta.messages.create({ model, max_tokens, ...body })` (or send the betas as the
   * `anthropic-beta` header). The reply's compaction block, added as any reply, starts the next view.
   */
  getAnthropicRequest(
    request: RequestOptions = {},
  ): Promise<AnthropicRequestParts & Partial<AnthropicContextManagement>> {
    return this.enqueue(async () => {
      const view = await this.fitRequest({ provider: 'anthropic', ...request });
      const managed = this.conversation.provider?.request;
      return managed ? { ...anthropicRequest(view), ...structuredClone(managed) } : anthropicRequest(view);
    });
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
   * first sample moves the estimate only a little (see `createCalibration`).
   */
  recordUsage(usage: UsageCounts, messages?: readonly Message[]): Promise<void> {
    return this.enqueue(async () => {
      await this.measurer.recordUsage(usage, messages, this.history.format);
      if (messages) return;
      const sample = usageFromCounts(usage);
      this.compareCache(sample);
      recordProviderContext(this.conversation, sample, [], this.emitter);
    });
  }

  /** `recordUsage` from an OpenAI Chat Completions or Responses API response. */
  recordOpenAIUsage(response: unknown, messages?: readonly Message[]): Promise<void> {
    return this.enqueue(async () => {
      await this.measurer.recordOpenAIUsage(response, messages, this.history.format);
      if (!messages) this.compareCache(usageFromOpenAI(response));
    });
  }

  /** `recordUsage` from an Anthropic Messages response. */
  recordAnthropicUsage(response: unknown, messages?: readonly Message[]): Promise<void> {
    return this.enqueue(async () => {
      await this.measurer.recordAnthropicUsage(response, messages, this.history.format);
      if (messages) return;
      const sample = usageFromAnthropic(response);
      this.compareCache(sample);
      recordProviderContext(this.conversation, sample, appliedEditsOf(response), this.emitter);
    });
  }

  /** The provider's cache figures beside the meter's prediction, warning past 5% (`compareCache`). */
  private compareCache(sample: UsageSample): void {
    compareCache(this.conversation, sample, this.measurer);
  }

  /**
   * After the provider refused a request as too long: tightens the budget from the numbers in its
   * error (or by 15% when it gives none) and returns a smaller valid view. Before any request, the
   * stored history is fitted to the configured budget so tightened. Once per request: a second
   * overflow for the same request, or an error that is not an overflow, is thrown back as it is.
   */
  async recoverFromOverflow(err: unknown): Promise<Message[]> {
    const last = this.measurer.last;
    if (!isContextOverflowError(err) || last?.recovered) throw err;
    const budget = await this.measurer.recoveryBudget(overflowNumbers(err) ?? {}, last);
    this.measurer.warn(
      'overflow_recovery',
      last
        ? `the provider refused ${last.tokens} tokens; retrying within ${budget}`
        : `the provider refused a request this manager did not make; fitting the stored history within ${budget}`,
    );
    const view = await this.getMessagesForRequest({ ...(last?.request ?? {}), tokenBudget: budget });
    if (this.measurer.last) this.measurer.last.recovered = true;
    return view;
  }

  /** Figures of the last request (or of the whole history against the configured budget). */
  usage(): Usage {
    const last = this.conversation.lastUsage;
    if (last) return copyUsage(last);
    const budget = this.measurer.defaultBudget();
    const tokens = this.storedTokens();
    return {
      budget,
      tokens,
      pct: tokens / budget,
      trigger: Math.floor(this.options.compactThreshold * budget),
      target: Math.floor(this.options.targetUsage * budget),
      messages: this.history.entries.length,
    };
  }

  /** The current compaction plan, if any (for reports and tests). */
  currentPlan(): CompactionPlan | null {
    const plan = this.conversation.view.plan;
    return plan ? structuredClone(plan) : null;
  }

  /** The conversation's format once a message has shown it. */
  get messageFormat(): MessageFormat | undefined {
    return this.history.format;
  }

  /**
   * Searches the whole stored history (what left the view included) and returns the best hits,
   * each with its neighbouring turns, their texts together within `maxTokens` (default 1,000,
   * counted with the conversation's counter); at most `limit` (default 5). An empty query gives
   * `[]`. Nothing stored changes. See src/recall/ for the index and the ranking.
   */
  recall(query: string, options: RecallOptions = {}): Promise<RecallHit[]> {
    return this.enqueue(() => this.recallIndex.recall(query, options));
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
    const compact = readCompactCall(call);
    if (compact !== null) {
      const format = () => this.history.format ?? compact.format;
      if ('error' in compact.args) {
        const text = `compact: ${compact.args.error}`;
        return this.enqueue(() => toolResultMessage(format(), COMPACT_TOOL_NAME, compact.id, text, true));
      }
      return this.requestCompaction(compact.args).then((receipt) =>
        toolResultMessage(format(), COMPACT_TOOL_NAME, compact.id, compactReceiptText(receipt), false),
      );
    }
    const read = readRecallCall(call);
    if (read === null) return Promise.resolve(null);
    return this.enqueue(async () => {
      const format = this.history.format ?? read.format;
      const answer = await recallAnswer((q, o) => this.recallIndex.recall(q, o), read.args);
      return recallResultMessage(format, read.id, answer.text, answer.error);
    });
  }

  /** Waits for pending operations, then closes the store. */
  async close(): Promise<void> {
    // Not through enqueue: closing needs no loaded history (it may be what cannot load).
    await this.queue;
    await this.measurer.stopCounting();
    await this.counts.settled();
    this.history.unwatch();
    await this.history.store?.close();
  }
}
