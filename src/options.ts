/**
 * The manager's options: their types, their defaults, and the one check that refuses a bad value
 * (or a name that is not an option) at construction, naming it and what is accepted.
 */

import type { CompactionHooks } from './compaction/hooks.js';
import type { ResponsesCompact } from './compaction/provider-compaction.js';
import type { StrategyOption } from './compaction/strategy.js';
import { type FactsSite, SUMMARY_ROLES, type SummaryRole } from './compaction/summary-message.js';
import { type EconomySettings, economyAt } from './economy.js';
import { ConfigurationError, InvalidArgumentError, InvalidMessageError } from './errors.js';
import { FORMAT_NAMES } from './formats/registry.js';
import type { Calibration } from './measure/calibration.js';
import type { CountClient } from './measure/count-endpoints.js';
import type { MessageFormat, MessageMetadata, ToolDefinition } from './messages/types.js';
import type { UsageCost } from './meter/cost-meter.js';
import { nearestName } from './nearest-name.js';
import { unknownOptionText } from './option-names.js';
import { messageIdProblem } from './stores/message-id.js';
import type { ConversationStore } from './stores/types.js';
import type { ModelInfoInput } from './tokens/catalog.js';
import type { TokenCounter } from './tokens/types.js';
import type { LLMToolsOptions } from './tools/llm.js';
import type { ContextTools } from './tools/types.js';

/** Provider info as the seed contract passes it: `getInfo().defaults` or the numbers directly. */
export interface ProviderInfo {
  getInfo?: () => { defaults?: { context_window?: number; max_output_tokens?: number } };
  contextWindow?: number;
  maxOutputTokens?: number;
  /** The wire format views for this provider must be in. */
  format?: MessageFormat;
}

/** The guard's levels: when to warn, when to refuse, and what counts as a leap. */
export interface GuardLevels {
  /** A `context:warn` when what is sent first passes this share of the budget (default 0.8). */
  warnAt?: number;
  /** `ContextOverflowError` when a view would still be above this share after compacting. */
  declineAt?: number;
  /**
   * A leap of this share of the budget in one request escalates the layered strategy (0.3): the
   * messages new since the model last spoke (its latest message and what followed), after the last
   * compaction.
   */
  jumpEscalation?: number;
}

/** Options of `new ContextManager(options)`; every one has a default (see the README). */
export interface ContextManagerOptions {
  /** Model id: decides the tokenizer and, through the catalog, the budget. */
  model?: string;
  /** Budget when neither the request nor the model gives one (default 200,000). */
  maxTokens?: number;
  /**
   * Usage (share of the budget) above which a new compaction plan is made (default 0.92, or
   * `targetUsage` when that is set higher).
   */
  compactThreshold?: number;
  /**
   * Usage a compaction brings the view down to (default 0.6; when only `compactThreshold` is set,
   * the same proportion of it, 0.6/0.92, so a threshold of 0.5 aims at about 0.33).
   */
  targetUsage?: number;
  /**
   * Share of the budget the summary and facts block (what the view keeps of what left it) may
   * take after a compaction (default 0.35 of 0.6: the same proportion, 0.35/0.6, of whatever
   * `targetUsage` is): the rest of the target is the newest turns. At most `targetUsage`.
   */
  summaryShare?: number;
  /** Never compact system messages (default true). */
  preserveSystem?: boolean;
  /**
   * With a store (default true): keep the view's record beside the conversation (the closed part
   * of the view as the rows it shows and the messages the plan made, with their tokens), and
   * serve a request of a manager that has not loaded the conversation from it and the rows the view
   * holds, without reading the whole history (a worker that has never seen the conversation pays
   * for its view, not its history). A request that needs more (a compaction, a decline) loads the
   * whole history first, as does every other call. The view is the same either way. `false`: the
   * first call always loads the whole history.
   */
  storedView?: boolean;
  /**
   * Keep the conversation's first user message (the task) verbatim, like a pinned message
   * (default true): compaction never loses the original instructions (an agent that loses them
   * cannot finish; a view metric such as facts kept must not outvote that). A task over a quarter
   * of the budget keeps its head and tail, the middle cut with a marker (the whole of it stays
   * stored, for `recall`), cut further by what a view would overflow by; past that, a
   * `ContextOverflowError`
   * (`breakdown.task`). `false` lets compaction summarize or drop it like any older turn, its
   * facts kept in the facts block.
   */
  protectTask?: boolean;
  /**
   * What the summarizer should favour, in words (`'the refund amounts and order ids'`): the LLM
   * tools put it in the summary prompt, the offline summarizer ranks sentences with these words
   * first. Fixed for the manager's life, so summaries stay reproducible.
   */
  summaryInstructions?: string;
  /** How many of the newest tool results are never cleared (default 3). */
  keepToolResults?: number;
  /** Tokens kept free below the window besides the model's max output (default 1,000). */
  safetyMargin?: number;
  /**
   * Where the history is kept: a store, or a store URL (`memory:`, `file:DIR`, `sqlite:PATH`,
   * `redis://…`, `postgres://…`; those that connect do so on first use). Default: this process's memory.
   */
  store?: string | ConversationStore;
  /**
   * What loading does with a stored entry that is not a valid message (a tampered row): `error`
   * (default) rejects with an `InvalidStoredMessageError` naming its seq and changes nothing;
   * `skip` leaves it out of the history and raises a `context:warn` (`invalid_stored_message`).
   */
  invalidStored?: 'error' | 'skip';
  /** The conversation in the store (default `default`). */
  conversationId?: string;
  /** Models to add to or override in the catalog. */
  models?: Record<string, ModelInfoInput>;
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
   * the layered strategy one level. A leap is read from the history, so that every worker finds the
   * same: the messages new since the model last spoke (its latest message and what followed it),
   * stored after the last compaction; what a compaction already acted on is never a leap again.
   */
  guard?: GuardLevels;
  /**
   * Compact on its own when a request passes the trigger (default true). With `false` (the seeds'
   * `auto_compact: false`) only `compact()` makes a plan, and a request over the budget throws
   * `ContextOverflowError`.
   */
  autoCompact?: boolean;
  /**
   * Compact early when the prompt cache has expired anyway (idle past the provider's TTL, by
   * message timestamps) and a compaction is due soon (default true; needs the model's prices).
   */
  compactWhenCacheExpired?: boolean;
  /**
   * Put a compaction off the request path (default false): a request that passes the trigger
   * sends its view as it is, while it fits the budget (and `guard.declineAt`), and the compaction
   * runs right after the request, in the manager's queue (the next call and `close()` wait for
   * it; the model call need not). The next request sends the compacted view. A worker serving a
   * conversation from its stored view record (`storedView`) then never loads the whole history
   * on the request path for a compaction: it loads it after the request. Every worker sharing a
   * store must set it alike for their views to agree. A view past the budget is still compacted
   * before it is sent, as is every view under a `strategy` function of yours (its `decline` must
   * refuse the request it was asked for) or with `compactionNotice` (the notice goes in the view
   * the compaction makes). A compaction that fails after the request (the store
   * down) is a `context:warn` (`compaction_failed`): the plan stays as it was, and the next request
   * that passes the trigger tries again.
   */
  compactAfterRequest?: boolean;
  /**
   * Bill each view sent with the model's prices and caching rules (default true): `usage().cost`
   * and the `cost` of `context:measure`. With `false` no view is billed, those figures are absent,
   * and `compactWhenCacheExpired` cannot tell that the cache has gone cold.
   */
  costMeter?: boolean;
  /**
   * Re-plans after a compaction whose view is still above `criticalFloor` (default 3; the seed's
   * default is 2); each aims lower by what the last overshot.
   */
  maxCompactRetries?: number;
  /**
   * Share of the budget above which a fresh plan is made again, up to `maxCompactRetries`
   * (default 1: only a view over the budget; the seed's default is 0.95).
   */
  criticalFloor?: number;
  /**
   * In the request right after a compaction, a short note at the end of the view tells the model
   * that older messages were summarized or left out (default off: the note is gone next turn,
   * which costs that one turn's prompt-cache hit at the tail).
   */
  compactionNotice?: boolean;
  /**
   * Usage levels (shares of the budget, e.g. `[0.5, 0.75, 0.9]`) at which a short message at the
   * very end of the view tells the model how much room is left (default none). Told once per level
   * on the way up, again after a compaction brought usage below it; counted in the view's tokens,
   * placed after the last cache breakpoint (the cached prefix is unchanged) and never stored.
   */
  budgetNotice?: readonly number[];
  /**
   * Called before each compaction with why it runs and the view's size: may `veto` it (honoured
   * while the view fits the budget) or return `pinned` text(s) the view keeps after it. Pinned
   * content counts against the budget: past the room the plan leaves under the trigger it is
   * trimmed or refused (`context:warn` `hook_pinned_trimmed`). It stays until the next
   * compaction, where the hooks are asked again. A hook that throws is passed over with a
   * `context:warn` (`hook_failed`); nothing stored is touched either way.
   */
  onBeforeCompaction?: CompactionHooks['onBeforeCompaction'];
  /**
   * Called after each compaction with its receipt: may return `pinned` text(s) to add back to the
   * view (instruction files, recent files), bounded as `onBeforeCompaction`'s.
   */
  onAfterCompaction?: CompactionHooks['onAfterCompaction'];
  /**
   * `'auto'`: Anthropic requests carry prompt-cache breakpoints (`cache_control`, at most 4 with
   * the caller's own) at the end of the stable prefix: the system prompt, the facts/summary
   * block, and the last message the previous request also sent. Put on copies in the request,
   * never stored. Default `'off'`.
   */
  cacheBreakpoints?: 'auto' | 'off';
  /**
   * Let the provider compact on its server when the guard finds a compaction due, instead of
   * contextkit's summarizer (default off). Anthropic: requests from `getAnthropicRequest` carry
   * `context_management` with the `compact_20260112` trigger set at contextkit's own trigger
   * (never under the API's 50,000-token minimum) and the `betas` it needs; the reply's
   * `compaction` block starts the next view. Where the provider cannot (a model without server
   * compaction, a view under the minimum or over the budget, a reply without the block) the
   * summarizer runs as without the option, with a `context:warn`. OpenAI Responses: the range the
   * plan summarizes goes to `/responses/compact` (through `compact`, else the `llm` settings with
   * `provider: 'openai'`), and the items it returns (the user messages and one `compaction` item)
   * stand in the view where the range stood; on a failure the summarizer runs, with a
   * `context:warn` (`provider_compaction_fallback`). Stored history stays whole.
   */
  providerCompaction?: boolean | ProviderCompactionOptions;
  /** Writes summaries and extracts facts: the offline tools by default, or an LLM's. */
  tools?: ContextTools;
  /**
   * Summarize and extract facts with a model over plain `fetch` (OpenAI-compatible Chat
   * Completions or Anthropic Messages). Any failure falls back to the offline tools with a
   * `context:warn` (`llm_fallback`). Ignored when `tools` is given.
   */
  llm?: Omit<LLMToolsOptions, 'onWarn'> & { provider: 'openai' | 'anthropic' };
  /**
   * With `llm`: the summary and facts of the range the next compaction will take are prepared off
   * the request path, so that no request waits for the model. After each compaction (and from the
   * start) that range is planned as the view grows, with its offline summary written ahead; the
   * model is asked once the range is settled, or when usage passes `at` at the latest (default
   * halfway from `targetUsage` to `compactThreshold`), and then only for what the range gained.
   * A compaction uses the model's summary when it is back and covers the range it takes; where
   * the range grew past it (a turn leapt past the trigger), the offline tools summarize the rest
   * on top of it; otherwise the offline summary written ahead answers at once, and the model's
   * summary of what it did not cover is carried into the next compaction. Its receipt says which
   * (`prepared`). Default on with `llm` (and with your own `tools` when they implement
   * `prepareMemory`, see `PreparingTools`); `false` asks the model at the compaction, as the
   * request waits. With a store, where the preparation stands and the model's answer are stored
   * beside the conversation (bound to the messages they cover by content), so a worker that never
   * saw them neither asks the model again nor compacts without its summary.
   */
  summaryAhead?: boolean | { at?: number };
  /**
   * Where the facts block of what left the view goes (default `system`: before the first turn,
   * after the system prompt; a user message unless `summaryRole` is `system`).
   */
  facts?: FactsSite;
  /**
   * The role of the summary and the facts block (default `user`). Their text comes from tool
   * results, users and the assistant, so by default it never enters a system or developer message
   * (the README\'s "What every view holds", 8): it is a user message, delimited, each line attributed to its source
   * message and quoted as data. `system` restores the summary as a system message where the
   * format takes one mid-conversation (OpenAI) and, with `facts: 'system'`, the facts block in
   * the system prompt. **Risk**: a tool result (a fetched page, a file) that reads "ignore all
   * previous instructions" then reaches the model with the system prompt's authority. Choose it
   * only when every tool result and user message is trusted.
   */
  summaryRole?: SummaryRole;
  /**
   * Tools that only read, by exact name: a placeholder for one of their cleared results suggests
   * calling again. Tools not named here or in `sideEffectTools` are classified by name (read,
   * get, list, search, fetch, open, view, cat, grep, find… read; anything else changes something).
   */
  readOnlyTools?: readonly string[];
  /**
   * Tools that change something, by exact name (wins over `readOnlyTools` and the name): a
   * placeholder for their cleared results says the call ran and how it ended, and never suggests
   * calling again (the README\'s "What every view holds", 9).
   */
  sideEffectTools?: readonly string[];
  /**
   * Exact counts from the provider's endpoint (`createCountClient`), asked for when an estimated
   * view is near the budget (at `exactCountAt`, default 0.9): Claude and Gemini, whose tokenizers
   * are not offline. On failure the estimate stands.
   */
  countClient?: CountClient;
  exactCountAt?: number;
  /** Learns a per-model correction from reported usage (`recordUsage`); `false` turns it off. */
  calibration?: Calibration | false;
  /**
   * Offer the model the `recall` tool (`handleToolCall`, the integrations' tools): the history's
   * search index is then kept up to date from the first message, not built on the first `recall`,
   * and the facts block tells the model the tool exists.
   */
  recall?: boolean;
  /**
   * One setting for the trade between billed input and what the views keep (default
   * `balanced`): `rich`, `balanced`, `lean` or `minimal` set `compactThreshold`, `targetUsage`,
   * `summaryShare`, `keepToolResults` and `recall` together (see `ECONOMY`); any of those given
   * explicitly wins. Leaner views are billed less and keep fewer of the newest turns whole;
   * `lean` and `minimal` offer the model `recall` for what they leave out. A number in (0, 1) is
   * the share of the budget views aim at, the rest set between the presets around it
   * (`economyAt`): `0.05` is leaner than `minimal`.
   */
  economy?: Economy;
}

/** Options of `addMessage`: how compaction treats the message, and metadata to keep beside it. */
export interface AddMessageOptions {
  critical?: boolean;
  ephemeral?: boolean;
  pinned?: boolean;
  metadata?: Partial<MessageMetadata> & Record<string, unknown>;
  /**
   * The caller's id for the message (a non-empty string of at most 256 characters): a message
   * whose id the conversation already holds is not stored again, whichever process added it
   * first, decided by the store atomically with the append; the add then resolves with
   * `duplicate: true` and the stored entry's seq. The same id with a different message rejects
   * with `MessageIdConflictError`, storing nothing. For retried steps of durable engines and the
   * ids integrations carry (AI SDK message ids, Agents item ids). An ephemeral message's id is
   * checked against this manager's history only (it is never stored).
   */
  id?: string;
}

/** What `addMessage` resolves with. */
export interface AddedMessage {
  /**
   * The message's place in this manager's history (`getEntries()`): where it was stored, or for a
   * duplicate where the first add stored it; -1 when another writer replaced the conversation as
   * it was stored (the history was then reloaded).
   */
  seq: number;
  /** The id given, if any. */
  id?: string;
  /** True when the id was already held and nothing was stored (the first add's message stands). */
  duplicate: boolean;
}

const ADD_MESSAGE_OPTIONS = ['critical', 'ephemeral', 'pinned', 'metadata', 'id'] as const;

/**
 * Refuses what `addMessage` would otherwise ignore or store wrongly: options that are not an
 * object, an unknown option (a typo would silently lose its meaning), and an id that is not a
 * non-empty string within the stores' limits (`InvalidArgumentError` naming it).
 */
export function checkAddMessageOptions(options: unknown): asserts options is AddMessageOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError('addMessage options', 'expected an object');
  }
  for (const key of Object.keys(options)) {
    if ((ADD_MESSAGE_OPTIONS as readonly string[]).includes(key)) continue;
    const best = nearestName(key, ADD_MESSAGE_OPTIONS);
    throw new InvalidArgumentError(
      `addMessage options.${key}`,
      `unknown option${best ? ` (did you mean ${JSON.stringify(best)}?)` : ''}; known: ${ADD_MESSAGE_OPTIONS.join(', ')}`,
    );
  }
  const { id } = options as { id?: unknown };
  if (id === undefined) return;
  const problem = messageIdProblem(id);
  if (problem !== undefined) throw new InvalidArgumentError('addMessage options.id', problem);
}

/**
 * Refuses what `addMessages` cannot take, before anything is stored: `messages` that is not an
 * array (`InvalidMessageError`), options `checkAddMessageOptions` refuses, and an `id` (one id
 * names one message: identified messages are added one by one).
 */
export function checkAddMessagesArguments(
  messages: unknown,
  options: unknown,
): asserts options is AddMessageOptions {
  if (!Array.isArray(messages)) {
    throw new InvalidMessageError([{ path: 'messages', message: 'expected an array of messages' }]);
  }
  checkAddMessageOptions(options);
  if (options.id !== undefined) {
    throw new InvalidArgumentError(
      'options.id',
      'addMessages takes no id; add identified messages with addMessage',
    );
  }
}

/** Options of `getMessagesForRequest`: the budget (or what to derive it from), the wire format, the tools sent. */
export interface RequestOptions {
  tokenBudget?: number;
  /** A wire format (`'openai'`, `'anthropic'`, `'openai-responses'`, `'gemini'`, `'bedrock'`), or provider info for the budget. */
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
  /** What the views sent were billed for input, by the model's caching rules (after a request). */
  cost?: UsageCost;
}

/** The defaults of the numeric options, as the README lists them. */
export const DEFAULTS = {
  maxTokens: 200_000,
  compactThreshold: 0.92,
  targetUsage: 0.6,
  summaryShare: 0.35,
  preserveSystem: true,
  protectTask: true,
  keepToolResults: 3,
  safetyMargin: 1_000,
  warnAt: 0.8,
  jumpEscalation: 0.3,
  recentCount: 6,
  exactCountAt: 0.9,
  maxCompactRetries: 3,
  criticalFloor: 1,
} as const;

/** The `economy` presets, from the most kept to the least billed. */
export const ECONOMY_PRESETS = ['rich', 'balanced', 'lean', 'minimal'] as const;
/** An `economy` preset's name. */
export type EconomyPreset = (typeof ECONOMY_PRESETS)[number];
/** An `economy` setting: a preset, or the share of the budget views aim at, in (0, 1). */
export type Economy = EconomyPreset | number;

export type { EconomySettings };

/**
 * The presets of `economy`. Each sets together the options that decide a view's size: where
 * compaction starts and aims, the memory's share of the budget, how many tool results stay
 * whole, and whether the model is offered `recall` for what left the view. `balanced` is the
 * defaults as they were before the setting existed; the README gives the figures of each.
 */
export const ECONOMY: Readonly<Record<EconomyPreset, Readonly<EconomySettings>>> = {
  rich: { compactThreshold: 0.95, targetUsage: 0.75, summaryShare: 0.4, keepToolResults: 5, recall: false },
  balanced: {
    compactThreshold: DEFAULTS.compactThreshold,
    targetUsage: DEFAULTS.targetUsage,
    summaryShare: DEFAULTS.summaryShare,
    keepToolResults: DEFAULTS.keepToolResults,
    recall: false,
  },
  lean: { compactThreshold: 0.6, targetUsage: 0.35, summaryShare: 0.2, keepToolResults: 2, recall: true },
  minimal: { compactThreshold: 0.35, targetUsage: 0.18, summaryShare: 0.1, keepToolResults: 1, recall: true },
};

/** What an `economy` setting sets: a preset's settings, or a number placed between them. */
export function economyFor(economy: Economy): EconomySettings {
  if (typeof economy === 'string') return { ...ECONOMY[economy] };
  return economyAt(
    ECONOMY_PRESETS.map((name) => ECONOMY[name]),
    economy,
  );
}

/** The options `economy` moves, as given where given, else from the setting (`balanced` by default). */
export function economySettings(options: ContextManagerOptions): EconomySettings {
  const preset = economyFor(options.economy ?? 'balanced');
  return {
    ...resolveShares(options, preset),
    keepToolResults: options.keepToolResults ?? preset.keepToolResults,
    recall: options.recall ?? preset.recall,
  };
}

/** The built-in strategies by name (a function is the fifth kind). */
export const STRATEGIES = ['summarize', 'truncate', 'smart', 'layered'] as const;
/** Where a facts block may go. */
export const FACTS_SITES: readonly FactsSite[] = ['system', 'first-user', 'none'];
/** The wire formats a request may ask for. */
export const REQUEST_FORMATS: readonly MessageFormat[] = FORMAT_NAMES;

type Check = (value: unknown, name: string) => void;

const fail = (name: string, message: string): never => {
  throw new ConfigurationError(name, message);
};
const show = (v: unknown): string => {
  if (typeof v === 'function') return 'a function';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return typeof v;
};
const finite: Check = (v, name) => {
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(name, `expected a finite number, got ${show(v)}`);
};
const share: Check = (v, name) => {
  finite(v, name);
  if ((v as number) <= 0 || (v as number) > 1) fail(name, `must be in (0, 1], got ${show(v)}`);
};
const wholeFrom =
  (min: number): Check =>
  (v, name) => {
    finite(v, name);
    if (!Number.isInteger(v) || (v as number) < min)
      fail(name, `must be a whole number ≥ ${min}, got ${show(v)}`);
  };
const atLeast =
  (min: number, open = false): Check =>
  (v, name) => {
    finite(v, name);
    if (open ? (v as number) <= min : (v as number) < min) {
      fail(name, `must be ${open ? 'above' : '≥'} ${min}, got ${show(v)}`);
    }
  };
const bool: Check = (v, name) => {
  if (typeof v !== 'boolean') fail(name, `expected true or false, got ${show(v)}`);
};
const oneOf =
  (accepted: readonly string[], extra = ''): Check =>
  (v, name) => {
    if (typeof v !== 'string' || !accepted.includes(v)) {
      fail(name, `${show(v)} is not one of ${accepted.map((a) => JSON.stringify(a)).join(', ')}${extra}`);
    }
  };
const object: Check = (v, name) => {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    fail(name, `expected an object, got ${show(v)}`);
};
const toolNameList: Check = (v, name) => {
  if (!Array.isArray(v)) fail(name, `expected an array of tool names, got ${show(v)}`);
  (v as unknown[]).forEach((tool, i) => {
    if (typeof tool !== 'string' || tool === '')
      fail(`${name}[${i}]`, `expected a tool name, got ${show(tool)}`);
  });
};
const withMethods =
  (...methods: string[]): Check =>
  (v, name) => {
    object(v, name);
    const missing = methods.filter((m) => typeof (v as Record<string, unknown>)[m] !== 'function');
    if (missing.length > 0)
      fail(name, `expected an object with ${methods.join(', ')}; missing ${missing.join(', ')}`);
  };
const nested =
  (checks: Record<string, Check>): Check =>
  (v, name) => {
    object(v, name);
    checkKeys(v as Record<string, unknown>, checks, name);
  };
const any: Check = () => undefined;
const fn: Check = (v, name) => {
  if (typeof v !== 'function') fail(name, `expected a function, got ${show(v)}`);
};
const toolNames: Check = (v, name) => {
  if (!Array.isArray(v) || v.some((t) => typeof t !== 'string'))
    fail(name, 'expected an array of tool names');
};

const STRATEGY_CHECK: Check = (v, name) => {
  if (typeof v === 'function') return;
  oneOf(STRATEGIES, ', or a function')(v, name);
};

/** Refuses, with `ConfigurationError`, a strategy that is neither a built-in name nor a function. */
export function checkStrategy(strategy: unknown, name = 'strategy'): void {
  STRATEGY_CHECK(strategy, name);
}

/** Every option and how its value is checked; a name missing here is not an option. */
const OPTION_CHECKS: Record<keyof ContextManagerOptions, Check> = {
  model: (v, name) => {
    if (typeof v !== 'string' || v === '') fail(name, `expected a model id, got ${show(v)}`);
  },
  maxTokens: atLeast(0, true),
  compactThreshold: share,
  targetUsage: share,
  preserveSystem: bool,
  storedView: bool,
  protectTask: bool,
  summaryInstructions: (v, name) => {
    if (typeof v !== 'string') fail(name, `expected a string, got ${show(v)}`);
  },
  keepToolResults: wholeFrom(0),
  safetyMargin: atLeast(0),
  store: any, // checked where it is opened, with the accepted URL forms
  invalidStored: oneOf(['error', 'skip']),
  conversationId: (v, name) => {
    if (typeof v !== 'string' || v === '') fail(name, 'must be a non-empty string');
  },
  models: object,
  tokenCounter: withMethods('countMessage', 'countText', 'countTools'),
  now: (v, name) => {
    if (typeof v !== 'function') fail(name, `expected a function returning a Date, got ${show(v)}`);
  },
  strategy: STRATEGY_CHECK,
  recentCount: wholeFrom(1),
  clearing: nested({
    trigger: atLeast(0, true),
    keep: wholeFrom(0),
    clearAtLeast: atLeast(0),
    excludeTools: toolNames,
    clearToolInputs: bool,
  } satisfies Record<keyof NonNullable<ContextManagerOptions['clearing']>, Check>),
  guard: nested({ warnAt: share, declineAt: atLeast(0, true), jumpEscalation: atLeast(0, true) }),
  autoCompact: bool,
  compactWhenCacheExpired: bool,
  compactAfterRequest: bool,
  costMeter: bool,
  maxCompactRetries: wholeFrom(0),
  criticalFloor: share,
  compactionNotice: bool,
  onBeforeCompaction: fn,
  onAfterCompaction: fn,
  budgetNotice: (v, name) => {
    if (!Array.isArray(v) || v.length === 0)
      fail(name, `expected a non-empty array of shares such as [0.5, 0.75, 0.9], got ${show(v)}`);
    for (const [i, level] of (v as unknown[]).entries()) share(level, `${name}[${i}]`);
  },
  cacheBreakpoints: oneOf(['auto', 'off']),
  providerCompaction: (v, name) => {
    if (typeof v === 'boolean') return;
    nested({
      clearToolUses: (c, at) => {
        if (typeof c === 'boolean') return;
        nested({
          trigger: atLeast(0, true),
          keep: wholeFrom(0),
          clearAtLeast: atLeast(0),
          excludeTools: toolNames,
          clearToolInputs: bool,
        })(c, at);
      },
      clearThinking: (c, at) => {
        if (typeof c === 'boolean') return;
        nested({
          keep: (k, kat) => {
            if (k !== 'all' && !(typeof k === 'number' && Number.isInteger(k) && k >= 1))
              fail(kat, `expected a whole number ≥ 1 (thinking turns kept) or 'all', got ${show(k)}`);
          },
        })(c, at);
      },
      instructions: (i, at) => {
        if (typeof i !== 'string' || i.trim() === '') fail(at, `expected a non-empty string, got ${show(i)}`);
      },
      compact: (c, at) => {
        if (typeof c !== 'function') fail(at, `expected a function, got ${show(c)}`);
      },
    } satisfies Record<keyof ProviderCompactionOptions, Check>)(v, name);
  },
  tools: withMethods('summarize', 'extractFacts'),
  llm: (v, name) => {
    object(v, name);
    oneOf(['openai', 'anthropic'])((v as { provider?: unknown }).provider, `${name}.provider`);
  },
  summaryAhead: (v, name) => {
    if (typeof v === 'boolean') return;
    nested({ at: share } satisfies Record<'at', Check>)(v, name);
  },
  facts: oneOf(FACTS_SITES),
  summaryRole: oneOf(SUMMARY_ROLES),
  readOnlyTools: toolNameList,
  sideEffectTools: toolNameList,
  countClient: withMethods('count'),
  exactCountAt: share,
  calibration: (v, name) => {
    if (v !== false) withMethods('correction', 'record', 'load')(v, name);
  },
  recall: bool,
  summaryShare: share,
  economy: (v, name) => {
    if (typeof v !== 'number') return oneOf(ECONOMY_PRESETS, ', or a share of the budget in (0, 1)')(v, name);
    finite(v, name);
    if (v <= 0 || v >= 1) fail(name, `a number is the share of the budget views aim at, in (0, 1); got ${v}`);
  },
};

function checkKeys(options: Record<string, unknown>, checks: Record<string, Check>, parent?: string): void {
  for (const [key, value] of Object.entries(options)) {
    const name = parent ? `${parent}.${key}` : key;
    const check = checks[key];
    if (!check) {
      const camel = key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
      fail(
        name,
        camel !== key && camel in checks
          ? `is not an option; the option is ${parent ? `${parent}.` : ''}${camel} (snake_case names are read by mount())`
          : unknownOptionText(key, Object.keys(checks)),
      );
    }
    if (value !== undefined) check!(value, name);
  }
}

/** Options of `providerCompaction`. */
export interface ProviderCompactionOptions {
  /**
   * Anthropic: also clear old tool results on the server (`clear_tool_uses_20250919`, beta
   * `context-management-2025-06-27`), with the API's defaults (`true`) or these settings: the
   * trigger in input tokens, the tool uses kept, the least to clear, tools never cleared, and
   * whether the calls' inputs go too.
   */
  clearToolUses?:
    | boolean
    | {
        trigger?: number;
        keep?: number;
        clearAtLeast?: number;
        excludeTools?: readonly string[];
        clearToolInputs?: boolean;
      };
  /**
   * Anthropic: also clear the thinking of older assistant turns on the server
   * (`clear_thinking_20251015`, beta `context-management-2025-06-27`), with the API's default
   * (`true`) or keeping the thinking of the last `keep` turns that have some (`'all'`: none cleared,
   * the prompt cache kept). Sent first in the edits, as the context-editing page requires.
   */
  clearThinking?: boolean | { keep?: number | 'all' };
  /** Anthropic: the summarization prompt (`instructions`), replacing the API's own. */
  instructions?: string;
  /**
   * OpenAI Responses: how `/responses/compact` is called. Default: `POST {llm.baseURL}/responses/compact`
   * with the `llm` option's key (its `provider` must be `'openai'`).
   */
  compact?: ResponsesCompact;
}

/**
 * Refuses, with `ConfigurationError` naming the option and what it accepts, any value that cannot
 * work and any name that is not an option (a typo would otherwise be dropped without a word).
 */
export function checkOptions(options: ContextManagerOptions): void {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigurationError('options', `expected an object, got ${show(options)}`);
  }
  checkKeys(options as Record<string, unknown>, OPTION_CHECKS);
  const { compactThreshold: threshold, targetUsage: target } = economySettings(options);
  if (target > threshold) {
    throw new ConfigurationError(
      'targetUsage',
      `(${target}) must not be above compactThreshold (${threshold})`,
    );
  }
  const at = typeof options.summaryAhead === 'object' ? options.summaryAhead.at : undefined;
  if (at !== undefined && at >= threshold) {
    throw new ConfigurationError(
      'summaryAhead.at',
      `(${at}) must be below compactThreshold (${threshold}): the range is prepared before the compaction`,
    );
  }
  if (options.summaryShare !== undefined && options.summaryShare > target) {
    throw new ConfigurationError(
      'summaryShare',
      `(${options.summaryShare}) must not be above targetUsage (${target})`,
    );
  }
}

/** The three shares of the budget, as given or derived from those given. */
export interface Shares {
  compactThreshold: number;
  targetUsage: number;
  summaryShare: number;
}

/**
 * The trigger, target and memory shares with each default derived from what the user set, so
 * that one share given alone never contradicts the defaults of the others: a threshold of 0.5
 * (seed 002's example) aims at the same proportion of it as 0.6 does of 0.92, and a target of
 * 0.3 leaves the memory the same proportion of it as 0.35 does of 0.6 (never the whole target).
 * Shares given together are kept as given (`checkOptions` refuses those that contradict). `d`:
 * the shares defaults are derived from (an `economy` preset's; the defaults' otherwise).
 */
export function resolveShares(options: Partial<Shares>, d: Readonly<Shares> = DEFAULTS): Shares {
  const compactThreshold = options.compactThreshold ?? Math.max(d.compactThreshold, options.targetUsage ?? 0);
  const targetUsage =
    options.targetUsage ??
    (options.compactThreshold === undefined
      ? d.targetUsage
      : Math.min(d.targetUsage, round3((compactThreshold * d.targetUsage) / d.compactThreshold)));
  // At the defaults' own target the share is the defaults' (an `economy` number below 0.001 has
  // a memory share rounding would make 0).
  const summaryShare =
    options.summaryShare ??
    (targetUsage === d.targetUsage
      ? d.summaryShare
      : Math.min(d.summaryShare, round3((targetUsage * d.summaryShare) / d.targetUsage)));
  return { compactThreshold, targetUsage, summaryShare };
}

const round3 = (n: number): number => Math.round(n * 1000) / 1000;

/** A request's wire format, if it names one, refused when it is not one the views can take. */
export function requestedFormat(request: RequestOptions): MessageFormat | undefined {
  const provider = request.provider;
  const requested = typeof provider === 'object' && provider !== null ? provider.format : provider;
  if (requested !== undefined && !REQUEST_FORMATS.includes(requested)) {
    throw new ConfigurationError(
      'provider',
      `expected ${REQUEST_FORMATS.map((f) => JSON.stringify(f)).join(', ')} or provider info, got ${show(requested)}`,
    );
  }
  return requested;
}
