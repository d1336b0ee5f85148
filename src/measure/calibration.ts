/**
 * Learning, per model, how far the fast estimate is from what the provider bills, so estimates
 * for Claude and Gemini (which have no offline tokenizer) converge on the real count.
 *
 * The seed (004, `PersistenceCalibrationStore`) keeps an EWMA per model with
 * `confidence = min(1, samples / minSamplesForConfidence)` (defaults alpha 0.2, 10 samples).
 * This keeps that, and fixes what goes wrong with a bare EWMA of raw ratios:
 *
 * - The average is taken over log ratios, so over- and under-estimates weigh the same (×2 and
 *   ×0.5 cancel) and the correction is a geometric mean.
 * - One sample cannot swing it: its ratio is clamped to `clamp` (default [0.5, 2]), and the
 *   step is `min(max(alpha, 1/(n+1+prior)), (n+1)/(n+1+prior))` for the n-th sample against a
 *   prior of 1.0 worth `priorWeight` samples (default 4). The first sample therefore moves the
 *   log correction by at most 1/(1+prior) of its distance (at most ×2^0.2 ≈ 1.15 by default);
 *   a run of agreeing samples still converges, and later the step settles at `alpha`.
 * - Outliers (an image-heavy request the estimate priced badly, a usage report that belongs to
 *   another call) weigh less once the correction is established (3 samples): a sample whose
 *   raw ratio is further than `outlierRatio` (default 1.5×) from the current correction has its
 *   step scaled by `(ln outlierRatio / distance)²`, so one sample moves an established
 *   correction by at most `alpha · ln outlierRatio` in log (about 8% by default), and a wild
 *   one (×4 off) by under 3%. A caller that knows a sample is odd can pass `weight` < 1.
 * - A tokenizer change (a model whose tokenizer is not the one its estimate assumes, as Claude
 *   Sonnet 5's ~30% more tokens) is caught within three replies: three full-weight samples in a
 *   row that agree within 10% and differ from the correction by over 5% set it to their mean.
 * - `correction()` is synchronous and reads memory, so the fast path uses a sample the moment
 *   `record` resolves; records for one model are applied one after another, none lost.
 *
 * Persistence: under `calibration:{model}` as `{ v: 1, model, logFactor, samples, updatedAt,
 * writes, recent }`. `Persistence` has no compare-and-set, so each record reads the stored state,
 * applies its sample on top (taking in what other processes learned), writes, and reads back:
 * `writes` keeps the ids of the last 32 writes, and a writer whose id is not in what it reads
 * back was overwritten by a writer that had not seen it, so it applies its sample again on the
 * newer state (up to 5 times). Sample counts from several processes thus add up instead of the
 * last writer's replacing the others'. The one race this cannot see is a write that lands
 * between another process's read and its write and is then overwritten after its own read-back;
 * that sample is lost to the store, which costs a little learning, never a wrong count.
 */

import { ConfigurationError } from '../errors.js';
import { InvalidUsageError } from '../meter/usage.js';
import type { Persistence } from '../stores/persistence.js';

/** Options of {@link createCalibration}. */
export interface CalibrationOptions {
  /** Where corrections survive restarts; memory only when omitted. */
  persistence?: Persistence;
  /** EWMA weight of a sample once the correction is established, in (0, 1]; default 0.2. */
  alpha?: number;
  /** Samples for full confidence; default 10. */
  minSamples?: number;
  /** Bounds of a sample's ratio and so of the correction; must hold 1; default [0.5, 2]. */
  clamp?: readonly [number, number];
  /** How many samples' worth the prior correction of 1.0 counts for; default 4. */
  priorWeight?: number;
  /** Distance (as a factor) from the correction beyond which a sample weighs less; default 1.5. */
  outlierRatio?: number;
  /** The clock for `updatedAt`; injectable for tests. */
  now?: () => number;
}

/** One observation: what the fast path estimated and what the provider billed. */
export interface CalibrationSample {
  model: string;
  /** The estimate before correction, in tokens (> 0). */
  estimated: number;
  /** The provider's count of the same input, in tokens. */
  actual: number;
  /** How much to trust this sample, in [0, 1]; default 1. */
  weight?: number;
}

/** What is known about one model. */
export interface CalibrationEntry {
  /** The multiplier the fast estimate uses. */
  correction: number;
  samples: number;
  /** `min(1, samples / minSamples)`. */
  confidence: number;
  /** ISO time of the last sample. */
  updatedAt: string;
}

/** Per-model corrections learned from reported usage. */
export interface Calibration {
  /** The multiplier for `model`'s fast estimate; 1 when nothing is known. Synchronous. */
  correction(model: string): number;
  /** `min(1, samples / minSamples)` for `model`; 0 when nothing is known. */
  confidence(model: string): number;
  /**
   * Learns from one sample; resolves once `correction()` reflects it (and, with persistence,
   * once it is stored). Rejects with `InvalidUsageError` for a sample that cannot be a count,
   * and with the store's error when persistence fails (the correction is updated regardless).
   */
  record(sample: CalibrationSample): Promise<void>;
  /** Reads `model`'s stored correction into memory (a no-op without persistence). */
  load(model: string): Promise<void>;
  /** Every model known in memory. */
  snapshot(): Record<string, CalibrationEntry>;
}

/** The stored form. */
interface CalibrationState {
  v: 1;
  model: string;
  logFactor: number;
  samples: number;
  updatedAt: string;
  /** Ids of the last writes this state includes, for lost-update detection across processes. */
  writes: string[];
  /** The last full-weight samples' log ratios (clamped), newest last: at most {@link SHIFT_SAMPLES}. */
  recent?: number[];
}

/** The persistence key of a model's correction. */
export function calibrationKey(model: string): string {
  return `calibration:${model}`;
}

const LINEAGE = 32;
const WRITE_ATTEMPTS = 5;
/** Outlier weighting starts once this many samples set the correction. */
const ESTABLISHED = 3;
/**
 * A tokenizer change (a new model behind the same name, Claude Sonnet 5's ~30% more tokens for the
 * same text) shows as every sample disagreeing with the correction the same way. This many
 * full-weight samples in a row that agree with one another within {@link SHIFT_SPREAD} and differ
 * from the correction by more than {@link SHIFT_MIN} move it to their mean at once, instead of over
 * the ten or so samples the smoothing would take; one outlier never does.
 */
const SHIFT_SAMPLES = 3;
const SHIFT_SPREAD = Math.log(1.1);
const SHIFT_MIN = Math.log(1.05);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkModel(model: unknown): asserts model is string {
  if (typeof model !== 'string' || model === '') {
    throw new InvalidUsageError('model', `expected a non-empty model name, got ${JSON.stringify(model)}`);
  }
}

function checkSample(sample: unknown): asserts sample is CalibrationSample {
  if (!isRecord(sample)) throw new InvalidUsageError('sample', 'expected an object');
  checkModel(sample.model);
  const { estimated, actual, weight } = sample;
  if (typeof estimated !== 'number' || !Number.isFinite(estimated) || estimated <= 0) {
    throw new InvalidUsageError('sample.estimated', `expected a positive number, got ${String(estimated)}`);
  }
  if (typeof actual !== 'number' || !Number.isFinite(actual) || actual < 0) {
    throw new InvalidUsageError('sample.actual', `expected a non-negative number, got ${String(actual)}`);
  }
  if (weight !== undefined && (typeof weight !== 'number' || !(weight >= 0 && weight <= 1))) {
    throw new InvalidUsageError('sample.weight', `expected a number in [0, 1], got ${String(weight)}`);
  }
}

function option(
  name: string,
  value: number | undefined,
  fallback: number,
  ok: (v: number) => boolean,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !ok(value))
    throw new ConfigurationError(name, `out of range: ${String(value)}`);
  return value;
}

function clampTo(value: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, value));
}

/**
 * Per-model corrections for the fast estimate, learned from usage (see the module note for
 * the update rule and how concurrent writers are merged).
 */
export function createCalibration(options: CalibrationOptions = {}): Calibration {
  const persistence = options.persistence;
  const alpha = option('alpha', options.alpha, 0.2, (v) => v > 0 && v <= 1);
  const minSamples = option('minSamples', options.minSamples, 10, (v) => Number.isInteger(v) && v >= 1);
  const priorWeight = option('priorWeight', options.priorWeight, 4, (v) => v >= 0 && Number.isFinite(v));
  const outlierRatio = option('outlierRatio', options.outlierRatio, 1.5, (v) => v > 1 && Number.isFinite(v));
  const [lo, hi] = options.clamp ?? [0.5, 2];
  if (!(lo > 0 && lo <= 1 && hi >= 1 && Number.isFinite(hi))) {
    throw new ConfigurationError('clamp', `must be [lo, hi] with 0 < lo <= 1 <= hi, got [${lo}, ${hi}]`);
  }
  const logLo = Math.log(lo);
  const logHi = Math.log(hi);
  const outlierLog = Math.log(outlierRatio);
  const now = options.now ?? Date.now;
  const instance = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  let writeCounter = 0;

  const states = new Map<string, CalibrationState>();
  const chains = new Map<string, Promise<unknown>>();

  /** Runs `task` after every earlier task for `model`, so updates never interleave. */
  function serialize<T>(model: string, task: () => Promise<T>): Promise<T> {
    const previous = chains.get(model) ?? Promise.resolve();
    const next = previous.then(task, task);
    const tail = next.catch(() => undefined);
    chains.set(model, tail);
    void tail.then(() => {
      if (chains.get(model) === tail) chains.delete(model);
    });
    return next;
  }

  function fromStore(model: string, value: unknown): CalibrationState | undefined {
    if (!isRecord(value) || value.v !== 1) return undefined;
    const { logFactor, samples, updatedAt, writes, recent } = value;
    if (typeof logFactor !== 'number' || !Number.isFinite(logFactor)) return undefined;
    if (typeof samples !== 'number' || !Number.isInteger(samples) || samples < 0) return undefined;
    const lineage = Array.isArray(writes) ? writes.filter((w): w is string => typeof w === 'string') : [];
    return {
      v: 1,
      model,
      logFactor: clampTo(logFactor, logLo, logHi),
      samples,
      updatedAt: typeof updatedAt === 'string' ? updatedAt : new Date(0).toISOString(),
      writes: lineage.slice(-LINEAGE),
      recent: Array.isArray(recent)
        ? recent
            .filter((r): r is number => typeof r === 'number' && Number.isFinite(r))
            .map((r) => clampTo(r, logLo, logHi))
            .slice(-SHIFT_SAMPLES)
        : [],
    };
  }

  async function readStored(model: string): Promise<CalibrationState | undefined> {
    if (!persistence) return undefined;
    return fromStore(model, await persistence.get<unknown>(calibrationKey(model)));
  }

  function apply(
    base: CalibrationState | undefined,
    sample: CalibrationSample,
    writeId: string,
  ): CalibrationState {
    const n = base?.samples ?? 0;
    const current = base?.logFactor ?? 0;
    const raw = Math.log(sample.actual / sample.estimated);
    const target = clampTo(raw, logLo, logHi);
    const evidence = n + 1;
    let step = Math.min(Math.max(alpha, 1 / (evidence + priorWeight)), evidence / (evidence + priorWeight));
    // Judged on the unclamped ratio: an actual of 0, or 40× the estimate, is plainly not this view.
    const distance = Math.abs(raw - current);
    if (n >= ESTABLISHED && distance > outlierLog) step *= (outlierLog / distance) ** 2;
    const weight = sample.weight ?? 1;
    step *= weight;
    let logFactor = clampTo(current + step * (target - current), logLo, logHi);
    // Only full-weight samples count towards a shift; a discounted one leaves the run as it was.
    const recent =
      weight >= 1 ? [...(base?.recent ?? []), target].slice(-SHIFT_SAMPLES) : (base?.recent ?? []);
    if (recent.length === SHIFT_SAMPLES) {
      const spread = Math.max(...recent) - Math.min(...recent);
      const mean = recent.reduce((a, b) => a + b, 0) / recent.length;
      if (spread <= SHIFT_SPREAD && Math.abs(mean - logFactor) > SHIFT_MIN) logFactor = mean;
    }
    return {
      v: 1,
      model: sample.model,
      logFactor,
      samples: n + 1,
      updatedAt: new Date(now()).toISOString(),
      writes: [...(base?.writes ?? []), writeId].slice(-LINEAGE),
      recent,
    };
  }

  async function persist(sample: CalibrationSample, writeId: string): Promise<void> {
    const store = persistence as Persistence;
    const key = calibrationKey(sample.model);
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const stored = await readStored(sample.model);
      const next = apply(stored ?? states.get(sample.model), sample, writeId);
      states.set(sample.model, next);
      await store.set(key, next);
      const check = await readStored(sample.model);
      if (check === undefined || check.writes.includes(writeId)) {
        if (check) states.set(sample.model, check);
        return;
      }
      // Overwritten by a writer that never saw this sample: apply it again on what is there.
    }
  }

  function entry(state: CalibrationState): CalibrationEntry {
    return {
      correction: Math.exp(state.logFactor),
      samples: state.samples,
      confidence: Math.min(1, state.samples / minSamples),
      updatedAt: state.updatedAt,
    };
  }

  return {
    correction(model: string): number {
      const state = states.get(model);
      return state ? Math.exp(state.logFactor) : 1;
    },

    confidence(model: string): number {
      const state = states.get(model);
      return state ? Math.min(1, state.samples / minSamples) : 0;
    },

    async record(sample: CalibrationSample): Promise<void> {
      checkSample(sample);
      const copy: CalibrationSample = { ...sample };
      const writeId = `${instance}.${(writeCounter++).toString(36)}`;
      await serialize(copy.model, async () => {
        if (!persistence) {
          states.set(copy.model, apply(states.get(copy.model), copy, writeId));
          return;
        }
        try {
          await persist(copy, writeId);
        } catch (error) {
          // The store failed: learn in memory anyway, then report the failure.
          const current = states.get(copy.model);
          if (!current?.writes.includes(writeId)) states.set(copy.model, apply(current, copy, writeId));
          throw error;
        }
      });
    },

    async load(model: string): Promise<void> {
      checkModel(model);
      if (!persistence) return;
      await serialize(model, async () => {
        const stored = await readStored(model);
        const current = states.get(model);
        if (stored && (!current || stored.samples >= current.samples)) states.set(model, stored);
      });
    },

    snapshot(): Record<string, CalibrationEntry> {
      const out: Record<string, CalibrationEntry> = {};
      for (const [model, state] of states) out[model] = entry(state);
      return out;
    },
  };
}
