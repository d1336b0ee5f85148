/**
 * An error the command reports as one line and turns into an exit code: 2 for a usage mistake
 * (the command line itself is wrong), 1 for input that cannot be used.
 */
export class CliError extends Error {
  readonly exitCode: 1 | 2;
  constructor(message: string, exitCode: 1 | 2 = 1, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}
