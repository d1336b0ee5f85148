import type { CompactionHooks } from '../compaction/hooks.js';
import type { CompactionPlan } from '../compaction/plan.js';
import type { StoredAheadMemory, StoredSpec } from './stored-ahead.js';
/**
 * The shapes `ContextGuard` works with: its options, the per-conversation state it keeps in the
 * conversation it is given, and its decisions; and the overflow breakdown it reports.
 */

import { renderAtom } from '../compaction/edit-atom.js';
import type { PlannerSettings } from '../compaction/planner.js';
import { protectionsOf, taskAtomIndex } from '../compaction/protections.js';
import type { ProviderCompactor } from '../compaction/provider-compaction.js';
import type { StrategyOption } from '../compaction/strategy.js';
import type { FactsSite, SummaryRole } from '../compaction/summary-message.js';
import type { Level } from '../compaction/zones.js';
import type { ContextOverflowError, OverflowBreakdown } from '../errors.js';
import type { CompactionReceipt } from '../events.js';
import type { ContextMeasurer, ResolvedRequest } from '../measure/measurer.js';
import type { HistoryEntry, Message, MessageFormat } from '../messages/types.js';
import type { CostMeter } from '../meter/cost-meter.js';
import type { MessageSource } from '../meter/metering.js';
import type { UsageWarningState } from '../meter/usage-warning.js';
import type { GuardLevels, ProviderCompactionOptions, Usage } from '../options.js';
import type { ContextTools, ExtractedFact } from '../tools/types.js';
import type { View } from '../view/view.js';
import { wireMessage } from '../wire/wire-fields.js';
import type { CompactAheadState } from './compact-ahead.js';
import type { AnthropicContextManagement, ProviderHandoff } from './provider-compaction.js';
import type { AheadState } from './summary-ahead.js';

/** What the guard decided: the view stands, was compacted, warrants a warning, or cannot go. */
export type GuardAction = 'ok' | 'compact' | 'warn' | 'decline';

/** A decision, with the fitted messages (unless declined or not asked for) and their figures. */
export interface GuardDecision {
  action: GuardAction;
  /** The messages to send; absent on `decline`, and when `check` was asked not to fit. */
  messages?: Message[];
  /** Billed tokens of the view (the learned correction applied). */
  tokens: number;
  budget: number;
  pct: number;
  /** The compaction made for this request, if any. */
  receipt?: CompactionReceipt;
  /** Why: the warning's text, or what could not fit. */
  reason?: string;
  /** On `decline`: the error `getMessagesForRequest` throws. */
  error?: ContextOverflowError;
}

/** The guard's state for one conversation, kept beside its history. */
export interface GuardState {
  /** The level the layered strategy last acted at. */
  level: Level | undefined;
  /** Usage (share of the budget) at the last request. */
  usage: number | undefined;
  /** Whether the `usage_high` warning fired, and what re-arms it (see `nextUsageWarning`). */
  usageWarning: UsageWarningState;
  /** The highest `budgetNotice` level the model was told of (see `nextBudgetNotice`). */
  budgetNoticed?: number | undefined;
  /**
   * Whether the last request compacted (no compaction on two consecutive requests while the view
   * fits the budget), with the tokens of the view it left.
   */
  compactedLast?: { tokens: number } | undefined;
}

/** One conversation as the guard works on it. */
export interface GuardConversation {
  /** The entries the provider reads (after its own compaction, a slice of the history: `LiveEntries`). */
  readonly entries: readonly HistoryEntry[];
  /**
   * The whole stored history, where `entries` is a slice of it: what is looked up by seq (an
   * entry's seq is its index here, not in the slice). Absent: `entries` is the whole history.
   */
  readonly history?: readonly HistoryEntry[];
  readonly format: MessageFormat | undefined;
  readonly view: View;
  state: GuardState;
  /** The level the compaction under way acts at (layered strategy). */
  pendingLevel?: Level | undefined;
  /** Set by a compaction, taken by the next view when `compactionNotice` is on. */
  noticeDue: CompactionReceipt | null;
  /** Figures of the last view sent. */
  lastUsage: Usage | null;
  /** What the views sent were billed, per model (see `cost-meter.ts`); made on first use. */
  meters?: Map<string, CostMeter>;
  /** The view build the last metered request came from, and its closed messages then. */
  meterMark?: { model: string; build: object; closed: number; plain: boolean } | undefined;
  /** How the meter reads this conversation's view messages (made on first use). */
  meterSource?: MessageSource;
  /** Seqs under this were read for the facts of what a provider's compaction covered (see `ContextGuard`). */
  coveredFactsTo?: number;
  /** contextkit's summary of what a provider's opaque compaction covered, for a view sent elsewhere. */
  coveredSummary?: { key: string; text: string };
  /** Facts of the plan a new server compaction reset, for the facts block of the view that follows it. */
  carriedFacts?: readonly ExtractedFact[];
  /** Seq of the stored message with the provider's last compaction block (see `LiveEntries`). */
  compactionSeq?: () => number | undefined;
  /** `providerCompaction`: the last handoff to the server, and the last request's edits. */
  provider?: { pending?: ProviderHandoff | undefined; request: AnthropicContextManagement | null };
  /** The history's generation (a replace or clear moves it): what is prepared ahead is bound to it. */
  generation?: () => number;
  /** Summaries prepared ahead: the range and the model's answer (see `SummaryAhead`). */
  ahead?: AheadState;
  /** The provider's compaction prepared ahead (see `CompactAhead`). */
  compactAhead?: CompactAheadState;
  /** The request after which a range should be prepared (taken by `ContextGuard.preparation`). */
  aheadDue?: ResolvedRequest | undefined;
  /**
   * The conversation's owner runs what a request leaves to do after it, in order with its other
   * operations (the manager's queue): a compaction put off with `compactAfterRequest` is then due.
   */
  afterRequest?: true;
  /**
   * The compaction the last request put off (`compactAfterRequest`): its request and reason, and
   * the plan it found (the compaction is skipped when another plan came since). Taken by
   * `ContextGuard.deferredCompaction`.
   */
  compactDue?:
    | {
        request: ResolvedRequest;
        reason: CompactionReceipt['reason'];
        plan: CompactionPlan | null;
        /** The level it acts at (layered strategy: `pendingLevel`). */
        level: Level | undefined;
      }
    | undefined;
  /**
   * True for a conversation served from its stored view record (src/manager-stored-view.ts):
   * `entries` are only the rows after the record's prefix, which the view starts with. Whatever
   * needs more (see `WholeHistoryNeeded`) throws before anything is emitted.
   */
  partial?: boolean;
  /**
   * Keeps where the summary prepared for the successor of `plan` stands, the model's answer and
   * the plan made ahead (src/guard/stored-ahead.ts), beside the history, where there is a store.
   */
  keepAhead?: (
    plan: CompactionPlan | null,
    mark: { triedAt: number; settled: boolean; seqs: number[] },
    memory: StoredAheadMemory | undefined,
    spec: Omit<StoredSpec, 'v' | 'epoch' | 'plan'> | undefined,
  ) => Promise<void>;
  /** Keeps the plan and guard state beside the history (in its store), where there is one. */
  save?: (patch: Record<string, unknown>) => Promise<void>;
  /**
   * Keeps the `usage_high` warning's state beside the history, in its generation
   * (src/guard/stored-guard-state.ts, `encodeUsageWarning`), where there is a store.
   */
  saveUsageWarning?: (state: UsageWarningState) => Promise<void>;
  /**
   * Keeps the budget notice's state (the highest level told) beside the history, in its
   * generation (src/guard/stored-guard-state.ts, `encodeBudgetNoticed`), where there is a store.
   */
  saveBudgetNoticed?: (level: number | undefined) => Promise<void>;
  /**
   * The plan another worker stored for this conversation after the one this view holds, when this
   * history holds all it covers and it was made for the same budget and counter: the guard adopts
   * it before compacting on its own, so workers sharing a store serve the same view (issue 32).
   * Null when there is none. Only with a store.
   */
  storedPlan?: (current: CompactionPlan | null, made: PlanMade) => Promise<CompactionPlan | null>;
  /**
   * Keeps a plan just made (with `patch`, the guard state) beside the history, unless another
   * worker stored a plan at the same history length or later since `previous` (the plan the view
   * held before): resolves with
   * that plan then, for the guard to adopt instead (compare-and-set: the first to store wins),
   * else null.
   */
  savePlan?: (
    plan: CompactionPlan,
    previous: CompactionPlan | null,
    made: PlanMade,
    patch: Record<string, unknown>,
  ) => Promise<CompactionPlan | null>;
}

/**
 * Thrown by the guard for a conversation served from its stored view record (`partial`) when the
 * request needs more than the record and the rows after it: a compaction, the provider's count,
 * a decline, a summary to prepare. The manager then loads the whole history and fits the request
 * again; nothing was emitted or stored before it is thrown.
 */
export class WholeHistoryNeeded extends Error {
  constructor(readonly reason: string) {
    super(`the request needs the whole history: ${reason}`);
    this.name = 'WholeHistoryNeeded';
  }
}

/** What a stored plan must have been made for to be adopted: the request's budget and counter. */
export interface PlanMade {
  budget: number;
  counterId: string;
}

/** Options of {@link ContextGuard}. */
export interface ContextGuardOptions {
  measurer: ContextMeasurer;
  /** How older messages leave the view (default `summarize`). */
  strategy?: StrategyOption;
  /** Warn, decline and jump-escalation levels (defaults 0.8, none, 0.3). */
  levels?: GuardLevels;
  compactThreshold?: number;
  targetUsage?: number;
  /** Compact on its own past the trigger (default true). */
  autoCompact?: boolean;
  /** Compact early when the prompt cache expired while a compaction is due soon (default true). */
  compactWhenCacheExpired?: boolean;
  /**
   * Put a compaction the view can wait for off the request path (default false); see
   * `ContextManagerOptions.compactAfterRequest`. Only for conversations whose owner runs it after
   * the request (`GuardConversation.afterRequest`).
   */
  compactAfterRequest?: boolean;
  /** Bill each view sent (default true); see `ContextManagerOptions.costMeter`. */
  costMeter?: boolean;
  maxCompactRetries?: number;
  criticalFloor?: number;
  preserveSystem?: boolean;
  /** Keep the first user message verbatim (default false); see `ContextManagerOptions.protectTask`. */
  protectTask?: boolean;
  /** What the summarizer should favour; see `ContextManagerOptions.summaryInstructions`. */
  summaryInstructions?: string;
  keepToolResults?: number;
  recentCount?: number;
  clearing?: PlannerSettings['clearing'];
  facts?: FactsSite;
  /** The role of the summary and facts block (default `user`); see `ContextManagerOptions.summaryRole`. */
  summaryRole?: SummaryRole;
  /** Tools that only read; see `ContextManagerOptions.readOnlyTools`. */
  readOnlyTools?: readonly string[];
  /** Tools that change something; see `ContextManagerOptions.sideEffectTools`. */
  sideEffectTools?: readonly string[];
  compactionNotice?: boolean;
  /** Before and after compaction; see `ContextManagerOptions.onBeforeCompaction`. */
  hooks?: CompactionHooks;
  /** Usage levels at which the model is told how much room is left; see `ContextManagerOptions.budgetNotice`. */
  budgetNotice?: readonly number[];
  /** `'auto'`: Anthropic prompt-cache breakpoints at the end of the stable prefix (default off). */
  cacheBreakpoints?: 'auto' | 'off';
  /** Share of the budget the summary and facts block may take together (default 0.35). */
  summaryShare?: number;
  /** The `recall` tool is offered: the summary and facts block tell the model (default false). */
  recall?: boolean;
  /** Writes summaries and extracts facts (default: the offline tools). */
  tools?: ContextTools;
  /** The provider's compaction endpoint (OpenAI `/responses/compact`), used in place of the summarizer. */
  providerCompact?: ProviderCompactor;
  /** Let the provider compact on its server (Anthropic; see `ProviderCompaction`; default off). */
  providerCompaction?: ProviderCompactionOptions | undefined;
  /**
   * Summaries prepared ahead with `tools` that can (the `llm` tools): see
   * `ContextManagerOptions.summaryAhead`. Default on when the tools can.
   */
  summaryAhead?: boolean | { at?: number };
}

/**
 * What the view that could not go is made of, for a `ContextOverflowError`: its protected parts as
 * the view holds them (a result cut to fit counts as cut), the tools, the overhead, and the rest
 * (older messages, summary, facts block, notes), so that the parts add up to `required`.
 */
export function overflowBreakdown(
  measurer: ContextMeasurer,
  c: GuardConversation,
  r: ResolvedRequest,
  required: number,
  noticeTokens: number,
  preserveSystem: boolean,
  protectTask: boolean,
): OverflowBreakdown {
  const format = c.format ?? 'openai';
  const index = c.view.atoms(c.entries, format);
  const atoms = index.visible();
  const bySeq = c.history ?? c.entries;
  const protection = protectionsOf(atoms, bySeq, index.wire, preserveSystem, protectTask);
  const task = protectTask ? taskAtomIndex(atoms) : -1;
  const plan = c.view.plan;
  const edits = c.view.blocks.edits(plan);
  const planned = plan ? plan.historyLength : 0;
  const breakdown: OverflowBreakdown = {
    system: 0,
    pinned: 0,
    task: 0,
    latestTurn: 0,
    tools: r.toolsTokens,
    overhead: r.fixedTokens - r.toolsTokens + noticeTokens,
    rest: 0,
  };
  const marked = (s: number) => bySeq[s]?.metadata.pinned || bySeq[s]?.metadata.critical;
  atoms.forEach((atom, i) => {
    const p = protection[i];
    if (p === 'none' || edits.dropped.has(atom.id)) return;
    const rendered = atom.id < planned ? renderAtom(atom, edits, index.wire) : atom.messages;
    // As the view sends them: without the fields the format does not document.
    const sent = rendered.map((m) => wireMessage(m, format));
    const tokens = measurer.countAll(r.counter, sent, format);
    if (atom.kind === 'system') breakdown.system += tokens;
    else if (p === 'keep') breakdown.latestTurn += tokens;
    else if (i === task && !atom.seqs.some(marked) && atoms.findLastIndex((a) => a.hasUserContent) !== i) {
      breakdown.task += tokens;
    } else if (atom.hasUserContent && !atom.seqs.some(marked)) breakdown.latestTurn += tokens;
    else breakdown.pinned += tokens;
  });
  const { rest: _, ...parts } = breakdown;
  breakdown.rest = Math.max(0, required - Object.values(parts).reduce((a, b) => a + b, 0));
  return breakdown;
}
