/**
 * How `ContextManager` is put together: its options resolved, and the parts it composes
 * (`History`, `ContextMeasurer`, `ContextGuard` with its view, the recall index) built and wired to
 * one event emitter. Kept apart so the manager itself reads as the short composition it is.
 */

import { randomUUID } from 'node:crypto';
import { type CompactionPlan, decodePlan, encodePlan, planSum, storedPlanSum } from './compaction/plan.js';
import {
  createResponsesCompact,
  type NoteCompaction,
  type ProviderCompactor,
  responsesCompactor,
} from './compaction/provider-compaction.js';
import type { ContextEmitter } from './events.js';
import type { AppliedEdit } from './guard/applied-edits.js';
import { ContextGuard, type GuardConversation } from './guard/guard.js';
import type { PlanMade } from './guard/guard-types.js';
import {
  decodeStoredAhead,
  decodeStoredSpec,
  STORED_AHEAD_VERSION,
  type StoredAhead,
  type StoredSpec,
} from './guard/stored-ahead.js';
import {
  decodeBudgetNoticed,
  decodeGuardState,
  decodeUsageWarning,
  encodeBudgetNoticed,
  encodeUsageWarning,
} from './guard/stored-guard-state.js';
import { emptyAheadState, type HeldSpec } from './guard/summary-ahead.js';
import { History } from './history/history.js';
import { LiveEntries } from './history/live-entries.js';
import { StoredCounts } from './manager-counts.js';
import { createCalibration } from './measure/calibration.js';
import { ContextMeasurer } from './measure/measurer.js';
import type { CacheComparison } from './meter/cost-meter.js';
import { cacheUnreported, type UsageSample } from './meter/usage.js';
import { resetUsageWarning } from './meter/usage-warning.js';
import { type ContextManagerOptions, DEFAULTS, economySettings, type Usage } from './options.js';
import { RecallIndex } from './recall/recall-index.js';
import { withSum } from './record-sum.js';
import { type HeldMeta, metaPersistence } from './stores/meta-persistence.js';
import { resolveStore } from './stores/resolve.js';
import type { ConversationStore } from './stores/types.js';
import { createAnthropicTools, createOpenAITools, type LLMWarning } from './tools/llm.js';
import type { ContextTools } from './tools/types.js';

/** The options the manager keeps as given or defaulted (the parts keep the rest). */
export type ManagerSettings = Readonly<
  Required<
    Pick<
      ContextManagerOptions,
      | 'maxTokens'
      | 'compactThreshold'
      | 'targetUsage'
      | 'preserveSystem'
      | 'storedView'
      | 'protectTask'
      | 'keepToolResults'
      | 'safetyMargin'
      | 'conversationId'
      | 'strategy'
      | 'facts'
      | 'exactCountAt'
      | 'recall'
    >
  >
> & { model?: string };

/** The parts a manager is composed of. */
export interface ManagerParts {
  settings: ManagerSettings;
  store: ConversationStore | null;
  history: History;
  measurer: ContextMeasurer;
  /** Token counts kept with the stored messages (issue 24 item 3). */
  counts: StoredCounts;
  guard: ContextGuard;
  conversation: GuardConversation;
  /** What the provider still reads after its own compaction (the guard's entries). */
  live: LiveEntries;
  recallIndex: RecallIndex;
  /** Metadata a request just read, lent to the calibration's first read (see `HeldMeta`). */
  heldMeta: HeldMeta;
}

/**
 * Resolves the options (already checked) and builds the parts. Warnings of every part go to
 * `emitter` as `context:warn`; `onReloaded` runs when the history is replaced under the manager.
 */
export function composeParts(
  options: ContextManagerOptions,
  emitter: ContextEmitter,
  onReloaded: () => void,
): ManagerParts {
  const economy = economySettings(options);
  const settings: ManagerSettings = {
    maxTokens: options.maxTokens ?? DEFAULTS.maxTokens,
    compactThreshold: economy.compactThreshold,
    targetUsage: economy.targetUsage,
    preserveSystem: options.preserveSystem ?? DEFAULTS.preserveSystem,
    storedView: options.storedView ?? true,
    protectTask: options.protectTask ?? DEFAULTS.protectTask,
    keepToolResults: economy.keepToolResults,
    safetyMargin: options.safetyMargin ?? DEFAULTS.safetyMargin,
    conversationId: options.conversationId ?? 'default',
    strategy: options.strategy ?? 'summarize',
    facts: options.facts ?? 'system',
    exactCountAt: options.exactCountAt ?? DEFAULTS.exactCountAt,
    recall: economy.recall,
    ...(options.model !== undefined ? { model: options.model } : {}),
  };
  const conversationId = settings.conversationId;
  const warn = (code: string, message: string) => emitter.emit('context:warn', { code, message });
  const store =
    options.store === undefined
      ? null
      : resolveStore(options.store, { onWarning: (message) => warn('store_warning', message) });
  const heldMeta: HeldMeta = { record: undefined };
  const measurer = new ContextMeasurer({
    ...(options.model !== undefined ? { model: options.model } : {}),
    ...(options.tokenCounter !== undefined ? { counter: options.tokenCounter } : {}),
    ...(options.models !== undefined ? { models: options.models } : {}),
    ...(options.countClient !== undefined ? { countClient: options.countClient } : {}),
    calibration:
      options.calibration ??
      createCalibration(
        store ? { persistence: metaPersistence(store, conversationId, 'calibration', heldMeta) } : {},
      ),
    exactCountAt: settings.exactCountAt,
    // As given: a maxTokens the user set caps the model's budget; the default does not.
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    safetyMargin: settings.safetyMargin,
    events: emitter,
  });
  const counts: StoredCounts = new StoredCounts(measurer, (): History => history, warn);
  const history: History = new History({
    store,
    conversationId,
    now: options.now ?? (() => new Date()),
    ...(options.invalidStored !== undefined ? { invalidStored: options.invalidStored } : {}),
    onWarn: warn,
    onReloaded,
    counter: counts,
  });
  const tools = options.tools ?? llmTools(options.llm, warn);
  const providerCompact = providerCompactor(options, (ciphertext, tokens, field) =>
    measurer.noteCompaction(ciphertext, tokens, field),
  );
  const guard = new ContextGuard({
    measurer,
    strategy: settings.strategy,
    ...(options.guard !== undefined ? { levels: options.guard } : {}),
    compactThreshold: settings.compactThreshold,
    targetUsage: settings.targetUsage,
    autoCompact: options.autoCompact ?? true,
    compactWhenCacheExpired: options.compactWhenCacheExpired ?? true,
    compactAfterRequest: options.compactAfterRequest === true,
    costMeter: options.costMeter ?? true,
    maxCompactRetries: options.maxCompactRetries ?? DEFAULTS.maxCompactRetries,
    criticalFloor: options.criticalFloor ?? DEFAULTS.criticalFloor,
    preserveSystem: settings.preserveSystem,
    protectTask: settings.protectTask,
    ...(options.summaryInstructions ? { summaryInstructions: options.summaryInstructions } : {}),
    ...(options.summaryAhead !== undefined ? { summaryAhead: options.summaryAhead } : {}),
    keepToolResults: settings.keepToolResults,
    recentCount: options.recentCount ?? DEFAULTS.recentCount,
    clearing: options.clearing ?? {},
    facts: settings.facts,
    ...(options.summaryRole !== undefined ? { summaryRole: options.summaryRole } : {}),
    ...(options.readOnlyTools !== undefined ? { readOnlyTools: options.readOnlyTools } : {}),
    ...(options.sideEffectTools !== undefined ? { sideEffectTools: options.sideEffectTools } : {}),
    compactionNotice: options.compactionNotice === true,
    ...(options.budgetNotice ? { budgetNotice: options.budgetNotice } : {}),
    ...(options.onBeforeCompaction || options.onAfterCompaction
      ? {
          hooks: {
            ...(options.onBeforeCompaction ? { onBeforeCompaction: options.onBeforeCompaction } : {}),
            ...(options.onAfterCompaction ? { onAfterCompaction: options.onAfterCompaction } : {}),
          },
        }
      : {}),
    cacheBreakpoints: options.cacheBreakpoints ?? 'off',
    summaryShare: economy.summaryShare,
    recall: economy.recall,
    ...(tools !== undefined ? { tools } : {}),
    ...(providerCompact !== undefined ? { providerCompact } : {}),
    ...(options.providerCompaction
      ? { providerCompaction: options.providerCompaction === true ? {} : options.providerCompaction }
      : {}),
  });
  // A new server compaction starts a new view: the atoms and plan of the old one no longer apply.
  const live = new LiveEntries(
    () => {
      // The facts kept so far stay for the facts block of the view that follows (covered-facts.ts).
      const facts = conversation.view.plan?.facts;
      conversation.view.reset();
      if (facts?.length) conversation.carriedFacts = facts;
    },
    { protectTask: settings.protectTask },
  );
  // Which stored record each plan this view held came from (or was written as): see `storedPlanRecord`.
  const planIds = new WeakMap<CompactionPlan, string>();
  // The plan of a view that holds ephemeral messages is this process's own: never stored.
  const save = (patch: Record<string, unknown>) =>
    history.hasEphemeral ? Promise.resolve() : history.saveMeta(patch);
  const conversation: GuardConversation = {
    get entries() {
      return live.of(history.entries, history.format);
    },
    get history() {
      return history.entries;
    },
    compactionSeq: () => live.compactionSeq,
    generation: () => history.generation,
    get format() {
      return history.format;
    },
    view: guard.createView(),
    state: { level: undefined, usage: undefined, usageWarning: resetUsageWarning() },
    noticeDue: null,
    lastUsage: null,
    // The manager runs what a request puts off after it (`compactAfterRequest`: manager-requests.ts).
    afterRequest: true,
    ...(store
      ? {
          save,
          saveUsageWarning: (state) => save({ usageWarning: encodeUsageWarning(state, history.storeEpoch) }),
          saveBudgetNoticed: (level) =>
            save({ budgetNoticed: encodeBudgetNoticed(level, history.storeEpoch) }),
          storedPlan: (current, made) => adoptableStoredPlan(history, planIds, current, made),
          savePlan: (plan, previous, made, patch) =>
            savePlanUnlessTaken(history, planIds, plan, previous, made, patch),
          keepAhead: (plan, mark, memory, spec) =>
            save({
              // With its sum: a record changed where it is kept is prepared again, not taken.
              ahead: withSum({
                v: STORED_AHEAD_VERSION,
                epoch: history.storeEpoch,
                plan: planSum(plan),
                ...mark,
                ...(memory ? { memory } : {}),
              } satisfies StoredAhead),
              // Under its own key: a worker serving from the stored view record never decodes it.
              aheadSpec: spec
                ? withSum({
                    v: STORED_AHEAD_VERSION,
                    epoch: history.storeEpoch,
                    plan: planSum(plan),
                    ...spec,
                  } satisfies StoredSpec)
                : undefined,
            }),
        }
      : {}),
  };
  storedPlanIds.set(conversation, planIds);
  const recallIndex = new RecallIndex({
    entries: () => history.entries,
    generation: () => history.generation,
    countText: (text) => measurer.defaultCounter(history.format).countText(text),
    ...(store ? { store } : {}),
    conversationId,
    eager: settings.recall,
    onWarn: warn,
  });
  return { settings, store, history, measurer, counts, guard, conversation, live, recallIndex, heldMeta };
}

/**
 * The provider's compaction the `providerCompaction` option asks for: its `compact` function, or
 * `/responses/compact` through the `llm` settings; one that cannot be called says why when asked.
 */
function providerCompactor(
  options: ContextManagerOptions,
  note: NoteCompaction,
): ProviderCompactor | undefined {
  const asked = options.providerCompaction;
  if (!asked) return undefined;
  const llm = options.llm;
  const compact =
    (typeof asked === 'object' ? asked.compact : undefined) ??
    (llm ? LLM_PROVIDERS[llm.provider].compact?.(llm) : undefined);
  const model = options.model ?? llm?.model;
  if (compact === undefined || model === undefined) {
    return () =>
      Promise.reject(
        new Error(
          compact === undefined
            ? 'no providerCompaction.compact function and no llm settings with provider "openai" to call /responses/compact'
            : 'no model option to compact for',
        ),
      );
  }
  return responsesCompactor(compact, model, note);
}

/**
 * What each provider of the `llm` option brings: the LLM-backed tools, and the endpoint that
 * compacts a conversation where the provider has one (OpenAI's `/responses/compact`).
 */
const LLM_PROVIDERS: Readonly<
  Record<
    NonNullable<ContextManagerOptions['llm']>['provider'],
    {
      tools: typeof createOpenAITools;
      compact?: typeof createResponsesCompact;
    }
  >
> = {
  openai: { tools: createOpenAITools, compact: createResponsesCompact },
  anthropic: { tools: createAnthropicTools },
};

/** The LLM-backed tools the `llm` option asks for, reporting their fallbacks as warnings. */
export function llmTools(
  llm: ContextManagerOptions['llm'],
  warn: (code: string, message: string) => void,
): ContextTools | undefined {
  if (!llm) return undefined;
  const { provider, ...rest } = llm;
  const onWarn = (w: LLMWarning) => warn(w.code, w.message);
  return LLM_PROVIDERS[provider].tools({ ...rest, onWarn });
}

/**
 * Restores what the stored conversation kept beside its messages (`meta`): the plan of its view,
 * the guard's level and usage, and the summary prepared for the plan's successor; the view starts
 * afresh.
 */
export function restoreMeta(
  conversation: GuardConversation,
  meta: Record<string, unknown> | null,
  epoch: string | null,
  warn?: (code: string, message: string) => void,
): void {
  conversation.view.reset();
  const stored = decodePlan(meta?.plan);
  // A plan names messages by seq: one made in another generation of the log (replaced or popped
  // since, by a writer that left the plan behind) may name other messages, or none.
  const stale = stored !== null && (meta?.planEpoch ?? null) !== epoch;
  conversation.view.setPlan(stale ? null : stored);
  const plan = conversation.view.plan;
  if (stale) {
    warn?.(
      'stored_plan_stale',
      'the compaction plan stored beside the conversation was made before the conversation was replaced or popped: it is not applied, and the view is planned again from the history',
    );
  } else if (!plan && meta?.plan !== undefined && meta.plan !== null) {
    warn?.(
      'stored_plan_unreadable',
      'the compaction plan stored beside the conversation is corrupt, was changed, or was written by another version: it is not applied, and the view is planned again from the history',
    );
  }
  if (plan && typeof meta?.planId === 'string') storedPlanIds.get(conversation)?.set(plan, meta.planId);
  restoreGuardState(conversation, meta, epoch, warn);
  restoreAhead(conversation, meta, epoch, { plan, withSpec: true }, warn);
}

/**
 * The summary prepared ahead for the successor of the plan the view holds, as a worker stored it
 * (src/guard/stored-ahead.ts): where the preparation stands and the model's answer, to be taken
 * in where this history still holds what it covers. None where it is of another generation or
 * plan, or unusable (with a warning: corrupt, changed, or written by another version). `view` is
 * the plan the view starts on (decoded from `meta`) and, where the caller has it, its digest.
 */
export function restoreAhead(
  conversation: GuardConversation,
  meta: Record<string, unknown> | null,
  epoch: string | null,
  view: { plan: CompactionPlan | null; digest?: string | null; withSpec?: boolean },
  warn?: (code: string, message: string) => void,
): void {
  const stored = decodeStoredAhead(meta?.ahead);
  if (!stored && meta?.ahead !== undefined && meta.ahead !== null) {
    warn?.(
      'stored_ahead_unreadable',
      'the summary prepared ahead stored beside the conversation is corrupt, was changed, or was written by another version: it is prepared again',
    );
  }
  if (!stored || stored.epoch !== epoch) return;
  const digest = view.digest !== undefined ? view.digest : storedPlanSum(meta?.plan);
  if (stored.plan !== digest) return;
  conversation.ahead = {
    ...emptyAheadState(),
    plan: view.plan,
    seqs: new Set(stored.seqs),
    triedAt: stored.triedAt,
    settled: stored.settled,
    stored: stored.memory,
  };
  // The plan made ahead, where the history is loaded (a compaction or a preparation may take it).
  if (view.withSpec) conversation.ahead.storedSpec = restoredSpec(meta?.aheadSpec, epoch, digest, warn);
}

/** The plan made ahead for the successor of the plan `digest` (`StoredSpec`), decoded; undefined where none is usable. */
function restoredSpec(
  value: unknown,
  epoch: string | null,
  digest: string | null,
  warn?: (code: string, message: string) => void,
): HeldSpec | undefined {
  if (value === undefined || value === null) return undefined;
  const stored = decodeStoredSpec(value);
  const spec = stored ? decodePlan(stored.spec) : null;
  if (!stored || !spec) {
    warn?.(
      'stored_ahead_unreadable',
      'the plan made ahead stored beside the conversation is corrupt, was changed, or was written by another version: it is planned again',
    );
    return undefined;
  }
  if (stored.epoch !== epoch || stored.plan !== digest) return undefined;
  const { entries, previous, focus, maxTokens } = stored;
  return { spec, entries, previous, focus, maxTokens };
}

/**
 * The guard's level, usage and whether the last request compacted, as the stored conversation kept
 * them (`restoreMeta` without the plan; src/guard/stored-guard-state.ts). A state that is not
 * readable (changed where it is kept, damaged, from a version that kept no sum) is not used, with a
 * warning: the guard starts afresh.
 */
export function restoreGuardState(
  conversation: GuardConversation,
  meta: Record<string, unknown> | null,
  epoch: string | null,
  warn?: (code: string, message: string) => void,
): void {
  restoreGuard(conversation, meta, warn);
  const warning = decodeUsageWarning(meta?.usageWarning, epoch);
  if (warning === 'unreadable') {
    warn?.(
      'stored_guard_unreadable',
      'the state of the usage_high warning stored beside the conversation is corrupt, was changed, or was written by another version: it starts afresh',
    );
  } else if (warning !== 'absent') conversation.state.usageWarning = warning;
  const noticed = decodeBudgetNoticed(meta?.budgetNoticed, epoch);
  if (noticed === 'unreadable') {
    warn?.(
      'stored_guard_unreadable',
      'the state of the budget notice stored beside the conversation is corrupt, was changed, or was written by another version: it starts afresh',
    );
  } else if (noticed !== 'absent') conversation.state.budgetNoticed = noticed.level;
}

/** The guard's level, usage and last compaction (see `restoreGuardState`). */
function restoreGuard(
  conversation: GuardConversation,
  meta: Record<string, unknown> | null,
  warn?: (code: string, message: string) => void,
): void {
  const guard = decodeGuardState(meta?.guard);
  if (guard === 'unreadable') {
    warn?.(
      'stored_guard_unreadable',
      "the guard's state stored beside the conversation (its level, usage and last compaction) is corrupt, was changed, or was written by another version: the guard starts afresh",
    );
    return;
  }
  if (guard !== 'absent')
    conversation.state = {
      level: guard.level ?? undefined,
      usage: guard.usage ?? undefined,
      usageWarning: resetUsageWarning(),
      // The last request compacted, leaving a view of this many tokens (cleared by the next one).
      compactedLast: guard.compacted !== null ? { tokens: guard.compacted } : undefined,
    };
}

/** Forgets what was derived from entries that were replaced or cleared. */
export function resetDerived(
  parts: Pick<ManagerParts, 'measurer' | 'live' | 'conversation' | 'recallIndex'>,
): void {
  parts.measurer.forgetBounds();
  parts.live.reset();
  parts.conversation.view.reset();
  parts.conversation.state.usageWarning = resetUsageWarning();
  parts.conversation.state.budgetNoticed = undefined;
  parts.recallIndex.update();
}

/**
 * Sets the provider's cache figures for the last request beside the meter's prediction in
 * `usage().cost.reported`, and warns (`cache_mismatch`) when they differ by more than 5% of the
 * input: once per conversation and cause (more read than predicted, less read, no cache figures in
 * the reply at all), since a cause that holds for one reply holds for the next ones too.
 */
export function compareCache(
  conversation: GuardConversation,
  sample: UsageSample,
  measurer: Pick<ContextMeasurer, 'warnOnce'>,
): CacheComparison | undefined {
  const cost = conversation.lastUsage?.cost;
  const meter = cost ? conversation.meters?.get(cost.model) : undefined;
  meter?.learnBreakpoints(sample);
  if (cacheUnreported(sample)) {
    if (meter?.last && meter.last.cachedTokens > 0) {
      measurer.warnOnce(
        'cache_mismatch:unreported',
        'cache_mismatch',
        `the provider's usage carries no cache figures, where ${meter.last.cachedTokens} input tokens were expected from its cache: the cost meter's cache predictions cannot be checked`,
      );
    }
    return undefined;
  }
  const comparison = meter?.compare(sample);
  if (!cost || !comparison) return undefined;
  cost.reported = comparison;
  if (comparison.relative > 0.05) {
    const cause = comparison.difference > 0 ? 'more' : 'less';
    measurer.warnOnce(
      `cache_mismatch:${cause}`,
      'cache_mismatch',
      `the provider read ${comparison.reportedCached} input tokens from its cache where ${comparison.predictedCached} were expected (${cause} than predicted; said once per conversation)`,
    );
  }
  return comparison;
}

/**
 * What a response said the provider did to the context on its server: its compaction steps are
 * billed by the meter of the last request (they are not in the top-level usage), and both they
 * and the applied edits go out as `context:provider_context`.
 */
export function recordProviderContext(
  conversation: GuardConversation,
  sample: UsageSample,
  appliedEdits: AppliedEdit[],
  emitter: ContextEmitter,
): void {
  const iterations = sample.iterations;
  if (iterations) {
    const cost = conversation.lastUsage?.cost;
    conversation.meters?.get(cost?.model ?? '')?.billIterations(iterations);
  }
  if (!iterations?.length && appliedEdits.length === 0) return;
  emitter.emit('context:provider_context', {
    provider: 'anthropic',
    ...(iterations?.length ? { iterations } : {}),
    ...(appliedEdits.length > 0 ? { appliedEdits } : {}),
  });
}

/**
 * A copy of the last request's figures the caller may keep (the meter's totals keep moving), its
 * prices rounded to a billionth of a dollar: sums of per-token prices in binary floating point
 * carry noise (`0.09122999999999999`) that is no part of what was billed.
 */
export function copyUsage(last: Usage): Usage {
  const { cost, ...figures } = last;
  if (!cost) return { ...figures };
  const copy = { ...cost, last: roundedPrices(cost.last), totals: roundedPrices(cost.totals) };
  if (cost.totals.serverCompactions) copy.totals.serverCompactions = { ...cost.totals.serverCompactions };
  if (cost.reported) copy.reported = { ...cost.reported };
  return { ...figures, cost: copy };
}

function roundedPrices<T extends { price?: number; uncachedPrice?: number }>(figures: T): T {
  const copy = { ...figures };
  if (copy.price !== undefined) copy.price = Math.round(copy.price * 1e9) / 1e9;
  if (copy.uncachedPrice !== undefined) copy.uncachedPrice = Math.round(copy.uncachedPrice * 1e9) / 1e9;
  return copy;
}

/** Each conversation's plan ids (see `composeParts`), for `restoreMeta`. */
const storedPlanIds = new WeakMap<GuardConversation, WeakMap<CompactionPlan, string>>();

/**
 * The plan a conversation's metadata holds, with the id it was stored under, when it can be
 * adopted by a view of `history` made for `made`: stored in the generation this history holds
 * (a replaced conversation's plan is not this one's), for the same budget and counter, and about
 * messages this history holds (it covers no more than its length).
 */
function storedPlanRecord(
  value: Record<string, unknown> | null,
  history: History,
  made: PlanMade,
): { plan: CompactionPlan; id: string } | null {
  if (!value || typeof value.planId !== 'string') return null;
  if ((value.planEpoch ?? null) !== history.storeEpoch) return null;
  const plan = decodePlan(value.plan);
  if (!plan || plan.budget !== made.budget || plan.counterId !== made.counterId) return null;
  return { plan, id: value.planId };
}

/**
 * Issue 32, workers agree: the plan another worker stored after the one this view holds (a record
 * with another id, made at this plan's history length or later), when this history holds all it
 * covers; null when there is none.
 */
async function adoptableStoredPlan(
  history: History,
  planIds: WeakMap<CompactionPlan, string>,
  current: CompactionPlan | null,
  made: PlanMade,
): Promise<CompactionPlan | null> {
  if (history.hasEphemeral) return null;
  const stored = storedPlanRecord(await history.readMeta(), history, made);
  if (!stored || (current && planIds.get(current) === stored.id)) return null;
  if (current && stored.plan.historyLength < current.historyLength) return null;
  if (stored.plan.historyLength > history.entries.length) return null;
  planIds.set(stored.plan, stored.id);
  return stored.plan;
}

/**
 * Stores a plan just made, with a new id, unless another worker stored one at the same history
 * length or later since the plan this view held (compare-and-set: the first to store wins):
 * resolves with that plan then, when this history holds all it covers, else null.
 */
async function savePlanUnlessTaken(
  history: History,
  planIds: WeakMap<CompactionPlan, string>,
  plan: CompactionPlan,
  previous: CompactionPlan | null,
  made: PlanMade,
  patch: Record<string, unknown>,
): Promise<CompactionPlan | null> {
  if (history.hasEphemeral) return null;
  const id = randomUUID();
  const knownId = previous ? planIds.get(previous) : undefined;
  // Another worker's record since `previous`, at this plan's history length or later.
  const takenIn = (value: Record<string, unknown> | null) => {
    const stored = storedPlanRecord(value, history, made);
    return stored && stored.id !== knownId && stored.plan.historyLength >= plan.historyLength ? stored : null;
  };
  const unwritten = await history.updateMeta((value) =>
    takenIn(value) ? null : { ...patch, plan: encodePlan(plan), planId: id, planEpoch: history.storeEpoch },
  );
  const winner = unwritten === undefined ? null : takenIn(unwritten);
  if (!winner) {
    planIds.set(plan, id);
    return null;
  }
  if (winner.plan.historyLength > history.entries.length) return null;
  planIds.set(winner.plan, winner.id);
  return winner.plan;
}
