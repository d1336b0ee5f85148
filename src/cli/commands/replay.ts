import { stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type Command, Option } from 'commander';
import { formatInt } from '../../format-number.js';
import type { Economy } from '../../options.js';
import { renderReportHtml } from '../../report/html.js';
import {
  REPLAY_STRATEGIES,
  type ReplayReport,
  type ReplayStrategy,
  replayConversation,
} from '../../report/replay.js';
import { CliError } from '../cli-error.js';
import { loadConversation } from '../input.js';
import { economyArgument, positiveInteger } from '../number-option.js';
import { ProgressBar } from '../progress.js';
import { MAX_TOKENS_HELP, renamedOption } from '../renamed-option.js';
import { writeOut } from '../terminal-safe.js';
import { printWarning } from '../warn.js';

interface ReplayCommandOptions {
  model?: string;
  maxTokens?: number;
  strategy?: ReplayStrategy;
  economy?: Economy;
  report?: string;
  json?: string;
  messagesPath?: string;
  previews: boolean;
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function share(x: number): string {
  return `${Math.round(x * 100)}%`;
}

async function writeOutput(path: string, text: string): Promise<number> {
  try {
    await writeFile(path, text, 'utf8');
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : '';
    const why =
      code === 'ENOENT'
        ? 'its directory does not exist'
        : code === 'EISDIR'
          ? 'is a directory'
          : error instanceof Error
            ? error.message
            : String(error);
    throw new CliError(`${path}: cannot write: ${why}`, 1);
  }
  return Buffer.byteLength(text, 'utf8');
}

/** Fails before a long replay, not after it, when an output's directory is missing. */
async function checkOutputDir(path: string): Promise<void> {
  const dir = dirname(path);
  const found = await stat(dir).catch(() => undefined);
  if (!found?.isDirectory()) throw new CliError(`${path}: cannot write: its directory does not exist`, 1);
}

/** What the replay came to, in a few lines a person reads after the progress bar. */
function summaryLines(report: ReplayReport, written: string[]): string[] {
  const t = report.totals;
  const lines = [
    `replay: ${formatInt(t.turns)} model call${t.turns === 1 ? '' : 's'} over ${formatInt(t.messages)} messages, ` +
      `${formatInt(t.compactions)} compaction${t.compactions === 1 ? '' : 's'}` +
      `${t.serverCompactions > 0 ? ` (and ${formatInt(t.serverCompactions)} by the provider's server)` : ''}, budget ${formatInt(report.budget.tokens)} ` +
      `(${report.model}, ${report.counter.label}, ${report.strategy})`,
    `  sent ${formatInt(t.sentTokens)} tokens in all, against ${formatInt(t.storedTokens)} for the whole history every call ` +
      `(${share(t.savedShare)} less); average request ${formatInt(t.averageSent)} (${share(t.averageSent / report.budget.tokens)} of the budget)`,
  ];
  const compared = Math.max(0, t.turns - 1 - t.overflows);
  if (compared > 0) {
    const breaks = t.cacheBreaks > 0 ? `; ${formatInt(t.cacheBreaks)} changed without a compaction` : '';
    lines.push(
      `  cache prefix kept on ${formatInt(t.cacheStableTurns)} of ${formatInt(compared)} calls (${share(t.cacheStableShare)})${breaks}`,
    );
  }
  const [ours, window, whole] = report.cost.alternatives;
  if (ours && window && whole && ours.totals.requests > 0) {
    const money = (a: typeof ours): string =>
      a.totals.price !== undefined
        ? `$${a.totals.price.toFixed(4)}`
        : `${formatInt(a.totals.inputTokens - a.totals.cachedTokens)} uncached tokens`;
    // Each price beside what its views kept: a policy can look cheap by forgetting.
    const kept = (a: typeof ours): string => {
      const k = a.kept;
      const of = (part: number, all: number) => (all > 0 ? share(part / all) : '–');
      const facts =
        k.factsLeftOut > 0 ? `, ${of(k.factsKept, k.factsLeftOut)} of the facts it left out kept` : '';
      const mark = a.unusable ? ` [not ranked: ${a.unusable}]` : '';
      return ` (views taken ${of(k.accepted, k.requests)}, task in ${of(k.taskInView, k.accepted)}, latest user turn in ${of(k.latestUserInView, k.accepted)}${facts})${mark}`;
    };
    lines.push(
      `  billed input (${report.cost.model}): ${money(ours)}, ${share(ours.totals.cachedTokens / Math.max(1, ours.totals.inputTokens))} read from cache${kept(ours)}; ` +
        `a sliding window at the same budget ${money(window)}${kept(window)}` +
        (whole.fits ? `; no compaction ${money(whole)}${kept(whole)}` : ''),
    );
  }
  if (t.overflows > 0) {
    lines.push(
      `  ${formatInt(t.overflows)} request${t.overflows === 1 ? '' : 's'} could not fit the budget: what must be kept is larger (see the report)`,
    );
  }
  if (written.length > 0) lines.push(`  wrote ${written.join(', ')}`);
  return lines;
}

/**
 * `contextkit replay FILE --report out.html`: replays a conversation through a ContextManager as
 * the agent would have run it and writes a page that shows, call by call, what was stored, what
 * was sent, when compaction ran and what it did, and whether the prompt cache would have kept
 * hitting; `--json` writes the same figures for other tools.
 */
export function registerReplay(program: Command): void {
  program
    .command('replay')
    .description('replay a conversation turn by turn and write an HTML report (and/or JSON) of what was sent')
    .argument('<file>', 'conversation: JSON array, JSONL, or {"messages": [...]}; - for stdin')
    .option(
      '-m, --model <id>',
      'model to count and budget for (default: gpt-4o, or claude-sonnet-4-5 for Anthropic format)',
    )
    .option(
      '--max-tokens <n>',
      `${MAX_TOKENS_HELP}, on every request (default: the model's window)`,
      positiveInteger,
    )
    .addOption(renamedOption('-b, --budget <n>', '--max-tokens N'))
    .addOption(
      new Option('-s, --strategy <name>', 'how older messages leave the view (default: summarize)').choices([
        ...REPLAY_STRATEGIES,
      ]),
    )
    .option(
      '--economy <e>',
      'billed input against what is kept: rich, balanced (default), lean, minimal, or the share of the budget views aim at (e.g. 0.3)',
      economyArgument,
    )
    .option('-r, --report <file>', 'write the HTML report here (one self-contained file)')
    .option('--json <file>', 'write the same data as JSON here (- for standard output)')
    .option(
      '--messages-path <path>',
      'where the messages are in another shape, as dot-separated keys (e.g. 0.traj)',
    )
    .option('--no-previews', 'leave message text out of the report (counts and sequence numbers only)')
    .action(async (file: string, options: ReplayCommandOptions) => {
      if (!options.report && !options.json) {
        throw new CliError('nothing to write: give --report out.html, --json out.json, or both', 2);
      }
      for (const out of [options.report, options.json]) {
        if (out && out !== '-') await checkOutputDir(out);
      }
      const conversation = await loadConversation(file, { messagesPath: options.messagesPath });
      const bar = new ProgressBar({ total: conversation.messages.length, label: 'replay' });
      let report: ReplayReport;
      try {
        report = await replayConversation(
          conversation.messages,
          {
            model: options.model,
            maxTokens: options.maxTokens,
            strategy: options.strategy,
            ...(options.economy !== undefined ? { economy: options.economy } : {}),
            source: conversation.source,
            previews: options.previews,
          },
          (done) => bar.update(done),
        );
      } catch (error) {
        bar.stop();
        throw error;
      }
      bar.done();
      for (const warning of report.warnings) printWarning(warning);

      const written: string[] = [];
      if (options.report) {
        const bytes = await writeOutput(options.report, renderReportHtml(report));
        written.push(`${options.report} (${size(bytes)})`);
      }
      const json = `${JSON.stringify(report, null, 2)}\n`;
      if (options.json === '-') writeOut(json);
      else if (options.json) {
        const bytes = await writeOutput(options.json, json);
        written.push(`${options.json} (${size(bytes)})`);
      }
      const out = options.json === '-' ? process.stderr : process.stdout;
      out.write(`${summaryLines(report, written).join('\n')}\n`);
    });
}
