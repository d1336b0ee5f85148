/**
 * The arithmetic of the `economy` setting: how the lean presets' cadence follows a model's prompt
 * cache prices, and where a number between the presets lands.
 *
 * Why the cadence depends on the cache. Between two compactions a view grows from the target T
 * to the trigger T + D by g tokens a request; each request reads the view so far from the cache
 * at r × the input price, and each compaction writes the new view again at w × (r and w: the
 * cache's read and write prices over the input price). Per request that is about
 * r × (T + D/2) + (w − r) × T × g / D, least at D = √(2 × ρ × T × g) with ρ = (w − r) / r. So the
 * best gap scales with √ρ: ρ is 11.5 on Anthropic's cache (reads 0.1×, writes 1.25×), where the
 * presets' gaps were set, 9 on gpt-5's (0.1×, no write surcharge) and 1 on gpt-4o's (reads
 * 0.5×): there a view's every token costs half price on every turn, so the cheap views are the
 * small ones, and compacting often to keep them small costs little.
 */
import type { ModelPricing } from './tokens/pricing.js';

/** What an `economy` setting sets, unless the option is given. */
export interface EconomySettings {
  compactThreshold: number;
  targetUsage: number;
  memoryShare: number;
  keepToolResults: number;
  /** Offer the model `recall`: lean views lean on it for what they left out. */
  recall: boolean;
}

/** ρ of the cache the presets' gaps are given for: Anthropic's, (1.25 − 0.1) / 0.1. */
export const REFERENCE_CACHE_RHO = 11.5;

/**
 * The least share of a preset's gap a cadence keeps: a compaction is also work (and, with a model
 * summarizing, a model call the meter does not bill), so views never compact every turn.
 */
export const MIN_CADENCE = 0.25;

/**
 * How much of the presets' gap between trigger and target suits `pricing`'s cache: √(ρ / 11.5),
 * within [`MIN_CADENCE`, 1]; 1 where the prices or a cache discount are unknown.
 */
export function cadenceFactor(pricing: ModelPricing | undefined): number {
  if (pricing === undefined || !(pricing.cacheRead > 0) || !(pricing.cacheRead < pricing.input)) return 1;
  const rho = (pricing.cacheWrite - pricing.cacheRead) / pricing.cacheRead;
  if (!Number.isFinite(rho)) return 1;
  return Math.min(1, Math.max(MIN_CADENCE, Math.sqrt(rho / REFERENCE_CACHE_RHO)));
}

const round3 = (n: number): number => Math.round(n * 1000) / 1000;

/**
 * A preset at a cache's cadence: the settings that lean on `recall` (those whose target is below
 * `keptTarget`, the default's) are for the bill, so their gap narrows by `factor`; the others are
 * for what is kept, and stay as given.
 */
export function withCadence(
  preset: Readonly<EconomySettings>,
  factor: number,
  keptTarget: number,
): EconomySettings {
  if (preset.targetUsage >= keptTarget || factor === 1) return { ...preset };
  const gap = preset.compactThreshold - preset.targetUsage;
  return { ...preset, compactThreshold: round3(preset.targetUsage + gap * factor) };
}

/**
 * The settings of a number `x` in (0, 1): views aim at `x` of the budget (`targetUsage`), and the
 * rest is interpolated linearly between the two presets (`points`, at the model's cadence) whose
 * targets surround `x`; below the leanest the gap shrinks as √x (the best gap above) and the
 * memory keeps its share of the target; above the richest its gap is kept, the trigger at most 1.
 * At a preset's own target the number is that preset.
 */
export function economyAt(points: readonly Readonly<EconomySettings>[], x: number): EconomySettings {
  const sorted = [...points].sort((a, b) => a.targetUsage - b.targetUsage);
  const leanest = sorted[0]!;
  const richest = sorted[sorted.length - 1]!;
  if (x <= leanest.targetUsage) {
    const gap = (leanest.compactThreshold - leanest.targetUsage) * Math.sqrt(x / leanest.targetUsage);
    return {
      compactThreshold: round3(x + gap),
      targetUsage: x,
      memoryShare: round3((x * leanest.memoryShare) / leanest.targetUsage),
      keepToolResults: leanest.keepToolResults,
      recall: leanest.recall,
    };
  }
  if (x >= richest.targetUsage) {
    return {
      compactThreshold: Math.min(1, round3(x + richest.compactThreshold - richest.targetUsage)),
      targetUsage: x,
      memoryShare: round3((x * richest.memoryShare) / richest.targetUsage),
      keepToolResults: richest.keepToolResults,
      recall: richest.recall,
    };
  }
  const i = sorted.findIndex((p) => p.targetUsage >= x);
  const a = sorted[i - 1]!;
  const b = sorted[i]!;
  const t = (x - a.targetUsage) / (b.targetUsage - a.targetUsage);
  const lerp = (from: number, to: number) => from + (to - from) * t;
  return {
    compactThreshold: round3(lerp(a.compactThreshold, b.compactThreshold)),
    targetUsage: x,
    memoryShare: round3(lerp(a.memoryShare, b.memoryShare)),
    keepToolResults: Math.round(lerp(a.keepToolResults, b.keepToolResults)),
    recall: t < 1 ? a.recall : b.recall,
  };
}
