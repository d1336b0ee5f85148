/**
 * The seed's ContextGuard: given a measured request, decides whether the view stands, must be
 * compacted, warrants a warning, or cannot go (decline); asks the planner for a plan when it must
 * compact, and hands back the fitted messages. Per-conversation state (the plan, the level the
 * layered strategy last acted at, the warning latch) lives in the conversation it is given.
 */

import {
  type BeforeCompactionResult,
  type CompactionHooks,
  fitPinned,
  pinnedTexts,
} from '../compaction/hooks.js';
import { type CompactionPlan, encodePlan, planSum } from '../compaction/plan.js';
import { Planner, type PlanRequest, type PlanResult } from '../compaction/planner.js';
import { latestUserAtomIndex, protectionsOf } from '../compaction/protections.js';
import type { ProviderCompactor } from '../compaction/provider-compaction.js';
import type { StrategyOption } from '../compaction/strategy.js';
import { pinnedMessage, summaryReserve } from '../compaction/summary-message.js';
import { escalate, type Level, levelOf } from '../compaction/zones.js';
import { ContextDeclinedError, ContextOverflowError } from '../errors.js';
import type { CompactionReceipt, ContextEvents } from '../events.js';
import { wireFormat } from '../formats/registry.js';
import { History } from '../history/history.js';
import type { ContextMeasurer, ResolvedRequest } from '../measure/measurer.js';
import { toolEffectClassifier } from '../messages/tool-effect.js';
import type { MessageFormat } from '../messages/types.js';
import { billRequest, conversationTime } from '../meter/metering.js';
import { nextUsageWarning, resetUsageWarning } from '../meter/usage-warning.js';
import { checkStrategy, DEFAULTS, type RequestOptions, resolveShares } from '../options.js';
import { guardedTools } from '../tools/guarded-tools.js';
import { canPrepare } from '../tools/llm.js';
import { createOfflineTools } from '../tools/offline.js';
import { summarizeOffline } from '../tools/offline-summarizer.js';
import type { ContextTools } from '../tools/types.js';
import { PlanBlocks } from '../view/plan-blocks.js';
import { type BuiltView, type SentView, View } from '../view/view.js';
import type { Atom } from '../wire/atoms.js';
import { CompactAhead, emptyCompactAheadState } from './compact-ahead.js';
import { showCoveredFacts } from './covered-facts.js';
import {
  type ContextGuardOptions,
  type GuardConversation,
  type GuardDecision,
  overflowBreakdown,
  WholeHistoryNeeded,
} from './guard-types.js';
import { ProviderCompaction } from './provider-compaction.js';
import { encodeGuardState, sameUsageWarning } from './stored-guard-state.js';
import { emptyAheadState, leftView, recordingTools, SummaryAhead } from './summary-ahead.js';

export type {
  ContextGuardOptions,
  GuardAction,
  GuardConversation,
  GuardDecision,
  GuardState,
} from './guard-types.js';

/** Decides when a view compacts and fits it to the budget (the context guard of the seeds). */
export class ContextGuard {
  readonly measurer: ContextMeasurer;
  readonly blocks: PlanBlocks;
  private readonly planner: Planner;
  private readonly strategy: StrategyOption;
  private readonly warnAt: number;
  private readonly declineAt: number | undefined;
  private readonly jumpEscalation: number;
  private readonly compactThreshold: number;
  private readonly targetUsage: number;
  private readonly autoCompact: boolean;
  private readonly compactWhenCacheExpired: boolean;
  private readonly compactAfterRequest: boolean;
  private readonly costMeter: boolean;
  private readonly preserveSystem: boolean;
  private readonly protectTask: boolean;
  /** Share of the budget the memory of what left the view may take (summary and facts). */
  private readonly summaryShare: number | undefined;
  private readonly clearAt: number | undefined;
  private readonly notice: boolean;
  private readonly hooks: CompactionHooks;
  private readonly budgetLevels: readonly number[] | undefined;
  private readonly cacheBreakpoints: 'auto' | 'off';
  private readonly providerCompact: ProviderCompactor | undefined;
  private readonly provider: ProviderCompaction | null;
  private readonly offline: ContextTools;
  /** Summaries prepared ahead, with tools that can (the `llm` tools); null otherwise. */
  private readonly ahead: SummaryAhead | null;
  /** The provider's compaction prepared ahead (`providerCompact`); null without one. */
  private readonly compactAhead: CompactAhead | null;
  /** The conversation `check` works on, kept while each call's messages extend the last call's. */
  private standalone: { source: unknown[]; conversation: GuardConversation; history: History } | null = null;

  constructor(options: ContextGuardOptions) {
    this.measurer = options.measurer;
    // A name the planner does not know would silently drop instead of summarizing.
    if (options.strategy !== undefined) checkStrategy(options.strategy);
    this.strategy = options.strategy ?? 'summarize';
    this.warnAt = options.levels?.warnAt ?? DEFAULTS.warnAt;
    this.declineAt = options.levels?.declineAt;
    this.jumpEscalation = options.levels?.jumpEscalation ?? DEFAULTS.jumpEscalation;
    const shares = resolveShares(options);
    this.summaryShare = shares.summaryShare;
    this.compactThreshold = shares.compactThreshold;
    this.targetUsage = shares.targetUsage;
    this.autoCompact = options.autoCompact ?? true;
    this.compactWhenCacheExpired = options.compactWhenCacheExpired ?? true;
    this.compactAfterRequest = options.compactAfterRequest ?? false;
    this.costMeter = options.costMeter ?? true;
    this.preserveSystem = options.preserveSystem ?? DEFAULTS.preserveSystem;
    this.protectTask = options.protectTask ?? DEFAULTS.protectTask;
    const clearing = options.clearing ?? {};
    this.clearAt = clearing.trigger;
    this.notice = options.compactionNotice === true;
    this.hooks = options.hooks ?? {};
    this.budgetLevels =
      options.budgetNotice && options.budgetNotice.length > 0
        ? [...new Set(options.budgetNotice)].sort((a, b) => a - b)
        : undefined;
    this.cacheBreakpoints = options.cacheBreakpoints ?? 'off';
    this.providerCompact = options.providerCompact;
    this.provider = options.providerCompaction
      ? new ProviderCompaction(options.providerCompaction, this.compactThreshold, (code, message) =>
          this.measurer.warn(code, message),
        )
      : null;
    this.blocks = new PlanBlocks(
      options.facts ?? 'system',
      clearing.clearToolInputs === true,
      options.recall === true,
      options.summaryRole ?? 'user',
      toolEffectClassifier({
        ...(options.readOnlyTools ? { readOnlyTools: options.readOnlyTools } : {}),
        ...(options.sideEffectTools ? { sideEffectTools: options.sideEffectTools } : {}),
      }),
    );
    const offline = createOfflineTools();
    this.offline = offline;
    const tools =
      options.tools && guardedTools(options.tools, offline, (code, m) => this.measurer.warn(code, m));
    const ahead = options.summaryAhead ?? true;
    const at =
      (typeof ahead === 'object' ? ahead.at : undefined) ??
      this.targetUsage + (this.compactThreshold - this.targetUsage) / 2;
    // With the provider's compaction too: the summary is what a compaction takes when the
    // provider's compacted window is not ready, and no request waits on a model for it.
    this.ahead =
      ahead !== false && canPrepare(options.tools)
        ? new SummaryAhead(
            options.tools,
            offline,
            at,
            // A range is settled only once the view holds what a compaction at the trigger frees.
            Math.min(at, this.compactThreshold - this.targetUsage),
            (code, m) => this.measurer.warn(code, m),
          )
        : null;
    this.compactAhead = this.providerCompact
      ? new CompactAhead(
          this.providerCompact,
          Math.min(at, this.compactThreshold - this.targetUsage),
          at,
          (code, m) => this.measurer.warn(code, m),
        )
      : null;
    this.planner = new Planner(
      {
        strategy: this.strategy,
        recentCount: options.recentCount ?? DEFAULTS.recentCount,
        compactThreshold: this.compactThreshold,
        targetUsage: this.targetUsage,
        keepToolResults: options.keepToolResults ?? DEFAULTS.keepToolResults,
        clearing,
        maxCompactRetries: options.maxCompactRetries ?? DEFAULTS.maxCompactRetries,
        criticalFloor: options.criticalFloor ?? DEFAULTS.criticalFloor,
        summaryShare: shares.summaryShare,
        ...(options.summaryInstructions ? { summaryInstructions: options.summaryInstructions } : {}),
      },
      tools ?? offline,
      tools === undefined,
      this.blocks,
    );
  }

  /** A new view for a conversation, counting with this guard's measurer. */
  createView(): View {
    return new View(this.blocks, this.measurer, this.protectTask);
  }

  /**
   * Tokens a request sends for `built`, built by `view` under its plan: its messages, what lies
   * outside them (`fixedTokens`, the request's own by default), and what `View.send` adds once
   * the view is fitted (`View.addedTokens`). A request in another format than the conversation's
   * is sent converted: what it adds is not known before it is (`send` counts it).
   */
  private sentTokens(
    view: View,
    built: BuiltView,
    r: ResolvedRequest,
    format: MessageFormat,
    fixedTokens = r.fixedTokens,
  ): number {
    const added = r.format === format ? view.addedTokens(built, format, r.counter) : 0;
    return built.tokens + fixedTokens + added;
  }

  /**
   * Where the view sent was counted at `measured` against a limit of `limit` (the provider's exact
   * count, the view converted to another format): compacts it to a budget smaller by as much, and
   * builds it again under that budget.
   */
  private async compactTighter(
    c: GuardConversation,
    r: ResolvedRequest,
    limit: number,
    measured: number,
  ): Promise<{ request: ResolvedRequest; receipt: CompactionReceipt | null; out: SentView }> {
    const request: ResolvedRequest = {
      ...r,
      budget: Math.max(1, Math.floor((r.budget * limit) / measured) - 1),
    };
    const receipt = await this.compactNow(c, request, 'over_budget');
    return { request, receipt, out: await this.viewFor(c, request) };
  }

  /**
   * Checks messages on their own (no manager): measures them for `request`, decides, and (unless
   * `fit` is false) returns the fitted messages. Successive calls whose messages extend the last
   * call's keep the plan, so the views stay prefix-stable as they would in a manager.
   */
  async check(
    messages: readonly unknown[],
    request: RequestOptions & { fit?: boolean } = {},
  ): Promise<GuardDecision> {
    const conversation = await this.standaloneConversation(messages);
    const r = await this.measurer.prepare(request, conversation.format);
    if (request.fit === false) return this.decide(conversation, r);
    const decision = await this.fit(conversation, r, request);
    // Summaries prepared ahead: after the call, as a manager does after a request. It works on
    // what it read when it started, so a call meanwhile never sees it half done.
    const prepare = this.preparation(conversation);
    if (prepare) setImmediate(prepare);
    return decision;
  }

  /**
   * The request's view for a conversation: compacts first when the view has grown past the
   * trigger (or a level of the layered strategy), checks the count with the provider near the
   * limit, and decides. Never throws for a request that cannot go: that is a `decline` decision.
   */
  async fit(
    c: GuardConversation,
    resolved: ResolvedRequest,
    request: RequestOptions,
  ): Promise<GuardDecision> {
    let r = resolved;
    let receipt: CompactionReceipt | undefined;
    try {
      let out = await this.viewFor(c, r, (rc) => {
        receipt = rc;
      });
      // Near the budget with an estimate, ask the provider for the exact count where it offers one.
      if (this.measurer.wantsExactCount(r, out.total)) {
        if (c.partial) throw new WholeHistoryNeeded("the provider's count");
        const exact = await this.measurer.exactCount(r, out.messages, request.tools);
        if (exact !== undefined && exact > r.declared) {
          const tighter = await this.compactTighter(c, r, r.declared, exact);
          receipt = tighter.receipt ?? receipt;
          out = tighter.out;
          r = tighter.request;
        }
      }
      // A view sent in another format than the conversation's is counted again once converted
      // (`View.send`), and conversion can make it larger than the count it was fitted on (an
      // OpenAI-shaped agent session is 0.4–1.5% larger as Anthropic's or Gemini's). Past the budget
      // so, it is compacted to a budget smaller by as much, as for the provider's count above.
      if (out.total > r.budget && (c.format ?? r.format) !== r.format) {
        if (c.partial) throw new WholeHistoryNeeded('a conversion past the budget');
        const tighter = await this.compactTighter(c, r, r.budget, out.total);
        receipt = tighter.receipt ?? receipt;
        out = tighter.out;
      }
      const declines = this.declineAt !== undefined && out.total > this.declineAt * r.budget;
      if (c.partial && (out.total > r.budget || declines)) throw new WholeHistoryNeeded('a decline');
      if (out.total > r.budget) throw this.overflow(c, r, out.total, out.noticeTokens);
      // Warn on what is sent, after compacting: a view still this full leaves the model little room.
      const sent = out.total / r.budget;
      let warning: string | undefined;
      // A compaction put off until after this request counts as made: the view it leaves is what
      // the next request sends, and this one's fullness is no news (`compactAfterRequest`).
      const deferred = c.compactDue !== undefined;
      const next = nextUsageWarning(c.state.usageWarning, {
        usage: deferred ? 0 : sent,
        warnAt: this.warnAt,
        budget: r.declared,
        compacted: receipt !== undefined || deferred,
      });
      // Kept where it changed (it fired, a compaction followed it, it re-armed): a worker that never
      // saw the conversation warns once per crossing, as the one that served it (issue 32).
      const changed = !sameUsageWarning(c.state.usageWarning, next.state);
      c.state.usageWarning = next.state;
      if (changed && c.saveUsageWarning) await c.saveUsageWarning(next.state);
      if (next.warn) {
        warning = `the view is at ${Math.round(sent * 100)}% of the ${r.declared}-token budget`;
        this.measurer.warn('usage_high', warning);
      }
      if (this.declineAt !== undefined && out.total > this.declineAt * r.budget) {
        throw this.overflow(
          c,
          { ...r, budget: Math.floor(this.declineAt * r.budget) },
          out.total,
          out.noticeTokens,
        );
      }
      const tokens = Math.ceil(out.total * r.correction);
      const pct = tokens / r.declared;
      c.lastUsage = {
        budget: r.declared,
        tokens,
        pct,
        trigger: Math.floor(this.compactThreshold * r.declared),
        target: Math.floor(this.targetUsage * r.declared),
        messages: out.messages.length,
      };
      this.measurer.recordSent(r, request, out.total);
      const measured: ContextEvents['context:measure'] = {
        tokens,
        budget: r.declared,
        pct,
        exact: r.counter.exact,
        messages: out.messages.length,
      };
      if (this.costMeter) {
        const cost = billRequest(
          this.measurer,
          c,
          r,
          out.unmarked,
          request.tools,
          out.noticeTokens,
          this.cacheBreakpoints === 'auto',
        );
        c.lastUsage.cost = cost;
        measured.cost = cost.last;
      }
      this.measurer.events.emit('context:measure', measured);
      for (const included of out.included) this.measurer.events.emit('context:include', included);
      const decision: GuardDecision = {
        action: warning !== undefined ? 'warn' : receipt ? 'compact' : 'ok',
        messages: out.messages,
        tokens,
        budget: r.declared,
        pct,
      };
      if (receipt) decision.receipt = receipt;
      if (warning !== undefined) decision.reason = warning;
      return decision;
    } catch (error) {
      if (!(error instanceof ContextOverflowError)) throw error;
      const tokens = error.required;
      return {
        action: 'decline',
        tokens,
        budget: r.declared,
        pct: tokens / r.declared,
        reason: error.message,
        error,
        ...(receipt ? { receipt } : {}),
      };
    }
  }

  /** What `fit` would decide, without compacting or sending anything. */
  decide(c: GuardConversation, r: ResolvedRequest): GuardDecision {
    const format = c.format ?? r.format;
    const built = c.view.build(c.entries, format, r.counter);
    const total = this.sentTokens(c.view, built, r, format);
    const tokens = Math.ceil(total * r.correction);
    const base = { tokens, budget: r.declared, pct: tokens / r.declared };
    const due = this.autoCompact && this.compactionDue(c, total, r, this.replanAt(c, r)) !== undefined;
    if (total > r.budget && !due) {
      const error = this.overflow(c, r, total, 0);
      return { ...base, action: 'decline', reason: error.message, error };
    }
    if (due) return { ...base, action: 'compact' };
    if (total >= this.warnAt * r.budget) {
      return {
        ...base,
        action: 'warn',
        reason: `the view is at ${Math.round((total / r.budget) * 100)}% of the ${r.declared}-token budget`,
      };
    }
    return { ...base, action: 'ok' };
  }

  /** A new plan now when the view is over the trigger (or always, with `force`); null when nothing was due. */
  async compact(c: GuardConversation, r: ResolvedRequest, force: boolean): Promise<CompactionReceipt | null> {
    const format = c.format ?? r.format;
    const built = c.view.build(c.entries, format, r.counter);
    const total = this.sentTokens(c.view, built, r, format);
    if (!force && total <= Math.floor(this.compactThreshold * r.budget)) return null;
    return this.compactNow(c, r, force ? 'forced' : 'threshold');
  }

  /**
   * A compaction the model asked for (the `compact` tool): now, down to the target, or to half the
   * view when it is already below the target, with `focus` for the summarizer. The plan applies
   * from the next view on. Null when `onBeforeCompaction` vetoed it.
   */
  async compactRequested(
    c: GuardConversation,
    r: ResolvedRequest,
    focus?: string,
  ): Promise<CompactionReceipt | null> {
    const format = c.format ?? r.format;
    const built = c.view.build(c.entries, format, r.counter);
    const total = this.sentTokens(c.view, built, r, format);
    const target = Math.min(Math.floor(this.targetUsage * r.budget), Math.floor(total / 2));
    return this.compactNow(c, r, 'requested', { target, ...(focus !== undefined ? { focus } : {}) });
  }

  /** A `ContextOverflowError` for what must be kept in the conversation's view, with its breakdown. */
  overflow(
    c: GuardConversation,
    r: ResolvedRequest,
    required: number,
    noticeTokens = 0,
  ): ContextOverflowError {
    return this.emitOverflow(
      new ContextOverflowError(
        r.budget,
        required,
        overflowBreakdown(this.measurer, c, r, required, noticeTokens, this.preserveSystem, this.protectTask),
      ),
    );
  }

  private emitOverflow<E extends ContextOverflowError>(error: E): E {
    this.measurer.events.emit('context:overflow', { error });
    return error;
  }

  /**
   * `compactAfterRequest`: whether the compaction due now (`reason`) waits until after the
   * request. Only a compaction the view can go without: the view fits the budget (and the
   * decline line), no provider compaction is involved, the strategy is not a function of yours
   * (which may decline the request), no compaction notice is asked for (it goes in the view the
   * compaction makes), and the conversation's owner runs it after the request (`afterRequest`).
   */
  private defers(
    c: GuardConversation,
    r: ResolvedRequest,
    reason: CompactionReceipt['reason'],
    total: number,
  ): boolean {
    if (!this.compactAfterRequest || c.afterRequest !== true || this.provider) return false;
    // A strategy of your own may decline: its decline refuses the request it was asked for.
    if (typeof this.strategy === 'function') return false;
    // The compaction notice goes in the view the compaction makes, on the request that made it.
    if (this.notice) return false;
    if (reason === 'over_budget' || total > r.budget) return false;
    return this.declineAt === undefined || total <= this.declineAt * r.budget;
  }

  /**
   * With `compactAfterRequest`: the compaction the conversation's last request put off, to run
   * after it, in order with the conversation's other operations (the manager queues it right
   * behind the request; undefined when none is due). It compacts as the request would have, on
   * the history and request the request saw, and leaves the state the next request starts from
   * (the plan stored, the flag of a compaction just made, the level and usage, a summary due to
   * prepare ahead) as a compaction on the request path leaves it. Skipped when the plan changed
   * since (a compaction meanwhile).
   */
  deferredCompaction(c: GuardConversation): (() => Promise<void>) | undefined {
    const due = c.compactDue;
    if (!due) return undefined;
    c.compactDue = undefined;
    return async () => {
      const r = due.request;
      const format = c.format ?? r.format;
      // The same plan, or (a worker that loaded the history after serving the request from the
      // stored record) the same plan read again: compared by digest off the request path only.
      const plan = c.view.plan;
      if (c.partial || (plan !== due.plan && planSum(plan) !== planSum(due.plan))) return;
      c.pendingLevel = due.level;
      let receipt: CompactionReceipt | null;
      try {
        receipt = await this.compactNow(c, r, due.reason);
      } catch (error) {
        // Not kept (the store down, say): the view stays on the plan every worker holds.
        c.view.setPlan(plan);
        throw error;
      }
      c.state.compactedLast = receipt ? { tokens: receipt.tokensAfter } : undefined;
      if (!receipt) return;
      const built = c.view.build(c.entries, format, r.counter);
      const total = this.sentTokens(c.view, built, r, format);
      c.state.level = levelOf(total / r.budget);
      c.state.usage = total / r.budget;
      this.markAheadDue(c, r, total / r.budget);
    };
  }

  /**
   * After a view at `usage` (a compaction made or not): the request after which a summary or the
   * provider's compaction is to be prepared, when one is due (`aheadIsDue`); none while a
   * compaction is put off (it marks its own once made: `deferredCompaction`).
   */
  private markAheadDue(c: GuardConversation, r: ResolvedRequest, usage: number): void {
    if (!(this.ahead || this.compactAhead) || !this.autoCompact) return;
    // Served from the stored view record (`partial`), the preparation is the manager's to run
    // after the request, once it has loaded the history (off the request path, as here).
    c.aheadDue = !c.compactDue && this.aheadIsDue(c, c.view.plan, usage) ? r : undefined;
  }

  /**
   * With summaries prepared ahead: the preparation the conversation's last request found due, to
   * run off the request path and one at a time with the conversation's other operations (the
   * manager queues it after the request); undefined when none is due. It plans the compaction the
   * trigger will bring (on a scratch view, as if the view had grown to the trigger), writes the
   * offline summary of its range, and asks the model for that range's summary and facts once it
   * is settled (see `SummaryAhead`), without waiting for the answer.
   */
  preparation(c: GuardConversation): (() => Promise<unknown>) | undefined {
    const r = c.aheadDue;
    if ((!this.ahead && !this.compactAhead) || !r) return undefined;
    c.aheadDue = undefined;
    // Never rejects: a preparation that fails leaves the compaction to the offline tools.
    return () =>
      this.prepareAhead(c, r).catch((error: unknown) =>
        this.measurer.warn(
          'summary_ahead_failed',
          `preparing the next summary failed: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
  }

  /** Whether a summary or the provider's compaction should be prepared after a request that left the view at `usage`. */
  private aheadIsDue(c: GuardConversation, plan: CompactionPlan | null, usage: number): boolean {
    const generation = c.generation?.() ?? 0;
    if (this.ahead) {
      c.ahead ??= emptyAheadState();
      if (this.ahead.due(c.ahead, plan, usage, generation, c.partial === true)) return true;
    }
    if (this.compactAhead && wireFormat(c.format ?? 'openai').serverCompaction === 'endpoint') {
      c.compactAhead ??= emptyCompactAheadState();
      if (this.compactAhead.due(c.compactAhead, plan, usage, generation)) return true;
    }
    return false;
  }

  private async prepareAhead(c: GuardConversation, r: ResolvedRequest): Promise<void> {
    const plan = c.view.plan;
    const usage = c.state.usage ?? 0;
    const generation = c.generation?.() ?? 0;
    const ahead = this.ahead;
    if (ahead) c.ahead ??= emptyAheadState();
    const summaryDue = ahead?.due(c.ahead!, plan, usage, generation) === true;
    const endpoint =
      wireFormat(c.format ?? r.format).serverCompaction === 'endpoint' && c.format === r.format;
    if (this.compactAhead) c.compactAhead ??= emptyCompactAheadState();
    const compactDue =
      this.compactAhead !== null &&
      endpoint &&
      this.compactAhead.due(c.compactAhead!, plan, usage, generation);
    if (!summaryDue && !compactDue) return;
    const entries = c.entries.slice();
    // Seqs index the whole history: after a server compaction `entries` is a slice of it.
    const bySeq = c.history ? c.history.slice() : entries;
    const format = c.format ?? r.format;
    const view = this.createView();
    view.setPlan(plan);
    const atoms = view.atoms(entries, format).visible();
    const built = view.build(entries, format, r.counter);
    const total = this.sentTokens(view, built, r, format);
    const trigger = Math.floor(this.compactThreshold * r.budget);
    const target = Math.floor(this.targetUsage * r.budget);
    // The view as it will be at the trigger: the turns to come are newer than anything summarized,
    // so they count as tokens outside the messages; an eighth of the gap covers the last turn's leap.
    const fixedTokens = r.fixedTokens + Math.max(0, trigger - total) + Math.floor((trigger - target) / 8);
    const recorded = recordingTools(this.offline);
    const result = await this.planner.plan({
      entries: bySeq,
      atoms,
      protection: protectionsOf(atoms, bySeq, wireFormat(format), this.preserveSystem, this.protectTask),
      budget: r.budget,
      fixedTokens,
      correction: r.correction,
      format: r.format,
      counter: r.counter,
      count: (m) => this.measurer.count(r.counter, m, format),
      previousPlan: plan,
      reason: 'threshold',
      level: undefined,
      render: (p) => {
        view.setPlan(p);
        const b = view.build(entries, format, r.counter);
        return { tokens: this.sentTokens(view, b, r, format, fixedTokens), messages: b.messages.length };
      },
      before: {
        tokens: this.sentTokens(view, built, r, format, fixedTokens),
        messages: built.messages.length,
      },
      repairs: () => [],
      tools: recorded.tools,
      modelFacts: recorded.modelFacts,
    });
    const summarized = new Set(result.plan.summarized ?? []);
    const seqs = new Set<number>();
    for (const atom of atoms) if (summarized.has(atom.id)) for (const seq of atom.seqs) seqs.add(seq);
    const spec = result.decline === undefined && seqs.size > 0 ? result.plan : null;
    // Reaching the target, the plan frees what a compaction at the trigger frees: the turns to
    // come are newer than anything it takes, so the trigger takes this range whatever they hold.
    const settled = spec !== null && spec.tokens <= target + Math.floor((trigger - target) / 4);
    if (compactDue) {
      // The endpoint is asked in the background; no operation waits for its answer.
      this.compactAhead!.prepare(c.compactAhead!, plan, { spec, atoms, settled, usage, generation });
    }
    if (!summaryDue || !ahead) return;
    // An answer another worker stored for this plan's successor is taken in first: asked once.
    await ahead.hydrate(c.ahead!, plan, bySeq, generation, (t) => r.counter.countText(t));
    ahead.prepare(c.ahead!, plan, {
      seqs,
      calls: recorded.calls,
      spec,
      settled,
      generation,
      usage,
    });
    const state = c.ahead!;
    // Stored for workers that did not prepare it: where it stands now, and the model's answer once back.
    if (c.keepAhead) {
      const keep = c.keepAhead;
      const stored = () =>
        keep(
          plan,
          { triedAt: state.triedAt, settled: state.settled, seqs: [...(state.seqs ?? [])] },
          ahead.storedMemory(state),
          ahead.storedSpec(state),
        );
      state.onMemory = () => {
        if (state.plan === plan) void stored().catch(() => undefined);
      };
      await stored().catch(() => undefined);
    }
    // The fallback summary after the queue moved on (it reads only the entries recorded): the
    // model's call is under way meanwhile, and the next operation does not wait for it.
    setImmediate(() => {
      ahead
        .writeFallback(state)
        .catch((error: unknown) =>
          this.measurer.warn(
            'summary_ahead_failed',
            `the offline summary prepared ahead failed: ${error instanceof Error ? error.message : String(error)}`,
          ),
        );
    });
  }

  /** After a plan that could not reach the target (protected floor), the next waits for real growth. */
  private replanAt(c: GuardConversation, r: ResolvedRequest): number {
    const trigger = Math.floor(this.compactThreshold * r.budget);
    const target = Math.floor(this.targetUsage * r.budget);
    const plan = c.view.plan;
    return plan ? Math.min(r.budget, Math.max(trigger, plan.tokens + (trigger - target))) : trigger;
  }

  /**
   * Whether the prompt cache has expired anyway (the conversation was idle longer than the
   * provider's TTL, by message timestamps) while the view is past half the gap between the target
   * and the next trigger: the compaction due soon then costs no warm prefix, where later it would.
   */
  private dueSoonWithColdCache(
    c: GuardConversation,
    r: ResolvedRequest,
    total: number,
    replanAt: number,
  ): boolean {
    const meter = c.meters?.get(r.modelKey);
    if (!meter?.pricing || meter.last === null) return false;
    const gap = Math.floor(this.compactThreshold * r.budget) - Math.floor(this.targetUsage * r.budget);
    if (total < replanAt - gap / 2) return false;
    return meter.expiredAt(conversationTime(c));
  }

  /** The current plan's view, compacting first when it is due. */
  private async viewFor(
    c: GuardConversation,
    r: ResolvedRequest,
    onCompact?: (receipt: CompactionReceipt) => void,
  ): Promise<SentView> {
    const format = c.format ?? r.format;
    c.compactDue = undefined;
    if (c.partial && this.provider) throw new WholeHistoryNeeded('provider compaction');
    let built = c.view.build(c.entries, format, r.counter);
    let total = this.sentTokens(c.view, built, r, format);
    if (this.autoCompact) {
      // What a provider's compaction covered reaches the facts block (see covered-facts.ts), in the
      // room under the target and a quarter of the gap to the trigger, as a plan's facts do.
      const target = Math.floor(this.targetUsage * r.budget);
      const gap = Math.floor(this.compactThreshold * r.budget) - target;
      const room = target + Math.floor(gap / 4) - total;
      if (await showCoveredFacts(c, r, format, this.planner, this.measurer, Math.max(0, room))) {
        built = c.view.build(c.entries, format, r.counter);
        total = this.sentTokens(c.view, built, r, format);
        c.view.plan!.tokens = total;
        // Changed in place: no longer the stored record another worker may hold (`planId` dropped).
        if (c.save) await c.save({ plan: encodePlan(c.view.plan!), planId: undefined });
      }
    }
    let replanAt = this.replanAt(c, r);
    let reason = this.autoCompact ? this.compactionDue(c, total, r, replanAt) : undefined;
    // Another worker sharing the store may have compacted already: its plan is adopted rather than
    // a second one made, so every worker serves the same view (issue 32).
    if (reason && c.storedPlan && c.compactionSeq?.() === undefined) {
      const stored = await c.storedPlan(c.view.plan, { budget: r.budget, counterId: r.counter.id });
      if (stored) {
        c.view.setPlan(stored);
        built = c.view.build(c.entries, format, r.counter);
        total = this.sentTokens(c.view, built, r, format);
        c.state.level = levelOf(total / r.budget);
        replanAt = this.replanAt(c, r);
        reason = this.compactionDue(c, total, r, replanAt);
      }
    }
    if (
      !reason &&
      !c.state.compactedLast &&
      this.autoCompact &&
      this.compactWhenCacheExpired &&
      this.dueSoonWithColdCache(c, r, total, replanAt)
    )
      reason = 'cache_expired';
    // `compactAfterRequest`: a compaction this view can go without runs after the request.
    if (reason && this.defers(c, r, reason, total)) {
      c.compactDue = { request: r, reason, plan: c.view.plan, level: c.pendingLevel };
      reason = undefined;
    }
    if (c.partial && reason) throw new WholeHistoryNeeded(`compaction (${reason})`);
    if (this.provider) {
      c.provider ??= { request: null };
      const provider = c.provider;
      provider.request = this.provider.request(r);
      // Past the trigger (not a layered level below it, clearing or a cold cache): the server's turn.
      if ((reason === 'threshold' || reason === 'over_budget') && total > replanAt) {
        const handoff = this.provider.takes(r, total, provider.pending, {
          compactionSeq: c.compactionSeq?.(),
          entries: c.entries.length,
        });
        provider.pending = handoff ?? undefined;
        // The server compacts this request: the view goes whole, its reply's block starts the next.
        if (handoff) reason = undefined;
      }
    }
    const last = c.state.compactedLast;
    const receipt = reason ? await this.compactNow(c, r, reason) : null;
    c.state.compactedLast = receipt ? { tokens: receipt.tokensAfter } : undefined;
    // The stored flag goes with the request after the compaction, as this worker's own does (issue
    // 32: workers agree whichever serves, and whether it saw the compaction or not).
    if (last && !receipt && c.save)
      await c.save({
        guard: encodeGuardState({
          level: c.state.level ?? null,
          usage: c.state.usage ?? null,
          compacted: null,
        }),
      });
    if (receipt && last) {
      receipt.consecutive = {
        addedTokens: Math.max(0, total - last.tokens),
        room: Math.max(0, r.budget - last.tokens),
      };
    }
    if (receipt) {
      onCompact?.(receipt);
      built = c.view.build(c.entries, format, r.counter);
      total = this.sentTokens(c.view, built, r, format);
      // The level falls with the usage: it is where the view is now, not a high-water mark.
      c.state.level = levelOf(total / r.budget);
    }
    c.state.usage = total / r.budget;
    // After a compaction too: the next one's range is planned from the plan just made.
    this.markAheadDue(c, r, total / r.budget);
    const notice = this.notice ? c.noticeDue : null;
    c.noticeDue = null;
    const sent = c.view.send(built, {
      format: r.format,
      // The format it was built in: a conversation whose format is not known yet is built as
      // OpenAI, so its summary (a system message) is converted for an Anthropic request.
      conversationFormat: format,
      counter: r.counter,
      fixedTokens: r.fixedTokens,
      budget: r.budget,
      notice,
      cacheBreakpoints: this.cacheBreakpoints,
      coveredSummary: (fromSeq, toSeq, maxTokens) => this.coveredSummary(c, r, fromSeq, toSeq, maxTokens),
      ...(this.budgetLevels
        ? { budgetNotice: { levels: this.budgetLevels, state: c.state.budgetNoticed } }
        : {}),
    });
    if (this.budgetLevels) {
      // Kept where it changed: a worker that never saw the conversation tells a level as the one
      // that served the turns before would (issue 32).
      const changed = c.state.budgetNoticed !== sent.budgetNoticed;
      c.state.budgetNoticed = sent.budgetNoticed;
      if (changed && c.saveBudgetNoticed) await c.saveBudgetNoticed(sent.budgetNoticed);
    }
    return sent;
  }

  /**
   * contextkit's offline summary of the stored messages `fromSeq`–`toSeq` (system and developer
   * messages aside: they are in the view), within the room a plan's summary has and the room the
   * view leaves (`room`): what another provider is sent in place of an opaque compaction item that
   * covered them. Made once per range and size, so the view stays the same from turn to turn while
   * the view leaves the summary its whole share.
   */
  private coveredSummary(
    c: GuardConversation,
    r: ResolvedRequest,
    fromSeq: number,
    toSeq: number,
    room: number,
  ): string {
    const maxTokens = Math.min(summaryReserve(r.budget, this.summaryShare), room);
    const key = `${fromSeq}-${toSeq}-${maxTokens}-${r.counter.id}`;
    if (c.coveredSummary?.key === key) return c.coveredSummary.text;
    const all = c.history ?? c.entries;
    const covered = all.filter((e) => {
      const role = e.message.role;
      return e.seq >= fromSeq && e.seq <= toSeq && role !== 'system' && role !== 'developer';
    });
    const text = summarizeOffline(covered, {
      maxTokens,
      countText: (t) => r.counter.countText(t),
    });
    c.coveredSummary = { key, text };
    return text;
  }

  /**
   * Whether to compact now, and why. The layered strategy acts at its levels (0.5, 0.7, 0.85,
   * 0.95) each time usage reaches a level above the one it last acted at, one level higher after a
   * leap; every strategy compacts past the trigger (after the hysteresis gap) or the budget.
   */
  private compactionDue(
    c: GuardConversation,
    total: number,
    r: ResolvedRequest,
    replanAt: number,
  ): CompactionReceipt['reason'] | undefined {
    c.pendingLevel = undefined;
    // No back-to-back compactions: right after one, the view is left as it is while it fits the
    // budget (the next step of a turn held above the target, say); only new messages that alone
    // exceed the room it left bring another (the receipt's `consecutive` says so).
    if (c.state.compactedLast && total <= r.budget) return undefined;
    const usage = total / r.budget;
    let level = levelOf(usage);
    // A leap: what arrived since the model last spoke (and since the last plan) takes this share of
    // the budget. Read from the view, not from the previous request's usage, so that a worker that
    // never saw that request finds the same (issue 32).
    const format = c.format ?? r.format;
    const leap = c.view.newestStep().reduce((n, m) => n + this.measurer.count(r.counter, m, format), 0);
    if (leap > 0 && leap / r.budget >= this.jumpEscalation) level = escalate(level);
    if (this.strategy === 'layered' && level !== undefined && rank(level) > rank(c.state.level)) {
      c.pendingLevel = level;
      return total > r.budget ? 'over_budget' : 'threshold';
    }
    if (total > replanAt) {
      c.pendingLevel = level;
      return total > r.budget ? 'over_budget' : 'threshold';
    }
    const plan = c.view.plan;
    if (
      this.clearAt !== undefined &&
      total * r.correction > this.clearAt &&
      (!plan || plan.tokens * r.correction <= this.clearAt)
    ) {
      return 'clearing';
    }
    return undefined;
  }

  private async compactNow(
    c: GuardConversation,
    r: ResolvedRequest,
    reason: CompactionReceipt['reason'],
    asked: { target?: number; focus?: string } = {},
  ): Promise<CompactionReceipt | null> {
    const { entries, view } = c;
    const format = c.format ?? r.format;
    // What a server compaction superseded is not in the view: nothing to plan there.
    const atoms = view.atoms(entries, format).visible();
    // The current turn stays in the view (see protectionsOf): on a cold start, its messages are
    // counted exactly before planning, so that no kept message carries an upper bound.
    if (this.measurer.hasBounds(r.counter)) {
      for (let i = Math.max(0, latestUserAtomIndex(atoms)); i < atoms.length; i++) {
        for (const m of atoms[i]!.messages) this.measurer.countExact(r.counter, m, format);
      }
    }
    const before = view.build(entries, format, r.counter);
    const tokensBefore = this.sentTokens(view, before, r, format);
    const previousPlan = view.plan;
    const pinned = await this.beforeHook(
      reason,
      tokensBefore,
      r.budget,
      before.messages.length,
      previousPlan,
    );
    if (pinned === null) return null;
    this.measurer.events.emit('context:pre_compact', {
      messageCount: before.messages.length,
      tokens: tokensBefore,
    });
    // Seqs index the whole history: after a server compaction `entries` is a slice of it.
    const bySeq = c.history ?? entries;
    let ahead: ReturnType<SummaryAhead['compactionTools']> | undefined;
    let prepared: PlanRequest['prepared'];
    let adoption: Awaited<ReturnType<SummaryAhead['adoption']>>;
    const slack = Math.floor(
      (Math.floor(this.compactThreshold * r.budget) - Math.floor(this.targetUsage * r.budget)) / 4,
    );
    if (this.ahead) {
      c.ahead ??= emptyAheadState();
      const generation = c.generation?.() ?? 0;
      // What another worker prepared (and stored) for this compaction is taken in first.
      await this.ahead.hydrate(c.ahead, previousPlan, bySeq, generation, (t) => r.counter.countText(t));
      adoption = await this.ahead.adoption(c.ahead, previousPlan, bySeq, generation);
      ahead = this.ahead.compactionTools(c.ahead, previousPlan, bySeq, generation);
      const seqs = c.ahead.plan === previousPlan ? c.ahead.seqs : null;
      if (seqs && seqs.size > 0) prepared = { seqs, slack };
    }
    // Room for what the hook pins is made while planning, as for the tools' definitions.
    const pinnedReserve =
      pinned.length > 0
        ? this.measurer.count(r.counter, this.blocks.pinnedMessage(pinned, format), format)
        : 0;
    const request: PlanRequest = {
      entries: bySeq,
      atoms,
      protection: protectionsOf(atoms, bySeq, wireFormat(format), this.preserveSystem, this.protectTask),
      budget: r.budget,
      fixedTokens: r.fixedTokens + pinnedReserve,
      correction: r.correction,
      format: r.format,
      counter: r.counter,
      // Memoized even for messages made while planning: the memo holds them weakly, and the ones
      // the plan keeps (placeholders keep their identity) are found again when the view is built.
      count: (m) => this.measurer.count(r.counter, m, format),
      previousPlan,
      reason,
      level: c.pendingLevel,
      render: (plan) => {
        view.setPlan(plan);
        const built = view.build(entries, format, r.counter);
        return { tokens: this.sentTokens(view, built, r, format), messages: built.messages.length };
      },
      before: {
        tokens: tokensBefore,
        messages: before.messages.length,
        bounded: this.measurer.hasBounds(r.counter),
      },
      repairs: () => view.repairs(),
      // The provider's compaction is never asked here, on the request path: what was prepared
      // ahead is adopted below (`CompactAhead`).
      warn: (code, message) => this.measurer.warn(code, message),
      ...(ahead ? { tools: ahead.tools, modelFacts: ahead.modelFacts } : {}),
      ...(prepared ? { prepared } : {}),
      ...asked,
    };
    // The plan made ahead, where it still brings the view near the target: no planning now.
    let result: PlanResult | undefined;
    // The provider's compacted window of the range, prepared ahead: taken first where it is ready.
    if (
      this.providerCompact &&
      wireFormat(r.format).serverCompaction !== 'in-request' &&
      asked.target === undefined
    ) {
      result = this.providerAdoption(c, request, previousPlan, format, r.format, slack);
    }
    // A compaction the model asked for (the compact tool) plans to its own target.
    if (!result && adoption && asked.target === undefined) {
      const { spec, summary } = adoption;
      result =
        (adoption.withModelFacts &&
          this.planner.adopt(request, spec, summary, adoption.withModelFacts, slack)) ||
        this.planner.adopt(request, spec, summary, adoption.facts, slack);
      // A prepared summary covering older messages than the plan's range stands only where they left the view.
      if (result && !leftView(result.plan, atoms, adoption.extras)) result = undefined;
      if (result) {
        result.receipt.prepared = adoption.outcome;
        adoption.taken();
      } else view.setPlan(previousPlan);
    }
    let outcome: CompactionReceipt['prepared'];
    if (result) outcome = result.receipt.prepared;
    else {
      result = await this.planner.plan(request);
      const how = ahead?.outcome(result.plan.summary?.text);
      outcome = how?.outcome;
      if (how && !leftView(result.plan, atoms, how.extras)) {
        // Rare (a repeat the plan keeps, that the prepared summary covers): planned again, offline.
        result = await this.planner.plan({ ...request, tools: this.offline, modelFacts: undefined });
        outcome = 'stale';
      } else how?.taken();
    }
    if (outcome !== undefined) result.receipt.prepared = outcome;
    if (result.refused.length > 0) {
      this.measurer.warn(
        'strategy_refused',
        `the custom strategy chose protected atoms ${result.refused.join(', ')}; they stay in the view`,
      );
    }
    if (result.decline !== undefined) {
      view.setPlan(previousPlan);
      throw this.emitOverflow(
        new ContextDeclinedError(
          r.budget,
          tokensBefore,
          overflowBreakdown(this.measurer, c, r, tokensBefore, 0, this.preserveSystem, this.protectTask),
          result.decline,
        ),
      );
    }
    if (result.warn !== undefined) this.measurer.warn('strategy_warn', result.warn);
    const { plan, receipt } = result;
    await this.pinAfter(c, r, format, atoms, plan, receipt, pinned);
    const after = plan.tokens / r.budget;
    // Stored with the plan, the flag that this request compacted (see `fit`): a worker that never
    // saw the conversation holds back the next compaction as the one that compacted would.
    const guardState = {
      guard: encodeGuardState({
        level: levelOf(after) ?? null,
        usage: after,
        compacted: receipt.tokensAfter,
      }),
    };
    if (c.savePlan) {
      // Another worker stored its plan first: this one gives way to it (the view is built from it).
      const taken = await c.savePlan(
        plan,
        previousPlan,
        { budget: r.budget, counterId: r.counter.id },
        guardState,
      );
      if (taken) view.setPlan(taken);
    } else if (c.save) await c.save({ plan: encodePlan(plan), ...guardState });
    c.noticeDue = receipt;
    this.measurer.events.emit('context:post_compact', {
      messageCount: receipt.messagesAfter,
      tokens: plan.tokens,
      receipt,
    });
    return receipt;
  }

  /**
   * Asks `onBeforeCompaction`: null when it vetoes a compaction the view can do without (under
   * the budget), else the texts it pins. A veto over the budget is refused, and a hook that throws
   * is passed over, each with a `context:warn`.
   */
  private async beforeHook(
    reason: CompactionReceipt['reason'],
    tokens: number,
    budget: number,
    messageCount: number,
    previous: CompactionPlan | null,
  ): Promise<string[] | null> {
    const hook = this.hooks.onBeforeCompaction;
    if (!hook) return [];
    let answer: BeforeCompactionResult | undefined;
    try {
      answer = await hook({ reason, tokens, budget, messageCount, pinned: [...(previous?.pinned ?? [])] });
    } catch (error) {
      this.measurer.warn(
        'hook_failed',
        `onBeforeCompaction threw (${errorText(error)}); compacting without it`,
      );
      return [];
    }
    if (answer?.veto === true) {
      if (tokens <= budget) return null;
      this.measurer.warn(
        'hook_veto_refused',
        `onBeforeCompaction vetoed a compaction of a view over its budget (${tokens} > ${budget} tokens); compacting anyway`,
      );
    }
    const read = pinnedTexts(answer?.pinned);
    if (read.problem) this.measurer.warn('hook_pinned_refused', `onBeforeCompaction: ${read.problem}`);
    return read.texts;
  }

  /**
   * Asks `onAfterCompaction`, then pins what both hooks gave into the plan, within the room the
   * plan leaves under the trigger (trimmed or refused past it, with a `context:warn`), and
   * brings the plan's tokens and the receipt up to date.
   */
  private async pinAfter(
    c: GuardConversation,
    r: ResolvedRequest,
    format: MessageFormat,
    atoms: readonly Atom[],
    plan: CompactionPlan,
    receipt: CompactionReceipt,
    ahead: readonly string[],
  ): Promise<void> {
    const texts = [...ahead];
    const hook = this.hooks.onAfterCompaction;
    if (hook) {
      try {
        const read = pinnedTexts((await hook(structuredClone(receipt)))?.pinned);
        if (read.problem) this.measurer.warn('hook_pinned_refused', `onAfterCompaction: ${read.problem}`);
        texts.push(...read.texts);
      } catch (error) {
        this.measurer.warn(
          'hook_failed',
          `onAfterCompaction threw (${errorText(error)}); nothing added back`,
        );
      }
    }
    if (texts.length === 0) return;
    const at = atoms.find((a) => a.kind !== 'system');
    const room = Math.max(0, Math.floor(this.compactThreshold * r.budget) - plan.tokens);
    const tokensOf = (t: readonly string[]) =>
      t.length === 0 ? 0 : this.measurer.countFresh(r.counter, [pinnedMessage(t, format)], format);
    const fitted = at ? fitPinned(texts, room, tokensOf) : { texts: [], trimmed: 0, refused: texts.length };
    if (fitted.trimmed > 0 || fitted.refused > 0) {
      this.measurer.warn(
        'hook_pinned_trimmed',
        `the compaction hooks pinned more than the ${room} tokens the view has room for under its trigger: ${fitted.trimmed} text trimmed, ${fitted.refused} refused`,
      );
    }
    if (fitted.texts.length === 0) return;
    plan.pinned = fitted.texts;
    plan.pinnedAt = (at as Atom).id;
    c.view.setPlan(plan);
    const built = c.view.build(c.entries, format, r.counter);
    plan.tokens = this.sentTokens(c.view, built, r, format);
    receipt.tokensAfter = plan.tokens;
    receipt.messagesAfter = built.messages.length;
    receipt.pinned = {
      texts: fitted.texts.length,
      tokens: tokensOf(fitted.texts),
      trimmed: fitted.trimmed,
      refused: fitted.refused,
    };
  }

  /**
   * The compaction replacing `previousPlan` taken from the provider's compacted window prepared
   * ahead (`CompactAhead`): the plan made ahead with that window as its summary, where it still
   * brings the view near the target. Undefined otherwise, with a `context:warn` saying why
   * (contextkit then compacts on its own; no request waits on the endpoint).
   */
  private providerAdoption(
    c: GuardConversation,
    request: PlanRequest,
    previousPlan: CompactionPlan | null,
    format: MessageFormat,
    wire: MessageFormat,
    slack: number,
  ): PlanResult | undefined {
    const fallback = (why: string) => {
      this.measurer.warn(
        'provider_compaction_fallback',
        `the provider's compaction was not used (${why}); contextkit compacted on its own`,
      );
      return undefined;
    };
    if (format !== wire || wireFormat(format).serverCompaction !== 'endpoint')
      return fallback(`contextkit can drive no provider compaction for ${wire} requests`);
    c.compactAhead ??= emptyCompactAheadState();
    const ready = this.compactAhead!.adoption(c.compactAhead, previousPlan, c.generation?.() ?? 0);
    if ('reason' in ready) return fallback(ready.reason);
    const result = this.planner.adopt(request, ready.spec, ready.summary, ready.spec.facts, slack);
    if (!result) {
      c.view.setPlan(previousPlan);
      return fallback('the range it compacted no longer brings the view near the target');
    }
    this.compactAhead!.taken(c.compactAhead);
    return result;
  }

  private async standaloneConversation(messages: readonly unknown[]): Promise<GuardConversation> {
    const last = this.standalone;
    if (!Array.isArray(messages)) {
      throw new TypeError('ContextGuard.check: expected an array of messages');
    }
    const extends_ =
      last !== null &&
      last.source.length <= messages.length &&
      last.source.every((m, i) => m === messages[i]);
    if (!extends_) {
      const history = new History({ store: null, conversationId: 'check', now: () => new Date() });
      const conversation: GuardConversation = {
        get entries() {
          return history.entries;
        },
        get format() {
          return history.format;
        },
        view: this.createView(),
        state: { level: undefined, usage: undefined, usageWarning: resetUsageWarning() },
        noticeDue: null,
        lastUsage: null,
      };
      this.standalone = { source: [], conversation, history };
    }
    const s = this.standalone!;
    for (let i = s.source.length; i < messages.length; i++) {
      await s.history.add(messages[i]);
      s.source.push(messages[i]);
    }
    return s.conversation;
  }
}

function rank(level: Level | undefined): number {
  return level === undefined ? -1 : ['healthy', 'pressure', 'urgent', 'critical'].indexOf(level);
}

function errorText(error: unknown): string {
  return String(error instanceof Error ? error.message : error).slice(0, 200);
}
