import type { Command } from 'commander';
import { formatInt } from '../../format-number.js';
import { modelCounter } from '../../tokens/model-counter.js';
import { breakdownHeader, conversationBreakdown } from '../breakdown.js';
import { loadConversation } from '../input.js';
import { positiveInteger } from '../number-option.js';
import { writeOut } from '../terminal-safe.js';
import { textTable } from '../text-table.js';
import { printWarning } from '../warn.js';

interface InspectOptions {
  model?: string;
  json?: boolean;
  top: number;
  messagesPath?: string;
}

function share(part: number, whole: number): string {
  return whole > 0 ? `${((part / whole) * 100).toFixed(1)}%` : '0.0%';
}

/**
 * `contextkit inspect FILE`: where the tokens go (by role, by tool, the largest messages) so a
 * user can see what fills the window before deciding what to compact or pin.
 */
export function registerInspect(program: Command): void {
  program
    .command('inspect')
    .description('show where the tokens go: by role, by tool, and the largest messages')
    .argument('<file>', 'conversation: JSON array, JSONL, or {"messages": [...]}; - for stdin')
    .option(
      '-m, --model <id>',
      'model whose tokenizer to count with (default: gpt-4o, or claude-sonnet-4-5 for Anthropic format)',
    )
    .option('--top <n>', 'how many of the largest messages to list', positiveInteger, 10)
    .option(
      '--messages-path <path>',
      'where the messages are in another shape, as dot-separated keys (e.g. 0.traj)',
    )
    .option('--json', 'print the figures as JSON')
    .action(async (file: string, options: InspectOptions) => {
      const conversation = await loadConversation(file, { messagesPath: options.messagesPath });
      const model = modelCounter(options.model, conversation.format);
      if (model.warning) printWarning(model.warning);
      const b = conversationBreakdown(conversation.messages, conversation.format ?? 'openai', model.counter);
      const largest = b.bySize.slice(0, options.top);
      if (options.json) {
        const json = {
          ...breakdownHeader(conversation, model, b),
          byRole: b.byRole,
          byTool: b.byTool,
          largest,
          images: b.images,
          documents: b.documents,
        };
        writeOut(`${JSON.stringify(json, null, 2)}\n`);
        return;
      }
      const out = [
        `${conversation.source}: ${formatInt(b.messages)} messages, ${conversation.format ?? 'plain text (either format)'}, ` +
          `${formatInt(b.tokens)} tokens, ${model.label} for ${model.info.id}`,
        '',
        'By role',
        ...textTable(
          [
            ['role', 'messages', 'tokens', 'share'],
            ...b.byRole.map((r) => [
              r.role,
              formatInt(r.messages),
              formatInt(r.tokens),
              share(r.tokens, b.tokens),
            ]),
          ],
          ['left', 'right', 'right', 'right'],
        ),
      ];
      out.push('', 'By tool (calls and their results)');
      if (b.byTool.length === 0) out.push('  no tool calls');
      else {
        out.push(
          ...textTable(
            [
              ['tool', 'calls', 'call tokens', 'results', 'result tokens', 'largest result', 'share'],
              ...b.byTool.map((t) => [
                t.tool,
                formatInt(t.calls),
                formatInt(t.callTokens),
                formatInt(t.results),
                formatInt(t.resultTokens),
                formatInt(t.largestResult),
                share(t.callTokens + t.resultTokens, b.tokens),
              ]),
            ],
            ['left', 'right', 'right', 'right', 'right', 'right', 'right'],
          ),
        );
      }
      out.push('', `Largest messages (top ${largest.length})`);
      out.push(
        ...textTable(
          [
            ['seq', 'role', 'tokens', 'preview'],
            ...largest.map((m) => [`#${m.seq}`, m.role, formatInt(m.tokens), m.preview]),
          ],
          ['right', 'left', 'right', 'left'],
        ),
      );
      out.push('', `Images: ${formatInt(b.images)}   Documents: ${formatInt(b.documents)}`);
      writeOut(`${out.join('\n')}\n`);
    });
}
