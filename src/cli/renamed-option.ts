import { Option } from 'commander';
import { CliError } from './cli-error.js';

/** What the context's limit is, said once for every command that takes `--max-tokens`. */
export const MAX_TOKENS_HELP =
  "the context's limit: tokens the view may hold (e.g. 8000 or 8k; the seeds' max_tokens, not the provider's output max_tokens)";

/**
 * An option the CLI took before it used the seed contract's names (issue 34): kept out of the
 * help, and refused, when given, with a usage error that names the one to use.
 */
export function renamedOption(flags: string, use: string): Option {
  const name = flags.split(/[ ,]+/).find((f) => f.startsWith('--')) ?? flags;
  return new Option(flags).hideHelp().argParser(() => {
    throw new CliError(`${name} was renamed: use ${use}`, 2);
  });
}
