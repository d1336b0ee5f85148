import { type Command, InvalidArgumentError, Option } from 'commander';
import { CHAT_RECALL, type ChatEvalSummary, evaluateChats } from '../../eval/chat-eval.js';
import { type ChatConversation, EVAL_READS, readEvalInput } from '../../eval/chat-file.js';
import { plainRun } from '../../eval/plain-run.js';
import {
  type EvalSummary,
  evaluateRuns,
  type RunEvaluation,
  type ViewTotals,
} from '../../eval/tau-bench-eval.js';
import { parseTauBench, TauBenchFileError, type TauBenchRun } from '../../eval/tau-bench-file.js';
import { formatInt } from '../../format-number.js';
import type { MessageFormat } from '../../messages/types.js';
import type { Economy } from '../../options.js';
import { modelCounter } from '../../tokens/model-counter.js';
import { CliError } from '../cli-error.js';
import { checkConversation, parseInput } from '../input.js';
import { economyArgument } from '../number-option.js';
import { ProgressBar } from '../progress.js';
import { writeOut } from '../terminal-safe.js';
import { textTable } from '../text-table.js';
import { printWarning } from '../warn.js';

interface EvalCommandOptions {
  budgetRatio: number;
  format: MessageFormat;
  model?: string;
  strategy: 'summarize' | 'truncate';
  economy?: Economy;
  json?: boolean;
}

/** At most this many failing runs are named in the text report (all are in `--json`). */
const FAILURES_SHOWN = 10;

/** `0.3`, `.3` or `30%`: a share of each run's size, above 0 and at most all of it. */
function budgetRatio(value: string): number {
  const text = value.trim();
  const percent = text.endsWith('%');
  const n = Number(percent ? text.slice(0, -1) : text) / (percent ? 100 : 1);
  if (text === '' || text === '%' || !Number.isFinite(n) || n <= 0 || n > 1) {
    throw new InvalidArgumentError('expected a share of each run above 0 and at most 1 (e.g. 0.3 or 30%)');
  }
  return n;
}

function runCount(n: number): string {
  return `${formatInt(n)} run${n === 1 ? '' : 's'}`;
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '–' : `${((part / whole) * 100).toFixed(1)}%`;
}

function viewColumn(t: ViewTotals, compared: number, presentFacts: number, failures = 0): string[] {
  const views = t.views + failures;
  return [
    `${formatInt(t.valid)}/${formatInt(views)}`,
    `${formatInt(t.withinBudget)}/${formatInt(views)}`,
    t.views === 0 ? '–' : formatInt(t.tokens / t.views),
    t.views === 0 ? '–' : `${Math.round((t.budgetShare / t.views) * 100)}%`,
    `${formatInt(t.factsHeld)}/${formatInt(presentFacts)} (${percent(t.factsHeld, presentFacts)})`,
    compared === 0 ? '–' : `${formatInt(failures)}`,
  ];
}

/** The runs whose contextkit view is invalid or over its budget, one line each. */
function failureLines(runs: readonly RunEvaluation[]): string[] {
  const failing = runs.filter((r) => !r.overflow && (!r.contextkit?.valid || !r.contextkit.withinBudget));
  const lines = failing.slice(0, FAILURES_SHOWN).map((r) => {
    const where = `run ${r.index} (task ${r.taskId}, trial ${r.trial}), budget ${formatInt(r.budget)}`;
    if (!r.contextkit) return `  ${where}: ${r.contextkitError ?? 'no view'}`;
    const why = [
      ...(r.contextkit.withinBudget ? [] : [`${formatInt(r.contextkit.tokens)} tokens, over the budget`]),
      ...r.contextkit.problems.map((p) => `${p.path}: ${p.message}`),
    ];
    return `  ${where}: ${why.join('; ')}`;
  });
  if (failing.length > FAILURES_SHOWN)
    lines.push(`  … and ${failing.length - FAILURES_SHOWN} more (see --json)`);
  return failing.length === 0 ? [] : ['contextkit views invalid or over the budget:', ...lines];
}

/** The report a person reads: both views side by side, what truncation loses, what compactions did. */
function reportLines(
  summary: EvalSummary,
  runs: readonly RunEvaluation[],
  source: string,
  label: string,
): string[] {
  const s = summary;
  const head = [
    `eval: ${runCount(s.runs)} from ${source}; budget ${Math.round(s.budgetRatio * 1000) / 10}% of each run ` +
      `(${label} for ${s.model}); ${s.format} format; contextkit strategy ${s.strategy}, offline tools`,
    `compared: ${runCount(s.compared)}; overflow: ${runCount(s.overflows)} whose system prompt and latest request alone exceed the budget (no valid view exists; not compared, not failures)`,
  ];
  const table = textTable(
    [
      ['', 'contextkit', 'truncation'],
      ...[
        'valid (validateRequest)',
        'within budget',
        'tokens (mean)',
        'share of budget (mean)',
        'present facts held',
        'no view (error)',
      ].map((name, i) => [
        name,
        viewColumn(s.contextkit, s.compared, s.presentFacts, s.contextkit.failures)[i]!,
        viewColumn(s.truncation, s.compared, s.presentFacts)[i]!,
      ]),
    ],
    ['left', 'right', 'right'],
  );
  const kept =
    s.lostByTruncation === 0
      ? 'truncation loses none of the present facts'
      : `of the ${formatInt(s.lostByTruncation)} present facts truncation loses, contextkit keeps ${formatInt(s.keptOfLost)} (${percent(s.keptOfLost, s.lostByTruncation)})`;
  const c = s.compactions;
  const compactions =
    c.runs === 0
      ? 'contextkit compacted none of the compared runs'
      : `contextkit compacted ${runCount(c.runs)}: ${formatInt(c.summarizedRuns)} with a summary; facts block of ` +
        `${(c.factsKept / c.runs).toFixed(1)} facts on average, ${formatInt(c.factsOmitted)} facts left out of it for room ` +
        `(in ${runCount(c.cappedRuns)})`;
  return [...head, ...table, kept, compactions, ...failureLines(runs)];
}

function ofQuestions(part: number, whole: number): string {
  return `${formatInt(part)}/${formatInt(whole)} (${percent(part, whole)})`;
}

function chatCount(n: number): string {
  return `${formatInt(n)} chat${n === 1 ? '' : 's'}`;
}

/** The chat report: answers in each view and through recall, side by side. */
function chatReportLines(
  s: ChatEvalSummary,
  chats: readonly ChatConversation[],
  source: string,
  label: string,
): string[] {
  const messages = chats.reduce((n, c) => n + c.messages.length, 0);
  const asked = chats.reduce((n, c) => n + c.questions.length, 0);
  const c = s.contextkit;
  const t = s.truncation;
  const table = textTable(
    [
      ['', 'contextkit', 'truncation'],
      ['answers in the view', ofQuestions(c.inView, s.questions), ofQuestions(t.inView, s.questions)],
      [
        `answers reached by recall (top ${CHAT_RECALL.limit}, ≤ ${formatInt(CHAT_RECALL.maxTokens)} tokens)`,
        ofQuestions(c.recalled, s.questions),
        '– (no lookup)',
      ],
      [
        'answers in the view or by recall',
        ofQuestions(c.either, s.questions),
        ofQuestions(t.inView, s.questions),
      ],
      ['valid (validateRequest)', `${c.valid}/${s.compared}`, `${t.valid}/${s.compared}`],
      ['within budget', `${c.withinBudget}/${s.compared}`, `${t.withinBudget}/${s.compared}`],
      [
        'share of budget (mean)',
        `${Math.round((c.budgetShare / s.compared) * 100)}%`,
        `${Math.round((t.budgetShare / s.compared) * 100)}%`,
      ],
    ],
    ['left', 'right', 'right'],
  );
  return [
    `eval: ${chatCount(chats.length)} (${formatInt(messages)} messages, ${formatInt(asked)} questions) from ${source}; ` +
      `budget ${Math.round(s.budgetRatio * 1000) / 10}% of each chat (${label} for ${s.model}); ${s.format} format; ` +
      `contextkit strategy ${s.strategy}, offline tools`,
    `compared: ${chatCount(s.compared)}, ${formatInt(s.questions)} questions whose answer the chat states ` +
      '(answers and texts compared lowercased, punctuation removed)',
    ...table,
  ];
}

/** One conversation file as a run whose facts are the offline extractor's. */
function plainRunOf(text: string, file: string): TauBenchRun {
  const conversation = checkConversation(parseInput(text, file));
  return plainRun(conversation.messages, conversation.format);
}

/** The runs of a tau-bench file; an error in its shape also says what eval reads. */
function tauBenchRuns(text: string, file: string): TauBenchRun[] {
  try {
    return parseTauBench(text, file);
  } catch (error) {
    if (error instanceof TauBenchFileError)
      throw new CliError(`${error.message}; ${EVAL_READS}`, 1, { cause: error });
    throw error;
  }
}

/**
 * `contextkit eval FILE --budget-ratio R`: contextkit against plain truncation on tau-bench runs,
 * each compacted to R of its own size (issue 4's evaluation). The report goes to stdout (or the
 * whole result as JSON with `--json`); progress goes to stderr.
 */
export function registerEval(program: Command): void {
  program
    .command('eval')
    .description(
      'compare contextkit with plain truncation on tau-bench runs or chats with questions, each cut to a share of its size',
    )
    .argument(
      '<path>',
      'tau-bench trajectories (a JSON array of runs), a chat { messages, qa }, a folder of chats, or any conversation',
    )
    .requiredOption(
      '-r, --budget-ratio <r>',
      "each view's budget as a share of its run's tokens (e.g. 0.3 or 30%)",
      budgetRatio,
    )
    .addOption(
      new Option('-f, --format <format>', 'format the runs are sent in')
        .choices(['openai', 'anthropic'])
        .default('openai'),
    )
    .option(
      '-m, --model <id>',
      'model whose tokenizer sets the budgets (default: gpt-4o, or claude-sonnet-4-5 for Anthropic format)',
    )
    .addOption(
      new Option('-s, --strategy <strategy>', "contextkit's compaction strategy")
        .choices(['summarize', 'truncate'])
        .default('summarize'),
    )
    .option(
      '--economy <e>',
      'billed input against what is kept: rich, balanced (default), lean, minimal, or the share of the budget views aim at (e.g. 0.3)',
      economyArgument,
    )
    .option('--json', 'print { summary, runs } as JSON instead of the report')
    .action(async (file: string, options: EvalCommandOptions) => {
      const model = modelCounter(options.model, options.format);
      if (model.warning) printWarning(model.warning);
      const input = await readEvalInput(file);
      if (input.kind === 'chats') {
        const progress = new ProgressBar({ total: input.chats.length, unit: 'chats', label: 'eval' });
        const result = await evaluateChats(input.chats, {
          budgetRatio: options.budgetRatio,
          format: options.format,
          model: model.info.id,
          strategy: options.strategy,
          ...(options.economy !== undefined ? { manager: { economy: options.economy } } : {}),
          onChat: (done) => progress.update(done),
        }).catch((error: unknown) => {
          progress.stop();
          throw error;
        });
        progress.done();
        if (result.summary.compared === 0 || result.summary.questions === 0) {
          throw new CliError(
            `eval: nothing could be compared: no chat of ${file} has a view within ${result.summary.budgetRatio} ` +
              "of its size holding its latest turn, or none states a question's answer (try a larger --budget-ratio)",
          );
        }
        if (options.json) {
          writeOut(`${JSON.stringify(result, null, 2)}\n`);
          return;
        }
        const lines = chatReportLines(result.summary, input.chats, file, model.label);
        writeOut(`${lines.join('\n')}\n`);
        return;
      }
      const runs =
        input.kind === 'runs'
          ? input.files.flatMap((f) =>
              f.kind === 'run' ? [plainRunOf(f.text, f.path)] : tauBenchRuns(f.text, f.path),
            )
          : input.kind === 'run'
            ? [plainRunOf(input.text, file)]
            : tauBenchRuns(input.text, file);
      const progress = new ProgressBar({ total: runs.length, unit: 'runs', label: 'eval' });
      const result = await evaluateRuns(runs, {
        budgetRatio: options.budgetRatio,
        format: options.format,
        model: model.info.id,
        strategy: options.strategy,
        ...(options.economy !== undefined ? { manager: { economy: options.economy } } : {}),
        onRun: (done) => progress.update(done),
      }).catch((error: unknown) => {
        progress.stop();
        throw error;
      });
      progress.done();
      if (result.summary.compared === 0) {
        throw new CliError(
          `eval: nothing could be compared: all ${runCount(runs.length)} of ${file} overflow at a budget of ` +
            `${result.summary.budgetRatio} of their size (system prompt and latest request alone exceed it; try a larger --budget-ratio)`,
        );
      }
      if (options.json) {
        writeOut(`${JSON.stringify(result, null, 2)}\n`);
        return;
      }
      const lines = reportLines(result.summary, result.runs, file, model.label);
      writeOut(`${lines.join('\n')}\n`);
    });
}
