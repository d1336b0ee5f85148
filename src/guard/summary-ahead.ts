/**
 * Summaries prepared ahead (issue 24): with a model that writes summaries, the summary and facts
 * of the range the next compaction will take are asked for while the view still has room, off the
 * request path, so that no request waits for the model. At the compaction, the prepared summary
 * stands in for the model's only when it covers exactly the range the plan takes (the same stored
 * entries, the same previous summary, within the room the plan gives it); otherwise the offline
 * tools answer at once, and the model's summary of that range is asked for then and carried into
 * the next compaction (as the previous summary its own builds on). A summary is swapped in only
 * at a compaction point, so a view's prefix never changes between compactions.
 *
 * What is prepared lives in this process only, bound to the entries it read: another process
 * sharing the store, or a history replaced or edited since, never gets a summary of other messages.
 */

import type { CompactionPlan, PlanSummary } from '../compaction/plan.js';
import type { CompactionReceipt } from '../events.js';
import type { HistoryEntry } from '../messages/types.js';
import type { PreparedMemory, PreparingTools } from '../tools/llm.js';
import { validateFacts } from '../tools/llm-prompts.js';
import { mergeFacts } from '../tools/merge-facts.js';
import type { ContextTools, ExtractedFact, SummarizeOptions } from '../tools/types.js';

/** What a compaction's receipt says of the prepared summary (see `CompactionReceipt.prepared`). */
export type PreparedOutcome = NonNullable<CompactionReceipt['prepared']>;

/** One summary (and its facts) asked of the model for a range. */
interface Job {
  /** The entries summarized, as the planner hands them to `summarize`. */
  summaryEntries: readonly HistoryEntry[];
  /** The previous summary the planner passes with them (the text in the plan it replaces). */
  previousSummary: string | undefined;
  focus: string | undefined;
  /** Entries read for facts (the same objects as stored, for the identity check). */
  factEntries: readonly HistoryEntry[];
  generation: number;
  memory?: PreparedMemory;
  failed?: string;
  /** The summarize options the plan passed (the room it gave the summary, how it counts). */
  options: SummarizeOptions;
  /** The offline tools' summary of the same range, written while preparing: the fallback at the trigger. */
  offlineText?: string;
  /** Settles (never rejects) when the model answered or failed. */
  settled: Promise<PreparedMemory | undefined>;
}

/** The preparation state of one conversation. */
export interface AheadState {
  /** The plan in the view when the range was prepared: the job is for the compaction replacing it. */
  plan: CompactionPlan | null;
  /** Seqs of every atom the prepared plan summarizes: the range the compaction should take. */
  seqs: ReadonlySet<number> | null;
  /** The plan made ahead (with a draft summary), which the compaction takes where it still fits. */
  spec: CompactionPlan | null;
  job: Job | null;
  /** The model's summary of the range an offline summary stands for in the view (asked at the compaction). */
  late: { job: Job; offlineText: string } | null;
  /** Usage when the range was last prepared: one that came to nothing is tried again past it. */
  triedAt: number;
}

/** How far usage must grow past a preparation that came to nothing (no range, a failed call) to try again. */
const RETRY_STEP = 0.05;

/** What the speculative plan asked for: the summary (its entries and options) and the entries read for facts. */
export interface RecordedCalls {
  summary?: { entries: readonly HistoryEntry[]; options: SummarizeOptions };
  factEntries: Map<number, HistoryEntry>;
}

/**
 * Tools for a speculative plan: they answer at once (a placeholder summary of the size asked
 * for; the offline extractor's facts, through `modelFacts`) and record what the plan asked,
 * which is what the model is then asked.
 */
export function recordingTools(offline: ContextTools): {
  tools: ContextTools;
  modelFacts: (read: readonly HistoryEntry[]) => readonly ExtractedFact[];
  calls: RecordedCalls;
} {
  const calls: RecordedCalls = { factEntries: new Map() };
  return {
    calls,
    modelFacts: (read) => {
      for (const e of read) calls.factEntries.set(e.seq, e);
      return [];
    },
    tools: {
      kind: 'prepared',
      summarize(entries, options) {
        calls.summary = { entries, options };
        // About as long as a summary written to this size: the plan's later steps measure it.
        return Promise.resolve('summary '.repeat(Math.max(1, Math.floor(options.maxTokens * 0.8))));
      },
      extractFacts: (entries, options) => offline.extractFacts(entries, options),
    },
  };
}

/** Whether `entries` are the same stored entries, in order, as `expected`. */
function sameEntries(entries: readonly HistoryEntry[], expected: readonly HistoryEntry[]): boolean {
  if (entries.length !== expected.length) return false;
  for (let i = 0; i < entries.length; i++) if (entries[i] !== expected[i]) return false;
  return true;
}

/** Whether every entry `job` read is still the one stored at its seq. */
function stillStored(job: Job, stored: readonly HistoryEntry[]): boolean {
  for (const e of job.summaryEntries) if (stored[e.seq] !== e) return false;
  for (const e of job.factEntries) if (stored[e.seq] !== e) return false;
  return true;
}

/** Prepares summaries with `tools` (a model's), answering compactions with `offline` meanwhile. */
export class SummaryAhead {
  constructor(
    private readonly tools: PreparingTools,
    private readonly offline: ContextTools,
    /** Usage (share of the budget) from which the next compaction's range is prepared. */
    readonly at: number,
    private readonly warn: (code: string, message: string) => void,
  ) {}

  /** Whether a range should be prepared now: usage past `at` and nothing prepared for this plan yet. */
  due(state: AheadState, plan: CompactionPlan | null, usage: number): boolean {
    if (usage < this.at) return false;
    if (state.plan !== plan || state.seqs === null) return true;
    const nothing = state.job === null || state.job.failed !== undefined;
    return nothing && usage >= state.triedAt + RETRY_STEP;
  }

  /**
   * Asks the model for the summary and facts the speculative plan recorded, for the compaction
   * that will replace `plan`. Where the previous summary in the plan is an offline one the model
   * has since rewritten (`late`), the model builds on its own version.
   */
  prepare(
    state: AheadState,
    plan: CompactionPlan | null,
    seqs: ReadonlySet<number>,
    calls: RecordedCalls,
    generation: number,
    usage: number,
    spec: CompactionPlan | null,
  ): void {
    state.plan = plan;
    state.seqs = seqs;
    state.triedAt = usage;
    state.spec = spec;
    const summary = calls.summary;
    if (!summary) {
      state.job = null;
      return;
    }
    const factEntries = [...calls.factEntries.values()].sort((a, b) => a.seq - b.seq);
    const given = summary.options.previousSummary;
    const late = state.late;
    const builtOn =
      late && given !== undefined && late.offlineText === given
        ? late.job.settled.then((memory) => memory?.summary ?? given)
        : Promise.resolve(given);
    state.job = this.ask(summary.entries, summary.options, factEntries, generation, builtOn);
  }

  /**
   * The offline summary of the prepared range, written now (off the request path) so that a
   * compaction whose model summary is not back does not write it on the request path.
   */
  async writeFallback(state: AheadState): Promise<void> {
    const job = state.job;
    if (!job || job.offlineText !== undefined) return;
    job.offlineText = await this.offline.summarize(job.summaryEntries, job.options);
  }

  /**
   * The plan made ahead, as this compaction's, where it was made on the plan the view holds and
   * the entries it read are still stored: its summary the model's (when back and within the room
   * the plan gave it) or the offline one written ahead, and its facts block with the model's
   * facts (`withModelFacts`) or without. Undefined where it cannot be taken as it is.
   */
  adoption(
    state: AheadState,
    plan: CompactionPlan | null,
    stored: readonly HistoryEntry[],
    generation: number,
  ):
    | {
        summary: PlanSummary;
        withModelFacts: ExtractedFact[] | undefined;
        facts: ExtractedFact[] | undefined;
        spec: CompactionPlan;
        outcome: PreparedOutcome;
      }
    | undefined {
    const { spec, job } = state;
    if (state.plan !== plan || !spec?.summary || !job) return undefined;
    if (job.generation !== generation || !stillStored(job, stored)) return undefined;
    const memory = job.memory;
    const fits =
      memory !== undefined && (job.options.countText?.(memory.summary) ?? 0) <= job.options.maxTokens;
    if (!fits && job.offlineText === undefined) return undefined;
    const outcome: PreparedOutcome = fits
      ? 'used'
      : memory
        ? 'stale'
        : job.failed !== undefined
          ? 'failed'
          : 'pending';
    const text = fits ? memory.summary : job.offlineText!;
    if (outcome === 'pending') state.late = { job, offlineText: text };
    const facts = spec.facts;
    const items = memory?.facts ?? [];
    const model = items.length > 0 ? validateFacts(items, job.factEntries) : [];
    return {
      summary: { ...spec.summary, text, tools: fits ? this.tools.kind : this.offline.kind },
      withModelFacts: model.length > 0 ? mergeFacts(facts ?? [], model) : undefined,
      facts,
      spec,
      outcome,
    };
  }

  /**
   * The tools a compaction plans with, and how it went with the prepared summary: the prepared
   * summary and facts where they cover what the plan asks for, the offline tools otherwise (and
   * then the model is asked for that summary, for the next compaction to build on).
   */
  compactionTools(
    state: AheadState,
    plan: CompactionPlan | null,
    stored: readonly HistoryEntry[],
    generation: number,
  ): {
    tools: ContextTools;
    modelFacts: (read: readonly HistoryEntry[]) => readonly ExtractedFact[];
    outcome: () => PreparedOutcome | undefined;
  } {
    const job = state.plan === plan ? state.job : null;
    const valid = job !== null && job.generation === generation && stillStored(job, stored);
    let outcome: PreparedOutcome | undefined;
    let kind = this.offline.kind;
    const tools: ContextTools = {
      get kind() {
        return kind;
      },
      summarize: async (entries, options) => {
        const memory = valid ? job.memory : undefined;
        const covers =
          valid &&
          sameEntries(entries, job.summaryEntries) &&
          options.previousSummary === job.previousSummary &&
          options.focus === job.focus;
        if (covers && memory && (options.countText?.(memory.summary) ?? 0) <= options.maxTokens) {
          outcome = 'used';
          kind = this.tools.kind;
          return memory.summary;
        }
        outcome =
          job === null
            ? 'none'
            : !valid || !covers || memory
              ? 'stale'
              : job.failed !== undefined
                ? 'failed'
                : 'pending';
        kind = this.offline.kind;
        const text = await this.offline.summarize(entries, options);
        // The model's summary of this range, for the next compaction to build on: the prepared
        // call when it is this one still under way, else one asked now (once per range).
        const late = state.late?.job;
        const asked =
          late !== undefined &&
          late.generation === generation &&
          sameEntries(entries, late.summaryEntries) &&
          late.previousSummary === options.previousSummary;
        const model =
          covers && job.failed === undefined && !memory
            ? job
            : asked
              ? late
              : this.ask(entries, options, [], generation, Promise.resolve(options.previousSummary));
        state.late = { job: model, offlineText: text };
        return text;
      },
      extractFacts: (entries, options) => this.offline.extractFacts(entries, options),
    };
    // The model's facts of what the plan reads, checked against it: a fact of other messages never gets in.
    const modelFacts = (read: readonly HistoryEntry[]): readonly ExtractedFact[] => {
      const items = valid ? job.memory?.facts : undefined;
      return items && items.length > 0 ? validateFacts(items, read) : [];
    };
    return { tools, modelFacts, outcome: () => outcome };
  }

  /** One model call for a range's summary and facts; its promise never rejects. */
  private ask(
    summaryEntries: readonly HistoryEntry[],
    options: SummarizeOptions,
    factEntries: readonly HistoryEntry[],
    generation: number,
    previousSummary: Promise<string | undefined>,
  ): Job {
    const job: Job = {
      summaryEntries,
      options,
      previousSummary: options.previousSummary,
      focus: options.focus,
      factEntries,
      generation,
      settled: Promise.resolve(undefined),
    };
    job.settled = previousSummary
      .then((previous) =>
        this.tools.prepareMemory({
          summaryEntries,
          factEntries,
          maxTokens: options.maxTokens,
          ...(previous !== undefined ? { previousSummary: previous } : {}),
          ...(options.focus !== undefined ? { focus: options.focus } : {}),
          ...(options.countText ? { countText: options.countText } : {}),
        }),
      )
      .then(
        (memory) => {
          job.memory = memory;
          return memory;
        },
        (error: unknown) => {
          job.failed = error instanceof Error ? error.message : String(error);
          this.warn(
            'llm_fallback',
            `the ${this.tools.kind} summary prepared ahead failed (${job.failed}); compactions use the ${this.offline.kind} tools until one is ready`,
          );
          return undefined;
        },
      );
    return job;
  }
}
