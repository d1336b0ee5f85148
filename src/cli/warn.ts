/**
 * Prints a warning as one line on standard error, in the same `contextkit:` voice as errors, so
 * a warning never looks like output and never breaks a JSON stdout.
 */
export function printWarning(message: string): void {
  process.stderr.write(`contextkit: warning: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
}
