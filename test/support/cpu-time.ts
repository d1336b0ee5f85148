/**
 * CPU time for speed checks in tests. Tests run in forked processes, many at once: wall time on a
 * loaded machine mostly measures waiting for a core, while this process's user + system time
 * measures the work. Speed goals live in `npm run bench`; these checks only catch a blow-up.
 */

/**
 * What the caller allocated to feed the work (a reply of 200,000 items, say) is collected before
 * the work is measured, where the forks run with --expose-gc (vitest.config.ts): a collection of
 * the test's own heap is not the work's.
 */
function collectFirst(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Runs `work` and returns its result with the CPU milliseconds its thread spent on it (bounded as below). */
export function withCpuTime<T>(work: () => T): { result: T; cpuMs: number } {
  collectFirst();
  const wall = performance.now();
  const started = process.cpuUsage();
  const result = work();
  const used = process.cpuUsage(started);
  // The work runs on the main thread: its CPU time is at most both the process's (which holds V8's
  // helper threads too) and the wall time (which holds waiting for a core).
  return { result, cpuMs: Math.min((used.user + used.system) / 1000, performance.now() - wall) };
}

/**
 * Runs `work`, which must do the same each time and change nothing, `runs` times, and returns its
 * last result with the least CPU time one run took: what the work costs, without a stall that fell
 * on one run (the machine busy with other forks, a compilation of the first run's code).
 */
export function leastCpuTime<T>(work: () => T, runs = 3): { result: T; cpuMs: number } {
  let least = withCpuTime(work);
  for (let k = 1; k < runs; k++) {
    const next = withCpuTime(work);
    least = { result: next.result, cpuMs: Math.min(least.cpuMs, next.cpuMs) };
  }
  return least;
}

/**
 * Runs the asynchronous `work` and returns its result with the longest stretch of CPU time the
 * process spent between two turns of the event loop while it ran: a ticker re-arms itself with
 * `setImmediate`, so the CPU time between two ticks bounds every synchronous stretch in between
 * (the work's, and whatever else ran in that turn). CPU time, so a loaded machine does not count;
 * but the process's CPU time also holds what V8's helper threads did meanwhile (concurrent and
 * parallel garbage collection, on other cores: 50 ms of CPU in a 33 ms stretch was seen), which
 * never blocked the loop. The main thread's share of a stretch is at most both its CPU time and its
 * wall time, so each stretch counts the lesser of the two: still a bound on the stretch, never below it.
 */
export async function withLongestStretch<T>(
  work: () => Promise<T>,
): Promise<{ result: T; longestMs: number }> {
  collectFirst();
  let last = process.cpuUsage();
  let wall = performance.now();
  let longestMs = 0;
  let running = true;
  const tick = (): void => {
    const used = process.cpuUsage(last);
    const now = performance.now();
    longestMs = Math.max(longestMs, Math.min((used.user + used.system) / 1000, now - wall));
    last = process.cpuUsage();
    wall = performance.now();
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    const result = await work();
    running = false;
    tick(); // the stretch since the last tick
    return { result, longestMs };
  } finally {
    running = false;
  }
}
