/**
 * A bad benchmark command line. Benchmarks throw it from their option parsing; the entry point
 * prints its message with the list of benchmarks and exits 2, as the CLI does for usage errors.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
