import { type Command, Option } from 'commander';
import type { CompactionReceipt } from '../../events.js';
import { formatInt } from '../../format-number.js';
import { ContextManager } from '../../manager.js';
import type { Message, MessageFormat } from '../../messages/types.js';
import { FileStore } from '../../stores/file.js';
import { counterLabel, defaultModel, modelCounter } from '../../tokens/model-counter.js';
import { detectConversationFormat } from '../../wire/detect.js';
import { CliError } from '../cli-error.js';
import { DEMO_CONVERSATION, messageFingerprint, resumeDemo, saveDemoRecord } from '../demo-resume.js';
import { positiveInteger } from '../number-option.js';
import { ProgressBar } from '../progress.js';
import { receiptLines, receiptSummary } from '../receipt-text.js';
import { MAX_TOKENS_HELP, renamedOption } from '../renamed-option.js';
import { printWarning, warningLine } from '../warn.js';

interface DemoOptions {
  dir: string;
  messages: number;
  maxTokens: number;
  model?: string;
  format?: MessageFormat;
  reset?: boolean;
  verbose?: boolean;
}

/** Figures gathered while replaying, for the closing report. */
interface Tally {
  added: number;
  /** Tokens of the messages added, by the manager's counter. */
  addedTokens: number;
  turns: number;
  compactions: number;
  requestMs: number;
  addMs: number;
  sent: number;
  full: number;
  comparable: number;
  extended: number;
  lastView: { messages: number; tokens: number } | null;
  /** `usage_high` warnings the guard gave; only the first is printed. */
  usageWarnings: number;
  /** Requests whose view passed {@link WARN_AT} of the budget when the one before was under it. */
  crossings: number;
}

/** The guard's warning line, set here so the closing figures can name it. */
const WARN_AT = 0.8;

/** Whether `next` starts with every message of `previous`, unchanged: a prompt-cache hit. */
function extendsView(previous: readonly Message[], next: readonly Message[]): boolean {
  if (next.length < previous.length) return false;
  for (let i = 0; i < previous.length; i++) {
    const a = previous[i];
    const b = next[i];
    if (a !== b && JSON.stringify(a) !== JSON.stringify(b)) return false;
  }
  return true;
}

function times(n: number): string {
  return n === 0 ? 'no time' : n === 1 ? 'once' : `${formatInt(n)} times`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * `contextkit demo`: the README's main job. A long generated coding-agent session is kept in the
 * embedded file store and replayed turn by turn through a ContextManager at a fixed budget, as an
 * agent loop would: add each message, request a view before each model call. It prints every
 * compaction and the closing figures; a second run resumes the stored session and carries on.
 */
export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description(
      'replay a long generated agent session through a ContextManager with a file store (resumes on the next run)',
    )
    .option('-d, --dir <dir>', 'directory of the file store', '.contextkit')
    .option(
      '-n, --messages <n>',
      'messages to add in this run (rounded up to a whole turn)',
      positiveInteger,
      600,
    )
    .option('--max-tokens <n>', MAX_TOKENS_HELP, positiveInteger, 16_000)
    .addOption(renamedOption('-b, --budget <n>', '--max-tokens N'))
    .option(
      '-m, --model <id>',
      'model whose tokenizer to count with (default: gpt-4o, or claude-sonnet-4-5 for Anthropic format)',
    )
    .addOption(
      new Option('-f, --format <format>', 'message format of a new session (default openai)').choices([
        'openai',
        'anthropic',
      ]),
    )
    .option('--reset', 'delete the stored session and start over')
    .option(
      '-v, --verbose',
      'print each compaction in full (what was cleared, dropped and truncated, by seq)',
    )
    .action(async (options: DemoOptions) => {
      const started = performance.now();
      const store = new FileStore(options.dir, { onWarning: printWarning });
      if (options.reset) await store.delete(DEMO_CONVERSATION);
      // The model's default depends on the session's format, which a resumed session already has.
      const storedFormat = detectConversationFormat(
        (await store.read(DEMO_CONVERSATION, { limit: 64 })).map((e) => e.message),
      );
      if (storedFormat && options.format && options.format !== storedFormat) {
        await store.close();
        throw new CliError(
          `the stored demo session is in ${storedFormat} format, not ${options.format}; add --reset to start a new one`,
          1,
        );
      }
      const format: MessageFormat = storedFormat ?? options.format ?? 'openai';
      const model = modelCounter(options.model ?? defaultModel(format), format);
      if (model.warning) {
        await store.close();
        throw new CliError(`--model: model ${JSON.stringify(options.model)} is not in the catalog`, 2);
      }
      const manager = new ContextManager({
        model: model.info.id,
        store,
        conversationId: DEMO_CONVERSATION,
        guard: { warnAt: WARN_AT },
      });
      // `usage_high` is counted and printed once by the replay (see there); the rest as they come.
      manager.on('context:warn', (e) => {
        if (e.code !== 'usage_high') printWarning(e.message);
      });
      try {
        const stored = (await manager.getEntries()).map((e) => e.message as Message);
        const out = process.stdout;
        const resume = await resumeDemo(
          store,
          stored,
          format,
          options.messages,
          model.counter.id,
          options.dir,
        );
        const total = resume.turns.reduce((n, t) => n + t.length, 0);
        // The session is replayed in whole turns, so the count can pass the one asked for.
        const rounded =
          total === options.messages
            ? ''
            : ` (${formatInt(options.messages)} asked for, rounded up to a whole turn)`;
        if (stored.length > 0) {
          out.write(
            `demo: resumed ${formatInt(stored.length)} messages of conversation "${DEMO_CONVERSATION}" from ${options.dir} (${format}); adding ${formatInt(total)} more${rounded}\n`,
          );
        } else {
          out.write(
            `demo: new session in ${options.dir} (conversation "${DEMO_CONVERSATION}", ${format}); adding ${formatInt(total)} messages${rounded}\n`,
          );
        }
        out.write(
          `demo: ${model.info.id}, ${counterLabel(model.info)}, budget ${formatInt(options.maxTokens)} tokens per request\n`,
        );
        const before = resume.storedTokens ?? (await manager.getTokenCount());
        const tally = await replay(manager, resume.turns, total, options, before);
        const storedNow = stored.length + tally.added;
        const storedTokens = before + tally.addedTokens;
        const last = resume.turns.at(-1)?.at(-1) ?? stored.at(-1);
        await saveDemoRecord(store, {
          messages: storedNow,
          tokens: storedTokens,
          counter: model.counter.id,
          last: messageFingerprint(last),
          session: resume.session.snapshot(),
        });
        const usage = manager.usage();
        const elapsed = performance.now() - started;
        const pct = (part: number, whole: number) =>
          whole > 0 ? `${((part / whole) * 100).toFixed(1)}%` : 'n/a';
        const lines = [
          `demo: added ${formatInt(tally.added)} messages in ${formatInt(tally.turns)} turns (${seconds(elapsed)})`,
          `  stored        ${formatInt(storedNow)} messages, ${formatInt(storedTokens)} tokens, in ${options.dir} (nothing was removed from it)`,
          tally.lastView
            ? `  sent          last view ${formatInt(tally.lastView.tokens)} tokens in ${formatInt(tally.lastView.messages)} messages (budget ${formatInt(usage.budget)}, trigger ${formatInt(usage.trigger)}, target ${formatInt(usage.target)})`
            : '  sent          no request this run',
          `  per turn      ${formatInt(tally.turns > 0 ? tally.sent / tally.turns : 0)} tokens sent on average, vs ${formatInt(tally.turns > 0 ? tally.full / tally.turns : 0)} for the whole history (${pct(tally.sent, tally.full)})`,
          `  compactions   ${formatInt(tally.compactions)} this run (one every ${tally.compactions > 0 ? (tally.turns / tally.compactions).toFixed(1) : '–'} turns)`,
          `  time          ${(tally.requestMs / Math.max(1, tally.turns)).toFixed(2)} ms per view request, ${(tally.addMs / Math.max(1, tally.added)).toFixed(2)} ms per message stored (durable append)`,
          `  prompt cache  ${pct(tally.extended, tally.comparable)} of turns sent a view that extends the previous one (${formatInt(tally.extended)}/${formatInt(tally.comparable)})`,
          `  usage warning ${tally.usageWarnings === 0 ? 'none' : 'printed once'}; the view climbed past ${WARN_AT * 100}% of the budget ${times(tally.crossings)}${tally.compactions > 0 ? ' on its way to the compaction trigger' : ''}`,
          `run contextkit demo again to resume this session (${formatInt(storedNow)} messages), or with --reset to start over`,
        ];
        out.write(`${lines.join('\n')}\n`);
      } finally {
        await manager.close();
      }
    });
}

async function replay(
  manager: ContextManager,
  turns: Message[][],
  total: number,
  options: DemoOptions,
  storedTokens: number,
): Promise<Tally> {
  const tally: Tally = {
    added: 0,
    addedTokens: 0,
    turns: 0,
    compactions: 0,
    requestMs: 0,
    addMs: 0,
    sent: 0,
    full: 0,
    comparable: 0,
    extended: 0,
    lastView: null,
    usageWarnings: 0,
    crossings: 0,
  };
  const bar = new ProgressBar({ total, label: 'demo', unit: 'msgs' });
  let historyTokens = storedTokens;
  const offAdded = manager.on('context:message_added', (e) => {
    historyTokens += e.tokens;
    tally.addedTokens += e.tokens;
  });
  const offCompact = manager.on('context:post_compact', ({ receipt }: { receipt: CompactionReceipt }) => {
    tally.compactions++;
    const head = `  compaction ${tally.compactions} at turn ${tally.turns}: ${receiptSummary(receipt)}`;
    bar.log(
      options.verbose
        ? [
            head,
            ...receiptLines(receipt)
              .slice(1)
              .map((l) => `  ${l}`),
          ].join('\n')
        : head,
      process.stdout,
    );
  });
  const offWarn = manager.on('context:warn', (e) => {
    if (e.code !== 'usage_high') return;
    // The guard warns again each time the view climbs back past the line after a compaction
    // brought it down: in a session that compacts, that is every cycle, so once is enough here.
    tally.usageWarnings++;
    if (tally.usageWarnings === 1) bar.log(warningLine(e.message), process.stderr);
  });
  let previous: Message[] | null = null;
  let above = false;
  try {
    for (const turn of turns) {
      for (const message of turn) {
        if (message.role === 'assistant') {
          // The agent is about to call the model: this is where it asks for the view.
          tally.turns++;
          const t0 = performance.now();
          const view = await manager.getMessagesForRequest({ tokenBudget: options.maxTokens });
          tally.requestMs += performance.now() - t0;
          const usage = manager.usage();
          if (usage.pct >= WARN_AT && !above) tally.crossings++;
          above = usage.pct >= WARN_AT;
          tally.sent += usage.tokens;
          tally.full += historyTokens;
          tally.lastView = { messages: view.length, tokens: usage.tokens };
          if (previous) {
            tally.comparable++;
            if (extendsView(previous, view)) tally.extended++;
          }
          previous = view;
        }
        const t1 = performance.now();
        await manager.addMessage(message);
        tally.addMs += performance.now() - t1;
        tally.added++;
        bar.update(tally.added);
      }
    }
    bar.done();
  } finally {
    bar.stop();
    offAdded();
    offCompact();
    offWarn();
  }
  return tally;
}
