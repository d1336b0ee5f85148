import { type Command, Option } from 'commander';
import type { CompactionReceipt } from '../../events.js';
import { formatInt } from '../../format-number.js';
import { wireFormat } from '../../formats/registry.js';
import { ContextManager } from '../../manager.js';
import type { Message, MessageFormat } from '../../messages/types.js';
import type { Economy } from '../../options.js';
import { REQUEST_FORMATS } from '../../options.js';
import { modelCounter } from '../../tokens/model-counter.js';
import { loadConversation } from '../input.js';
import { economyArgument, positiveInteger } from '../number-option.js';
import { receiptLines } from '../receipt-text.js';
import { MAX_TOKENS_HELP, renamedOption } from '../renamed-option.js';
import { writeOut } from '../terminal-safe.js';
import { printWarning } from '../warn.js';

interface CompactOptions {
  maxTokens: number;
  model?: string;
  format?: MessageFormat;
  json?: boolean;
  messagesPath?: string;
  economy?: Economy;
}

/**
 * What a request to the view's provider sends: Anthropic's `{ system, messages }` (no system role
 * among the messages; https://docs.anthropic.com/en/api/messages), Gemini's `{ systemInstruction,
 * contents }` (https://ai.google.dev/api/generate-content), and the list itself for OpenAI, whose
 * system prompt is a message.
 */
function requestBody(view: Message[], format: MessageFormat | undefined): unknown {
  return format === undefined ? view : wireFormat(format).toRequest(view);
}

/**
 * `contextkit compact FILE --max-tokens N`: the view a ContextManager would send at that budget, on
 * stdout, ready to pipe into a request; what was cleared, dropped and truncated goes to stderr so
 * the two never mix.
 */
export function registerCompact(program: Command): void {
  program
    .command('compact')
    .description('print the view of a conversation that fits a token budget (report on stderr)')
    .argument('<file>', 'conversation: JSON array, JSONL, or {"messages": [...]}; - for stdin')
    .requiredOption('--max-tokens <n>', MAX_TOKENS_HELP, positiveInteger)
    .addOption(renamedOption('-b, --budget <n>', '--max-tokens N'))
    .option(
      '-m, --model <id>',
      'model whose tokenizer to count with (default: gpt-4o, or claude-sonnet-4-5 for Anthropic format)',
    )
    .addOption(
      new Option('-f, --format <format>', "format of the view (default: the input's)").choices([
        ...REQUEST_FORMATS,
      ]),
    )
    .option(
      '--messages-path <path>',
      'where the messages are in another shape, as dot-separated keys (e.g. 0.traj)',
    )
    .option(
      '--economy <e>',
      'billed input against what is kept: rich, balanced (default), lean, minimal, or the share of the budget views aim at (e.g. 0.3)',
      economyArgument,
    )
    .option(
      '--json',
      'print { messages, receipt, usage } instead of the messages alone (no report on stderr)',
    )
    .action(async (file: string, options: CompactOptions) => {
      const conversation = await loadConversation(file, { messagesPath: options.messagesPath });
      const model = modelCounter(options.model, conversation.format);
      if (model.warning) printWarning(model.warning);
      const manager = new ContextManager({
        model: model.info.id,
        ...(options.economy !== undefined ? { economy: options.economy } : {}),
      });
      manager.on('context:warn', (e) => printWarning(e.message));
      const receipts: CompactionReceipt[] = [];
      manager.on('context:post_compact', (e) => receipts.push(e.receipt));
      for (const message of conversation.messages) await manager.addMessage(message);
      const format = options.format ?? conversation.format;
      const messages = await manager.getMessagesForRequest({
        tokenBudget: options.maxTokens,
        ...(format ? { provider: format } : {}),
      });
      const usage = manager.usage();
      const receipt = receipts.at(-1) ?? null;
      await manager.close();
      const viewFormat = format ?? manager.messageFormat;
      const request = requestBody(messages, viewFormat);
      if (options.json) {
        writeOut(
          `${JSON.stringify({ messages, ...(request === messages ? {} : { request }), receipt, usage }, null, 2)}\n`,
        );
        return;
      }
      writeOut(`${JSON.stringify(request, null, 2)}\n`);
      const before = receipt ? receipt.tokensBefore : usage.tokens;
      const report = [
        `compact: ${formatInt(conversation.messages.length)} messages, ${formatInt(before)} tokens → ` +
          `${formatInt(messages.length)} messages, ${formatInt(usage.tokens)} tokens ` +
          `(budget ${formatInt(usage.budget)}; ${model.label} for ${model.info.id}${format && format !== conversation.format ? `; converted to ${format}` : ''})`,
      ];
      if (receipt) report.push(...receiptLines(receipt));
      else {
        report.push(
          `  nothing to compact: ${formatInt(usage.tokens)} tokens is under the trigger (${formatInt(usage.trigger)}, ` +
            `${Math.round((usage.trigger / usage.budget) * 100)}% of the budget)`,
        );
      }
      process.stderr.write(`${report.join('\n')}\n`);
    });
}
