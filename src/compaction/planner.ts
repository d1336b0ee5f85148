/**
 * The Planner: from the entries, their atoms, the budget, what is protected, the previous plan and
 * the tools, to a new plan and its receipt. It keeps no state between plans; what it needs from the
 * view (counts of rendered messages, the blocks as messages) it is given.
 */

import type { CompactionReceipt } from '../events.js';
import { wireFormat } from '../formats/registry.js';
import type { HistoryEntry, Message, MessageFormat } from '../messages/types.js';
import { mapInSlices, Slices } from '../slices.js';
import type { TokenCounter } from '../tokens/types.js';
import type { ContextTools, ExtractedFact } from '../tools/types.js';
import type { PlanBlocks } from '../view/plan-blocks.js';
import type { Atom } from '../wire/atoms.js';
import { clearToolResults } from './clear-tool-results.js';
import { clearTurnResults, dropTurnOldest } from './clear-turn-results.js';
import { applyCustomStrategy } from './custom-strategy.js';
import { dedupeRepeated } from './dedupe-repeated.js';
import type { ClearingOptions, PlanContext, PlanDraft, Protection } from './draft.js';
import { dropOldest } from './drop-oldest.js';
import { type AtomEdits, renderAtom } from './edit-atom.js';
import { capFactsFor, factCandidates, factsOfSeqs } from './fact-candidates.js';
import { dropByImportance } from './importance.js';
import { type CompactionPlan, type PlanEdits, type PlanSummary, startDraft } from './plan.js';
import { latestUserAtomIndex, taskAtomIndex, userMarked } from './protections.js';
import type { ProviderCompactor } from './provider-compaction.js';
import { planReceipt, type ReceiptBase } from './receipt.js';
import { selectForSummary, selectPrepared } from './select-for-summary.js';
import type { StrategyOption } from './strategy.js';
import { summarizeAtoms } from './summarize-atoms.js';
import {
  factsCap,
  MAX_SUMMARY_TOKENS,
  MIN_SUMMARY_TOKENS,
  memoryRoom,
  RECALL_NOTE,
  SUMMARY_FRAME_TOKENS,
  summaryReserve,
} from './summary-message.js';
import { capProtectedOversized, capTask, truncateOversized } from './truncate-oversized.js';
import { type Level, selectByZones } from './zones.js';

/** Tokens kept aside for the Anthropic start notice, which a view may need once older messages go. */
const NOTICE_RESERVE = 24;

/**
 * The memory's room in a view at the floor (what must stay is past the target, `used` tokens): up
 * to the trigger, or a quarter of the gap between target and trigger (the next plan waits for
 * growth past this plan's size anyway, and the next request does not compact again while the view
 * fits the budget), and at least a quarter of what is left under the budget, so that a trigger at
 * the target (or a view past it) still remembers what left the view; never past the budget.
 */
function atFloorRoom(budget: number, used: number, trigger: number, gap: number): number {
  const left = Math.max(0, budget - used);
  return Math.min(left, Math.max(Math.floor(left / 4), trigger - used, Math.floor(gap / 4)));
}

/** A plan that edits nothing, for the entries, budget and counter of `req`. */
function emptyPlan(req: {
  entries: readonly unknown[];
  budget: number;
  counter: { id: string };
}): CompactionPlan {
  return {
    v: 1,
    dropped: [],
    cleared: [],
    truncated: [],
    historyLength: req.entries.length,
    budget: req.budget,
    tokens: 0,
    counterId: req.counter.id,
  };
}

/** How the planner plans: the manager's compaction options. */
export interface PlannerSettings {
  strategy: StrategyOption;
  /** `layered`: atoms in the recent zone. */
  recentCount: number;
  compactThreshold: number;
  targetUsage: number;
  keepToolResults: number;
  clearing: ClearingOptions & { trigger?: number; keep?: number };
  /** Re-plans allowed after the first while the view is above `criticalFloor × budget`. */
  maxCompactRetries: number;
  /** Share of the budget a plan's rendered view must come under, else it is made again, lower. */
  criticalFloor: number;
  /** Share of the budget the summary and facts block may take together (at most `targetUsage`). */
  summaryShare: number;
  /** What the summarizer should favour (passed to `ContextTools.summarize` as `focus`). */
  summaryInstructions?: string;
}

/** One request for a plan. */
export interface PlanRequest {
  entries: readonly HistoryEntry[];
  atoms: readonly Atom[];
  protection: readonly Protection[];
  /** The budget planning works with (already divided by the learned correction). */
  budget: number;
  /** Tokens outside the messages: tool definitions, request framing. */
  fixedTokens: number;
  /** The learned correction (for the clearing trigger, which is in billed tokens). */
  correction: number;
  format: MessageFormat;
  counter: TokenCounter;
  /** Tokens of one message, memoized per message object. */
  count: (message: Message) => number;
  previousPlan: CompactionPlan | null;
  reason: CompactionReceipt['reason'];
  /** The layered level this compaction acts at. */
  level: Level | undefined;
  /** Renders `plan` as the view and measures it (fixed tokens included). */
  render: (plan: CompactionPlan) => { tokens: number; messages: number };
  /**
   * The view before this compaction; `bounded` when its tokens hold upper bounds of messages a
   * cold start has not counted yet (the receipt then says `exact: false`).
   */
  before: { tokens: number; messages: number; bounded?: boolean };
  repairs: () => CompactionReceipt['repairs'];
  /** The provider's compaction, in place of the summarizer (`providerCompaction`). */
  compact?: ProviderCompactor;
  /** Says why the summarizer ran where the provider's compaction was asked for. */
  warn?: (code: string, message: string) => void;
  /** Tools for this plan in place of the planner's (summaries prepared ahead, or recorded). */
  tools?: ContextTools;
  /**
   * Facts a model wrote ahead for the entries a plan reads for facts: merged with the offline
   * extractor's, and the tools are not asked for facts (see `factCandidates`).
   */
  modelFacts?: (read: readonly HistoryEntry[]) => readonly ExtractedFact[];
  /**
   * A range prepared ahead (seqs): the summarizing strategy takes it where it may and brings the
   * view within `slack` tokens of the target, so that the summary prepared for it is used.
   */
  prepared?: { seqs: ReadonlySet<number>; slack: number };

  /** Tokens to bring the view down to, in place of `targetUsage` of the budget (the compact tool). */
  target?: number;
  /** What the summarizer should favour in this compaction, beside `summaryInstructions`. */
  focus?: string;
}

/** A plan, its receipt, and what a custom strategy said. */
export interface PlanResult {
  plan: CompactionPlan;
  receipt: CompactionReceipt;
  /** Protected atoms a custom strategy chose (they stayed). */
  refused: number[];
  warn?: string;
  decline?: string;
}

/** Per-plan scratch: the summary texts written, the facts left out, what the strategy said. */
interface Scratch {
  /** The plan's steps run in slices that yield: a first plan over a long history is long work. */
  slices: Slices;
  summaries: Map<string, string | Message[]>;
  factsOmitted: number;
  /** Why the `summarize` strategy wrote no summary in this plan (for the receipt). */
  noSummary?: string;
  refused: number[];
  warn?: string;
  decline?: string;
}

/** The summarizer's focus: the manager's instructions, then what this compaction asked for. */
function focusOf(instructions: string | undefined, asked: string | undefined): { focus?: string } {
  const parts = [instructions, asked].filter((p): p is string => p !== undefined && p.trim() !== '');
  return parts.length > 0 ? { focus: parts.join('\n') } : {};
}

/** Makes compaction plans: what to clear, cut, summarize and drop to bring a view to its target. */
export class Planner {
  constructor(
    private readonly settings: PlannerSettings,
    private readonly tools: ContextTools,
    /** The tools are the built-in offline ones: fact extraction runs incrementally, in process. */
    private readonly offlineTools: boolean,
    private readonly blocks: PlanBlocks,
  ) {}

  /**
   * Plans, renders and measures the whole view; while the rendered view is above the critical
   * floor (a summary longer than its estimate, say), plans again for a lower target, up to
   * `maxCompactRetries` times.
   */
  async plan(req: PlanRequest): Promise<PlanResult> {
    const started = performance.now();
    const { budget, previousPlan } = req;
    const { compactThreshold, targetUsage, clearing } = this.settings;
    const previous = this.blocks.edits(previousPlan);
    const wire = wireFormat(req.format);
    const measure = (atom: Atom, edits: AtomEdits) => {
      let sum = 0;
      const shown = edits.effectOf ? edits : { ...edits, effectOf: this.blocks.effectOf };
      for (const m of renderAtom(atom, shown, wire)) sum += req.count(m);
      return sum;
    };
    const scratch: Scratch = { slices: new Slices(), summaries: new Map(), factsOmitted: 0, refused: [] };
    // Between steps, the event loop runs when the slice is spent (nothing to await otherwise).
    const pause = () => scratch.slices.step();
    let target = req.target ?? Math.floor(targetUsage * budget);
    if (req.reason === 'clearing' && clearing.trigger !== undefined) {
      target = Math.min(
        Math.floor(compactThreshold * budget),
        Math.floor(clearing.trigger / req.correction) - 1,
      );
    }
    const floor = Math.min(budget, Math.floor(this.settings.criticalFloor * budget));
    let plan: CompactionPlan;
    let rendered: { tokens: number; messages: number };
    for (let attempt = 0; ; attempt++) {
      const ctx = this.context(req, measure, target);
      plan = await this.draft(ctx, req, previous, scratch, req.reason === 'clearing');
      await pause();
      rendered = req.render(plan);
      await pause();
      plan.tokens = rendered.tokens;
      if (scratch.decline !== undefined || plan.tokens <= floor || target === 0) break;
      if (attempt >= this.settings.maxCompactRetries) break;
      target = Math.max(0, target - (plan.tokens - floor) - 1);
    }
    // No collapse: a plan that builds on its predecessor can come far below the target when what
    // the last plan took out could come back (the huge result that pushed it out is now cleared,
    // say). A plan from the whole history, keeping the facts so far, keeps the target's worth.
    // (Not on a cold start's bounded counts: older messages may only leave such a view.)
    if (
      scratch.decline === undefined &&
      previousPlan &&
      req.before.bounded !== true &&
      plan.tokens < Math.floor(targetUsage * budget) / 2
    ) {
      const fresh = await this.freshPlan(req, measure, Math.floor(targetUsage * budget), previousPlan);
      if (fresh && fresh.plan.tokens > plan.tokens && fresh.plan.tokens <= budget) {
        ({ plan, rendered } = fresh);
      } else req.render(plan);
    }
    const receipt = this.receipt(req, plan, rendered, started, {
      factsOmitted: scratch.factsOmitted,
      noSummary: scratch.noSummary,
    });
    await pause();
    const result: PlanResult = { plan, receipt, refused: scratch.refused };
    if (scratch.warn !== undefined) result.warn = scratch.warn;
    if (scratch.decline !== undefined) result.decline = scratch.decline;
    return result;
  }

  /**
   * A plan of the whole history as if no plan had been made yet, with the facts kept so far (a
   * fact once kept is merged, never lost); undefined when it declines. The view is left rendered
   * on it.
   */
  private async freshPlan(
    req: PlanRequest,
    measure: PlanContext['measure'],
    target: number,
    previousPlan: CompactionPlan,
  ): Promise<{ plan: CompactionPlan; rendered: { tokens: number; messages: number } } | undefined> {
    const base: CompactionPlan = {
      ...emptyPlan(req),
      ...(previousPlan.facts ? { facts: previousPlan.facts } : {}),
      ...(previousPlan.factsAt !== undefined ? { factsAt: previousPlan.factsAt } : {}),
    };
    const freshReq: PlanRequest = { ...req, previousPlan: base };
    delete freshReq.prepared;
    const scratch: Scratch = { slices: new Slices(), summaries: new Map(), factsOmitted: 0, refused: [] };
    const ctx = this.context(freshReq, measure, target);
    const plan = await this.draft(ctx, freshReq, this.blocks.edits(base), scratch, false);
    if (scratch.decline !== undefined) return undefined;
    const rendered = req.render(plan);
    plan.tokens = rendered.tokens;
    return { plan, rendered };
  }

  /**
   * A plan made ahead (on an earlier view, as if it had grown to the trigger; see `SummaryAhead`)
   * taken as this compaction's plan, with `summary` in place of its draft summary and `facts` for
   * its facts block: rendered and measured on the view now, and taken only where it brings the
   * view within `slack` tokens of the target (and within the budget). Undefined otherwise (the
   * view is then left on the plan `render` was last given: the caller sets its own back).
   */
  adopt(
    req: PlanRequest,
    prepared: CompactionPlan,
    summary: PlanSummary,
    facts: ExtractedFact[] | undefined,
    slack: number,
  ): PlanResult | undefined {
    const started = performance.now();
    if (prepared.budget !== req.budget || prepared.counterId !== req.counter.id) return undefined;
    const plan: CompactionPlan = { ...prepared, historyLength: req.entries.length, summary };
    if (facts && facts.length > 0) plan.facts = facts;
    const edits = this.blocks.edits(prepared);
    this.blocks.setEdits(plan, edits);
    const rendered = req.render(plan);
    plan.tokens = rendered.tokens;
    if (plan.tokens > Math.min(req.budget, Math.floor(this.settings.targetUsage * req.budget) + slack)) {
      return undefined;
    }
    const receipt = this.receipt(req, plan, rendered, started, { factsOmitted: 0, noSummary: undefined });
    return { plan, receipt, refused: [] };
  }

  /** The receipt of `plan`, rendered as `rendered`, against the request's previous plan. */
  private receipt(
    req: PlanRequest,
    plan: CompactionPlan,
    rendered: { tokens: number; messages: number },
    started: number,
    said: { factsOmitted: number; noSummary: string | undefined },
  ): CompactionReceipt {
    const { budget } = req;
    return planReceipt({
      atoms: req.atoms,
      wire: wireFormat(req.format),
      previousPlan: req.previousPlan,
      previous: this.blocks.edits(req.previousPlan),
      plan,
      now: this.blocks.edits(plan),
      factsOmitted: said.factsOmitted,
      noSummary: said.noSummary,
      repairs: req.repairs(),
      base: {
        reason: req.reason,
        budget,
        trigger: Math.floor(this.settings.compactThreshold * budget),
        target: Math.floor(this.settings.targetUsage * budget),
        tokensBefore: req.before.tokens,
        tokensAfter: plan.tokens,
        messagesBefore: req.before.messages,
        messagesAfter: rendered.messages,
        counter: req.counter.id,
        exact: req.counter.exact && req.before.bounded !== true,
        durationMs: performance.now() - started,
      } satisfies ReceiptBase,
    });
  }

  private context(req: PlanRequest, measure: PlanContext['measure'], target: number): PlanContext {
    const { clearing } = this.settings;
    const wire = wireFormat(req.format);
    return {
      atoms: req.atoms,
      wire,
      protection: req.protection,
      measure,
      countText: (t) => req.counter.countText(t),
      messageTokens: req.count,
      // Room for the start notice a view opening with a user turn may need once older messages are gone.
      fixedTokens: req.fixedTokens + (wire.userTurnFirst ? NOTICE_RESERVE : 0),
      budget: req.budget,
      target,
      keepToolResults: clearing.keep ?? this.settings.keepToolResults,
      clearing,
    };
  }

  /**
   * One planning pass: clear old results, cut a protected result too large to ever fit, summarize
   * the oldest atoms (or drop them, with the truncating strategy), drop what is still too much,
   * cut oversized texts, then take the facts of everything that left the view into the facts
   * block, making room for it if it grew.
   */
  private async draft(
    ctx: PlanContext,
    req: PlanRequest,
    previous: PlanEdits,
    scratch: Scratch,
    clearOnly: boolean,
    /** False on the second pass of a plan whose new summary gave way to the facts. */
    summarizeNew = true,
  ): Promise<CompactionPlan> {
    const { previousPlan, format, budget } = req;
    const blocks = this.blocks;
    const factsTokens = (facts: readonly ExtractedFact[]) =>
      facts.length > 0 ? req.count(blocks.factsMessage(facts, req.format)) : 0;
    const summaryTokens = (summary: PlanSummary) => {
      let sum = 0;
      for (const m of blocks.summaryMessages(summary, format)) sum += req.count(m);
      return sum;
    };
    // The latest user message's atom: the current turn starts there (ctx.atoms are req.atoms).
    const latestUserIndex = latestUserAtomIndex(req.atoms);
    const latestUser = req.atoms[latestUserIndex];
    const turnFrom = latestUser ? Math.max(...latestUser.seqs) : Number.POSITIVE_INFINITY;
    const cap = (facts: readonly ExtractedFact[], room: number) =>
      capFactsFor(facts, room, req.entries, factsTokens, (t) => req.counter.countText(t), turnFrom);
    const candidates = (draft: PlanDraft, room: number) =>
      factCandidates({
        entries: req.entries,
        atoms: req.atoms,
        previous,
        draft,
        oldFacts,
        room,
        tools: req.tools ?? this.tools,
        offlineTools: this.offlineTools && req.tools === undefined,
        ...(req.modelFacts ? { modelFacts: req.modelFacts } : {}),
        pause,
      });
    const oldFacts = previousPlan?.facts ?? [];
    const factsTokensBefore = factsTokens(oldFacts);
    const share = Math.min(this.settings.summaryShare, this.settings.targetUsage);
    const factsLimit = factsCap(budget, share);
    const pause = () => scratch.slices.step();
    // Every atom measured under the previous plan's edits, in slices (a first plan reads them all).
    const measured = await mapInSlices(
      ctx.atoms,
      (atom) => (previous.dropped.has(atom.id) ? 0 : ctx.measure(atom, previous)),
      scratch.slices,
    );
    let draft = startDraft(ctx, previous, measured);
    // A task the user marked critical or pinned is kept whole, as every marked message is.
    const task = taskAtomIndex(ctx.atoms);
    const cappable = task >= 0 && !userMarked(ctx.atoms[task]!, req.entries) ? task : -1;
    draft = capTask(ctx, draft, cappable, latestUserIndex);
    await pause();
    draft.total += factsTokensBefore;
    // The summary in the view now; selection adds a reserve only when there is none yet.
    const oldSummaryTokens = previousPlan?.summary ? summaryTokens(previousPlan.summary) : 0;
    draft.total += oldSummaryTokens;
    draft = await clearToolResults(
      clearOnly ? { ...ctx, clearing: { ...ctx.clearing, clearOnly } } : ctx,
      draft,
      pause,
    );
    await pause();
    if (clearOnly) {
      const room = factsLimit;
      const facts = cap(await candidates(draft, room), room).facts;
      return this.finish(draft, previousPlan?.summary, previousPlan?.summarized, facts, req);
    }
    draft = dedupeRepeated(ctx, draft);
    await pause();
    let summary = previousPlan?.summary;
    const strategy = this.settings.strategy;
    const reserve = summaryReserve(budget, share);
    const canSummarize = reserve >= MIN_SUMMARY_TOKENS && summarizeNew;
    if (strategy === 'summarize' && reserve < MIN_SUMMARY_TOKENS) {
      scratch.noSummary = `no room for a summary: the memory's share of the budget (${Math.round(share * 100)}%) leaves ${reserve} tokens beside the facts block, below the ${MIN_SUMMARY_TOKENS} a useful one needs`;
    }
    // Selection makes room for the whole memory: the summary's reserve and what the facts block
    // may still grow by, so that after the compaction the memory fills the view up to the target.
    const factsGrowthCap = blocks.factsSite === 'none' ? 0 : Math.max(0, factsLimit - factsTokensBefore);
    const selectionReserve = reserve + factsGrowthCap;
    // What the total counts for the summary to come beyond the summary in the view: its reserve
    // (and the facts' growth) on a first summary, the growth up to them on a later one.
    let held = 0;
    if (strategy === 'summarize' && canSummarize) {
      const growth = previousPlan?.summary ? Math.max(0, reserve - oldSummaryTokens) + factsGrowthCap : 0;
      const grown = { ...draft, total: draft.total + growth };
      const prepared =
        req.prepared && selectPrepared(ctx, grown, selectionReserve, req.prepared.seqs, req.prepared.slack);
      const selected = prepared || selectForSummary(ctx, grown, selectionReserve);
      const took = selected.summarized.size !== draft.summarized.size;
      held = took ? (previousPlan?.summary ? growth : selectionReserve) : 0;
      draft = took ? selected : draft;
      if (!took) {
        scratch.noSummary =
          'no older messages could be summarized: those that may leave the view did not free room for a summary under the target';
      }
    } else if (strategy === 'layered' && canSummarize) {
      draft = selectByZones(ctx, draft, req.level ?? 'healthy', this.settings.recentCount, reserve);
    } else if (strategy === 'smart') {
      draft = dropByImportance(ctx, draft);
    } else if (typeof strategy === 'function') {
      const outcome = await applyCustomStrategy(strategy, ctx, draft, canSummarize ? reserve : 0, req.level);
      draft = outcome.draft;
      scratch.refused = outcome.refused;
      if (outcome.warn !== undefined) scratch.warn = outcome.warn;
      if (outcome.decline !== undefined) scratch.decline = outcome.decline;
    }
    await pause();
    const grew = [...draft.summarized].some((id) => !previous.summarized?.has(id));
    if (grew) {
      // The summary's room: what selection kept for it and the memory (the reserve and the facts'
      // growth), less what it could not free under the target and the facts' expected growth.
      let summaryMax = reserve;
      if (strategy === 'summarize' && held > 0) {
        const over = Math.max(0, draft.total - ctx.target);
        let factsGrowth = factsGrowthCap;
        if (factsGrowthCap > 0) {
          await pause();
          const expected = cap(await candidates(draft, factsLimit), factsLimit).facts;
          await pause();
          factsGrowth = Math.max(0, factsTokens(expected) - factsTokensBefore);
        }
        summaryMax = Math.max(
          MIN_SUMMARY_TOKENS,
          Math.min(MAX_SUMMARY_TOKENS, reserve + factsGrowthCap - over - factsGrowth),
        );
      }
      await pause();
      summary = await summarizeAtoms({
        entries: req.entries,
        atoms: req.atoms,
        summarized: draft.summarized,
        already: previous.summarized ?? new Set(),
        previousPlan,
        maxTokens: summaryMax,
        // The header, and the recall note when the manager offers the tool.
        frameTokens: SUMMARY_FRAME_TOKENS + (blocks.recall ? req.counter.countText(RECALL_NOTE) + 1 : 0),
        counter: req.counter,
        tools: req.tools ?? this.tools,
        memo: scratch.summaries,
        pause,
        ...(req.compact ? { compact: req.compact } : {}),
        ...(req.warn ? { warn: req.warn } : {}),
        ...focusOf(this.settings.summaryInstructions, req.focus),
      });
      draft.total +=
        summaryTokens(summary) -
        (previousPlan?.summary ? oldSummaryTokens : strategy === 'summarize' ? held : reserve) -
        (previousPlan?.summary ? held : 0);
    }
    await pause();
    const keptBeforeDropping = draft.dropped;
    draft = dropOldest(ctx, draft);
    // The memory (summary and facts) gives way before the current turn: the turn is cleared or
    // cut only when it is over the budget without them (they shrink or go below, to fit).
    const memory = factsTokensBefore + (summary && draft.summarized.size > 0 ? summaryTokens(summary) : 0);
    draft = clearTurnResults(ctx, draft, memory);
    draft = dropTurnOldest(ctx, draft, memory);
    draft = capProtectedOversized(ctx, draft, memory);
    // The task yields before the request fails: where what must stay is still over the budget,
    // its head and tail are cut further, by the excess (the whole of it stays stored for recall).
    const excess = draft.total - memory - ctx.budget;
    if (excess > 0 && cappable >= 0) {
      const cap = Math.max(0, draft.atomTokens[cappable]! - excess);
      draft = capTask(ctx, draft, cappable, latestUserIndex, cap);
    }
    draft = truncateOversized(ctx, draft);
    await pause();
    let facts = oldFacts;
    if (blocks.factsSite !== 'none') {
      // Facts never push conversation out: they take the room left under the target, plus a
      // quarter of the gap between target and trigger (none when a summary is in the view: its
      // selection made room for the facts under the target), and at most their cap and what the
      // memory's room leaves beside the summary.
      const withoutFacts = draft.total - factsTokensBefore;
      const trigger = Math.floor(this.settings.compactThreshold * budget);
      const gap = trigger - ctx.target;
      // At the floor (what must stay is already past the target) the block may fill up to the
      // trigger, and at least a quarter of what is left under the budget (a trigger at the target
      // would leave it none: the view then lost everything older with no memory of it): the next
      // plan waits for growth past this plan's size anyway.
      const roomFor = (used: number) =>
        Math.min(
          factsLimit,
          memoryRoom(budget, share) - (summary && draft.summarized.size > 0 ? summaryTokens(summary) : 0),
          used > ctx.target
            ? atFloorRoom(budget, used, trigger, gap)
            : ctx.target - used + (draft.summarized.size > 0 ? 0 : Math.floor(gap / 4)),
        );
      let room = roomFor(withoutFacts);
      const found = await candidates(draft, room);
      await pause();
      let capped = cap(found, room);
      // A summary and the facts compete for a tight budget. The facts carry the ids, paths and
      // numbers an agent acts on, so where the summary squeezes them, the summary goes.
      const inView = summary && draft.summarized.size > 0 ? summaryTokens(summary) : 0;
      if (
        capped.omitted > 0 &&
        inView > 0 &&
        (roomFor(withoutFacts - inView) > room || withoutFacts > ctx.target)
      ) {
        // A summary written in this plan took its atoms out to make room for itself; without it,
        // plan again without summarizing, so that only what the target needs leaves the view.
        if (grew && summarizeNew && strategy === 'summarize' && !previousPlan?.summary) {
          scratch.noSummary =
            'the summary gave way to the facts block: the budget could not hold both, and the facts (ids, paths, numbers) are what an agent acts on';
          return this.draft(ctx, req, previous, scratch, clearOnly, false);
        }
        scratch.noSummary =
          'the summary gave way to the facts block: the budget could not hold both, and the facts (ids, paths, numbers) are what an agent acts on';
        draft.total -= inView;
        draft = { ...draft, summarized: new Set() };
        summary = undefined;
        room = roomFor(withoutFacts - inView);
        capped = cap(found, room);
      }
      facts = capped.facts;
      scratch.factsOmitted = capped.omitted;
      draft.total += factsTokens(facts) - factsTokensBefore;
    }
    // Summary and facts are help, not obligations: where they would push the view over the
    // budget, the facts block shrinks first and then the summary goes, before anything protected.
    if (draft.total > ctx.budget && facts.length > 0) {
      const tokens = factsTokens(facts);
      const capped = cap(facts, tokens - (draft.total - ctx.budget));
      scratch.factsOmitted += capped.omitted;
      facts = capped.facts;
      draft.total += factsTokens(facts) - tokens;
    }
    if (draft.total > ctx.budget && summary && draft.summarized.size > 0) {
      scratch.noSummary = 'the summary would have pushed the view over the budget';
      draft.total -= summaryTokens(summary);
      draft = { ...draft, summarized: new Set() };
      summary = undefined;
    }
    if (!summarizeNew && strategy === 'summarize') {
      // The summary gave way to the facts; what was dropped may still be summarized in the room the
      // conversation and the facts leave (under the trigger and within the memory's share), so
      // that the summary takes nothing from either.
      const beside = await this.summaryBeside(
        req,
        draft,
        keptBeforeDropping,
        facts,
        factsTokens,
        summaryTokens,
        scratch.summaries,
      );
      if (beside) {
        draft = beside.draft;
        summary = beside.summary;
        delete scratch.noSummary;
      }
    }
    return this.finish(
      draft,
      summary,
      draft.summarized.size > 0 ? [...draft.summarized] : undefined,
      facts,
      req,
    );
  }

  /**
   * A summary of the atoms `dropOldest` took out of `draft`, where it fits beside the view as it
   * is: under the compaction trigger and the budget, and within the memory's room beside the facts.
   */
  private async summaryBeside(
    req: PlanRequest,
    draft: PlanDraft,
    droppedBefore: ReadonlySet<number>,
    facts: readonly ExtractedFact[],
    factsTokens: (facts: readonly ExtractedFact[]) => number,
    summaryTokens: (summary: PlanSummary) => number,
    memo: Scratch['summaries'],
  ): Promise<{ draft: PlanDraft; summary: PlanSummary } | undefined> {
    const { budget } = req;
    const share = Math.min(this.settings.summaryShare, this.settings.targetUsage);
    const trigger = Math.min(budget, Math.floor(this.settings.compactThreshold * budget));
    const room = Math.min(
      MAX_SUMMARY_TOKENS,
      memoryRoom(budget, share) - factsTokens(facts),
      draft.total > Math.floor(this.settings.targetUsage * budget)
        ? atFloorRoom(budget, draft.total, trigger, trigger - Math.floor(this.settings.targetUsage * budget))
        : trigger - draft.total,
    );
    const frameTokens =
      SUMMARY_FRAME_TOKENS + (this.blocks.recall ? req.counter.countText(RECALL_NOTE) + 1 : 0);
    if (room < MIN_SUMMARY_TOKENS + frameTokens) return undefined;
    const summarized = new Set([...draft.dropped].filter((id) => !droppedBefore.has(id)));
    if (summarized.size === 0) return undefined;
    const summary = await summarizeAtoms({
      entries: req.entries,
      atoms: req.atoms,
      summarized,
      already: new Set(),
      previousPlan: req.previousPlan,
      maxTokens: room,
      frameTokens,
      counter: req.counter,
      tools: req.tools ?? this.tools,
      memo,
      ...(req.warn ? { warn: req.warn } : {}),
      ...(this.settings.summaryInstructions ? { focus: this.settings.summaryInstructions } : {}),
    });
    const tokens = summaryTokens(summary);
    if (tokens > room) return undefined;
    return { draft: { ...draft, summarized, total: draft.total + tokens }, summary };
  }

  /**
   * The facts of what a provider's compaction covered on its server (`seqs`: stored entries the
   * provider no longer reads, which no plan of contextkit's ever took out of a view), merged with
   * the facts kept so far (`oldFacts`), as `plan` with that facts block and nothing else changed
   * (a plan that leaves out nothing when there is none). The block takes at most its cap and
   * `room`; null when no fact fits or the facts block is off.
   */
  async coveredFacts(req: {
    entries: readonly HistoryEntry[];
    atoms: readonly Atom[];
    seqs: readonly number[];
    oldFacts: readonly ExtractedFact[];
    plan: CompactionPlan | null;
    budget: number;
    room: number;
    format: MessageFormat;
    counter: TokenCounter;
    count: (message: Message) => number;
  }): Promise<CompactionPlan | null> {
    if (this.blocks.factsSite === 'none') return null;
    const share = Math.min(this.settings.summaryShare, this.settings.targetUsage);
    const room = Math.min(factsCap(req.budget, share), req.room);
    const factsTokens = (facts: readonly ExtractedFact[]) =>
      facts.length > 0 ? req.count(this.blocks.factsMessage(facts, req.format)) : 0;
    const found = await factsOfSeqs({
      entries: req.entries,
      seqs: req.seqs,
      oldFacts: req.oldFacts,
      room,
      tools: this.tools,
      offlineTools: this.offlineTools,
    });
    const facts = capFactsFor(found, room, req.entries, factsTokens, (t) => req.counter.countText(t)).facts;
    const firstConversational = req.atoms.find((a) => a.kind !== 'system');
    if (facts.length === 0 || !firstConversational) return null;
    const base: CompactionPlan = req.plan ?? emptyPlan(req);
    return { ...base, facts, factsAt: base.factsAt ?? firstConversational.id };
  }

  /** The plan a draft comes to, with its summary and facts block placed. */
  private finish(
    draft: PlanDraft,
    summary: PlanSummary | undefined,
    summarized: readonly number[] | undefined,
    facts: ExtractedFact[],
    req: PlanRequest,
  ): CompactionPlan {
    const firstConversational = req.atoms.find((a) => a.kind !== 'system');
    const plan: CompactionPlan = {
      v: 1,
      dropped: [...draft.dropped].sort((a, b) => a - b),
      cleared: [...draft.cleared],
      truncated: [...draft.truncated],
      historyLength: req.entries.length,
      budget: req.budget,
      tokens: draft.total,
      counterId: req.counter.id,
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
    this.blocks.setEdits(plan, {
      cleared: draft.cleared,
      truncated: draft.truncated,
      clearInputs: this.blocks.clearInputs,
      effectOf: this.blocks.effectOf,
      dropped: draft.dropped,
      summarized: plan.summarized ? draft.summarized : new Set(),
    });
    return plan;
  }
}
