/**
 * The seed's ContextMeasurer: how many tokens a request costs and against what budget. Counts with
 * the model's tokenizer, memoized per message object so a turn costs its new messages only;
 * resolves the budget (request > provider info > model > `maxTokens`); learns a per-model
 * correction from what providers bill; asks a provider's count endpoint near the limit.
 */

import { ConfigurationError } from '../errors.js';
import { ContextEmitter } from '../events.js';
import { PLAIN_FORMAT, WIRE_FORMATS } from '../formats/registry.js';
import type { HistoryEntry, Message, MessageFormat, ToolDefinition } from '../messages/types.js';
import { carriedInputTokens, MAX_USAGE_TOKENS } from '../meter/usage.js';
import { readUsage, removedUsageMethod, type UsageInput, usageSource } from '../meter/usage-reader.js';
import { DEFAULTS, type ProviderInfo, type RequestOptions, requestedFormat } from '../options.js';
import { Slices } from '../slices.js';
import type { ModelInfoInput } from '../tokens/catalog.js';
import { createModelCatalog, didYouMeanModel, familyCounter, type ModelCatalog } from '../tokens/catalog.js';
import { CompactionNotes } from '../tokens/compaction-tokens.js';
import { createTokenCounter } from '../tokens/counter.js';
import { counterLabel, defaultModel } from '../tokens/model-counter.js';
import type { TokenCounter } from '../tokens/types.js';
import { messageText } from '../wire/content.js';
import { detectConversationFormat } from '../wire/detect.js';
import type { Calibration } from './calibration.js';
import { createCalibration } from './calibration.js';
import type { CountClient } from './count-endpoints.js';

/** `countAhead` counts up to this many new messages at once (a steady turn adds one or two). */
const COUNT_AT_ONCE = 64;
/**
 * A cold start counts the newest messages exactly until they hold this many budgets of tokens;
 * the older ones are bounded instead (see `countAhead`) when there are at least
 * {@link BOUND_AT_LEAST} of them.
 */
export const EXACT_TAIL_BUDGETS = 2;
/** Fewer older messages than this are counted exactly at once: bounding them would save little. */
export const BOUND_AT_LEAST = 5_000;

/**
 * A count kept in the store is taken when it lies between its message's upper bound
 * (`TokenCounter.boundMessage`: text as its UTF-8 bytes, never under the count) and that bound
 * over this ratio: no text the tokenizers read averages more than 8 bytes a token (English runs
 * about 4, code and JSON 3, other scripts fewer). A count outside is counted again (issue 31).
 */
export const STORED_COUNT_RATIO = 8;
/**
 * A view whose stored counts add up to less than their messages' bounds over this ratio is
 * counted again before it is sent: a whole view of honest text averages 3–5 bytes a token, so one
 * that claims more than 6 holds counts set too low within what each message alone allows.
 */
export const VIEW_COUNT_RATIO = 6;

/** A run of letters, up to three digits, or one other visible character: a piece of text. */
const TEXT_PIECE = /[\p{L}\p{M}]+|\p{N}{1,3}|[^\s\p{L}\p{M}\p{N}]/gu;

/**
 * Pieces of `text` (see `TEXT_PIECE`): about as many as the tokens of a listing of common words (a
 * tokenizer reads each such word, with its space, as one token), more than them in code and JSON
 * (where punctuation runs are single tokens). A view whose stored counts claim past
 * `VIEW_COUNT_RATIO` bytes a token is counted again only where the counts are under its pieces too.
 */
function textPieces(text: string): number {
  let n = 0;
  TEXT_PIECE.lastIndex = 0;
  while (TEXT_PIECE.exec(text) !== null) n++;
  return n;
}

/** What a cold start may leave bounded (see `ContextMeasurer.countAhead`). */
export interface BoundOlder {
  /** The request's budget: the newest messages are counted exactly up to `EXACT_TAIL_BUDGETS` of it. */
  budget: number;
  /** Whether the entry at this index must be counted exactly wherever it is (it stays in every view). */
  exact: (index: number) => boolean;
}

/** Options of {@link ContextMeasurer}. */
export interface ContextMeasurerOptions {
  /** The model counted for when a request names none: its tokenizer and, via the catalog, budget. */
  model?: string;
  /** A counter to use for every model instead of the catalog's. */
  counter?: TokenCounter;
  /** Models to add to or override in the catalog. */
  models?: Record<string, ModelInfoInput>;
  /** Learns a per-model correction from reported usage (default: in memory); `false`: never. */
  calibration?: Calibration | false;
  /** A provider's count endpoint, asked when an estimated request reaches `exactCountAt`. */
  countClient?: CountClient;
  /** Share of the budget at which an estimate is checked with `countClient` (default 0.9). */
  exactCountAt?: number;
  /**
   * Budget when neither the request nor the model gives one (default 200,000); when given, also
   * a cap on the budget the model's catalog entry gives.
   */
  maxTokens?: number;
  /** Tokens kept free below the window besides the model's max output (default 1,000). */
  safetyMargin?: number;
  /** Where `context:budget`, `context:measure` and `context:warn` go (default: its own). */
  events?: ContextEmitter;
}

/**
 * The format a conversation of plain text (it fits every format) is made valid for: the one that
 * reads plain text for the model's provider, or with no model the strictest (`readsPlain`).
 */
function plainFormatFor(provider: string | undefined): MessageFormat {
  const reader = WIRE_FORMATS.find(
    (f) => f.readsPlain && (provider === undefined || f.provider === provider),
  );
  return (reader?.name as MessageFormat | undefined) ?? PLAIN_FORMAT;
}

/**
 * The input budget a window leaves: the window less the output reserved and the safety margin.
 * Where a model's max output is its whole window (`gpt-4`: 8,192 and 8,192), input and output
 * share the window, as OpenAI documents ("the total length of input tokens and generated tokens
 * is limited by the model's context length", https://platform.openai.com/docs/api-reference/chat/create):
 * reserving all of it would leave no input at all, so a quarter of the window is kept for the
 * answer instead.
 */
export function windowBudget(contextWindow: number, maxOutputTokens: number, safetyMargin: number): number {
  const output = maxOutputTokens >= contextWindow ? Math.floor(contextWindow / 4) : maxOutputTokens;
  return contextWindow - output - safetyMargin;
}

/** A request with its budget and counter resolved: what every later step works with. */
export interface ResolvedRequest {
  /** The budget planning works with: the declared one divided by the learned correction. */
  budget: number;
  /** The budget as given or derived, in billed tokens. */
  declared: number;
  /** What the calibration learns under: the catalog id, or the counter's id. */
  modelKey: string;
  correction: number;
  /** Where the budget came from: `tokenBudget`, `provider`, `model:ID` or `maxTokens`. */
  source: string;
  counter: TokenCounter;
  /** The wire format the view is sent in. */
  format: MessageFormat;
  /** Tokens outside the messages: tool definitions and request framing. */
  fixedTokens: number;
  toolsTokens: number;
}

/** What {@link ContextMeasurer.measure} is asked about: messages and the request they go in. */
export interface MeasureRequest extends RequestOptions {
  messages: readonly Message[];
}

/** A measured request, in billed tokens (the learned correction applied). */
export interface Measurement {
  tokens: number;
  budget: number;
  pct: number;
  /** True when the count is exact (an offline exact tokenizer, or the provider's endpoint). */
  exact: boolean;
  /** Where the tokens go. */
  breakdown: { system: number; messages: number; tools: number; overhead: number };
}

/** What was last sent, for `recordUsage` and overflow recovery. */
export interface SentRequest {
  request: RequestOptions;
  tokens: number;
  budget: number;
  model: string;
  recovered: boolean;
}

/** Counts requests and resolves their budgets (request, model window, then `maxTokens`). */
export class ContextMeasurer {
  readonly events: ContextEmitter;
  readonly calibration: Calibration | null;
  readonly catalog: ModelCatalog;
  private readonly model: string | undefined;
  private readonly fixedCounter: TokenCounter | undefined;
  private readonly countClient: CountClient | undefined;
  private readonly exactCountAt: number;
  private readonly maxTokens: number;
  /** `maxTokens` as the user gave it: caps the model's budget. */
  private readonly maxTokensCap: number | undefined;
  private readonly safetyMargin: number;
  private readonly counters = new Map<string, TokenCounter>();
  /** What the provider reported the compaction items of this conversation cost (see `noteCompaction`). */
  private readonly compactionNotes = new CompactionNotes();
  private readonly memo = new Map<string, WeakMap<object, number>>();
  /**
   * Upper bounds of stored messages a cold start has not counted yet, per counter (see
   * `countAhead`): `count` answers with them until `countBounded` has counted those messages.
   */
  private readonly bounds = new Map<string, { bounds: Map<object, number>; messages: Message[] }>();
  private boundedCounting: Promise<void> | undefined;
  private stopBoundedCounting = false;
  /** Tool definitions are usually the same array every request: counted once per counter. */
  private readonly toolsMemo = new WeakMap<object, Map<string, number>>();
  private readonly calibrated = new Set<string>();
  private readonly warned = new Set<string>();
  /** Stored counts found wrong and counted again (see `checkedStoredCount`). */
  storedMismatches = 0;
  /**
   * Messages whose memoized count is one the store kept, taken after the per-message check, with
   * the bound it was checked against (and the counter and format of that bound).
   */
  private readonly storedTaken = new WeakMap<
    object,
    { counter: TokenCounter; format: MessageFormat; bound: number | undefined; notes: number }
  >();
  /** Compaction items' costs noted so far (a bound of such an item may change with one). */
  private notesNoted = 0;
  /** Counts taken from the store since `recheckStoredCounts` last looked. */
  private storedTakenSince = 0;
  private lastBudget: { budget: number; source: string } | null = null;
  /** The last request sent, for `recordUsage` and `recoverFromOverflow`. */
  last: SentRequest | null = null;

  constructor(options: ContextMeasurerOptions = {}) {
    this.events = options.events ?? new ContextEmitter();
    this.model = options.model;
    this.fixedCounter = options.counter;
    this.catalog = createModelCatalog(options.models);
    this.countClient = options.countClient;
    this.exactCountAt = options.exactCountAt ?? DEFAULTS.exactCountAt;
    this.maxTokens = options.maxTokens ?? DEFAULTS.maxTokens;
    this.maxTokensCap = options.maxTokens;
    this.safetyMargin = options.safetyMargin ?? DEFAULTS.safetyMargin;
    this.calibration = options.calibration === false ? null : (options.calibration ?? createCalibration());
  }

  // ---------------------------------------------------------------------------------- counting

  /** The counter for `model` (the catalog's), or the format's default one when it names none. */
  counterFor(model: string | undefined, format: MessageFormat | undefined): TokenCounter {
    if (this.fixedCounter) return this.fixedCounter;
    const key = model ?? `default:${format ?? 'openai'}`;
    let counter = this.counters.get(key);
    if (!counter) {
      const info = model ? this.catalog.get(model) : undefined;
      const family = model && !info ? familyCounter(model) : undefined;
      counter = createTokenCounter(info ?? family ?? this.catalog.get(defaultModel(format))!, {
        compactionTokens: (ciphertext) => this.compactionNotes.get(ciphertext),
      });
      this.counters.set(key, counter);
    }
    return counter;
  }

  /** The configured model's counter. */
  defaultCounter(format: MessageFormat | undefined): TokenCounter {
    return this.counterFor(this.model, format);
  }

  /**
   * Notes what a compaction item (by its `encrypted_content`) costs when sent back, from the
   * provider's figure `field` said: this manager's counters count it so from now on. A figure no
   * item can cost (not a positive number, or more than the model's whole context window, or
   * {@link MAX_USAGE_TOKENS} when the window is unknown) is not noted: the item keeps being
   * counted by its size, and a `usage_ignored` warning names the field.
   */
  noteCompaction(encryptedContent: string, tokens: number, field: string): void {
    const window = this.model ? this.catalog.get(this.model)?.contextWindow : undefined;
    const most = window ?? MAX_USAGE_TOKENS;
    if (!Number.isFinite(tokens) || tokens <= 0 || tokens > most) {
      this.warn(
        'usage_ignored',
        `${field}: ${tokens} tokens is not what a compaction item can cost (1 to ${most}${window ? `, the context window of ${this.model}` : ''}); the item is counted by its size`,
      );
      return;
    }
    this.compactionNotes.note(encryptedContent, tokens);
    this.notesNoted++;
  }

  /** The memo of a counter's message counts (what `count` reads first). */
  memoFor(counter: TokenCounter): WeakMap<object, number> {
    let memo = this.memo.get(counter.id);
    if (!memo) {
      memo = new WeakMap();
      this.memo.set(counter.id, memo);
    }
    return memo;
  }

  /**
   * Tokens of one message, memoized per message object and counter; for a message a cold start
   * left bounded (see `countAhead`), its upper bound until it is counted.
   */
  count(counter: TokenCounter, message: Message, format: MessageFormat): number {
    return (
      this.memoFor(counter).get(message) ??
      this.bounds.get(counter.id)?.bounds.get(message) ??
      this.countExact(counter, message, format)
    );
  }

  /**
   * The count to take for `message` where the store kept `stored` under `counter`: `stored` when
   * what is cheap to check agrees with it (at most the message's upper bound, at least that bound
   * over {@link STORED_COUNT_RATIO}), else the message counted again, with a
   * `stored_count_mismatch` warning (once per manager) where the two differ. A stored count is a
   * cache written by another process or by hand: one set too low would let a view past its budget.
   */
  checkedStoredCount(counter: TokenCounter, message: Message, format: MessageFormat, stored: number): number {
    const bound = counter.boundMessage?.(message, format);
    if (bound === undefined || (stored <= bound && stored * STORED_COUNT_RATIO >= bound)) {
      this.storedTaken.set(message, { counter, format, bound, notes: this.notesNoted });
      this.storedTakenSince++;
      return stored;
    }
    const exact = counter.countMessage(message, format);
    if (exact !== stored) this.storedMismatch(stored, exact, bound);
    return exact;
  }

  /**
   * The counts taken from the store for the newest messages (those a view can hold: up to
   * {@link EXACT_TAIL_BUDGETS} budgets of them), checked together (issue 31): where they add up
   * to less than their bounds over {@link VIEW_COUNT_RATIO}, each is counted again, in slices, and
   * the memo corrected, before the view is planned. Only after new counts were taken from the store.
   */
  async recheckStoredCounts(
    counter: TokenCounter,
    entries: ReadonlyArray<Pick<HistoryEntry, 'message'>>,
    format: MessageFormat,
    budget: number,
  ): Promise<void> {
    if (this.storedTakenSince === 0 || counter.boundMessage === undefined) return;
    this.storedTakenSince = 0;
    const memo = this.memoFor(counter);
    const slices = new Slices();
    const taken: Message[] = [];
    let counted = 0;
    let bound = 0;
    let walked = 0;
    for (let i = entries.length - 1; i >= 0 && walked <= EXACT_TAIL_BUDGETS * budget; i--) {
      const message = entries[i]!.message as Message;
      const n = memo.get(message) ?? this.bounds.get(counter.id)?.bounds.get(message) ?? 0;
      walked += n;
      const takenAs = this.storedTaken.get(message);
      if (!takenAs || !memo.has(message)) continue;
      taken.push(message);
      counted += n;
      // The bound its count was checked against, when it is still this one (no note since).
      bound +=
        takenAs.counter === counter &&
        takenAs.format === format &&
        takenAs.notes === this.notesNoted &&
        takenAs.bound !== undefined
          ? takenAs.bound
          : counter.boundMessage(message, format);
      const pause = slices.step();
      if (pause) await pause;
    }
    if (counted * VIEW_COUNT_RATIO >= bound) return;
    // Honest text of long common words can pass 6 bytes a token: the counts are taken where they
    // are not under the text's pieces either (each at least one token; see `textPieces`).
    let pieces = 0;
    for (const message of taken) pieces += textPieces(messageText(message));
    if (counted >= pieces) return;
    for (const message of taken) {
      this.storedTaken.delete(message);
      const stored = memo.get(message)!;
      const exact = counter.countMessage(message, format);
      if (exact !== stored) {
        memo.set(message, exact);
        this.storedMismatch(stored, exact, counter.boundMessage(message, format));
      }
      const pause = slices.step();
      if (pause) await pause;
    }
  }

  private storedMismatch(stored: number, exact: number, bound: number): void {
    this.storedMismatches++;
    this.warnOnce(
      'stored_count_mismatch',
      'stored_count_mismatch',
      `a token count kept in the store (${stored}) does not fit its message (${exact} tokens, at most ${bound}); counts the store holds that disagree with what the message can hold are counted again and the right ones kept in their place`,
    );
  }

  /** Tokens of one message, memoized, never a bound (what is stored with a message). */
  countExact(counter: TokenCounter, message: Message, format: MessageFormat): number {
    const memo = this.memoFor(counter);
    let n = memo.get(message);
    if (n === undefined) {
      n = counter.countMessage(message, format);
      memo.set(message, n);
    }
    return n;
  }

  /** Whether some messages' counts under `counter` are still bounds (see `countAhead`). */
  hasBounds(counter: TokenCounter): boolean {
    return (this.bounds.get(counter.id)?.messages.length ?? 0) > 0;
  }

  /**
   * Counts into the memo the messages of `entries` from `from` on that it does not hold yet, the
   * counts `count` would make in place, and resolves with how far it went (`entries.length`).
   * A long stretch (a cold start, an import, a changed model) is counted in slices of about
   * `SLICE_MS` (src/slices.ts), yielding to the event loop between them, so counting a large history
   * never holds the process (a server's other conversations, its timers) for long. A few
   * messages (a steady turn) are counted at once, without an await. `stored`, when given, is
   * asked first for a count kept with a message (by this counter and format), which is taken
   * instead of counting.
   *
   * With `older` (a counter that can bound, and more than {@link BOUND_AT_LEAST} messages to
   * count), the newest messages are counted first, exactly, until they hold
   * {@link EXACT_TAIL_BUDGETS} budgets of tokens: no view holds more of the history verbatim than
   * one budget, so the older ones only leave it (summarized, dropped). Of those, what must stay in
   * every view (`older.exact`: system and pinned messages, the task, the latest request) is counted exactly, and the
   * rest gets an upper bound (`TokenCounter.boundMessage`, linear, no tokenizer), which `count`
   * answers until `countBounded` (after the request, in the background) counts them exactly. A
   * view is then never over its budget, and what it sends is counted exactly; what a plan
   * reports of the messages it took out (`tokensBefore`) is an upper bound (receipt `exact:
   * false`), and it may summarize or clear a little more of the older messages than exact counts
   * would have made it.
   */
  countAhead(
    counter: TokenCounter,
    entries: ReadonlyArray<Pick<HistoryEntry, 'message'>>,
    from: number,
    format: MessageFormat,
    stored?: (message: Message) => number | undefined,
    older?: BoundOlder,
  ): number | Promise<number> {
    const memo = this.memoFor(counter);
    if (older !== undefined && counter.boundMessage !== undefined && entries.length - from > BOUND_AT_LEAST) {
      return this.countNewestFirst(counter, entries, from, format, stored, older);
    }
    if (entries.length - from <= COUNT_AT_ONCE) {
      for (let i = from; i < entries.length; i++) {
        const message = entries[i]!.message as Message;
        if (!memo.has(message)) memo.set(message, stored?.(message) ?? counter.countMessage(message, format));
      }
      return entries.length;
    }
    return (async () => {
      const slices = new Slices();
      for (let i = from; i < entries.length; i++) {
        const message = entries[i]!.message as Message;
        if (!memo.has(message)) memo.set(message, stored?.(message) ?? counter.countMessage(message, format));
        // The clock is read after every message: one long message may take milliseconds.
        const pause = slices.step();
        if (pause) await pause;
      }
      return entries.length;
    })();
  }

  private async countNewestFirst(
    counter: TokenCounter,
    entries: ReadonlyArray<Pick<HistoryEntry, 'message'>>,
    from: number,
    format: MessageFormat,
    stored: ((message: Message) => number | undefined) | undefined,
    older: BoundOlder,
  ): Promise<number> {
    const memo = this.memoFor(counter);
    const slices = new Slices();
    const exactly = (message: Message) => {
      let n = memo.get(message);
      if (n === undefined) {
        n = stored?.(message) ?? counter.countMessage(message, format);
        memo.set(message, n);
      }
      return n;
    };
    const tail = EXACT_TAIL_BUDGETS * older.budget;
    let sum = 0;
    let i = entries.length - 1;
    for (; i >= from && sum <= tail; i--) {
      sum += exactly(entries[i]!.message as Message);
      const pause = slices.step();
      if (pause) await pause;
    }
    const end = i + 1;
    const few = end - from < BOUND_AT_LEAST;
    let bounded = this.bounds.get(counter.id);
    for (let k = from; k < end; k++) {
      const message = entries[k]!.message as Message;
      if (memo.has(message)) continue;
      const kept = stored?.(message);
      if (kept !== undefined || few || older.exact(k))
        memo.set(message, kept ?? counter.countMessage(message, format));
      else {
        if (!bounded) {
          bounded = { bounds: new Map(), messages: [] };
          this.bounds.set(counter.id, bounded);
        }
        if (!bounded.bounds.has(message)) {
          bounded.bounds.set(message, counter.boundMessage!(message, format));
          bounded.messages.push(message);
        }
      }
      const pause = slices.step();
      if (pause) await pause;
    }
    return entries.length;
  }

  /**
   * Counts exactly, in slices that yield, the messages a cold start left bounded under `counter`
   * (see `countAhead`), newest first; resolves when none is left (or `stopCounting` was called).
   * Not a request's work: run it after one, outside any queue (a count is a pure function of its
   * message, so it never races a request: `count` answers the bound or the count).
   */
  countBounded(counter: TokenCounter, format: MessageFormat): Promise<void> {
    this.boundedCounting ??= (async () => {
      try {
        const memo = this.memoFor(counter);
        const slices = new Slices();
        const bounded = this.bounds.get(counter.id);
        while (bounded && bounded.messages.length > 0 && !this.stopBoundedCounting) {
          const message = bounded.messages.pop()!;
          if (!memo.has(message)) memo.set(message, counter.countMessage(message, format));
          bounded.bounds.delete(message);
          const pause = slices.step();
          if (pause) await pause;
        }
        if (bounded && bounded.messages.length === 0 && this.bounds.get(counter.id) === bounded) {
          this.bounds.delete(counter.id);
        }
      } finally {
        this.boundedCounting = undefined;
      }
    })();
    return this.boundedCounting;
  }

  /** Stops `countBounded` at its next slice (closing); resolves when it has stopped. */
  async stopCounting(): Promise<void> {
    this.stopBoundedCounting = true;
    await this.boundedCounting;
  }

  /** Forgets the bounds of every counter (the history they were made for was replaced). */
  forgetBounds(): void {
    // A `countBounded` under way stops at its next slice: its messages are no longer the history's.
    for (const bounded of this.bounds.values()) {
      bounded.messages.length = 0;
      bounded.bounds.clear();
    }
    this.bounds.clear();
  }

  /** Tokens of messages, each memoized. */
  countAll(counter: TokenCounter, messages: readonly Message[], format: MessageFormat): number {
    let sum = 0;
    for (const m of messages) sum += this.count(counter, m, format);
    return sum;
  }

  /** Counts messages that exist for one request only, without filling the memo with them. */
  countFresh(counter: TokenCounter, messages: readonly Message[], format: MessageFormat): number {
    const memo = this.memo.get(counter.id);
    let sum = 0;
    for (const m of messages) sum += memo?.get(m) ?? counter.countMessage(m, format);
    return sum;
  }

  /** Tokens of tool definitions, once per array and counter. */
  countTools(counter: TokenCounter, tools: readonly ToolDefinition[] | undefined): number {
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

  // ---------------------------------------------------------------------------------- budget

  /**
   * The request's budget, counter and format. Budget precedence (seed contract): `tokenBudget` >
   * provider info > the model's catalog entry > `maxTokens`; `context:budget` when it changes.
   */
  resolve(request: RequestOptions, conversationFormat: MessageFormat | undefined): ResolvedRequest {
    const model = request.model ?? this.model;
    const providerInfo = typeof request.provider === 'object' ? request.provider : undefined;
    const requested = requestedFormat(request);
    const info = model ? this.catalog.get(model) : undefined;
    // A conversation of plain text fits either format: the model's provider decides, and with
    // no model the view is made valid for both (Anthropic's rules are the stricter).
    const format: MessageFormat = requested ?? conversationFormat ?? plainFormatFor(info?.provider);
    if (model && !info && !this.fixedCounter) {
      const family = familyCounter(model);
      const counting = family
        ? `counting with the ${family.family} family's tokenizer (${counterLabel(family)})`
        : 'counting with the default tokenizer';
      this.warnOnce(
        `unknown_model:${model}`,
        'unknown_model',
        `model ${JSON.stringify(model)} is not in the catalog${didYouMeanModel(model, this.catalog)}: ${counting} and budgeting with maxTokens (${this.maxTokens}); add it with the \`models\` option`,
      );
    }
    let budget: number;
    let source: string;
    const fromProvider = providerInfo ? this.providerBudget(providerInfo) : undefined;
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
    } else if (fromProvider !== undefined) {
      budget = fromProvider;
      source = 'provider';
    } else if (info) {
      budget = windowBudget(info.contextWindow, info.maxOutputTokens, this.safetyMargin);
      source = `model:${info.id}`;
      if (this.maxTokensCap !== undefined && this.maxTokensCap < budget) {
        budget = this.maxTokensCap;
        source = 'maxTokens';
      }
    } else {
      budget = this.maxTokens;
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
      this.events.emit('context:budget', { budget, source });
    }
    const counter = this.counterFor(info ? info.id : model, format);
    const toolsTokens = this.countTools(counter, request.tools);
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
      fixedTokens: toolsTokens + counter.requestOverhead,
      toolsTokens,
    };
  }

  /**
   * `resolve`, after loading the model's stored usage correction the first time it is seen. Only
   * that first time is asynchronous: otherwise the resolved request itself is returned, so the
   * steady turn pays no extra await.
   */
  prepare(
    request: RequestOptions,
    conversationFormat: MessageFormat | undefined,
  ): ResolvedRequest | Promise<ResolvedRequest> {
    const r = this.resolve(request, conversationFormat);
    if (!this.calibration || this.calibrated.has(r.modelKey)) return r;
    return this.loadCalibration(r.modelKey).then(() => this.resolve(request, conversationFormat));
  }

  private async loadCalibration(modelKey: string): Promise<void> {
    this.calibrated.add(modelKey);
    try {
      await this.calibration?.load(modelKey);
    } catch (err) {
      this.warn('calibration', `could not load the usage calibration of ${modelKey}: ${String(err)}`);
    }
  }

  /** The budget the configured model (or `maxTokens`) gives, for figures before any request. */
  defaultBudget(): number {
    const info = this.model ? this.catalog.get(this.model) : undefined;
    if (!info) return this.maxTokens;
    return Math.min(
      windowBudget(info.contextWindow, info.maxOutputTokens, this.safetyMargin),
      this.maxTokensCap ?? Number.POSITIVE_INFINITY,
    );
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
    return windowBudget(window, output, this.safetyMargin);
  }

  // ---------------------------------------------------------------------------------- exact counts

  /** Whether a view of `total` estimated tokens should be checked with the provider's count. */
  wantsExactCount(r: ResolvedRequest, total: number): boolean {
    return this.countClient !== undefined && !r.counter.exact && total >= this.exactCountAt * r.budget;
  }

  /** The provider's exact count of a view, or undefined (with a warning) when it cannot be had. */
  async exactCount(
    r: ResolvedRequest,
    messages: readonly Message[],
    tools: readonly ToolDefinition[] | undefined,
  ): Promise<number | undefined> {
    if (!this.countClient) return undefined;
    try {
      const exact = await this.countClient.count({ model: r.modelKey, messages: [...messages], tools });
      this.events.emit('context:measure', {
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

  // ---------------------------------------------------------------------------------- measuring alone

  /**
   * Measures a request on its own (no history, no plan): its tokens in billed units, the budget,
   * the share used, whether the count is exact, and where the tokens go. Near the budget with an
   * estimate, asks the count endpoint when one is configured.
   */
  async measure(request: MeasureRequest): Promise<Measurement> {
    const format = detectConversationFormat(request.messages) ?? undefined;
    const r = await this.prepare(request, format);
    let system = 0;
    let messages = 0;
    for (const m of request.messages) {
      const n = this.count(r.counter, m, format ?? r.format);
      if (m.role === 'system' || m.role === 'developer') system += n;
      else messages += n;
    }
    let tokens = Math.ceil((system + messages + r.fixedTokens) * r.correction);
    let exact = r.counter.exact;
    if (this.wantsExactCount(r, system + messages + r.fixedTokens)) {
      const counted = await this.exactCount(r, request.messages, request.tools);
      if (counted !== undefined) {
        tokens = counted;
        exact = true;
      }
    }
    return {
      tokens,
      budget: r.declared,
      pct: tokens / r.declared,
      exact,
      breakdown: { system, messages, tools: r.toolsTokens, overhead: r.fixedTokens - r.toolsTokens },
    };
  }

  // ---------------------------------------------------------------------------------- learning

  /** Remembers what a request sent, so reported usage can be compared with it. */
  recordSent(r: ResolvedRequest, request: RequestOptions, tokens: number): void {
    this.last = { request, tokens, budget: r.declared, model: r.modelKey, recovered: false };
  }

  /**
   * Learns from what the provider billed for the last request (or for `messages`): the per-model
   * correction the fast estimate uses from the next request on. Outliers are damped and the first
   * sample moves the estimate only a little (see `createCalibration`). Takes contextkit's own
   * counts (`{ model, inputTokens, cacheReadTokens, cacheWriteTokens }`) or any provider's response
   * or usage object (OpenAI Chat Completions and Responses, Anthropic Messages, Gemini, Bedrock
   * Converse), told apart by their fields; an unreadable one rejects with `InvalidUsageError`.
   */
  async recordUsage(
    usageOrResponse: UsageInput,
    messages?: readonly Message[],
    format?: MessageFormat,
  ): Promise<void> {
    const source = usageSource(usageOrResponse);
    // A provider's usage is read (an unreadable one refused) even with calibration off.
    const read = source === 'counts' ? undefined : readUsage(usageOrResponse, source);
    if (!this.calibration) return;
    const sample = read ?? readUsage(usageOrResponse, source);
    const info = sample.model ? this.catalog.get(sample.model) : undefined;
    const model = info?.id ?? sample.model ?? this.last?.model;
    let estimated: number | undefined;
    if (messages) {
      const counter = this.counterFor(
        info?.id ?? (model && this.catalog.get(model) ? model : undefined),
        format,
      );
      estimated =
        this.countFresh(counter, messages, format ?? detectConversationFormat(messages) ?? 'openai') +
        counter.requestOverhead;
    } else if (this.last && (!sample.model || this.last.model === model)) {
      estimated = this.last.tokens;
    }
    if (!model || estimated === undefined || estimated <= 0) {
      this.warn(
        'usage_unmatched',
        'recordUsage: no request to compare this usage with; pass the messages it billed',
      );
      return;
    }
    await this.calibration.record({ model, estimated, actual: carriedInputTokens(sample) });
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
   * The budget to retry within after the provider refused a request as too long: from the numbers
   * in its error (its limit and what it counted), else 15% under what was sent. Records what the
   * provider counted as a calibration sample. `last` is the refused request, or, when none was
   * sent through this measurer yet, the configured budget stands in for it.
   */
  async recoveryBudget(
    numbers: { limit?: number; actual?: number },
    last: SentRequest | null,
  ): Promise<number> {
    const sent = last ?? { tokens: this.defaultBudget(), budget: this.defaultBudget(), model: this.model };
    let budget: number;
    if (last && numbers.limit && numbers.actual)
      budget = Math.floor(((sent.tokens * numbers.limit) / numbers.actual) * 0.97);
    else if (numbers.limit) budget = Math.floor(Math.min(sent.budget, numbers.limit) * 0.9);
    else budget = Math.floor(sent.budget * 0.85);
    if (last && numbers.actual && this.calibration) {
      await this.calibration
        .record({ model: last.model, estimated: last.tokens, actual: numbers.actual })
        .catch(() => undefined);
    }
    return Math.max(1, budget);
  }

  /** Emits a `context:warn`. */
  warn(code: string, message: string): void {
    this.events.emit('context:warn', { code, message });
  }

  /** Emits a `context:warn` once per `key`. */
  warnOnce(key: string, code: string, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.warn(code, message);
  }
}
