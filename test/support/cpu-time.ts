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
