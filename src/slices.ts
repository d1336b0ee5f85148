/**
 * Long work in slices that yield (issue 24): a loop over a large history (a cold start, an import,
 * a first plan) runs for about {@link SLICE_MS} at a time and then lets the event loop run (a
 * macrotask: timers, I/O, other conversations), so that no synchronous stretch holds the process
 * for long. A loop in slices does exactly what it does in place, only with pauses between items.
 */

import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/** A slice runs at most about this long before it yields (a 10 ms timer stays near its time). */
export const SLICE_MS = 8;

/** The clock slices are timed with (milliseconds); tests may put an instrumented one in its place. */
export interface SliceClock {
  now(): number;
}

const performanceClock: SliceClock = { now: () => performance.now() };
let clock: SliceClock = performanceClock;

/**
 * Times slices with `next` from now on (a test's instrumented clock); returns a function that puts
 * the previous clock back.
 */
export function useSliceClock(next: SliceClock): () => void {
  const previous = clock;
  clock = next;
  return () => {
    clock = previous;
  };
}

/**
 * One run of work in slices: call `due()` between items (cheap: one clock read) and, when it says
 * so, `await pause()`. Or `await slices.step()`, which does both and resolves at once (no await
 * of a macrotask) while the slice has time left.
 */
export class Slices {
  private started = clock.now();

  /** Whether the slice has run its time: the caller should `pause()` before the next item. */
  due(): boolean {
    return clock.now() - this.started >= SLICE_MS;
  }

  /** Lets the event loop run (a macrotask), then starts a new slice. */
  async pause(): Promise<void> {
    await yieldToEventLoop();
    this.started = clock.now();
  }

  /** Pauses when the slice is due; nothing (no promise to await) otherwise. */
  step(): Promise<void> | undefined {
    return this.due() ? this.pause() : undefined;
  }
}

/**
 * `items.map(fn)` in slices that yield: the same results, in the same order, `fn` called once per
 * item in order.
 */
export async function mapInSlices<T, R>(
  items: readonly T[],
  fn: (item: T, index: number) => R,
  slices: Slices = new Slices(),
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    out[i] = fn(items[i]!, i);
    const pause = slices.step();
    if (pause) await pause;
  }
  return out;
}

/** `items.forEach(fn)` in slices that yield. */
export async function forEachInSlices<T>(
  items: readonly T[],
  fn: (item: T, index: number) => void,
  slices: Slices = new Slices(),
): Promise<void> {
  for (let i = 0; i < items.length; i++) {
    fn(items[i]!, i);
    const pause = slices.step();
    if (pause) await pause;
  }
}

/**
 * Work written once as a generator whose every `yield` is a place it may pause: run whole in place
 * by {@link runSteps}, or by {@link runStepsInSlices} with the event loop let run when a slice is
 * spent. Both give the same result.
 */
export type Steps<T> = Generator<void, T, void>;

/** Runs `steps` to its end without pausing. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** Runs `steps` to its end, pausing at a `yield` whenever the slice is spent. */
export async function runStepsInSlices<T>(steps: Steps<T>, slices: Slices = new Slices()): Promise<T> {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    const pause = slices.step();
    if (pause) await pause;
  }
}

/** Items a run of {@link sortSteps} sorts in one go before it merges runs. */
const SORT_RUN = 2_048;

/**
 * Sorts `items` in place by `compare` (as `items.sort(compare)` does, stable), yielding between
 * runs and every few thousand items merged: a sort of 200,000 statements took 0.6 s in one stretch.
 */
export function* sortSteps<T>(items: T[], compare: (a: T, b: T) => number): Steps<void> {
  const n = items.length;
  for (let start = 0; start < n; start += SORT_RUN) {
    const run = items.slice(start, start + SORT_RUN).sort(compare);
    for (let i = 0; i < run.length; i++) items[start + i] = run[i]!;
    yield;
  }
  let from = items;
  let to: T[] = new Array(n);
  for (let width = SORT_RUN; width < n; width *= 2) {
    for (let left = 0; left < n; left += 2 * width) {
      const mid = Math.min(left + width, n);
      const end = Math.min(left + 2 * width, n);
      let i = left;
      let j = mid;
      for (let k = left; k < end; k++) {
        // Stable: on a tie the left run's item goes first.
        to[k] = j >= end || (i < mid && compare(from[i]!, from[j]!) <= 0) ? from[i++]! : from[j++]!;
        if ((k & 4_095) === 4_095) yield;
      }
    }
    [from, to] = [to, from];
  }
  if (from !== items) for (let k = 0; k < n; k++) items[k] = from[k]!;
}
