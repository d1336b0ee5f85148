/**
 * Where a number given as `economy` lands between the presets.
 *
 * Why the gap below the leanest preset shrinks as √x. Between two compactions a view grows from
 * the target T to the trigger T + D by g tokens a request; each request reads the view so far
 * from the prompt cache at r × the input price, and each compaction writes the new view again at
 * w ×. Per request that is about r × (T + D/2) + (w − r) × T × g / D, least at
 * D = √(2 × ρ × T × g), ρ = (w − r) / r: for the same cache and turns, the best gap goes as √T.
 */

/** What an `economy` setting sets, unless the option is given. */
export interface EconomySettings {
  compactThreshold: number;
  targetUsage: number;
  summaryShare: number;
  keepToolResults: number;
  /** Offer the model `recall`: lean views lean on it for what they left out. */
  recall: boolean;
}

const round3 = (n: number): number => Math.round(n * 1000) / 1000;
/**
 * Three significant digits: below the leanest preset the shares get as small as the number
 * given (1e-9 is in range), where three decimals would round the trigger to 0, under the target.
 * For shares of 0.1 and more it is the same as `round3`.
 */
const round3sig = (n: number): number => Number(n.toPrecision(3));

/**
 * The settings of a number `x` in (0, 1): views aim at `x` of the budget (`targetUsage`), and the
 * rest is interpolated linearly between the two presets (`points`) whose
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
      compactThreshold: round3sig(x + gap),
      targetUsage: x,
      summaryShare: round3sig(x * (leanest.summaryShare / leanest.targetUsage)),
      keepToolResults: leanest.keepToolResults,
      recall: leanest.recall,
    };
  }
  if (x >= richest.targetUsage) {
    return {
      compactThreshold: Math.min(1, round3(x + richest.compactThreshold - richest.targetUsage)),
      targetUsage: x,
      summaryShare: round3((x * richest.summaryShare) / richest.targetUsage),
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
    summaryShare: round3(lerp(a.summaryShare, b.summaryShare)),
    keepToolResults: Math.round(lerp(a.keepToolResults, b.keepToolResults)),
    recall: t < 1 ? a.recall : b.recall,
  };
}
