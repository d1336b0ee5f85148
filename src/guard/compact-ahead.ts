/**
 * The provider's compaction prepared ahead (issue 31 item 3): with `providerCompaction` on the
 * Responses API, `/responses/compact` is asked for the range the next compaction will take while
 * the view still has room, off the request path, as summaries are (`SummaryAhead`). A request
 * never waits on the endpoint: at the compaction, the provider's compacted window stands in when it
 * is ready for the plan in the view (the plan made ahead is adopted with it, where it still brings
 * the view near the target); otherwise contextkit compacts on its own (the summary prepared ahead,
 * or the offline tools), with a `context:warn` saying why.
 *
 * When: from usage `from` on, after a request that grew the view by a step since the last try,
 * the range is planned as if the view had grown to the trigger (the guard's speculative plan) and,
 * once that range is settled (the plan reaches the target) or usage passed `at`, the endpoint is
 * asked for it. After a failure (an error, a timeout, a reply refused as a whole) the endpoint is
 * not asked again before a back-off has passed, doubling with each failure in a row (30 s to
 * 15 min); a success resets it. What is prepared lives in this process only, bound to the plan and
 * the history generation it was made for.
 */

import type { CompactionPlan, PlanSummary } from '../compaction/plan.js';
import type { ProviderCompactor } from '../compaction/provider-compaction.js';
import { compactWindow } from '../compaction/summarize-atoms.js';
import type { Atom } from '../wire/atoms.js';

/** The first back-off after a failure; it doubles with each failure in a row, up to `MAX_BACKOFF_MS`. */
export const BASE_BACKOFF_MS = 30_000;
export const MAX_BACKOFF_MS = 15 * 60_000;
/** How far usage must grow past the last try to plan the range again. */
const RETRY_STEP = 0.05;

/** One call of the endpoint for the range a plan made ahead summarizes. */
interface CompactJob {
  spec: CompactionPlan;
  /** The summary the plan takes: the compacted window, for the range `spec` summarizes. */
  summary?: PlanSummary;
  failed?: string;
  /** Settles (never rejects) when the endpoint answered or failed. */
  settled: Promise<void>;
}

/** The preparation state of one conversation. */
export interface CompactAheadState {
  /** The plan in the view when the job was started: the job is for the compaction replacing it. */
  plan: CompactionPlan | null;
  generation: number;
  job: CompactJob | null;
  /** Usage when the range was last planned ahead. */
  triedAt: number;
  /** Failures in a row, and when the endpoint may be asked again (epoch ms). */
  failures: number;
  retryAt: number;
  /** The last failure's reason, for the warning at a compaction that could not use the endpoint. */
  lastFailure?: string;
}

export function emptyCompactAheadState(): CompactAheadState {
  return { plan: null, generation: 0, job: null, triedAt: 0, failures: 0, retryAt: 0 };
}

/** Why a compaction could not take the provider's compacted window (for the warning). */
export type NotReady = { reason: string };

/** See the module note. */
export class CompactAhead {
  constructor(
    private readonly compact: ProviderCompactor,
    /** Usage from which the range is planned ahead, and past which the endpoint is asked even if it is not settled. */
    private readonly from: number,
    private readonly at: number,
    private readonly warn: (code: string, message: string) => void,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Whether the range should be planned (again) after a request that left the view at `usage`. */
  due(state: CompactAheadState, plan: CompactionPlan | null, usage: number, generation: number): boolean {
    if (usage < this.from) return false;
    if (this.now() < state.retryAt) return false;
    if (state.job !== null && state.job.summary === undefined && state.job.failed === undefined) return false;
    if (state.plan !== plan || state.generation !== generation || state.job === null) return true;
    if (state.job.failed !== undefined) return true;
    return usage >= state.triedAt + RETRY_STEP;
  }

  /**
   * Takes the range a speculative plan for the compaction replacing `plan` found (`spec`, which
   * summarizes some of `atoms`): asks the endpoint for it, in the background, once it is settled
   * or usage is past `at`, unless the endpoint already compacted this very range.
   */
  prepare(
    state: CompactAheadState,
    plan: CompactionPlan | null,
    found: {
      spec: CompactionPlan | null;
      atoms: readonly Atom[];
      settled: boolean;
      usage: number;
      generation: number;
    },
  ): void {
    state.triedAt = found.usage;
    if (state.plan !== plan || state.generation !== found.generation) {
      state.plan = plan;
      state.generation = found.generation;
      state.job = null;
    }
    const { spec } = found;
    if (spec === null || (!found.settled && found.usage < this.at)) return;
    const summarized = new Set(spec.summarized ?? []);
    const already = new Set(plan?.summarized ?? []);
    const fresh = found.atoms.filter((a) => summarized.has(a.id) && !already.has(a.id));
    if (fresh.length === 0) return;
    const { fromSeq, toSeq, at } = rangeOf(found.atoms, summarized);
    // The endpoint already compacted this very range for this plan: nothing to ask again.
    const done = state.job?.summary;
    if (done && done.fromSeq === fromSeq && done.toSeq === toSeq) return;
    const window = compactWindow(plan, fresh);
    const job: CompactJob = { spec, settled: Promise.resolve() };
    job.settled = this.compact(window).then(
      (items) => {
        job.summary = {
          text: `[the provider compacted seqs ${fromSeq}–${toSeq}]`,
          at,
          fromSeq,
          toSeq,
          tools: 'provider',
          items,
        };
        state.failures = 0;
        state.retryAt = 0;
        state.lastFailure = undefined;
      },
      (error: unknown) => {
        const reason = error instanceof Error ? error.message : String(error);
        job.failed = reason;
        state.failures++;
        const wait = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** (state.failures - 1));
        state.retryAt = this.now() + wait;
        state.lastFailure = reason;
        this.warn(
          'provider_compaction_failed',
          `the provider's compaction prepared ahead failed (${reason}); not asked again for ${Math.round(wait / 1000)} s`,
        );
      },
    );
    state.job = job;
  }

  /**
   * The plan made ahead and the provider's compacted window of its range, when they are ready for
   * the compaction replacing `previousPlan`; else why not.
   */
  adoption(
    state: CompactAheadState,
    previousPlan: CompactionPlan | null,
    generation: number,
  ): { spec: CompactionPlan; summary: PlanSummary } | NotReady {
    const job = state.job;
    if (job === null || state.plan !== previousPlan || state.generation !== generation) {
      const backingOff = this.now() < state.retryAt;
      return {
        reason: backingOff
          ? `it failed (${state.lastFailure}) and is not asked again until ${new Date(state.retryAt).toISOString()}`
          : 'it was not prepared for this range yet',
      };
    }
    if (job.failed !== undefined) return { reason: `it failed (${job.failed})` };
    if (job.summary === undefined) return { reason: 'its answer has not come yet' };
    return { spec: job.spec, summary: job.summary };
  }

  /** Forgets the job a compaction took (the next one is prepared from the plan it made). */
  taken(state: CompactAheadState): void {
    state.job = null;
  }
}

function rangeOf(
  atoms: readonly Atom[],
  summarized: ReadonlySet<number>,
): { fromSeq: number; toSeq: number; at: number } {
  let fromSeq = Number.POSITIVE_INFINITY;
  let toSeq = Number.NEGATIVE_INFINITY;
  let at: number | undefined;
  for (const atom of atoms) {
    if (!summarized.has(atom.id)) continue;
    at ??= atom.id;
    for (const seq of atom.seqs) {
      if (seq < fromSeq) fromSeq = seq;
      if (seq > toSeq) toSeq = seq;
    }
  }
  return { fromSeq, toSeq, at: at ?? 0 };
}
