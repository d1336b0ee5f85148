import { clearToolResults } from './compaction/clear-tool-results.js';
import { dedupeRepeated } from './compaction/dedupe-repeated.js';
import type { PlanContext, PlanDraft, Protection } from './compaction/draft.js';
import { dropOldest } from './compaction/drop-oldest.js';
import { type AtomEdits, NO_EDITS, renderAtom } from './compaction/edit-atom.js';
import { dropByImportance } from './compaction/importance.js';
import { CONVERSATION_START_TEXT, OMITTED_START_TEXT } from './compaction/placeholders.js';
import { type CompactionPlan, type PlanEdits, type PlanSummary, startDraft } from './compaction/plan.js';
import { selectForSummary } from './compaction/select-for-summary.js';
import type { CustomStrategy, StrategyOption } from './compaction/strategy.js';
import {
  capFacts,
  type FactsSite,
  factsCap,
  factsMessage,
  MIN_SUMMARY_TOKENS,
  SUMMARY_FRAME_TOKENS,
  summaryMessage,
  summaryReserve,
} from './compaction/summary-message.js';
import { capProtectedOversized, truncateOversized } from './compaction/truncate-oversized.js';
import { escalate, type Level, levelOf, selectByZones } from './compaction/zones.js';
import {
  ConfigurationError,
  ConflictError,
  ContextOverflowError,
  InvalidMessageError,
  type OverflowBreakdown,
} from './errors.js';
import { type CompactionReceipt, ContextEmitter, type ContextEventName, type Listener } from './events.js';
import { type Calibration, createCalibration } from './guard/calibration.js';
import type { CountClient } from './guard/count-endpoints.js';
import { isContextOverflowError, overflowNumbers } from './guard/overflow-errors.js';
import { type UsageCounts, usageFromAnthropic, usageFromCounts, usageFromOpenAI } from './guard/usage.js';
import { type Atom, AtomIndex } from './messages/atoms.js';
import { messageText } from './messages/content.js';
import { convertMessages } from './messages/convert.js';
import { resolveConversationFormat } from './messages/detect.js';
import { freezeDeep } from './messages/freeze.js';
import type {
  HistoryEntry,
  Message,
  MessageFormat,
  MessageMetadata,
  ToolDefinition,
} from './messages/types.js';
import { validateMessage } from './messages/validate-message.js';
import { metaPersistence } from './stores/meta-persistence.js';
import { resolveStore } from './stores/resolve.js';
import type { ConversationStore, NewEntry } from './stores/types.js';
import { createModelCatalog, type ModelCatalog } from './tokens/catalog.js';
import { createTokenCounter } from './tokens/counter.js';
import type { ModelInfo, TokenCounter } from './tokens/types.js';
import {
  createAnthropicTools,
  createOpenAITools,
  type LLMToolsOptions,
  type LLMWarning,
} from './tools/llm.js';
import { createOfflineTools } from './tools/offline.js';
import { OfflineFactExtractor } from './tools/offline-facts.js';
import type { ContextTools, ExtractedFact } from './tools/types.js';

/** Provider info as the seed contract passes it: `getInfo().defaults` or the numbers directly. */
export interface ProviderInfo {
  getInfo?: () => { defaults?: { context_window?: number; max_output_tokens?: number } };
  contextWindow?: number;
  maxOutputTokens?: number;
  /** The wire format views for this provider must be in. */
  format?: MessageFormat;
}

/** Options of `new ContextManager(options)`; every one has a default (see the README). */
export interface ContextManagerOptions {
  /** Model id: decides the tokenizer and, through the catalog, the budget. */
  model?: string;
  /** Budget when neither the request nor the model gives one (default 200,000). */
  maxTokens?: number;
  /** Usage (share of the budget) above which a new compaction plan is made (default 0.92). */
  compactThreshold?: number;
  /** Usage a compaction brings the view down to (default 0.6). */
  targetUsage?: number;
  /** Never compact system messages (default true). */
  preserveSystem?: boolean;
  /** How many of the newest tool results are never cleared (default 3). */
  keepToolResults?: number;
  /** Tokens kept free below the window besides the model's max output (default 1,000). */
  safetyMargin?: number;
  /** Where the history is kept: a store, or `memory:` / `file:DIR`. Default: this process's memory. */
  store?: string | ConversationStore;
  /** The conversation in the store (default `default`). */
  conversationId?: string;
  /** Models to add to or override in the catalog. */
  models?: Record<string, Partial<ModelInfo>>;
  /** A counter to use instead of the catalog's (for tests, or a provider-exact one). */
  tokenCounter?: TokenCounter;
  /** Clock for timestamps (tests). */
  now?: () => Date;
  /**
   * How older messages leave the view once clearing old tool results is not enough: `summarize`
   * (default) puts one summary where they stood, `truncate` drops them. Either way their facts are
   * kept in the facts block, and whatever is still too much is dropped.
   */
  strategy?: StrategyOption;
  /** For the `layered` strategy: how many of the newest atoms make the recent zone (default 6). */
  recentCount?: number;
  /** Clearing of old tool results, with the options of Anthropic's context editing. */
  clearing?: {
    /** Clear on its own once the view passes this many tokens, before the compaction trigger. */
    trigger?: number;
    /** Alias of `keepToolResults`. */
    keep?: number;
    clearAtLeast?: number;
    excludeTools?: readonly string[];
    clearToolInputs?: boolean;
  };
  /**
   * Levels on top of the compaction trigger: a `context:warn` when usage first passes `warnAt`
   * (default 0.8; it re-arms once usage falls again), and `ContextOverflowError` when a view
   * would still be above `declineAt` after compacting (default: only above the budget).
   * `jumpEscalation` (default 0.3): a leap of that share of the budget in one request escalates
   * the layered strategy one level; the first measurement is never a leap.
   */
  guard?: { warnAt?: number; declineAt?: number; jumpEscalation?: number };
  /**
   * In the request right after a compaction, a short note at the end of the view tells the model
   * that older messages were summarized or left out (default off: the note is gone next turn,
   * which costs that one turn's prompt-cache hit at the tail).
   */
  compactionNotice?: boolean;
  /** Writes summaries and extracts facts: the offline tools by default, or an LLM's. */
  tools?: ContextTools;
  /**
   * Summarize and extract facts with a model over plain `fetch` (OpenAI-compatible Chat
   * Completions or Anthropic Messages). Any failure falls back to the offline tools with a
   * `context:warn` (`llm_fallback`). Ignored when `tools` is given.
   */
  llm?: Omit<LLMToolsOptions, 'onWarn'> & { provider: 'openai' | 'anthropic' };
  /** Where the facts block of what left the view goes (default `system`: after the system prompt). */
  facts?: FactsSite;
  /**
   * Exact counts from the provider's endpoint (`createCountClient`), asked for when an estimated
   * view is near the budget (at `exactCountAt`, default 0.9): Claude and Gemini, whose tokenizers
   * are not offline. On failure the estimate stands.
   */
  countClient?: CountClient;
  exactCountAt?: number;
  /** Learns a per-model correction from reported usage (`recordUsage`); `false` turns it off. */
  calibration?: Calibration | false;
}

/** Options of `addMessage`: how compaction treats the message, and metadata to keep beside it. */
export interface AddMessageOptions {
  critical?: boolean;
  ephemeral?: boolean;
  pinned?: boolean;
  metadata?: Partial<MessageMetadata> & Record<string, unknown>;
}

/** Options of `getMessagesForRequest`: the budget (or what to derive it from), the wire format, the tools sent. */
export interface RequestOptions {
  tokenBudget?: number;
  /** `'openai'` or `'anthropic'` for the wire format, or provider info for the budget. */
  provider?: MessageFormat | ProviderInfo;
  model?: string;
  /** Tool definitions sent with the request: counted in the budget. */
  tools?: readonly ToolDefinition[];
}

/** What the last view used of its budget, and where compaction starts and aims. */
export interface Usage {
  budget: number;
  tokens: number;
  pct: number;
  trigger: number;
  target: number;
  messages: number;
}

interface Resolved {
  /** The budget planning works with: the declared one divided by the learned correction. */
  budget: number;
  /** The budget as given or derived, in billed tokens. */
  declared: number;
  /** What the calibration learns under: the catalog id, or the counter's id. */
  modelKey: string;
  correction: number;
  source: string;
  counter: TokenCounter;
  format: MessageFormat;
  fixedTokens: number;
  toolsTokens: number;
}

/** The view as last built: grows by appending atoms while the plan holds. */
interface ViewCache {
  key: string;
  plan: CompactionPlan | null;
  /** The plan's decisions as sets and maps, built once per plan rather than once per turn. */
  edits: PlanEdits;
  /** The plan's summary and facts block as messages, made once so their counts are memoized. */
  summary?: Message;
  facts?: Message;
  messages: Message[];
  tokens: number;
  atomsCovered: number;
  closedAtoms: number;
  closedMessages: number;
  closedTokens: number;
}

const DEFAULTS = {
  maxTokens: 200_000,
  compactThreshold: 0.92,
  targetUsage: 0.6,
  preserveSystem: true,
  keepToolResults: 3,
  safetyMargin: 1_000,
};

/** Tokens kept aside for the Anthropic start notice, which a view may need. */
const NOTICE_RESERVE = 24;
/** A summary reads at most this many entries: the newest half of them, the rest the user's requests. */
const SUMMARY_INPUT_ENTRIES = 600;
/** The user's first messages, always read for facts however long the history. */
const OPENING_REQUESTS = 16;
/** Fact candidates are read until their lines would fill the block this many times over… */
const FACT_CANDIDATES_OVER_ROOM = 3;
/** …and there are at least this many, so a small block still gets a choice. */
const MIN_FACT_CANDIDATES = 60;
/** Characters of tool results a plan reads for facts, newest first (what was said is read first). */
const FACT_RESULT_CHARS = 256_000;
const OMITTED_NOTICE: Message = freezeDeep({ role: 'user', content: OMITTED_START_TEXT });
const START_NOTICE: Message = freezeDeep({ role: 'user', content: CONVERSATION_START_TEXT });

function checkOptions(o: ContextManagerOptions): void {
  const num = (name: string, v: unknown) => {
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v))) {
      throw new ConfigurationError(name, `expected a finite number, got ${JSON.stringify(v)}`);
    }
  };
  for (const k of [
    'maxTokens',
    'compactThreshold',
    'targetUsage',
    'keepToolResults',
    'safetyMargin',
  ] as const) {
    num(k, o[k]);
  }
  if (o.maxTokens !== undefined && o.maxTokens <= 0)
    throw new ConfigurationError('maxTokens', 'must be above 0');
  const threshold = o.compactThreshold ?? DEFAULTS.compactThreshold;
  if (threshold <= 0 || threshold > 1) {
    throw new ConfigurationError('compactThreshold', `must be in (0, 1], got ${threshold}`);
  }
  const target = o.targetUsage ?? DEFAULTS.targetUsage;
  if (target <= 0 || target > 1)
    throw new ConfigurationError('targetUsage', `must be in (0, 1], got ${target}`);
  if (target > threshold) {
    throw new ConfigurationError(
      'targetUsage',
      `(${target}) must not be above compactThreshold (${threshold})`,
    );
  }
  if (o.keepToolResults !== undefined && (o.keepToolResults < 0 || !Number.isInteger(o.keepToolResults))) {
    throw new ConfigurationError('keepToolResults', 'must be a whole number ≥ 0');
  }
  if (o.safetyMargin !== undefined && o.safetyMargin < 0) {
    throw new ConfigurationError('safetyMargin', 'must be ≥ 0');
  }
  if (o.conversationId !== undefined && (typeof o.conversationId !== 'string' || o.conversationId === '')) {
    throw new ConfigurationError('conversationId', 'must be a non-empty string');
  }
}

function encodePlan(plan: CompactionPlan): Record<string, unknown> {
  return { ...plan };
}

function decodePlan(value: unknown): CompactionPlan | null {
  const p = value as Partial<CompactionPlan> | undefined;
  if (p?.v !== 1 || !Array.isArray(p.dropped) || !Array.isArray(p.cleared) || !Array.isArray(p.truncated)) {
    return null;
  }
  return p as CompactionPlan;
}

/**
 * Conversation memory for one agent conversation: stores every message, and before each model
 * call returns a view that fits the budget, is valid for the provider, keeps what matters and
 * leaves the stored history whole. See DESIGN.md for the invariants every view holds.
 */
export class ContextManager {
  readonly options: Readonly<
    Required<
      Omit<
        ContextManagerOptions,
        | 'store'
        | 'models'
        | 'tokenCounter'
        | 'model'
        | 'now'
        | 'tools'
        | 'countClient'
        | 'calibration'
        | 'clearing'
        | 'guard'
        | 'recentCount'
        | 'compactionNotice'
        | 'llm'
      >
    >
  > & {
    model?: string;
  };
  readonly conversationId: string;
  private readonly emitter = new ContextEmitter();
  private readonly store: ConversationStore | null;
  private readonly catalog: ModelCatalog;
  private readonly fixedCounter: TokenCounter | undefined;
  private readonly tools: ContextTools;
  /** The tools are the built-in offline ones: fact extraction can run incrementally, in process. */
  private readonly offlineTools: boolean;
  private readonly countClient: CountClient | undefined;
  private readonly clearing: NonNullable<ContextManagerOptions['clearing']>;
  private readonly guard: { warnAt: number; declineAt: number | undefined; jumpEscalation: number };
  private readonly layeredRecent: number;
  private readonly noticeAfterCompaction: boolean;
  /** Set by a compaction, taken by the next view when `compactionNotice` is on. */
  private noticeDue: CompactionReceipt | null = null;
  /** Guard state: the level the layered strategy last acted at, the last usage, the warn latch. */
  private guardState: { level: Level | undefined; usage: number | undefined; warned: boolean } = {
    level: undefined,
    usage: undefined,
    warned: false,
  };
  /** The level the compaction under way acts at (layered strategy). */
  private pendingLevel: Level | undefined;
  private calibration: Calibration | null = null;
  /** What the last request sent, for `recordUsage` and `recoverFromOverflow`. */
  private lastRequest: {
    request: RequestOptions;
    tokens: number;
    budget: number;
    model: string;
    recovered: boolean;
  } | null = null;
  /** Facts the last plan could not fit in the block (reported in its receipt). */
  private factsOmitted = 0;
  /** Summary and facts-block messages by the summary or facts list they render. */
  private readonly blockMessages = new WeakMap<object, Message>();
  /** Each plan's decisions as sets and maps (read-only: steps copy before they change anything). */
  private readonly editsOfPlan = new WeakMap<CompactionPlan, PlanEdits>();
  private readonly now: () => Date;
  private entries: HistoryEntry[] = [];
  /** Seq the store will give the next persisted entry. */
  private storeHead = 0;
  private hasEphemeral = false;
  private format: MessageFormat | undefined;
  private atoms: AtomIndex | null = null;
  private plan: CompactionPlan | null = null;
  private planVersion = 0;
  private view: ViewCache | null = null;
  private readonly memo = new Map<string, WeakMap<object, number>>();
  /** Tool definitions are usually the same array every request: count them once per counter. */
  private readonly toolsMemo = new WeakMap<object, Map<string, number>>();
  private readonly counters = new Map<string, TokenCounter>();
  private readonly warned = new Set<string>();
  private readonly calibrated = new Set<string>();
  private lastBudget: { budget: number; source: string } | null = null;
  private lastUsage: Usage | null = null;
  private loadedFromStore = false;
  private queue: Promise<unknown>;

  constructor(options: ContextManagerOptions = {}) {
    checkOptions(options);
    this.options = {
      maxTokens: options.maxTokens ?? DEFAULTS.maxTokens,
      compactThreshold: options.compactThreshold ?? DEFAULTS.compactThreshold,
      targetUsage: options.targetUsage ?? DEFAULTS.targetUsage,
      preserveSystem: options.preserveSystem ?? DEFAULTS.preserveSystem,
      keepToolResults: options.keepToolResults ?? DEFAULTS.keepToolResults,
      safetyMargin: options.safetyMargin ?? DEFAULTS.safetyMargin,
      conversationId: options.conversationId ?? 'default',
      strategy: options.strategy ?? 'summarize',
      facts: options.facts ?? 'system',
      exactCountAt: options.exactCountAt ?? 0.9,
      ...(options.model !== undefined ? { model: options.model } : {}),
    };
    this.conversationId = this.options.conversationId;
    this.catalog = createModelCatalog(options.models);
    this.fixedCounter = options.tokenCounter;
    const tools = options.tools ?? this.llmTools(options.llm);
    this.tools = tools ?? createOfflineTools();
    this.offlineTools = tools === undefined;
    this.countClient = options.countClient;
    this.clearing = options.clearing ?? {};
    this.guard = {
      warnAt: options.guard?.warnAt ?? 0.8,
      declineAt: options.guard?.declineAt,
      jumpEscalation: options.guard?.jumpEscalation ?? 0.3,
    };
    this.layeredRecent = options.recentCount ?? 6;
    this.noticeAfterCompaction = options.compactionNotice === true;
    this.now = options.now ?? (() => new Date());
    this.store =
      options.store === undefined
        ? null
        : resolveStore(options.store, { onWarning: (message) => this.warn('store_warning', message) });
    if (options.calibration !== false) {
      this.calibration =
        options.calibration ??
        createCalibration(
          this.store ? { persistence: metaPersistence(this.store, this.conversationId, 'calibration') } : {},
        );
    }
    this.queue = this.store ? this.load(this.store) : Promise.resolve();
  }

  // ------------------------------------------------------------------------------------ events

  /** Subscribes to an event; returns a function that unsubscribes. */
  on<E extends ContextEventName>(event: E, listener: Listener<E>): () => void {
    return this.emitter.on(event, listener);
  }

  off<E extends ContextEventName>(event: E, listener: Listener<E>): void {
    this.emitter.off(event, listener);
  }

  // ------------------------------------------------------------------------------------ history

  /** Runs operations one at a time, in call order, so a request sees a consistent history. */
  private enqueue<T>(op: () => Promise<T> | T): Promise<T> {
    const run = this.queue.then(op);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async load(store: ConversationStore): Promise<void> {
    const stored = await store.read(this.conversationId);
    const meta = await store.getMeta(this.conversationId);
    this.entries = [];
    this.format = undefined;
    for (const e of stored) this.pushEntry(e.message, e.metadata);
    this.storeHead = stored.length;
    this.loadedFromStore = stored.length > 0;
    this.plan = decodePlan(meta.value?.plan);
    const guard = meta.value?.guard as { level?: Level; usage?: number } | undefined;
    if (guard) this.guardState = { level: guard.level, usage: guard.usage, warned: false };
    this.planVersion++;
  }

  private pushEntry(message: Message, metadata: MessageMetadata): HistoryEntry {
    const seq = this.entries.length;
    this.format = resolveConversationFormat(this.format, message, seq);
    const entry: HistoryEntry = Object.freeze({
      seq,
      message: freezeDeep(message),
      metadata: freezeDeep(metadata),
    });
    this.entries.push(entry);
    if (metadata.ephemeral) this.hasEphemeral = true;
    return entry;
  }

  /**
   * Validates and stores a message (a copy: the caller's object is never changed). Rejects a
   * malformed message with `InvalidMessageError` naming the field; nothing is stored then.
   */
  addMessage(message: unknown, options: AddMessageOptions = {}): Promise<void> {
    return this.enqueue(() => this.add(message, options));
  }

  private async add(message: unknown, options: AddMessageOptions): Promise<void> {
    const seq = this.entries.length;
    let copy: unknown;
    try {
      copy = structuredClone(message);
    } catch {
      throw new InvalidMessageError([{ path: `messages[${seq}]`, message: 'expected a plain JSON object' }]);
    }
    const format = resolveConversationFormat(this.format, copy, seq);
    const valid = validateMessage(copy, `messages[${seq}]`, format);
    const metadata: MessageMetadata = {
      ...(options.metadata ?? {}),
      timestamp:
        typeof options.metadata?.timestamp === 'string'
          ? options.metadata.timestamp
          : this.now().toISOString(),
    };
    if (options.critical) metadata.critical = true;
    if (options.pinned) metadata.pinned = true;
    if (options.ephemeral) metadata.ephemeral = true;
    if (this.store && !options.ephemeral) await this.persist([{ message: valid, metadata }]);
    if (format !== this.format && this.atoms && this.atoms.format !== format) this.atoms = null;
    const entry = this.pushEntry(valid, metadata);
    if (this.emitter.has('context:message_added')) {
      this.emitter.emit('context:message_added', {
        seq: entry.seq,
        role: entry.message.role,
        ephemeral: !!options.ephemeral,
        tokens: this.count(this.defaultCounter(), entry.message),
      });
    }
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
        if (!(err instanceof ConflictError) || attempt >= 20) throw err;
        await this.takeTail(store);
      }
    }
  }

  /**
   * Takes in what other writers appended to the store since this manager last read it. Requests
   * never re-read the store (that would put I/O on every turn); an append that finds the store
   * ahead takes in the new tail by itself. Resolves with the number of messages taken in.
   */
  sync(): Promise<number> {
    return this.enqueue(async () => {
      if (!this.store) return 0;
      return this.takeTail(this.store);
    });
  }

  private async takeTail(store: ConversationStore): Promise<number> {
    const tail = await store.read(this.conversationId, { fromSeq: this.storeHead });
    for (const e of tail) this.pushEntry(e.message, e.metadata);
    this.storeHead += tail.length;
    return tail.length;
  }

  /** The full stored history, never compacted (ephemeral messages included). */
  async getMessages(): Promise<Message[]> {
    return this.enqueue(() => this.entries.map((e) => e.message as Message));
  }

  /** The stored entries with their seqs and metadata. */
  async getEntries(): Promise<HistoryEntry[]> {
    return this.enqueue(() => this.entries.slice());
  }

  /**
   * Replaces the history (session restore). As the seed contract says for file-backed managers,
   * when the history was resumed from a store the store is authoritative and the call is ignored
   * (with a `context:warn`); pass `{ replace: true }` to replace it anyway.
   */
  setMessages(messages: readonly unknown[], options: { replace?: boolean } = {}): Promise<void> {
    return this.enqueue(async () => {
      if (this.loadedFromStore && !options.replace) {
        this.warn(
          'set_messages_ignored',
          `setMessages ignored: conversation ${this.conversationId} was resumed from its store, which is authoritative (pass { replace: true } to replace it)`,
        );
        return;
      }
      if (!Array.isArray(messages)) {
        throw new InvalidMessageError([{ path: 'messages', message: 'expected an array of messages' }]);
      }
      let format: MessageFormat | undefined;
      const valid: Message[] = messages.map((m, i) => {
        let copy: unknown;
        try {
          copy = structuredClone(m);
        } catch {
          throw new InvalidMessageError([
            { path: `messages[${i}]`, message: 'expected a plain JSON object' },
          ]);
        }
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
      for (const e of batch) this.pushEntry(e.message, e.metadata);
      this.storeHead = batch.length;
      this.loadedFromStore = false;
    });
  }

  /** Removes every message (and the stored conversation). */
  clear(): Promise<void> {
    return this.enqueue(async () => {
      if (this.store) await this.store.delete(this.conversationId);
      this.reset();
      this.storeHead = 0;
      this.loadedFromStore = false;
    });
  }

  private reset(): void {
    this.entries = [];
    this.format = undefined;
    this.atoms = null;
    this.plan = null;
    this.planVersion++;
    this.view = null;
    this.hasEphemeral = false;
  }

  // ------------------------------------------------------------------------------------ tokens

  private counterFor(model: string | undefined): TokenCounter {
    if (this.fixedCounter) return this.fixedCounter;
    const key = model ?? `default:${this.format ?? 'openai'}`;
    let counter = this.counters.get(key);
    if (!counter) {
      const info = model ? this.catalog.get(model) : undefined;
      const fallback = this.catalog.get(this.format === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4o')!;
      counter = createTokenCounter(info ?? fallback);
      this.counters.set(key, counter);
    }
    return counter;
  }

  private defaultCounter(): TokenCounter {
    return this.counterFor(this.options.model);
  }

  /** Tokens of one message, memoized per message object and counter. */
  private count(
    counter: TokenCounter,
    message: Message,
    format: MessageFormat = this.format ?? 'openai',
  ): number {
    let memo = this.memo.get(counter.id);
    if (!memo) {
      memo = new WeakMap();
      this.memo.set(counter.id, memo);
    }
    let n = memo.get(message);
    if (n === undefined) {
      n = counter.countMessage(message, format);
      memo.set(message, n);
    }
    return n;
  }

  private countAll(counter: TokenCounter, messages: readonly Message[]): number {
    let sum = 0;
    for (const m of messages) sum += this.count(counter, m);
    return sum;
  }

  private countTools(counter: TokenCounter, tools: readonly ToolDefinition[] | undefined): number {
    if (!tools || tools.length === 0) return counter.countTools(tools);
    let byCounter = this.toolsMemo.get(tools);
    if (!byCounter) {
      byCounter = new Map();
      this.toolsMemo.set(tools, byCounter);
    }
    let n = byCounter.get(counter.id);
    if (n === undefined) {
      n = counter.countTools(tools);
      byCounter.set(counter.id, n);
    }
    return n;
  }

  /** Tokens of the whole stored history with the configured model's counter. */
  async getTokenCount(): Promise<number> {
    return this.enqueue(() => {
      const counter = this.defaultCounter();
      return this.countAll(
        counter,
        this.entries.map((e) => e.message as Message),
      );
    });
  }

  // ------------------------------------------------------------------------------------ budget

  private resolve(request: RequestOptions): Resolved {
    const model = request.model ?? this.options.model;
    const providerInfo = typeof request.provider === 'object' ? request.provider : undefined;
    const requested = typeof request.provider === 'string' ? request.provider : providerInfo?.format;
    if (requested !== undefined && requested !== 'openai' && requested !== 'anthropic') {
      throw new ConfigurationError(
        'provider',
        `expected "openai", "anthropic" or provider info, got ${JSON.stringify(requested)}`,
      );
    }
    const info = model ? this.catalog.get(model) : undefined;
    // A conversation of plain text fits either format: the model's provider decides, and with
    // no model the view is made valid for both (Anthropic's rules are the stricter).
    const format: MessageFormat =
      requested ??
      this.format ??
      (info ? (info.provider === 'anthropic' ? 'anthropic' : 'openai') : 'anthropic');
    if (model && !info && !this.fixedCounter) {
      this.warnOnce(
        `unknown_model:${model}`,
        'unknown_model',
        `model ${JSON.stringify(model)} is not in the catalog: counting with the default tokenizer and budgeting with maxTokens (${this.options.maxTokens}); add it with the \`models\` option`,
      );
    }
    let budget: number;
    let source: string;
    if (request.tokenBudget !== undefined) {
      if (
        typeof request.tokenBudget !== 'number' ||
        !Number.isFinite(request.tokenBudget) ||
        request.tokenBudget <= 0
      ) {
        throw new ConfigurationError(
          'tokenBudget',
          `must be a number above 0, got ${JSON.stringify(request.tokenBudget)}`,
        );
      }
      budget = Math.floor(request.tokenBudget);
      source = 'tokenBudget';
    } else if (providerInfo && this.providerBudget(providerInfo) !== undefined) {
      budget = this.providerBudget(providerInfo)!;
      source = 'provider';
    } else if (info) {
      budget = info.contextWindow - info.maxOutputTokens - this.options.safetyMargin;
      source = `model:${info.id}`;
    } else {
      budget = this.options.maxTokens;
      source = 'maxTokens';
    }
    if (budget <= 0) {
      throw new ConfigurationError(
        'budget',
        `the ${source} budget comes to ${budget} tokens; it must be above 0`,
      );
    }
    if (!this.lastBudget || this.lastBudget.budget !== budget || this.lastBudget.source !== source) {
      this.lastBudget = { budget, source };
      this.emitter.emit('context:budget', { budget, source });
    }
    const counter = this.counterFor(info ? info.id : undefined);
    const toolsTokens = this.countTools(counter, request.tools);
    const fixedTokens = toolsTokens + counter.requestOverhead;
    const modelKey = info?.id ?? model ?? counter.id;
    const correction = this.calibration?.correction(modelKey) ?? 1;
    return {
      budget: Math.max(1, Math.floor(budget / correction)),
      declared: budget,
      modelKey,
      correction,
      source,
      counter,
      format,
      fixedTokens,
      toolsTokens,
    };
  }

  private providerBudget(p: ProviderInfo): number | undefined {
    let window = p.contextWindow;
    let output = p.maxOutputTokens;
    if (p.getInfo) {
      try {
        const d = p.getInfo().defaults ?? {};
        window ??= d.context_window;
        output ??= d.max_output_tokens;
      } catch {
        return undefined;
      }
    }
    if (!window || !output) return undefined;
    return window - output - this.options.safetyMargin;
  }

  // ------------------------------------------------------------------------------------ views

  private ensureAtoms(): AtomIndex {
    const format = this.format ?? 'openai';
    if (!this.atoms || this.atoms.format !== format) {
      this.atoms = new AtomIndex(format);
      this.view = null;
    }
    this.atoms.update(this.entries);
    return this.atoms;
  }

  private planEdits(plan: CompactionPlan | null): PlanEdits {
    if (!plan) return { ...NO_EDITS, dropped: new Set(), summarized: new Set() };
    let edits = this.editsOfPlan.get(plan);
    if (edits === undefined) {
      edits = {
        cleared: new Map(plan.cleared),
        truncated: new Map(plan.truncated),
        clearInputs: this.clearing.clearToolInputs === true,
        dropped: new Set(plan.dropped),
        summarized: new Set(plan.summarized ?? []),
      };
      this.editsOfPlan.set(plan, edits);
    }
    return edits;
  }

  /** Brings the cached view up to date: re-renders only the atoms that are new or still open. */
  private buildView(counter: TokenCounter): ViewCache {
    const atoms = this.ensureAtoms();
    const key = `${counter.id}|${atoms.format}|${this.planVersion}`;
    let view = this.view;
    if (!view || view.key !== key) {
      view = {
        key,
        plan: this.plan,
        edits: this.planEdits(this.plan),
        ...this.planMessages(this.plan, atoms.format),
        messages: [],
        tokens: 0,
        atomsCovered: 0,
        closedAtoms: 0,
        closedMessages: 0,
        closedTokens: 0,
      };
      this.view = view;
    } else if (view.atomsCovered > view.closedAtoms) {
      view.messages.length = view.closedMessages;
      view.tokens = view.closedTokens;
      view.atomsCovered = view.closedAtoms;
    }
    if (view.atomsCovered === atoms.length) return view;
    const edits = view.edits;
    const planned = view.plan ? view.plan.historyLength : 0;
    for (let k = view.atomsCovered; k < atoms.length; k++) {
      const atom = atoms.at(k);
      if (view.facts && atom.id === view.plan?.factsAt) {
        view.messages.push(view.facts);
        view.tokens += this.count(counter, view.facts);
      }
      if (view.summary && atom.id === view.plan?.summary?.at) {
        view.messages.push(view.summary);
        view.tokens += this.count(counter, view.summary);
      }
      if (!edits.dropped.has(atom.id)) {
        const rendered = atom.id < planned ? renderAtom(atom, edits) : atom.messages;
        for (const m of rendered) {
          view.messages.push(m);
          view.tokens += this.count(counter, m);
        }
      }
      view.atomsCovered = k + 1;
      if (k < atoms.closedCount) {
        view.closedAtoms = k + 1;
        view.closedMessages = view.messages.length;
        view.closedTokens = view.tokens;
      }
    }
    return view;
  }

  private planMessages(
    plan: CompactionPlan | null,
    format: MessageFormat,
  ): { summary?: Message; facts?: Message } {
    const out: { summary?: Message; facts?: Message } = {};
    if (plan?.summary) out.summary = this.summaryMessageOf(plan.summary, format);
    if (plan?.facts && plan.facts.length > 0 && this.factsSite() !== 'none') {
      out.facts = this.factsMessageOf(plan.facts);
    }
    return out;
  }

  /** Which atoms compaction may touch, and how far. */
  private protections(atoms: readonly Atom[]): Protection[] {
    const verbatimSeqs = (atom: Atom) =>
      atom.seqs.some((s) => {
        const m = this.entries[s]?.metadata;
        return !!(m?.critical || m?.pinned);
      });
    let latestUser = -1;
    for (let i = atoms.length - 1; i >= 0; i--) {
      if (atoms[i]!.hasUserContent) {
        latestUser = i;
        break;
      }
    }
    let inProgress = -1;
    for (let i = atoms.length - 1; i > latestUser; i--) {
      if (atoms[i]!.kind === 'exchange') {
        inProgress = i;
        break;
      }
    }
    return atoms.map((atom, i) => {
      if (atom.kind === 'system' && this.options.preserveSystem) return 'verbatim';
      if (i === latestUser || verbatimSeqs(atom)) return 'verbatim';
      if (i === inProgress || atom.open) return 'keep';
      return 'none';
    });
  }

  /**
   * The messages to send now: within the budget, valid for the provider, with system, pinned and
   * critical messages, the latest user message and the tool exchange in progress kept. Stored
   * history is never changed. Throws `ContextOverflowError` when what must be kept cannot fit.
   */
  getMessagesForRequest(request: RequestOptions = {}): Promise<Message[]> {
    return this.enqueue(() => this.request(request));
  }

  private async request(request: RequestOptions): Promise<Message[]> {
    let r = this.resolve(request);
    if (this.calibration && !this.calibrated.has(r.modelKey)) {
      this.calibrated.add(r.modelKey);
      try {
        await this.calibration.load(r.modelKey);
      } catch (err) {
        this.warn('calibration', `could not load the usage calibration of ${r.modelKey}: ${String(err)}`);
      }
      r = this.resolve(request);
    }
    let out = await this.viewFor(r);
    // Near the budget with an estimate, ask the provider for the exact count where it offers one.
    if (this.countClient && !r.counter.exact && out.total >= this.options.exactCountAt * r.budget) {
      const exact = await this.exactCount(r, out.messages, request);
      if (exact !== undefined && exact > r.declared) {
        const tighter: Resolved = {
          ...r,
          budget: Math.max(1, Math.floor((r.budget * r.declared) / exact) - 1),
        };
        await this.compactNow(tighter, 'over_budget');
        out = await this.viewFor(tighter);
        r = tighter;
      }
    }
    if (out.total > r.budget) throw this.overflow(r, out.total, out.noticeTokens);
    // Warn on what is sent, after compacting: a view still this full leaves the model little room.
    const sent = out.total / r.budget;
    if (sent >= this.guard.warnAt && !this.guardState.warned) {
      this.guardState.warned = true;
      this.warn('usage_high', `the view is at ${Math.round(sent * 100)}% of the ${r.declared}-token budget`);
    } else if (sent < this.guard.warnAt) {
      this.guardState.warned = false;
    }
    if (this.guard.declineAt !== undefined && out.total > this.guard.declineAt * r.budget) {
      throw this.overflow(
        { ...r, budget: Math.floor(this.guard.declineAt * r.budget) },
        out.total,
        out.noticeTokens,
      );
    }
    const trigger = Math.floor(this.options.compactThreshold * r.declared);
    const target = Math.floor(this.options.targetUsage * r.declared);
    const tokens = Math.ceil(out.total * r.correction);
    const pct = tokens / r.declared;
    this.lastUsage = { budget: r.declared, tokens, pct, trigger, target, messages: out.messages.length };
    this.lastRequest = {
      request,
      tokens: out.total,
      budget: r.declared,
      model: r.modelKey,
      recovered: false,
    };
    this.emitter.emit('context:measure', {
      tokens,
      budget: r.declared,
      pct,
      exact: r.counter.exact,
      messages: out.messages.length,
    });
    return out.messages;
  }

  /** The current plan's view, compacting first when it has grown past the trigger. */
  private async viewFor(r: Resolved): Promise<{ messages: Message[]; total: number; noticeTokens: number }> {
    let view = this.buildView(r.counter);
    const trigger = Math.floor(this.options.compactThreshold * r.budget);
    const target = Math.floor(this.options.targetUsage * r.budget);
    let total = view.tokens + r.fixedTokens;
    // After a plan that could not reach the target (protected floor), wait for real growth.
    const replanAt = this.plan
      ? Math.min(r.budget, Math.max(trigger, this.plan.tokens + (trigger - target)))
      : trigger;
    const reason = this.compactionDue(total, r, replanAt);
    if (reason) {
      await this.compactNow(r, reason);
      view = this.buildView(r.counter);
      total = view.tokens + r.fixedTokens;
      // The level falls with the usage: it is where the view is now, not a high-water mark.
      this.guardState.level = levelOf(total / r.budget);
    }
    this.guardState.usage = total / r.budget;
    let messages = view.messages.slice();
    if (r.format !== (this.format ?? r.format)) {
      messages = convertMessages(messages, r.format);
      total = this.countFresh(r.counter, messages, r.format) + r.fixedTokens;
    }
    const due = this.noticeDue;
    this.noticeDue = null;
    // The note goes at the very end, after any tool results (never between a call and its result),
    // and not after an assistant message (that would turn a prefill into a new turn).
    if (due && this.noticeAfterCompaction && messages.length > 0 && messages.at(-1)!.role !== 'assistant') {
      const note = compactionNote(due, r.format);
      const cost = this.countFresh(r.counter, [note], r.format);
      if (total + cost <= r.budget - NOTICE_RESERVE) {
        messages.push(note);
        total += cost;
      }
    }
    const notice = r.format === 'anthropic' ? this.startNotice(messages) : undefined;
    let noticeTokens = 0;
    if (notice) {
      messages.splice(notice.at, 0, notice.message);
      noticeTokens = this.count(r.counter, notice.message, 'anthropic');
      total += noticeTokens;
    }
    return { messages, total, noticeTokens };
  }

  /**
   * Whether to compact now, and why. The layered strategy acts at its levels (0.5, 0.7, 0.85,
   * 0.95) each time usage reaches a level above the one it last acted at, one level higher after a
   * leap; every strategy compacts past the trigger (after the hysteresis gap) or the budget.
   */
  private compactionDue(
    total: number,
    r: Resolved,
    replanAt: number,
  ): CompactionReceipt['reason'] | undefined {
    this.pendingLevel = undefined;
    const usage = total / r.budget;
    let level = levelOf(usage);
    const last = this.guardState.usage;
    if (last !== undefined && usage - last >= this.guard.jumpEscalation) level = escalate(level);
    if (
      this.options.strategy === 'layered' &&
      level !== undefined &&
      rank(level) > rank(this.guardState.level)
    ) {
      this.pendingLevel = level;
      return total > r.budget ? 'over_budget' : 'threshold';
    }
    if (total > replanAt) {
      this.pendingLevel = level;
      return total > r.budget ? 'over_budget' : 'threshold';
    }
    const clearAt = this.clearing.trigger;
    if (
      clearAt !== undefined &&
      total * r.correction > clearAt &&
      (!this.plan || this.plan.tokens * r.correction <= clearAt)
    ) {
      return 'clearing';
    }
    return undefined;
  }

  /** The provider's exact count of a view, or undefined (with a warning) when it cannot be had. */
  private async exactCount(
    r: Resolved,
    messages: Message[],
    request: RequestOptions,
  ): Promise<number | undefined> {
    try {
      const exact = await this.countClient!.count({ model: r.modelKey, messages, tools: request.tools });
      this.emitter.emit('context:measure', {
        tokens: exact,
        budget: r.declared,
        pct: exact / r.declared,
        exact: true,
        messages: messages.length,
      });
      if (this.calibration) {
        const estimated = this.countFresh(r.counter, messages, r.format) + r.fixedTokens;
        await this.calibration.record({ model: r.modelKey, estimated, actual: exact }).catch(() => undefined);
      }
      return exact;
    } catch (err) {
      this.warnOnce(
        'exact_count',
        'exact_count',
        `exact count unavailable, keeping the estimate: ${(err as Error).message}`,
      );
      return undefined;
    }
  }

  /**
   * Learns from what the provider billed for the last request (or for `messages`): the per-model
   * correction the fast estimate uses from the next request on. Outliers are damped and the
   * first sample moves the estimate only a little (see `createCalibration`).
   */
  recordUsage(usage: UsageCounts, messages?: readonly Message[]): Promise<void> {
    return this.enqueue(async () => {
      if (!this.calibration) return;
      const sample = usageFromCounts(usage);
      const info = sample.model ? this.catalog.get(sample.model) : undefined;
      const model = info?.id ?? sample.model ?? this.lastRequest?.model;
      let estimated: number | undefined;
      if (messages) {
        const counter = this.counterFor(info?.id ?? (model && this.catalog.get(model) ? model : undefined));
        estimated = this.countFresh(counter, messages) + counter.requestOverhead;
      } else if (this.lastRequest && (!sample.model || this.lastRequest.model === model)) {
        estimated = this.lastRequest.tokens;
      }
      if (!model || estimated === undefined || estimated <= 0) {
        this.warn(
          'usage_unmatched',
          'recordUsage: no request to compare this usage with; pass the messages it billed',
        );
        return;
      }
      await this.calibration.record({ model, estimated, actual: sample.totalInputTokens });
    });
  }

  /** `recordUsage` from an OpenAI Chat Completions or Responses API response. */
  recordOpenAIUsage(response: unknown, messages?: readonly Message[]): Promise<void> {
    const u = usageFromOpenAI(response);
    return this.recordUsage(
      { model: u.model, inputTokens: u.totalInputTokens, cacheReadTokens: 0, cacheWriteTokens: 0 },
      messages,
    );
  }

  /** `recordUsage` from an Anthropic Messages response. */
  recordAnthropicUsage(response: unknown, messages?: readonly Message[]): Promise<void> {
    const u = usageFromAnthropic(response);
    return this.recordUsage(
      {
        model: u.model,
        inputTokens: u.inputTokens,
        cacheReadTokens: u.cacheReadTokens,
        cacheWriteTokens: u.cacheWriteTokens,
      },
      messages,
    );
  }

  /**
   * After the provider refused the last request as too long: tightens the budget from the numbers
   * in its error (or by 15% when it gives none) and returns a smaller valid view. Once per request:
   * a second overflow for the same request is thrown back.
   */
  async recoverFromOverflow(err: unknown): Promise<Message[]> {
    const last = this.lastRequest;
    if (!isContextOverflowError(err) || !last || last.recovered) throw err;
    const numbers = overflowNumbers(err) ?? {};
    let budget: number;
    if (numbers.limit && numbers.actual)
      budget = Math.floor(((last.tokens * numbers.limit) / numbers.actual) * 0.97);
    else if (numbers.limit) budget = Math.floor(Math.min(last.budget, numbers.limit) * 0.9);
    else budget = Math.floor(last.budget * 0.85);
    if (numbers.actual && this.calibration) {
      await this.calibration
        .record({ model: last.model, estimated: last.tokens, actual: numbers.actual })
        .catch(() => undefined);
    }
    this.warn('overflow_recovery', `the provider refused ${last.tokens} tokens; retrying within ${budget}`);
    const view = await this.getMessagesForRequest({ ...last.request, tokenBudget: Math.max(1, budget) });
    if (this.lastRequest) this.lastRequest.recovered = true;
    return view;
  }

  /** An Anthropic view must open with a user message: where it does not, one is put first. */
  private startNotice(messages: readonly Message[]): { at: number; message: Message } | undefined {
    const first = messages.findIndex((m) => m.role !== 'system');
    if (first < 0 || messages[first]!.role !== 'assistant') return undefined;
    const omitted = this.plan !== null && this.plan.dropped.length > 0;
    return { at: first, message: omitted ? OMITTED_NOTICE : START_NOTICE };
  }

  private overflow(r: Resolved, required: number, noticeTokens = 0): ContextOverflowError {
    const atoms = this.ensureAtoms().all();
    const protection = this.protections(atoms);
    const breakdown: OverflowBreakdown = {
      system: 0,
      pinned: 0,
      latestTurn: 0,
      tools: r.toolsTokens,
      overhead: r.fixedTokens - r.toolsTokens + noticeTokens,
    };
    atoms.forEach((atom, i) => {
      const p = protection[i];
      if (p === 'none') return;
      const tokens = this.countAll(r.counter, atom.messages);
      if (atom.kind === 'system') breakdown.system += tokens;
      else if (p === 'keep') breakdown.latestTurn += tokens;
      else if (
        atom.hasUserContent &&
        !atom.seqs.some((s) => this.entries[s]?.metadata.pinned || this.entries[s]?.metadata.critical)
      )
        breakdown.latestTurn += tokens;
      else breakdown.pinned += tokens;
    });
    const error = new ContextOverflowError(r.budget, required, breakdown);
    this.emitter.emit('context:overflow', { error });
    return error;
  }

  /**
   * Makes a new plan now when the view is over the trigger (or always, with `force`), and returns
   * its receipt; resolves to null when nothing needed doing.
   */
  compact(options: { force?: boolean } & RequestOptions = {}): Promise<CompactionReceipt | null> {
    return this.enqueue(async () => {
      const r = this.resolve(options);
      const view = this.buildView(r.counter);
      const total = view.tokens + r.fixedTokens;
      if (!options.force && total <= Math.floor(this.options.compactThreshold * r.budget)) return null;
      return this.compactNow(r, options.force ? 'forced' : 'threshold');
    });
  }

  private async compactNow(r: Resolved, reason: CompactionReceipt['reason']): Promise<CompactionReceipt> {
    const started = performance.now();
    const atoms = this.ensureAtoms().all();
    const before = this.buildView(r.counter);
    const tokensBefore = before.tokens + r.fixedTokens;
    const messagesBefore = before.messages.length;
    this.emitter.emit('context:pre_compact', { messageCount: messagesBefore, tokens: tokensBefore });
    const protection = this.protections(atoms);
    const previousPlan = this.plan;
    const previous = this.planEdits(previousPlan);
    const counter = r.counter;
    // Memoized even for messages made while planning: the memo holds them weakly, and the ones the
    // plan keeps (placeholders keep their identity) are found again when the view is built.
    const measure = (atom: Atom, edits: AtomEdits) => this.countAll(counter, renderAtom(atom, edits));
    const summaries = new Map<string, string>();
    let target = Math.floor(this.options.targetUsage * r.budget);
    if (reason === 'clearing' && this.clearing.trigger !== undefined) {
      target = Math.min(
        Math.floor(this.options.compactThreshold * r.budget),
        Math.floor(this.clearing.trigger / r.correction) - 1,
      );
    }
    let plan = previousPlan;
    // Plan, render, measure the whole view; if the rendered view is over the budget (a summary
    // longer than its estimate, say), plan again for a lower target.
    for (let attempt = 0; attempt < 4; attempt++) {
      const ctx = this.planContext(atoms, protection, measure, counter, r, target);
      plan = await this.draftPlan(
        ctx,
        atoms,
        previousPlan,
        previous,
        counter,
        r,
        summaries,
        reason === 'clearing',
      );
      this.plan = plan;
      this.planVersion++;
      const view = this.buildView(counter);
      plan.tokens = view.tokens + r.fixedTokens;
      if (plan.tokens <= r.budget || target === 0) break;
      target = Math.max(0, target - (plan.tokens - r.budget) - 1);
    }
    const final = plan!;
    const after = this.buildView(counter);
    if (!this.hasEphemeral && this.store) {
      const after = final.tokens / r.budget;
      await this.saveMeta({
        plan: encodePlan(final),
        guard: { level: levelOf(after) ?? null, usage: after },
      });
    }
    const receipt = this.receipt(atoms, previousPlan, previous, final, {
      reason,
      budget: r.budget,
      trigger: Math.floor(this.options.compactThreshold * r.budget),
      target: Math.floor(this.options.targetUsage * r.budget),
      tokensBefore,
      tokensAfter: final.tokens,
      messagesBefore,
      messagesAfter: after.messages.length,
      counter: counter.id,
      exact: counter.exact,
      durationMs: performance.now() - started,
    });
    this.noticeDue = receipt;
    this.emitter.emit('context:post_compact', {
      messageCount: after.messages.length,
      tokens: final.tokens,
      receipt,
    });
    return receipt;
  }

  /**
   * One planning pass: clear old results, cut a protected result too large to ever fit, summarize
   * the oldest atoms (or drop them, with the truncating strategy), drop what is still too much,
   * cut oversized texts, then take the facts of everything that left the view into the facts
   * block, making room for it if it grew.
   */
  private async draftPlan(
    ctx: PlanContext,
    atoms: readonly Atom[],
    previousPlan: CompactionPlan | null,
    previous: PlanEdits,
    counter: TokenCounter,
    r: Resolved,
    summaries: Map<string, string>,
    clearOnly = false,
  ): Promise<CompactionPlan> {
    const format = r.format;
    const oldFacts = previousPlan?.facts ?? [];
    const factsTokensBefore = oldFacts.length > 0 ? this.count(counter, this.factsMessageOf(oldFacts)) : 0;
    let draft = startDraft(ctx, previous);
    draft.total += factsTokensBefore;
    // The summary in the view now; selection adds a reserve only when there is none yet.
    const oldSummaryTokens = previousPlan?.summary
      ? this.count(counter, this.summaryMessageOf(previousPlan.summary, format))
      : 0;
    draft.total += oldSummaryTokens;
    draft = clearToolResults(clearOnly ? { ...ctx, clearing: { ...ctx.clearing, clearOnly } } : ctx, draft);
    if (clearOnly)
      return this.finishPlan(
        draft,
        previousPlan?.summary,
        previousPlan?.summarized,
        this.capFactsTo(
          await this.factCandidates(atoms, previous, draft, oldFacts, factsCap(r.budget)),
          factsCap(r.budget),
          counter,
        ).facts,
        atoms,
        counter,
        r,
      );
    draft = capProtectedOversized(ctx, draft);
    draft = dedupeRepeated(ctx, draft);
    let summary = previousPlan?.summary;
    const strategy = this.options.strategy;
    const reserve = summaryReserve(r.budget);
    const canSummarize = reserve >= MIN_SUMMARY_TOKENS;
    if (strategy === 'summarize' && canSummarize) {
      draft = selectForSummary(ctx, draft, reserve);
    } else if (strategy === 'layered' && canSummarize) {
      draft = selectByZones(ctx, draft, this.pendingLevel ?? 'healthy', this.layeredRecent, reserve);
    } else if (strategy === 'smart') {
      draft = dropByImportance(ctx, draft);
    } else if (typeof strategy === 'function') {
      draft = await this.applyCustom(strategy, ctx, draft, canSummarize ? reserve : 0);
    }
    const grew = [...draft.summarized].some((id) => !previous.summarized?.has(id));
    if (grew) {
      summary = await this.summarize(atoms, draft.summarized, previousPlan, reserve, counter, summaries);
      const actual = this.count(counter, this.summaryMessageOf(summary, format));
      draft.total += actual - (previousPlan?.summary ? oldSummaryTokens : reserve);
    }
    draft = dropOldest(ctx, draft);
    draft = truncateOversized(ctx, draft);
    let facts = oldFacts;
    if (this.factsSite() !== 'none') {
      // Facts never push conversation out: they take the room left under the target, plus a
      // quarter of the gap between target and trigger, and at most their cap.
      const withoutFacts = draft.total - factsTokensBefore;
      const gap = Math.floor(this.options.compactThreshold * r.budget) - ctx.target;
      // At the floor (what must stay is already past the target) the block may fill up to the
      // trigger: the next plan then waits for growth past this plan's size anyway.
      const trigger = Math.floor(this.options.compactThreshold * r.budget);
      const roomFor = (used: number) =>
        Math.min(
          factsCap(r.budget),
          used > ctx.target
            ? Math.max(Math.floor(gap / 4), trigger - used)
            : ctx.target - used + Math.floor(gap / 4),
        );
      let room = roomFor(withoutFacts);
      const candidates = await this.factCandidates(atoms, previous, draft, oldFacts, room);
      let capped = this.capFactsTo(candidates, room, counter);
      // A summary and the facts compete for a tight budget. The facts carry the ids, paths and
      // numbers an agent acts on, so where the summary squeezes them, the summary goes.
      const summaryTokens =
        summary && draft.summarized.size > 0
          ? this.count(counter, this.summaryMessageOf(summary, format))
          : 0;
      if (
        capped.omitted > 0 &&
        summaryTokens > 0 &&
        (roomFor(withoutFacts - summaryTokens) > room || withoutFacts > ctx.target)
      ) {
        draft.total -= summaryTokens;
        draft = { ...draft, summarized: new Set() };
        summary = undefined;
        room = roomFor(withoutFacts - summaryTokens);
        capped = this.capFactsTo(candidates, room, counter);
      }
      facts = capped.facts;
      this.factsOmitted = capped.omitted;
      const now = facts.length > 0 ? this.count(counter, this.factsMessageOf(facts)) : 0;
      draft.total += now - factsTokensBefore;
    }
    // Summary and facts are help, not obligations: where they would push the view over the
    // budget, the facts block shrinks first and then the summary goes, before anything protected.
    if (draft.total > ctx.budget && facts.length > 0) {
      const tokens = this.count(counter, this.factsMessageOf(facts));
      const capped = this.capFactsTo(facts, tokens - (draft.total - ctx.budget), counter);
      this.factsOmitted += capped.omitted;
      facts = capped.facts;
      draft.total += (facts.length > 0 ? this.count(counter, this.factsMessageOf(facts)) : 0) - tokens;
    }
    if (draft.total > ctx.budget && summary && draft.summarized.size > 0) {
      draft.total -= this.count(counter, this.summaryMessageOf(summary, format));
      draft = { ...draft, summarized: new Set() };
      summary = undefined;
    }
    return this.finishPlan(
      draft,
      summary,
      draft.summarized.size > 0 ? [...draft.summarized] : undefined,
      facts,
      atoms,
      counter,
      r,
    );
  }

  /** The plan a draft comes to, with its summary and facts block placed. */
  private finishPlan(
    draft: PlanDraft,
    summary: PlanSummary | undefined,
    summarized: readonly number[] | undefined,
    facts: ExtractedFact[],
    atoms: readonly Atom[],
    counter: TokenCounter,
    r: Resolved,
  ): CompactionPlan {
    const firstConversational = atoms.find((a) => a.kind !== 'system');
    const plan: CompactionPlan = {
      v: 1,
      dropped: [...draft.dropped].sort((a, b) => a - b),
      cleared: [...draft.cleared],
      truncated: [...draft.truncated],
      historyLength: this.entries.length,
      budget: r.budget,
      tokens: draft.total,
      counterId: counter.id,
    };
    if (summarized && summarized.length > 0 && summary) {
      plan.summarized = [...summarized].sort((a, b) => a - b);
      plan.summary = summary;
    }
    if (facts.length > 0 && firstConversational) {
      plan.facts = facts;
      plan.factsAt = firstConversational.id;
    }
    // The draft's sets are the plan's: the view is built from them without converting back.
    this.editsOfPlan.set(plan, {
      cleared: draft.cleared,
      truncated: draft.truncated,
      clearInputs: this.clearing.clearToolInputs === true,
      dropped: draft.dropped,
      summarized: plan.summarized ? draft.summarized : new Set(),
    });
    return plan;
  }

  /** Applies a custom strategy's decision, keeping to what it may touch. */
  private async applyCustom(
    strategy: CustomStrategy,
    ctx: PlanContext,
    draft: PlanDraft,
    reserve: number,
  ): Promise<PlanDraft> {
    const decision = await strategy({
      atoms: ctx.atoms.map((atom, i) => ({
        id: atom.id,
        seqs: atom.seqs,
        kind: atom.kind,
        tokens: draft.atomTokens[i]!,
        protection: ctx.protection[i]!,
        inView: !draft.dropped.has(atom.id),
        messages: atom.messages,
      })),
      budget: ctx.budget,
      target: ctx.target,
      total: draft.total,
      level: this.pendingLevel,
    });
    const next: PlanDraft = {
      ...draft,
      dropped: new Set(draft.dropped),
      summarized: new Set(draft.summarized),
      atomTokens: draft.atomTokens.slice(),
    };
    const index = new Map(ctx.atoms.map((a, i) => [a.id, i]));
    const refused: number[] = [];
    const take = (id: number, summarize: boolean) => {
      const i = index.get(id);
      if (i === undefined || next.dropped.has(id)) return;
      if (ctx.protection[i] !== 'none') {
        refused.push(id);
        return;
      }
      if (summarize && reserve > 0) {
        if (next.summarized.size === 0) next.total += reserve;
        next.summarized.add(id);
      }
      next.dropped.add(id);
      next.total -= next.atomTokens[i]!;
      next.atomTokens[i] = 0;
    };
    for (const id of decision.summarize ?? []) take(id, true);
    for (const id of decision.drop ?? []) take(id, false);
    if (refused.length > 0) {
      this.warn(
        'strategy_refused',
        `the custom strategy chose protected atoms ${refused.join(', ')}; they stay in the view`,
      );
    }
    return next;
  }

  /** The summary of every summarized atom: the previous summary carried forward plus the new ones. */
  private async summarize(
    atoms: readonly Atom[],
    summarized: ReadonlySet<number>,
    previousPlan: CompactionPlan | null,
    maxTokens: number,
    counter: TokenCounter,
    memo: Map<string, string>,
  ): Promise<PlanSummary> {
    const already = this.planEdits(previousPlan).summarized ?? new Set<number>();
    const fresh: Atom[] = [];
    let at: number | undefined;
    let fromSeq = Number.POSITIVE_INFINITY;
    let toSeq = Number.NEGATIVE_INFINITY;
    // The memo's key names the fresh atoms by their count and a hash of their ids.
    let hash = 0x811c9dc5;
    for (const atom of atoms) {
      if (!summarized.has(atom.id)) continue;
      at ??= atom.id;
      for (const seq of atom.seqs) {
        if (seq < fromSeq) fromSeq = seq;
        if (seq > toSeq) toSeq = seq;
      }
      if (already.has(atom.id)) continue;
      fresh.push(atom);
      hash = Math.imul(hash ^ atom.id, 0x01000193) >>> 0;
    }
    if (at === undefined) throw new Error('contextkit: a summary was asked for no atoms');
    if (fresh.length === 0 && previousPlan?.summary) return { ...previousPlan.summary, at };
    const key = `${previousPlan?.summary?.text.length ?? 0}|${fresh.length}:${hash}|${maxTokens}`;
    let text = memo.get(key);
    if (text === undefined) {
      let entries: HistoryEntry[] = [];
      for (const atom of fresh) for (const seq of atom.seqs) entries.push(this.entries[seq]!);
      entries.sort((x, y) => x.seq - y.seq);
      // A summary of a few thousand tokens cannot use a long history's every sentence: it reads
      // the user's opening requests, the newest stretch of everything, and as many of the user's
      // other requests, newest first, as make up `SUMMARY_INPUT_ENTRIES`.
      if (entries.length > SUMMARY_INPUT_ENTRIES) {
        const tail = entries.slice(-SUMMARY_INPUT_ENTRIES / 2);
        const from = tail[0]!.seq;
        const requests = entries.filter(
          (e) => e.seq < from && e.message.role === 'user' && isStated(e.message),
        );
        const room = SUMMARY_INPUT_ENTRIES - tail.length;
        entries = [
          ...(requests.length > room
            ? [
                ...requests.slice(0, OPENING_REQUESTS),
                ...requests.slice(requests.length - (room - OPENING_REQUESTS)),
              ]
            : requests),
          ...tail,
        ];
      }
      text = await this.tools.summarize(entries, {
        maxTokens: Math.max(1, maxTokens - SUMMARY_FRAME_TOKENS),
        previousSummary: previousPlan?.summary?.text,
        countText: (t) => counter.countText(t),
      });
      memo.set(key, text);
    }
    return { text, at, fromSeq, toSeq, tools: this.tools.kind };
  }

  /**
   * The facts of what this plan takes out of the view (cleared results, dropped, summarized and
   * cut messages), merged with the facts kept so far. The opening requests are always read; then
   * what the user said, what the agent said and passed to tools, and tool results (up to
   * `FACT_RESULT_CHARS` of them), each newest first, until the candidates would fill the block
   * about three times over, so a plan over a long history does not read all of it.
   */
  private async factCandidates(
    atoms: readonly Atom[],
    previous: PlanEdits,
    draft: PlanDraft,
    oldFacts: readonly ExtractedFact[],
    room: number,
  ): Promise<ExtractedFact[]> {
    const leaving = leavingSeqs(atoms, previous, draft);
    if (leaving.length === 0) return [...oldFacts];
    const said: HistoryEntry[] = [];
    const agent: HistoryEntry[] = [];
    const results: HistoryEntry[] = [];
    for (const seq of leaving) {
      const entry = this.entries[seq]!;
      if (!isStated(entry.message)) results.push(entry);
      else if (entry.message.role === 'user') said.push(entry);
      else agent.push(entry);
    }
    // The offline extractor decides how far to read (it keeps what it found between chunks, so
    // each entry is read once); tools of another kind then extract from what it read, in one call.
    const extractor = new OfflineFactExtractor({ previousFacts: oldFacts });
    let estimated = 0;
    let counted = 0;
    const enough = (): boolean => {
      const found = extractor.found;
      for (; counted < found.length; counted++) estimated += factLineEstimate(found[counted]!);
      return found.length >= MIN_FACT_CANDIDATES && estimated >= FACT_CANDIDATES_OVER_ROOM * room;
    };
    // The first requests of a conversation usually state the task and its ids: always read.
    const read = said.slice(0, OPENING_REQUESTS);
    extractor.add(read);
    // Tool results can be long logs and listings: past a reading budget the older ones are skipped.
    let resultChars = 0;
    for (const group of [said.slice(OPENING_REQUESTS), agent, results]) {
      for (let end = group.length; end > 0 && !enough(); end -= 64) {
        if (group === results && resultChars >= FACT_RESULT_CHARS) break;
        const chunk = group.slice(Math.max(0, end - 64), end);
        if (group === results) for (const e of chunk) resultChars += messageText(e.message).length;
        extractor.add(chunk);
        read.push(...chunk);
      }
    }
    const facts = this.offlineTools
      ? extractor.facts()
      : await this.tools.extractFacts(
          read.sort((a, b) => a.seq - b.seq),
          { previousFacts: oldFacts },
        );
    return facts;
  }

  /**
   * `capFacts` with this manager's ranking and counter: facts the user stated or the agent passed
   * to a tool (their source is a user or assistant message, not a tool result) go first, whichever
   * plan found them, so the block does not trade old facts for new ones of the same rank.
   */
  private capFactsTo(facts: readonly ExtractedFact[], room: number, counter: TokenCounter) {
    const stated = (fact: ExtractedFact) => {
      const entry = this.entries[fact.seq];
      return entry !== undefined && isStated(entry.message);
    };
    return capFacts(
      facts,
      room,
      (f) => (f.length > 0 ? this.count(counter, this.factsMessageOf(f)) : 0),
      (t) => counter.countText(t),
      stated,
    );
  }

  private planContext(
    atoms: readonly Atom[],
    protection: readonly Protection[],
    measure: PlanContext['measure'],
    counter: TokenCounter,
    r: Resolved,
    target: number,
  ): PlanContext {
    return {
      atoms,
      protection,
      measure,
      countText: (t) => counter.countText(t),
      messageTokens: (m) => this.count(counter, m),
      // Room for the start notice an Anthropic view may need once older messages are gone.
      fixedTokens: r.fixedTokens + (r.format === 'anthropic' ? NOTICE_RESERVE : 0),
      budget: r.budget,
      target,
      keepToolResults: this.clearing.keep ?? this.options.keepToolResults,
      clearing: this.clearing,
    };
  }

  /**
   * The facts block of one list of facts: the same message object every time, so the block is
   * tokenized once (while planning) and its count found again when the view is built.
   */
  private factsMessageOf(facts: readonly ExtractedFact[]): Message {
    let message = this.blockMessages.get(facts);
    if (message === undefined) {
      message = factsMessage(facts, this.factsSite());
      this.blockMessages.set(facts, message);
    }
    return message;
  }

  /** The summary as a message, one object per summary (see `factsMessageOf`). */
  private summaryMessageOf(summary: PlanSummary, format: MessageFormat): Message {
    let message = this.blockMessages.get(summary);
    if (message === undefined || (format === 'anthropic') !== (message.role === 'user')) {
      message = summaryMessage(summary, format);
      this.blockMessages.set(summary, message);
    }
    return message;
  }

  /** Counts messages that exist only during planning, without filling the memo with them. */
  private countFresh(
    counter: TokenCounter,
    messages: readonly Message[],
    format: MessageFormat = this.format ?? 'openai',
  ): number {
    const memo = this.memo.get(counter.id);
    let sum = 0;
    for (const m of messages) sum += memo?.get(m) ?? counter.countMessage(m, format);
    return sum;
  }

  private receipt(
    atoms: readonly Atom[],
    previousPlan: CompactionPlan | null,
    previous: PlanEdits,
    plan: CompactionPlan,
    base: Omit<
      CompactionReceipt,
      'dropped' | 'summarized' | 'summary' | 'facts' | 'cleared' | 'truncated' | 'repairs' | 'atFloor'
    >,
  ): CompactionReceipt {
    const dropped: number[] = [];
    const summarized: number[] = [];
    const cleared: CompactionReceipt['cleared'] = [];
    const truncated: CompactionReceipt['truncated'] = [];
    const now = this.planEdits(plan);
    const slots = new Map<string, { seq: number; tool: string }>();
    for (const atom of atoms) {
      if (now.dropped.has(atom.id) && !previous.dropped.has(atom.id)) {
        (now.summarized?.has(atom.id) ? summarized : dropped).push(...atom.seqs);
      }
      for (const slot of atom.results) {
        if (slot.resultSeq !== null && now.cleared.has(slot.key) && !previous.cleared.has(slot.key)) {
          slots.set(slot.key, { seq: slot.resultSeq, tool: slot.toolName });
        }
      }
    }
    for (const [key, tokens] of plan.cleared) {
      if (previous.cleared.has(key)) continue;
      const slot = slots.get(key);
      cleared.push({
        seq: slot?.seq ?? -1,
        callSeq: Number(key.split(':')[0]),
        tool: slot?.tool ?? 'tool',
        tokens,
      });
    }
    const fresh = plan.truncated.filter(([key]) => !previous.truncated.has(key));
    const byId = fresh.length > 0 ? new Map(atoms.map((a) => [a.id, a])) : undefined;
    for (const [key, keep] of fresh) {
      const [idPart, rest] = key.split('@') as [string, string];
      const atom = byId?.get(Number(idPart));
      const [mi] = rest.split('.').map(Number) as [number];
      const message = atom?.messages[mi];
      const length = message ? partLength(message, rest) : 0;
      truncated.push({
        seq: atom?.seqs[mi] ?? Number(idPart),
        removedChars: Math.max(0, length - keep.head - keep.tail),
      });
    }
    dropped.sort((a, b) => a - b);
    summarized.sort((a, b) => a - b);
    const oldFacts = new Set((previousPlan?.facts ?? []).map((f) => `${f.category}\u0000${f.value}`));
    const facts = plan.facts ?? [];
    return {
      ...base,
      dropped,
      summarized,
      ...(plan.summary && summarized.length > 0
        ? {
            summary: {
              fromSeq: plan.summary.fromSeq,
              toSeq: plan.summary.toSeq,
              tools: plan.summary.tools,
              chars: plan.summary.text.length,
            },
          }
        : {}),
      facts: {
        kept: facts.length,
        added: facts.filter((f) => !oldFacts.has(`${f.category}\u0000${f.value}`)).length,
        omitted: this.factsOmitted,
        values: facts.map((f) => f.value),
      },
      cleared,
      truncated,
      repairs: this.atoms?.repairs() ?? [],
      // Above the target by more than the facts block's slack: what must be kept does not fit in it.
      atFloor: plan.tokens > base.target + Math.floor((base.trigger - base.target) / 4),
    };
  }

  private async saveMeta(patch: Record<string, unknown>): Promise<void> {
    if (!this.store) return;
    try {
      const current = await this.store.getMeta(this.conversationId);
      await this.store.setMeta(
        this.conversationId,
        { ...(current.value ?? {}), ...patch },
        {
          expectedVersion: current.version,
        },
      );
    } catch (err) {
      // The plan is a cache of a decision any process can remake: losing a race costs nothing.
      if (!(err instanceof ConflictError)) throw err;
    }
  }

  private llmTools(llm: ContextManagerOptions['llm']): ContextTools | undefined {
    if (!llm) return undefined;
    const { provider, ...rest } = llm;
    const onWarn = (w: LLMWarning) => this.warn(w.code, w.message);
    return provider === 'anthropic'
      ? createAnthropicTools({ ...rest, onWarn })
      : createOpenAITools({ ...rest, onWarn });
  }

  private factsSite(): FactsSite {
    return this.options.facts;
  }

  // ------------------------------------------------------------------------------------ reports

  /** Figures of the last request (or of the whole history against the configured budget). */
  usage(): Usage {
    if (this.lastUsage) return { ...this.lastUsage };
    const counter = this.defaultCounter();
    const info = this.options.model ? this.catalog.get(this.options.model) : undefined;
    const budget = info
      ? info.contextWindow - info.maxOutputTokens - this.options.safetyMargin
      : this.options.maxTokens;
    const tokens = this.countAll(
      counter,
      this.entries.map((e) => e.message as Message),
    );
    return {
      budget,
      tokens,
      pct: tokens / budget,
      trigger: Math.floor(this.options.compactThreshold * budget),
      target: Math.floor(this.options.targetUsage * budget),
      messages: this.entries.length,
    };
  }

  /** The current compaction plan, if any (for reports and tests). */
  currentPlan(): CompactionPlan | null {
    return this.plan ? structuredClone(this.plan) : null;
  }

  /** The conversation's format once a message has shown it. */
  get messageFormat(): MessageFormat | undefined {
    return this.format;
  }

  /** Waits for pending operations, then closes the store. */
  async close(): Promise<void> {
    await this.enqueue(() => undefined);
    await this.store?.close();
  }

  private warn(code: string, message: string): void {
    this.emitter.emit('context:warn', { code, message });
  }

  private warnOnce(key: string, code: string, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.warn(code, message);
  }
}

/** The note that tells the model what the last compaction took out of its view. */
function compactionNote(receipt: CompactionReceipt, format: MessageFormat): Message {
  const parts: string[] = [];
  if (receipt.summarized.length > 0)
    parts.push(`${receipt.summarized.length} older messages were summarized`);
  if (receipt.dropped.length > 0) parts.push(`${receipt.dropped.length} older messages were left out`);
  if (receipt.cleared.length > 0) parts.push(`${receipt.cleared.length} old tool results were cleared`);
  if (receipt.truncated.length > 0) parts.push(`${receipt.truncated.length} long texts were shortened`);
  const what = parts.length > 0 ? parts.join(', ') : 'the conversation was compacted';
  const facts = receipt.facts.kept > 0 ? ' Key facts from them are listed near the top.' : '';
  const content = `[contextkit: to fit the context window, ${what}.${facts} The full history is kept; ask if you need something that is no longer shown.]`;
  return freezeDeep(format === 'anthropic' ? { role: 'user', content } : { role: 'system', content });
}

/**
 * The seqs this plan takes out of the view, ascending: every message of an atom newly left out
 * or newly cut, and each newly cleared result.
 */
function leavingSeqs(atoms: readonly Atom[], previous: PlanEdits, draft: PlanDraft): number[] {
  const cut = new Set<number>();
  for (const key of draft.truncated.keys()) {
    if (!previous.truncated.has(key)) cut.add(Number(key.split('@')[0]));
  }
  const seqs: number[] = [];
  let sorted = true;
  const push = (seq: number) => {
    if (seqs.length > 0 && seq <= seqs[seqs.length - 1]!) sorted = false;
    seqs.push(seq);
  };
  for (const atom of atoms) {
    if ((draft.dropped.has(atom.id) && !previous.dropped.has(atom.id)) || cut.has(atom.id)) {
      for (const seq of atom.seqs) push(seq);
      continue;
    }
    for (const slot of atom.results) {
      if (slot.resultSeq !== null && draft.cleared.has(slot.key) && !previous.cleared.has(slot.key)) {
        push(slot.resultSeq);
      }
    }
  }
  // Repaired atoms may hold their messages out of stored order (a hook message moved after results).
  return sorted ? seqs : [...new Set(seqs)].sort((a, b) => a - b);
}

/**
 * About what one fact adds to the facts block, in tokens, without counting it: ids, dates, paths
 * and numbers run nearer three characters a token than prose's four, plus the line's framing.
 */
function factLineEstimate(fact: ExtractedFact): number {
  return Math.ceil((fact.key.length + fact.value.length) / 3) + 3;
}

/** A message whose words are the user's or the agent's own: user text, assistant text and tool calls. */
function isStated(message: Message): boolean {
  if (message.role === 'assistant') return true;
  if (message.role !== 'user') return false;
  if (typeof message.content === 'string') return true;
  return (message.content as Array<{ type: string }>).some((b) => b.type !== 'tool_result');
}

function rank(level: Level | undefined): number {
  return level === undefined ? -1 : ['healthy', 'pressure', 'urgent', 'critical'].indexOf(level);
}

function partLength(message: Message, rest: string): number {
  const [, bi, ii] = rest.split('.').map(Number) as [number, number, number];
  const content = message.content as unknown;
  if (bi < 0) return typeof content === 'string' ? content.length : 0;
  const block = (content as Array<Record<string, unknown>>)[bi];
  if (!block) return 0;
  if (ii < 0) {
    const text = block.type === 'tool_result' ? block.content : block.text;
    return typeof text === 'string' ? text.length : 0;
  }
  const inner = (block.content as Array<{ text?: string }>)[ii];
  return inner?.text?.length ?? 0;
}
