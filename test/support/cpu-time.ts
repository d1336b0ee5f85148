/**
 * CPU time for speed checks in tests. Tests run in forked processes, many at once: wall time on a
 * loaded machine mostly measures waiting for a core, while this process's user + system time
 * measures the work. Speed goals live in `npm run bench`; these checks only catch a blow-up.
 */

/** Runs `work` and returns its result with the CPU milliseconds this process spent on it. */
export function withCpuTime<T>(work: () => T): { result: T; cpuMs: number } {
  const started = process.cpuUsage();
  const result = work();
  const used = process.cpuUsage(started);
  return { result, cpuMs: (used.user + used.system) / 1000 };
}

/**
 * Runs the asynchronous `work` and returns its result with the longest stretch of CPU time the
 * process spent between two turns of the event loop while it ran: a ticker re-arms itself with
 * `setImmediate`, so the CPU time between two ticks bounds every synchronous stretch in between
 * (the work's, and whatever else ran in that turn). CPU time, so a loaded machine does not count.
 */
export async function withLongestStretch<T>(
  work: () => Promise<T>,
): Promise<{ result: T; longestMs: number }> {
  let last = process.cpuUsage();
  let longestMs = 0;
  let running = true;
  const tick = (): void => {
    const used = process.cpuUsage(last);
    longestMs = Math.max(longestMs, (used.user + used.system) / 1000);
    last = process.cpuUsage();
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
