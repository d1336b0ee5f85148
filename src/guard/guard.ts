/**
 * The seed's ContextGuard: given a measured request, decides whether the view stands, must be
 * compacted, warrants a warning, or cannot go (decline); asks the planner for a plan when it must
 * compact, and hands back the fitted messages. Per-conversation state (the plan, the level the
 * layered strategy last acted at, the warning latch) lives in the conversation it is given.
 */

import { encodePlan } from '../compaction/plan.js';
import { Planner } from '../compaction/planner.js';
import { protectionsOf } from '../compaction/protections.js';
import type { ProviderCompactor } from '../compaction/provider-compaction.js';
import type { StrategyOption } from '../compaction/strategy.js';
import { escalate, type Level, levelOf } from '../compaction/zones.js';
import { ContextDeclinedError, ContextOverflowError } from '../errors.js';
import type { CompactionReceipt, ContextEvents } from '../events.js';
import { wireFormat } from '../formats/registry.js';
import { History } from '../history/history.js';
import type { MessageFormat } from '../messages/types.js';
import { checkStrategy, DEFAULTS, type RequestOptions, resolveShares } from '../options.js';
import { guardedTools } from '../tools/guarded-tools.js';
import { createOfflineTools } from '../tools/offline.js';
import { PlanBlocks } from '../view/plan-blocks.js';
import { type SentView, View } from '../view/view.js';
import {
  type ContextGuardOptions,
  type GuardConversation,
  type GuardDecision,
  overflowBreakdown,
} from './guard-types.js';
import type { ContextMeasurer, ResolvedRequest } from './measurer.js';
import { billRequest, conversationTime } from './metering.js';
import { ProviderCompaction } from './provider-compaction.js';
import { nextUsageWarning, resetUsageWarning } from './usage-warning.js';

export type {
  ContextGuardOptions,
  GuardAction,
  GuardConversation,
  GuardDecision,
  GuardState,
} from './guard-types.js';

/** Decides and fits; see the module comment. */
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
  private readonly costMeter: boolean;
  private readonly preserveSystem: boolean;
  private readonly protectTask: boolean;
  private readonly clearAt: number | undefined;
  private readonly notice: boolean;
  private readonly cacheBreakpoints: 'auto' | 'off';
  private readonly providerCompact: ProviderCompactor | undefined;
  private readonly provider: ProviderCompaction | null;
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
    this.compactThreshold = shares.compactThreshold;
    this.targetUsage = shares.targetUsage;
    this.autoCompact = options.autoCompact ?? true;
    this.compactWhenCacheExpired = options.compactWhenCacheExpired ?? true;
    this.costMeter = options.costMeter ?? true;
    this.preserveSystem = options.preserveSystem ?? DEFAULTS.preserveSystem;
    this.protectTask = options.protectTask ?? DEFAULTS.protectTask;
    const clearing = options.clearing ?? {};
    this.clearAt = clearing.trigger;
    this.notice = options.compactionNotice === true;
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
    );
    const offline = createOfflineTools();
    const tools =
      options.tools && guardedTools(options.tools, offline, (code, m) => this.measurer.warn(code, m));
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
        memoryShare: shares.memoryShare,
        ...(options.summaryInstructions ? { summaryInstructions: options.summaryInstructions } : {}),
      },
      tools ?? offline,
      tools === undefined,
      this.blocks,
    );
  }

  /** A new view for a conversation, counting with this guard's measurer. */
  createView(): View {
    return new View(this.blocks, this.measurer);
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
    return this.fit(conversation, r, request);
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
        const exact = await this.measurer.exactCount(r, out.messages, request.tools);
        if (exact !== undefined && exact > r.declared) {
          const tighter: ResolvedRequest = {
            ...r,
            budget: Math.max(1, Math.floor((r.budget * r.declared) / exact) - 1),
          };
          receipt = await this.compactNow(c, tighter, 'over_budget');
          out = await this.viewFor(c, tighter);
          r = tighter;
        }
      }
      if (out.total > r.budget) throw this.overflow(c, r, out.total, out.noticeTokens);
      // Warn on what is sent, after compacting: a view still this full leaves the model little room.
      const sent = out.total / r.budget;
      let warning: string | undefined;
      const next = nextUsageWarning(c.state.usageWarning, {
        usage: sent,
        warnAt: this.warnAt,
        budget: r.declared,
        compacted: receipt !== undefined,
      });
      c.state.usageWarning = next.state;
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
        const cost = billRequest(this.measurer, c, r, out.unmarked, request.tools, out.noticeTokens);
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
    const total = built.tokens + r.fixedTokens;
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
    const built = c.view.build(c.entries, c.format ?? r.format, r.counter);
    const total = built.tokens + r.fixedTokens;
    if (!force && total <= Math.floor(this.compactThreshold * r.budget)) return null;
    return this.compactNow(c, r, force ? 'forced' : 'threshold');
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
    let built = c.view.build(c.entries, format, r.counter);
    let total = built.tokens + r.fixedTokens;
    const replanAt = this.replanAt(c, r);
    let reason = this.autoCompact ? this.compactionDue(c, total, r, replanAt) : undefined;
    if (
      !reason &&
      this.autoCompact &&
      this.compactWhenCacheExpired &&
      this.dueSoonWithColdCache(c, r, total, replanAt)
    )
      reason = 'cache_expired';
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
    if (reason) {
      const receipt = await this.compactNow(c, r, reason);
      onCompact?.(receipt);
      built = c.view.build(c.entries, format, r.counter);
      total = built.tokens + r.fixedTokens;
      // The level falls with the usage: it is where the view is now, not a high-water mark.
      c.state.level = levelOf(total / r.budget);
    }
    c.state.usage = total / r.budget;
    const notice = this.notice ? c.noticeDue : null;
    c.noticeDue = null;
    return c.view.send(built, {
      format: r.format,
      // The format it was built in: a conversation whose format is not known yet is built as
      // OpenAI, so its summary (a system message) is converted for an Anthropic request.
      conversationFormat: format,
      counter: r.counter,
      fixedTokens: r.fixedTokens,
      budget: r.budget,
      notice,
      cacheBreakpoints: this.cacheBreakpoints,
    });
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
    const usage = total / r.budget;
    let level = levelOf(usage);
    const last = c.state.usage;
    if (last !== undefined && usage - last >= this.jumpEscalation) level = escalate(level);
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
  ): Promise<CompactionReceipt> {
    const { entries, view } = c;
    const format = c.format ?? r.format;
    // What a server compaction superseded is not in the view: nothing to plan there.
    const atoms = view.atoms(entries, format).visible();
    const before = view.build(entries, format, r.counter);
    const tokensBefore = before.tokens + r.fixedTokens;
    this.measurer.events.emit('context:pre_compact', {
      messageCount: before.messages.length,
      tokens: tokensBefore,
    });
    const previousPlan = view.plan;
    const result = await this.planner.plan({
      entries,
      atoms,
      protection: protectionsOf(atoms, entries, this.preserveSystem, this.protectTask),
      budget: r.budget,
      fixedTokens: r.fixedTokens,
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
        return { tokens: built.tokens + r.fixedTokens, messages: built.messages.length };
      },
      before: { tokens: tokensBefore, messages: before.messages.length },
      repairs: () => view.repairs(),
      // Anthropic's server compaction is driven from `check` (and warns there when it cannot).
      ...(this.providerCompact && wireFormat(r.format).serverCompaction !== 'in-request'
        ? { compact: this.compactorFor(format, r.format) }
        : {}),
      warn: (code, message) => this.measurer.warn(code, message),
    });
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
    if (c.save) {
      const after = plan.tokens / r.budget;
      await c.save({ plan: encodePlan(plan), guard: { level: levelOf(after) ?? null, usage: after } });
    }
    c.noticeDue = receipt;
    this.measurer.events.emit('context:post_compact', {
      messageCount: receipt.messagesAfter,
      tokens: plan.tokens,
      receipt,
    });
    return receipt;
  }

  /** The provider's compaction where the conversation and the request are in a format that has one. */
  private compactorFor(format: MessageFormat, wire: MessageFormat): ProviderCompactor {
    if (format === wire && wireFormat(format).serverCompaction === 'endpoint') return this.providerCompact!;
    return () =>
      Promise.reject(new Error(`contextkit can drive no provider compaction for ${wire} requests`));
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
