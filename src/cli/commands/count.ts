import type { Command } from 'commander';
import { formatInt } from '../../format-number.js';
import { modelCounter } from '../../tokens/model-counter.js';
import { breakdownHeader, conversationBreakdown } from '../breakdown.js';
import { loadConversation } from '../input.js';
import { writeOut } from '../terminal-safe.js';
import { textTable } from '../text-table.js';
import { printWarning } from '../warn.js';

interface CountOptions {
  model?: string;
  json?: boolean;
  messagesPath?: string;
}

/**
 * `contextkit count FILE`: what sending the whole conversation costs, in tokens, by role, with
 * the counter named so an estimate is never mistaken for an exact count.
 */
export function registerCount(program: Command): void {
  program
    .command('count')
    .description('count the tokens of a conversation, in total and by role')
    .argument('<file>', 'conversation: JSON array, JSONL, or {"messages": [...]}; - for stdin')
    .option(
      '-m, --model <id>',
      'model whose tokenizer to count with (default: gpt-4o, or claude-sonnet-4-5 for Anthropic format)',
    )
    .option(
      '--messages-path <path>',
      'where the messages are in another shape, as dot-separated keys (e.g. 0.traj)',
    )
    .option('--json', 'print the figures as JSON')
    .action(async (file: string, options: CountOptions) => {
      const conversation = await loadConversation(file, { messagesPath: options.messagesPath });
      const format = conversation.format ?? 'openai';
      const model = modelCounter(options.model, conversation.format);
      if (model.warning) printWarning(model.warning);
      const b = conversationBreakdown(conversation.messages, format, model.counter);
      if (options.json) {
        const json = {
          ...breakdownHeader(conversation, model, b),
          byRole: Object.fromEntries(
            b.byRole.map((r) => [r.role, { messages: r.messages, tokens: r.tokens }]),
          ),
        };
        writeOut(`${JSON.stringify(json, null, 2)}\n`);
        return;
      }
      const lines = [
        `${conversation.source}: ${formatInt(b.messages)} messages, ${conversation.format ?? 'plain text (either format)'}`,
        `tokens: ${formatInt(b.tokens)}, ${model.label} for ${model.info.id}`,
        ...textTable(
          [
            ...b.byRole.map((r) => [
              r.role,
              formatInt(r.tokens),
              `${formatInt(r.messages)} message${r.messages === 1 ? '' : 's'}`,
            ]),
            ...(b.overhead > 0 ? [['overhead', formatInt(b.overhead), 'per request']] : []),
          ],
          ['left', 'right', 'left'],
        ),
      ];
      writeOut(`${lines.join('\n')}\n`);
    });
}
