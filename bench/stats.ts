/** Summary statistics of a set of timings, the figures every benchmark table reports. */
export interface Summary {
  n: number;
  median: number;
  p95: number;
  min: number;
  max: number;
  mean: number;
}

/**
 * The value below which `q` of the samples fall (nearest rank on the sorted samples), so a
 * percentile is always a time that was actually measured, never an interpolation between two.
 */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(q * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!;
}

/** Median, p95 and range of the samples; NaN throughout when there are none. */
export function summarize(samples: readonly number[]): Summary {
  const sorted = samples.slice().sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    n: sorted.length,
    median:
      sorted.length === 0
        ? Number.NaN
        : (sorted[(sorted.length - 1) >> 1]! + sorted[sorted.length >> 1]!) / 2,
    p95: percentile(sorted, 0.95),
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
  };
}

/**
 * A full collection, run twice: a heap figure taken after one pass can still include garbage
 * that only a second pass (after finalizers and weak-reference clearing) gives back.
 */
export function collectGarbage(): void {
  if (typeof globalThis.gc !== 'function') {
    throw new Error('memory figures need --expose-gc (npm run bench passes it)');
  }
  globalThis.gc();
  globalThis.gc();
}

/** Heap in use after a full collection: the live data, without garbage waiting to be freed. */
export function liveHeapBytes(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/**
 * Live heap plus the memory of array buffers (typed arrays keep their contents outside the
 * JavaScript heap, so `heapUsed` alone misses them), after a full collection.
 */
export function liveMemoryBytes(): number {
  collectGarbage();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}
