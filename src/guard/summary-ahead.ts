/**
 * Summaries prepared ahead (issue 24): with a model that writes summaries, the summary and facts
 * of the range the next compaction will take are asked for while the view still has room, off the
 * request path, so that no request waits for the model.
 *
 * When: from usage `from` on (the least a compaction at the trigger frees, or `at` when lower),
 * after a request that grew the view by a step since the last time, the compaction the trigger
 * will bring is planned as if the view had grown to it, and the offline summary of its range is
 * written. The range is settled once that plan reaches the target (the turns to come are newer
 * than anything it takes): the model is asked then, or when usage passes `at` at the latest, and
 * after that only for what the range gained since, each call building on the summary before it.
 * After a compaction this starts over for the next one.
 *
 * At the compaction: the model's summary stands in when it covers the range the plan takes (the
 * same stored entries, the same previous summary, within the room the plan gives it). Where the
 * range grew past what the model covers (a turn leapt past the trigger), the offline tools
 * summarize the rest on top of the model's summary (`partial`). Otherwise the offline summary
 * written ahead answers at once (on top of it, the rest of a range that grew). In every case but
 * the first, the model's summary of what it did not cover is asked for then, off the request path,
 * and carried into the next compaction, as the previous summary its own builds on. A summary is
 * swapped in only at a compaction point, so a view's prefix never changes between compactions.
 *
 * A prepared summary may cover older entries than the range it stands for (a repeat the plan
 * drops since it was prepared): the guard takes it only where those entries left the view
 * (`extras`). What is prepared is bound to the entries it read: a history replaced or edited
 * since never gets a summary of other messages. Where the preparation and the model's answer are
 * stored (src/guard/stored-ahead.ts), another worker takes them in by the content of those
 * entries (`hydrate`), never by their place alone.
 */

import { type CompactionPlan, encodePlan, type PlanSummary } from '../compaction/plan.js';
import type { CompactionReceipt } from '../events.js';
import type { HistoryEntry } from '../messages/types.js';
import type { PreparedMemory, PreparingTools } from '../tools/llm.js';
import { type CheckedFacts, checkedFactsIn, checkFactsInSlices } from '../tools/llm-prompts.js';
import { mergeFacts } from '../tools/merge-facts.js';
import type { ContextTools, ExtractedFact, SummarizeOptions } from '../tools/types.js';
import type { Atom } from '../wire/atoms.js';
import {
  entryDigest,
  type StoredAheadMemory,
  type StoredSpec,
  storedEntriesOf,
  textDigest,
} from './stored-ahead.js';

/** What a compaction's receipt says of the prepared summary (see `CompactionReceipt.prepared`). */
export type PreparedOutcome = NonNullable<CompactionReceipt['prepared']>;

/**
 * The model's summary (and facts) of some of a range's entries: one call, or a chain of calls,
 * each summarizing entries the one before did not, building on its summary.
 */
interface ModelPart {
  /** The entries the model was asked to summarize, over the whole chain. */
  entries: ReadonlySet<HistoryEntry>;
  /** Entries read for facts, over the whole chain. */
  factEntries: readonly HistoryEntry[];
  memory?: PreparedMemory;
  /**
   * The model's fact items checked against the entries each call was asked of, in slices as they
   * came back (one per call of the chain): a compaction only looks them up.
   */
  checked?: readonly CheckedFacts[];
  failed?: string;
  /** Settles (never rejects) when the model answered or failed. */
  settled: Promise<PreparedMemory | undefined>;
  /** The part this one builds on (its calls before this one's), if any. */
  before: ModelPart | null;
}

/** One range's summary: what the model was asked, and the offline summary written ahead. */
interface Job {
  /** The entries summarized, as the planner hands them to `summarize`. */
  summaryEntries: readonly HistoryEntry[];
  /** The previous summary the planner passes with them (the text in the plan it replaces). */
  previousSummary: string | undefined;
  focus: string | undefined;
  /** Entries read for facts (the same objects as stored, for the identity check). */
  factEntries: readonly HistoryEntry[];
  generation: number;
  /** The summarize options the plan passed (the room it gave the summary, how it counts). */
  options: SummarizeOptions;
  /** What the model was asked to summarize of the range; null while only the offline summary is prepared. */
  model: ModelPart | null;
  /** The offline summary of the range, written ahead: the fallback at the trigger. */
  offlineText?: string;
  /** A range this one grew from whose offline summary was written: this one's is written on top of it. */
  base?: { entries: ReadonlySet<HistoryEntry>; offlineText: string };
  /** Where a part of the model's covers only some of the range: its summary with the rest written offline on top. */
  partial?: { part: ModelPart; text: string };
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
  /** The model's summary of the range an offline (or partly offline) summary stands for in the view. */
  late: { job: Job; offlineText: string } | null;
  /** Usage when the range was last planned ahead. */
  triedAt: number;
  /** Whether the last plan made ahead reached the target: its range is the one the trigger will take. */
  settled: boolean;
  /**
   * The model's answer another worker (or an earlier manager) stored for this plan's successor
   * (src/guard/stored-ahead.ts), not taken in yet: taken (`hydrate`) where the range is prepared
   * or compacted, if the messages it covers are still stored as they were.
   */
  stored?: StoredAheadMemory | undefined;
  /**
   * The plan made ahead that another worker stored for this plan's successor (`StoredSpec`), with
   * the range its summary stands for, not taken in yet: taken (`hydrate`) with the model's answer,
   * where that range is still stored as it was, as this worker's own `spec` and job.
   */
  storedSpec?: HeldSpec | undefined;
  /** Called when the model's answer for the prepared range is back (to store it). */
  onMemory?: (() => void) | undefined;
}

/** A plan made ahead as another worker stored it (see `StoredSpec`), decoded. */
export interface HeldSpec {
  spec: CompactionPlan;
  entries: ReadonlyArray<readonly [number, string]>;
  previous: string | null;
  focus: string | null;
  maxTokens: number;
}

/** How far usage must grow past the last preparation to plan the range again. */
const RETRY_STEP = 0.05;

/** What the speculative plan asked for: the summary (its entries and options) and the entries read for facts. */
export interface RecordedCalls {
  summary?: { entries: readonly HistoryEntry[]; options: SummarizeOptions };
  factEntries: Map<number, HistoryEntry>;
}

/** What a preparation found: the plan made ahead, its range and calls, and whether it is settled. */
export interface Preparation {
  seqs: ReadonlySet<number>;
  calls: RecordedCalls;
  spec: CompactionPlan | null;
  /** The plan made ahead reached the target: a compaction at the trigger takes this range. */
  settled: boolean;
  generation: number;
  usage: number;
}

/** A summary for a compaction's range, who wrote it, and what the receipt says of it. */
interface Written {
  text: string;
  kind: string;
  outcome: PreparedOutcome;
  /** Seqs the summary covers beyond the range (older entries the plan must leave out of the view). */
  extras: ReadonlySet<number>;
}

/** Raised in a chained call when the summary it builds on did not come: not a failure of its own. */
class MissingBase extends Error {}

/** A new, empty preparation state. */
export function emptyAheadState(): AheadState {
  return { plan: null, seqs: null, spec: null, job: null, late: null, triedAt: 0, settled: false };
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

/** Each entry's seq and content digest (`entryDigest`), ascending by seq. */
function digested(entries: Iterable<HistoryEntry>): Array<[number, string]> {
  return [...entries].sort((a, b) => a.seq - b.seq).map((e): [number, string] => [e.seq, entryDigest(e)]);
}

/** Whether `entries` are the same stored entries, in order, as `expected`. */
function sameEntries(entries: readonly HistoryEntry[], expected: readonly HistoryEntry[]): boolean {
  if (entries.length !== expected.length) return false;
  for (let i = 0; i < entries.length; i++) if (entries[i] !== expected[i]) return false;
  return true;
}

/** The last seq of `entries` (in seq order), or -1. */
function lastSeq(entries: Iterable<HistoryEntry>): number {
  let last = -1;
  for (const e of entries) if (e.seq > last) last = e.seq;
  return last;
}

/**
 * Whether a summary of `covered` can stand for (part of) `range`: it reaches no further than the
 * range does, so what it covers beyond the range is older entries, which the plan leaves out.
 */
function within(covered: Iterable<HistoryEntry>, range: readonly HistoryEntry[]): boolean {
  return lastSeq(covered) <= lastSeq(range);
}

/** The seqs of `covered` outside `range`. */
function beyond(covered: Iterable<HistoryEntry>, range: readonly HistoryEntry[]): Set<number> {
  const inRange = new Set(range);
  const out = new Set<number>();
  for (const e of covered) if (!inRange.has(e)) out.add(e.seq);
  return out;
}

/** Whether every entry `job` read is still the one stored at its seq. */
function stillStored(job: Job, stored: readonly HistoryEntry[]): boolean {
  for (const e of job.summaryEntries) if (stored[e.seq] !== e) return false;
  for (const e of job.factEntries) if (stored[e.seq] !== e) return false;
  for (const e of job.model?.entries ?? []) if (stored[e.seq] !== e) return false;
  return true;
}

/**
 * Whether `plan` leaves every message of `seqs` out of the view (none is in an atom it keeps):
 * where a prepared summary covers them beyond its range, the plan may take it.
 */
export function leftView(plan: CompactionPlan, atoms: readonly Atom[], seqs: ReadonlySet<number>): boolean {
  if (seqs.size === 0) return true;
  const dropped = new Set(plan.dropped);
  return atoms.every((atom) => dropped.has(atom.id) || atom.seqs.every((seq) => !seqs.has(seq)));
}

/** Lets the request that scheduled it return first: what follows runs off the request path. */
const afterRequest = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Prepares summaries with `tools` (a model's), answering compactions with `offline` meanwhile. */
export class SummaryAhead {
  constructor(
    private readonly tools: PreparingTools,
    private readonly offline: ContextTools,
    /** Usage (share of the budget) by which the model is asked for the next compaction's range. */
    readonly at: number,
    /** Usage from which the next compaction's range is planned ahead (at most `at`). */
    readonly from: number,
    private readonly warn: (code: string, message: string) => void,
  ) {}

  /**
   * Whether to plan the next compaction's range now: usage past `from` and nothing planned for
   * this plan (or this history) yet; usage just past `at`; or usage grown by a step since the
   * last time, while the range is not settled or the model not asked (or its call failed).
   */
  due(
    state: AheadState,
    plan: CompactionPlan | null,
    usage: number,
    generation: number,
    /**
     * Preparing costs a load of the whole history here (a worker serving from the stored view
     * record): only from `at` on, where the model must be asked at the latest.
     */
    costly = false,
  ): boolean {
    if (usage < this.from) return false;
    if (costly && usage < this.at) return false;
    if (state.plan !== plan || state.seqs === null) return true;
    if (state.job && state.job.generation !== generation) return true;
    // Crossing `at`: the range is planned again (the model is asked for what it gained since), as
    // where the answer another worker stored was taken in already.
    if (usage >= this.at && state.triedAt < this.at) return true;
    if (usage < state.triedAt + RETRY_STEP) return false;
    const model = state.job?.model;
    // An answer stored for this plan's successor stands for a model asked (see `hydrate`).
    if (!model) return !state.settled || state.stored === undefined;
    return !state.settled || model.failed !== undefined;
  }

  /**
   * Takes in the model's answer stored for the successor of the plan the view holds (another
   * worker asked for it, or this conversation's earlier manager), where nothing is prepared here
   * for it yet: as the job it answered, when every message it covers is still stored as it was
   * (`stored` by seq) and the plan's summary is the one it built on. Otherwise it is forgotten.
   */
  async hydrate(
    state: AheadState,
    plan: CompactionPlan | null,
    stored: readonly HistoryEntry[],
    generation: number,
    countText: (text: string) => number,
  ): Promise<void> {
    const memory = state.stored;
    const made = state.storedSpec;
    if ((!memory && !made) || state.plan !== plan || state.job) return;
    state.stored = undefined;
    state.storedSpec = undefined;
    const previousSummary = plan?.summary?.text;
    const previous = textDigest(previousSummary);
    // The plan made ahead and the range its summary stands for, where that range is still stored
    // as it was: the job is that range's, as in the worker that prepared it.
    const range = made && made.previous === previous ? storedEntriesOf(made.entries, stored) : undefined;
    const ranged = range !== undefined && range.length > 0 ? { made: made!, range } : undefined;
    // The model's answer, where it built on the same summary (and, with the range, the same focus).
    const usable = memory?.previous === previous && (!ranged || memory.focus === ranged.made.focus);
    const modelEntries = usable ? storedEntriesOf(memory!.entries, stored) : undefined;
    const answered = usable ? storedEntriesOf(memory!.factEntries, stored) : undefined;
    const covered =
      modelEntries !== undefined &&
      answered !== undefined &&
      modelEntries.length > 0 &&
      (!ranged || within(modelEntries, ranged.range));
    const summaryEntries = ranged?.range ?? (covered ? modelEntries : undefined);
    if (!summaryEntries) return;
    const focus = (ranged ? ranged.made.focus : memory?.focus) ?? undefined;
    let part: ModelPart | null = null;
    if (covered) {
      const answer: PreparedMemory = { summary: memory!.summary, facts: memory!.facts };
      part = {
        entries: new Set(modelEntries),
        factEntries: answered,
        memory: answer,
        checked: [await checkFactsInSlices(answer.facts, answered)],
        settled: Promise.resolve(answer),
        before: null,
      };
    }
    // Another operation may have prepared meanwhile (the checks above yield).
    if (state.job || state.plan !== plan) return;
    state.job = {
      summaryEntries,
      previousSummary,
      focus,
      factEntries: covered ? answered : [],
      generation,
      options: {
        maxTokens: ranged ? ranged.made.maxTokens : memory!.maxTokens,
        countText,
        ...(previousSummary !== undefined ? { previousSummary } : {}),
        ...(focus !== undefined ? { focus } : {}),
      },
      model: part,
    };
    if (ranged) state.spec = ranged.made.spec;
  }

  /**
   * The plan made ahead for the prepared range, as stored (`StoredSpec`, without its binding): with
   * the range its summary stands for and the summary it builds on. Undefined where none is made.
   */
  storedSpec(state: AheadState): Omit<StoredSpec, 'v' | 'epoch' | 'plan'> | undefined {
    const { spec, job } = state;
    if (!spec?.summary || !job) return undefined;
    return {
      // Its summary's text is the placeholder the speculative plan measured: the compaction writes it.
      spec: encodePlan({ ...spec, summary: { ...spec.summary, text: '' } }),
      entries: digested(job.summaryEntries),
      previous: textDigest(job.previousSummary),
      focus: job.focus ?? null,
      maxTokens: job.options.maxTokens,
    };
  }

  /**
   * The model's answer for the prepared range, as stored (src/guard/stored-ahead.ts): the latest
   * of its calls that is back; the one stored before, while none is; undefined for neither.
   */
  storedMemory(state: AheadState): StoredAheadMemory | undefined {
    const job = state.job;
    let model = job?.model ?? null;
    while (model?.before && !model.memory) model = model.before;
    const memory = model?.memory;
    if (!job || !model || !memory) return state.stored;
    return {
      previous: textDigest(job.previousSummary),
      focus: job.focus ?? null,
      maxTokens: job.options.maxTokens,
      entries: digested(model.entries),
      factEntries: digested(model.factEntries),
      summary: memory.summary,
      facts: memory.facts,
    };
  }

  /**
   * Takes what the speculative plan for the compaction replacing `plan` found. The model is asked
   * once the range is settled (or usage is past `at`): for the whole range, or, where it already
   * has some of it, for the rest, building on its own summary. Until then the range's offline
   * summary alone is prepared. Where the previous summary in the plan is an offline one the model
   * has since rewritten (`late`), the model builds on its own version.
   */
  prepare(state: AheadState, plan: CompactionPlan | null, found: Preparation): void {
    const fresh = state.plan !== plan || state.seqs === null;
    const crossedAt = found.usage >= this.at && (fresh || state.triedAt < this.at);
    if (state.plan !== plan) {
      state.plan = plan;
      state.seqs = null;
      state.spec = null;
      state.job = null;
    }
    state.triedAt = found.usage;
    state.settled = found.settled;
    const summary = found.calls.summary;
    if (!summary) {
      // Nothing to summarize as things stand: what was prepared (if anything) stays for now.
      state.seqs ??= found.seqs;
      return;
    }
    const entries = summary.entries;
    const prior = state.job;
    const usable =
      prior !== null &&
      prior.generation === found.generation &&
      prior.previousSummary === summary.options.previousSummary &&
      prior.focus === summary.options.focus;
    const ask = found.settled || crossedAt || (found.usage >= this.at && !prior?.model);
    if (usable && beyond(entries, prior.summaryEntries).size === 0) {
      // The same range (or less of it): what is prepared covers it; the plan made with it stands.
      if (ask && (!prior.model || prior.model.failed !== undefined)) this.askModel(prior, state);
      if (prior.summaryEntries.length === entries.length) {
        state.spec = found.spec;
        state.seqs = found.seqs;
      }
      return;
    }
    const job: Job = {
      summaryEntries: entries,
      previousSummary: summary.options.previousSummary,
      focus: summary.options.focus,
      factEntries: [...found.calls.factEntries.values()].sort((a, b) => a.seq - b.seq),
      generation: found.generation,
      options: summary.options,
      model: null,
    };
    if (usable && within(prior.summaryEntries, entries)) {
      // The range grew: what the model has (or is writing) of it is kept, and built on.
      if (prior.model && prior.model.failed === undefined && within(prior.model.entries, entries)) {
        job.model = prior.model;
      }
      if (prior.offlineText !== undefined) {
        job.base = { entries: new Set(prior.summaryEntries), offlineText: prior.offlineText };
      }
    }
    state.job = job;
    state.spec = found.spec;
    state.seqs = found.seqs;
    if (ask) this.askModel(job, state);
  }

  /**
   * The offline summary of the prepared range, written now (off the request path) so that a
   * compaction whose model summary is not back does not write it on the request path; and, where
   * a part of the model's covers only some of the range (the rest not asked, or asked later and
   * maybe not back at the compaction), once it is back, its summary with the rest written offline
   * on top of it.
   */
  async writeFallback(state: AheadState): Promise<void> {
    const job = state.job;
    if (!job) return;
    if (job.offlineText === undefined) {
      const base = job.base;
      job.offlineText = base
        ? await this.onTop(
            job.summaryEntries.filter((e) => !base.entries.has(e)),
            job.options,
            base.offlineText,
          )
        : await this.offline.summarize(job.summaryEntries, job.options);
    }
    // The part of the model's that a compaction takes if the call for the whole range is still
    // out then: its summary with the rest written offline on top, once it is back.
    let part = job.model;
    if (part && job.summaryEntries.every((e) => part!.entries.has(e))) part = part.before;
    if (!part) return;
    const memory = await part.settled;
    if (!memory || state.job !== job || job.partial?.part === part) return;
    await afterRequest();
    const covered = part.entries;
    const rest = job.summaryEntries.filter((e) => !covered.has(e));
    job.partial = { part, text: await this.onTop(rest, job.options, memory.summary) };
  }

  /**
   * The plan made ahead, as this compaction's, where it was made on the plan the view holds and
   * the entries it read are still stored: its summary the model's (when back and within the room
   * the plan gave it, or with the rest written offline on top where the model has only some of
   * the range) or the offline one written ahead, and its facts block with the model's facts
   * (`withModelFacts`) or without. Undefined where it cannot be taken as it is.
   */
  async adoption(
    state: AheadState,
    plan: CompactionPlan | null,
    stored: readonly HistoryEntry[],
    generation: number,
  ): Promise<
    | {
        summary: PlanSummary;
        withModelFacts: ExtractedFact[] | undefined;
        facts: ExtractedFact[] | undefined;
        spec: CompactionPlan;
        outcome: PreparedOutcome;
        /** Seqs the summary covers beyond the plan's range: the plan must leave them out of the view. */
        extras: ReadonlySet<number>;
        /** To call when the compaction takes it: asks the model for what its summary did not cover. */
        taken: () => void;
      }
    | undefined
  > {
    const { spec, job } = state;
    if (state.plan !== plan || !spec?.summary || !job) return undefined;
    if (job.generation !== generation || !stillStored(job, stored)) return undefined;
    const written = await this.written(job, job.summaryEntries, job.options);
    if (!written) return undefined;
    const facts = spec.facts;
    const model = this.modelFacts(job, job.factEntries);
    return {
      summary: { ...spec.summary, text: written.text, tools: written.kind },
      withModelFacts: model.length > 0 ? mergeFacts(facts ?? [], model) : undefined,
      facts,
      spec,
      outcome: written.outcome,
      extras: written.extras,
      taken: () => {
        if (written.outcome !== 'used') {
          this.askLate(state, job, job.summaryEntries, job.options, written.text, generation);
        }
      },
    };
  }

  /**
   * The tools a compaction plans with, and how it went with the prepared summary: the prepared
   * summary and facts where they cover what the plan asks for (the rest of a range that grew
   * written offline on top), the offline tools otherwise (and then the model is asked for what
   * it did not cover, for the next compaction to build on).
   */
  compactionTools(
    state: AheadState,
    plan: CompactionPlan | null,
    stored: readonly HistoryEntry[],
    generation: number,
  ): {
    tools: ContextTools;
    modelFacts: (read: readonly HistoryEntry[]) => readonly ExtractedFact[];
    /**
     * How it went with the summary `text` the plan holds (the last one written, where the plan
     * holds none written now), and the seqs it covers beyond its range, which the plan must leave
     * out of the view.
     */
    outcome: (
      text: string | undefined,
    ) => { outcome: PreparedOutcome; extras: ReadonlySet<number>; taken: () => void } | undefined;
  } {
    const job = state.plan === plan ? state.job : null;
    const valid = job !== null && job.generation === generation && stillStored(job, stored);
    let written: Written | undefined;
    // Re-plans may take back a summary written earlier in this compaction: each is known by its text.
    const byText = new Map<string, Written & { taken: () => void }>();
    const tools: ContextTools = {
      get kind() {
        return written?.kind ?? 'offline';
      },
      summarize: async (entries, options) => {
        const same = valid && options.previousSummary === job.previousSummary && options.focus === job.focus;
        const prepared = same ? await this.written(job, entries, options) : undefined;
        written = prepared ?? {
          text: await this.offline.summarize(entries, options),
          kind: this.offline.kind,
          outcome: job === null ? 'none' : 'stale',
          extras: new Set(),
        };
        const done = written;
        const taken = () => {
          if (done.outcome !== 'used') {
            this.askLate(state, prepared ? job : null, entries, options, done.text, generation);
          }
        };
        byText.set(written.text, { ...written, taken });
        return written.text;
      },
      extractFacts: (entries, options) => this.offline.extractFacts(entries, options),
    };
    // The model's facts of what the plan reads, checked against it: a fact of other messages never gets in.
    const modelFacts = (read: readonly HistoryEntry[]): readonly ExtractedFact[] =>
      valid ? this.modelFacts(job, read) : [];
    return {
      tools,
      modelFacts,
      outcome: (text) => {
        const known = text !== undefined ? byText.get(text) : undefined;
        // A plan that kept no summary written now: the last one's outcome, and nothing to ask late.
        return known ?? (written && { ...written, taken: () => undefined });
      },
    };
  }

  /** The model's facts back for `job`, those `read` bears out. */
  private modelFacts(job: Job, read: readonly HistoryEntry[]): ExtractedFact[] {
    const checks = job.model?.memory ? job.model.checked : undefined;
    if (!checks) return [];
    const sorted = [...read].sort((a, b) => a.seq - b.seq);
    return checks.flatMap((checked) => checkedFactsIn(checked, sorted));
  }

  /**
   * The best summary of `range` from what `job` prepared, within `options.maxTokens`: the model's
   * where it covers the range and fits (`used`); the model's with the rest of the range written
   * offline on top (`partial`); else the offline one written ahead (with the rest on top).
   * Undefined where what was prepared reaches past the range (it would stand for messages the
   * plan keeps).
   */
  private async written(
    job: Job,
    range: readonly HistoryEntry[],
    options: SummarizeOptions,
  ): Promise<Written | undefined> {
    const fits = (text: string | undefined): text is string =>
      text !== undefined && (options.countText?.(text) ?? 0) <= options.maxTokens;
    // The latest of the model's calls that is back: a call for what the range gained since may still be out.
    let model = job.model;
    while (model?.before && !model.memory) model = model.before;
    const memory = model?.memory;
    const isJobRange = sameEntries(range, job.summaryEntries);
    if (model && memory && within(model.entries, range)) {
      const rest = range.filter((e) => !model.entries.has(e));
      const extras = beyond(model.entries, range);
      if (rest.length === 0) {
        if (fits(memory.summary))
          return { text: memory.summary, kind: this.tools.kind, outcome: 'used', extras };
      } else {
        const prepared = isJobRange && job.partial?.part === model ? job.partial.text : undefined;
        const text = fits(prepared) ? prepared : await this.onTop(rest, options, memory.summary);
        return { text, kind: `${this.tools.kind}+${this.offline.kind}`, outcome: 'partial', extras };
      }
    }
    if (!within(job.summaryEntries, range)) return undefined;
    const outcome: PreparedOutcome = !model
      ? 'none'
      : memory
        ? 'stale'
        : model.failed !== undefined
          ? 'failed'
          : 'pending';
    const kind = this.offline.kind;
    const extras = beyond(job.summaryEntries, range);
    const prepared = job.offlineText;
    if (prepared === undefined) {
      return { text: await this.offline.summarize(range, options), kind, outcome, extras: new Set() };
    }
    const covered = new Set(job.summaryEntries);
    const rest = range.filter((e) => !covered.has(e));
    const text = rest.length === 0 && fits(prepared) ? prepared : await this.onTop(rest, options, prepared);
    return { text, kind, outcome, extras };
  }

  /** The offline summary of `rest` on top of `base` (a summary of what came before it), within the room. */
  private onTop(rest: readonly HistoryEntry[], options: SummarizeOptions, base: string): Promise<string> {
    return this.offline.summarize(rest, { ...options, previousSummary: base });
  }

  /** Asks the model for what of `job`'s range it was not asked yet (all of it, if nothing). */
  private askModel(job: Job, state: AheadState): void {
    const previous = job.previousSummary;
    const late = state.late;
    const builtOn =
      late && previous !== undefined && late.offlineText === previous && late.job.model
        ? late.job.model.settled.then((memory) => memory?.summary ?? previous)
        : Promise.resolve(previous);
    const part = this.extend(job.model, job, builtOn);
    job.model = part;
    // Once back, the answer is stored for the workers that did not ask (see `storedMemory`).
    void part.settled.then((memory) => {
      if (memory && state.job === job) state.onMemory?.();
    });
  }

  /**
   * After a compaction whose summary is not wholly the model's: the model's summary of the range
   * it stands for (what the model has of it, and the rest asked now, once per range), which the
   * next compaction's summary builds on in place of `text`.
   */
  private askLate(
    state: AheadState,
    job: Job | null,
    entries: readonly HistoryEntry[],
    options: SummarizeOptions,
    text: string,
    generation: number,
  ): void {
    const late = state.late?.job;
    if (
      late !== undefined &&
      late.generation === generation &&
      sameEntries(entries, late.summaryEntries) &&
      late.previousSummary === options.previousSummary
    ) {
      state.late = { job: late, offlineText: text };
      return;
    }
    const model = job?.model;
    const asked: Job = {
      summaryEntries: entries,
      previousSummary: options.previousSummary,
      focus: options.focus,
      factEntries: [],
      generation,
      options,
      model: model && model.failed === undefined && within(model.entries, entries) ? model : null,
    };
    asked.model = this.extend(asked.model, asked, Promise.resolve(options.previousSummary));
    state.late = { job: asked, offlineText: text };
  }

  /**
   * The model's part covering all of `job`'s range: `part` where it does already; the rest asked,
   * building on `part`'s summary, where it covers some; else one call for the whole range,
   * building on `previous`. Its promise never rejects.
   */
  private extend(part: ModelPart | null, job: Job, previous: Promise<string | undefined>): ModelPart {
    if (part && part.failed === undefined) {
      const rest = job.summaryEntries.filter((e) => !part.entries.has(e));
      if (rest.length === 0) return part;
      const known = new Set(part.factEntries);
      const builtOn = part.settled.then((memory) => {
        if (!memory) throw new MissingBase();
        return memory.summary;
      });
      // The call reads it where it asks the model; a call given up before that (a reply over its
      // caps, a newer job) never does, and its rejection must not go unhandled.
      builtOn.catch(() => undefined);
      return this.call(
        rest,
        job.factEntries.filter((e) => !known.has(e)),
        job.options,
        builtOn,
        part,
      );
    }
    return this.call(job.summaryEntries, job.factEntries, job.options, previous, null);
  }

  /** One model call for `entries`, after what `before` covers; its promise never rejects. */
  private call(
    entries: readonly HistoryEntry[],
    factEntries: readonly HistoryEntry[],
    options: SummarizeOptions,
    previous: Promise<string | undefined>,
    before: ModelPart | null,
  ): ModelPart {
    const part: ModelPart = {
      entries: new Set([...(before?.entries ?? []), ...entries]),
      factEntries: [...(before?.factEntries ?? []), ...factEntries],
      settled: Promise.resolve(undefined),
      before,
    };
    part.settled = afterRequest()
      .then(() => previous)
      .then((previousSummary) =>
        this.tools.prepareMemory({
          summaryEntries: entries,
          factEntries,
          maxTokens: options.maxTokens,
          ...(previousSummary !== undefined ? { previousSummary } : {}),
          ...(options.focus !== undefined ? { focus: options.focus } : {}),
          ...(options.countText ? { countText: options.countText } : {}),
        }),
      )
      .then(async (answer) => {
        // Checked here, in slices, so that a reply of many items never holds the process.
        const checked = await checkFactsInSlices(answer.facts, factEntries);
        return { answer, checked };
      })
      .then(
        ({ answer, checked }) => {
          const memory = before?.memory
            ? { summary: answer.summary, facts: [...before.memory.facts, ...answer.facts] }
            : answer;
          part.checked = [...(before?.checked ?? []), checked];
          part.memory = memory;
          return memory;
        },
        (error: unknown) => {
          part.failed = error instanceof Error ? error.message : String(error);
          if (!(error instanceof MissingBase)) {
            this.warn(
              'llm_fallback',
              `the ${this.tools.kind} summary prepared ahead failed (${part.failed}); compactions use the ${this.offline.kind} tools until one is ready`,
            );
          }
          return undefined;
        },
      );
    return part;
  }
}
