import { redactUrlsIn } from '../redact-url.js';
import { escapeField } from './terminal-safe.js';

/**
 * Prints a warning as one line on standard error, in the same `contextkit:` voice as errors, so
 * a warning never looks like output and never breaks a JSON stdout.
 */
export function printWarning(message: string): void {
  process.stderr.write(`${warningLine(message)}\n`);
}

/** The line {@link printWarning} prints, for a caller that writes it itself (above a progress bar). */
export function warningLine(message: string): string {
  return `contextkit: warning: ${escapeField(redactUrlsIn(message.replace(/\s*\n\s*/g, ' ')))}`;
}
