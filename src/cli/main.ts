/**
 * The `contextkit` command. Every failure ends as one line `contextkit: <message>` on standard
 * error, never a stack trace (set CONTEXTKIT_DEBUG=1 for one), with exit code 2 for a usage
 * mistake and 1 for input that cannot be used or a budget that cannot be met.
 */

import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { ConfigurationError, ContextkitError } from '../errors.js';
import { redactUrlsIn } from '../redact-url.js';
import { CliError } from './cli-error.js';
import { registerCompact } from './commands/compact.js';
import { registerConversations } from './commands/conversations.js';
import { registerCount } from './commands/count.js';
import { registerDemo } from './commands/demo.js';
import { registerEval } from './commands/eval.js';
import { registerInspect } from './commands/inspect.js';
import { registerReplay } from './commands/replay.js';
import { registerValidate } from './commands/validate.js';
import { escapeField } from './terminal-safe.js';

const COMMANDS = ['count', 'compact', 'validate', 'inspect', 'demo', 'conversations', 'replay', 'eval'];

function packageVersion(): string {
  try {
    // Both src/cli/main.ts and dist/cli/main.js sit two levels below package.json.
    const pkg: unknown = createRequire(import.meta.url)('../../package.json');
    const version = typeof pkg === 'object' && pkg !== null ? Reflect.get(pkg, 'version') : undefined;
    return typeof version === 'string' ? version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** The program with its commands; commander's own errors are thrown, not printed, so `main` words them. */
export function buildProgram(): Command {
  const program = new Command('contextkit')
    .description('Conversation memory for LLM agents: count, inspect, validate and compact conversations.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .exitOverride()
    .configureOutput({ outputError: () => undefined })
    .showSuggestionAfterError(true)
    .addHelpText(
      'after',
      '\nFILE is a JSON array of messages, JSONL (one message a line), or an object with a "messages" field;\n' +
        'use --messages-path to pick the array from other shapes, and - to read standard input.\n' +
        'Exit codes: 0 ok, 1 invalid input or a budget that cannot be met, 2 usage error.',
    );
  registerCount(program);
  registerCompact(program);
  registerValidate(program);
  registerInspect(program);
  registerDemo(program);
  registerEval(program);
  registerConversations(program);
  registerReplay(program);
  return program;
}

/** An error as one terminal-safe line: it may quote ids and values from the data. */
function oneLine(text: string): string {
  return escapeField(redactUrlsIn(text.replace(/\s*\n\s*/g, ' ').trim()));
}

/** The command named on the command line, for the `--help` hint of a usage error. */
function commandIn(argv: readonly string[]): string | undefined {
  return argv.slice(2).find((a) => COMMANDS.includes(a));
}

/** The exit code an error deserves and the line that says what went wrong. */
function describeFailure(error: unknown, argv: readonly string[]): { code: number; line?: string } {
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return { code: 0 };
    // Help was printed: asked for (`help count`, exit 0), or because no command was given (exit 2).
    if (error.code === 'commander.help') return { code: error.exitCode === 0 ? 0 : 2 };
    const command = commandIn(argv);
    const hint = `see contextkit ${command ? `${command} ` : ''}--help`;
    return { code: 2, line: `${oneLine(error.message.replace(/^error:\s*/, ''))} (${hint})` };
  }
  if (error instanceof CliError) return { code: error.exitCode, line: error.message };
  if (error instanceof ConfigurationError) return { code: 2, line: error.message };
  if (error instanceof ContextkitError) return { code: 1, line: error.message };
  const message = error instanceof Error ? error.message : String(error);
  return { code: 1, line: `unexpected error: ${message} (set CONTEXTKIT_DEBUG=1 for the stack trace)` };
}

/**
 * Runs the command line `argv` (as `process.argv`: node, script, then arguments). Sets
 * `process.exitCode` rather than exiting, so a large JSON output is flushed before the process
 * ends.
 */
export async function main(argv: string[]): Promise<void> {
  // `contextkit compact big.json | head` closes the pipe early: that is not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    const failure = describeFailure(error, argv);
    if (failure.line !== undefined) process.stderr.write(`contextkit: ${oneLine(failure.line)}\n`);
    if (process.env.CONTEXTKIT_DEBUG && error instanceof Error && error.stack)
      process.stderr.write(`${error.stack}\n`);
    process.exitCode = failure.code;
  }
}
