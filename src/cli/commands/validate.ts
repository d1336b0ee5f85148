import { type Command, Option } from 'commander';
import { ContextkitError } from '../../errors.js';
import { wireFormat } from '../../formats/registry.js';
import type { MessageFormat } from '../../messages/types.js';
import { REQUEST_FORMATS } from '../../options.js';
import { detectConversationFormat, formatName } from '../../wire/detect.js';
import { type RequestProblem, validateRequest } from '../../wire/validate-request.js';
import { CliError } from '../cli-error.js';
import { parseInput, type RawConversation, readInput } from '../input.js';
import { writeOut } from '../terminal-safe.js';

interface ValidateOptions {
  provider?: MessageFormat;
  json?: boolean;
  messagesPath?: string;
}

function detected(messages: readonly unknown[]): MessageFormat | 'mixed' | undefined {
  try {
    return detectConversationFormat(messages);
  } catch (error) {
    if (error instanceof ContextkitError) return 'mixed';
    throw error;
  }
}

/**
 * What a request body for `provider` cannot hold that a list of messages can: Anthropic's
 * Messages API has no `system` role among its messages (the system prompt is the top-level
 * `system`; https://docs.anthropic.com/en/api/messages), nor does Gemini's `contents` (it is
 * `systemInstruction`; https://ai.google.dev/api/generate-content). A body (`{ system, messages }`,
 * `{ systemInstruction, contents }`) has its system prompt read as the first message, so only a
 * system message inside the list is a problem.
 */
function bodyProblems(raw: RawConversation, provider: MessageFormat): RequestProblem[] {
  const fields = wireFormat(provider).requestFields;
  if (fields === undefined) return [];
  const { system: field, messages: list } = fields;
  const problems: RequestProblem[] = [];
  raw.messages.forEach((m, i) => {
    if (raw.body === provider && i === 0) return;
    const role = (m as { role?: unknown } | null)?.role;
    if (role === 'system' || role === 'developer') {
      problems.push({
        index: i,
        path: `${list}[${i}].role`,
        message: `${formatName(provider)} takes no "${role}" role among the ${list}: the system prompt goes in the request's top-level "${field}" (contextkit compact --format ${provider} writes that body)`,
      });
    }
  });
  return problems;
}

/**
 * `contextkit validate FILE --provider P`: would the provider accept these messages as a request?
 * Lists every problem (index, path, message) on stdout and exits 1 when there is one, so it can
 * gate a pipeline.
 */
export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description("check a conversation against a provider's request rules (exit 1 when invalid)")
    .argument('<file>', 'conversation: JSON array, JSONL, or {"messages": [...]}; - for stdin')
    .addOption(
      new Option(
        '-p, --provider <provider>',
        "provider whose rules to apply (default: the conversation's format)",
      ).choices([...REQUEST_FORMATS]),
    )
    .option(
      '--messages-path <path>',
      'where the messages are in another shape, as dot-separated keys (e.g. 0.traj)',
    )
    .option('--json', 'print { valid, provider, messages, problems } as JSON')
    .action(async (file: string, options: ValidateOptions) => {
      const source = file === '-' ? 'stdin' : file;
      const raw = parseInput(await readInput(file), source, { messagesPath: options.messagesPath });
      const found = detected(raw.messages);
      const provider: MessageFormat =
        options.provider ?? (found === 'mixed' || found === undefined ? 'openai' : found);
      const checked = validateRequest(raw.messages, provider);
      const problems = [...bodyProblems(raw, provider), ...checked.problems];
      const result = { valid: problems.length === 0, problems };
      const count = raw.messages.length;
      if (options.json) {
        writeOut(
          `${JSON.stringify({ valid: result.valid, provider, messages: count, problems: result.problems }, null, 2)}\n`,
        );
      } else if (result.valid) {
        writeOut(`valid (${count} message${count === 1 ? '' : 's'}, ${formatName(provider)})\n`);
      } else {
        const lines = result.problems.map((p) => {
          const line = p.index >= 0 && raw.lines ? ` (line ${raw.lines[p.index]})` : '';
          return `  [${p.index >= 0 ? p.index : '-'}]${line} ${p.path}: ${p.message}`;
        });
        if (found === 'mixed') lines.push('  note: the conversation mixes OpenAI and Anthropic messages');
        else if (found && found !== provider) {
          lines.push(
            `  note: the conversation is in ${formatName(found)} format; try --provider ${found}, or convert it with contextkit compact --format ${provider}`,
          );
        }
        writeOut(
          `invalid for ${formatName(provider)}: ${result.problems.length} problem${result.problems.length === 1 ? '' : 's'} in ${count} messages\n${lines.join('\n')}\n`,
        );
      }
      if (!result.valid) {
        throw new CliError(
          `${source} is not a valid ${formatName(provider)} request (${result.problems.length} problem${result.problems.length === 1 ? '' : 's'})`,
          1,
        );
      }
    });
}
