/**
 * The evaluation of issue 4: on real agent runs, compact each run to a share of its size and ask
 * what the view still holds, side by side with plain truncation to the same budget. The figure
 * that matters is the share of the ground-truth arguments that truncation loses and contextkit
 * keeps: it says whether summaries and the facts block remember what dropping forgets.
 */

import { TASK_SHARE } from '../compaction/truncate-oversized.js';
import { ConfigurationError, ContextOverflowError } from '../errors.js';
import type { CompactionReceipt } from '../events.js';
import { wireFormat } from '../formats/registry.js';
import { ContextManager, type ContextManagerOptions } from '../manager.js';
import type { Message, MessageFormat } from '../messages/types.js';
import { getModelInfo } from '../tokens/catalog.js';
import { createTokenCounter } from '../tokens/counter.js';
import type { TokenCounter } from '../tokens/types.js';
import { hasNonToolResultContent } from '../wire/content.js';
import { convertMessages } from '../wire/convert.js';
import { type RequestProblem, validateRequest } from '../wire/validate-request.js';
import { factsHeld } from './facts-held.js';
import type { TauBenchRun } from './tau-bench-file.js';
import { truncationBaseline } from './truncation-baseline.js';

/** The goal of issue 4: at least this share of what truncation loses is still in the view. */
export const GOAL_KEPT_SHARE = 0.6;

/** The budget ratio the goal is stated at. */
export const GOAL_BUDGET_RATIO = 0.3;

/** How to evaluate. */
export interface EvalOptions {
  /** Budget of each run's view as a share of the run's own token count, in (0, 1]. */
  budgetRatio: number;
  /** Format the runs are sent in (default `openai`, the format they were recorded in). */
  format?: MessageFormat;
  /** Model whose counter sets the budgets (default gpt-4o, or claude-sonnet-4-5 for Anthropic). */
  model?: string;
  /** The manager's strategy (default `summarize`, the library's default). */
  strategy?: 'summarize' | 'truncate';
  /**
   * Further options of every run's manager (default: none, the library's defaults): lets the same
   * evaluation measure an LLM's tools, another facts site, other usage targets.
   */
  manager?: Omit<ContextManagerOptions, 'model' | 'strategy' | 'store' | 'conversationId'>;
  /** Called after each run, for progress reports. */
  onRun?: (done: number, total: number, result: RunEvaluation) => void;
}

/** One view of one run, measured. */
export interface ViewEvaluation {
  messages: number;
  /** Tokens of the request, counted by the same counter as the budget. */
  tokens: number;
  withinBudget: boolean;
  /** Whether the provider would accept it (`validateRequest`), and if not, why (first five). */
  valid: boolean;
  problems: RequestProblem[];
  /** The run's present facts this view still holds verbatim. */
  factsHeld: string[];
}

/** One run: its budget and, unless it overflows, both views and what each holds. */
export interface RunEvaluation {
  /** Position of the run in the input. */
  index: number;
  taskId: number;
  trial: number;
  messages: number;
  /** The whole run's tokens (messages plus request overhead). */
  tokens: number;
  budget: number;
  /** System messages, the latest user message and everything after it: what no view can leave out. */
  floorTokens: number;
  /** The floor is above the budget: no valid view can exist, so the run is not compared. */
  overflow: boolean;
  /** The ground-truth facts found verbatim in the run as sent. */
  presentFacts: string[];
  /** Null for an overflow run, or when the manager failed (see `contextkitError`). */
  contextkit: ViewEvaluation | null;
  /** The manager threw on a run that does not overflow: a failure of the library. */
  contextkitError?: string;
  truncation: ViewEvaluation | null;
  /** Present facts the truncated view does not hold. */
  lostByTruncation: string[];
  /** Of those, the ones contextkit's view holds. */
  keptOfLost: string[];
  /** What the last compaction did, when one ran. */
  compaction?: {
    dropped: number;
    summarized: number;
    factsKept: number;
    factsOmitted: number;
    /** The values in the facts block (to tell a fact kept there from one kept in a message). */
    factValues: string[];
    durationMs: number;
  };
}

/** Totals of one kind of view over the runs compared. */
export interface ViewTotals {
  views: number;
  valid: number;
  withinBudget: number;
  /** Sum of the views' tokens, and of their share of their budget (for a mean). */
  tokens: number;
  budgetShare: number;
  factsHeld: number;
}

/** The evaluation over all runs. */
export interface EvalSummary {
  budgetRatio: number;
  format: MessageFormat;
  model: string;
  strategy: 'summarize' | 'truncate';
  runs: number;
  /** Runs compared: every run that does not overflow. */
  compared: number;
  overflows: number;
  /** Present facts over the compared runs. */
  presentFacts: number;
  contextkit: ViewTotals & { failures: number };
  truncation: ViewTotals;
  lostByTruncation: number;
  keptOfLost: number;
  /** `keptOfLost / lostByTruncation`; null when truncation lost nothing. */
  keptShare: number | null;
  /**
   * What contextkit's compactions did over the compared runs: where the kept facts could be
   * (facts-block sizes, facts left out of a capped block) and how many runs got a summary.
   */
  compactions: {
    runs: number;
    summarizedRuns: number;
    factsKept: number;
    factsOmitted: number;
    /** Runs whose facts block left facts out for room. */
    cappedRuns: number;
  };
  goal: {
    /** Every contextkit view of a compared run is valid and within its budget. */
    allValid: boolean;
    allWithinBudget: boolean;
    keptShare: number;
    met: boolean;
  };
}

/** Per-run results and their totals. */
export interface EvalResult {
  summary: EvalSummary;
  runs: RunEvaluation[];
}

const PROBLEMS_SHOWN = 5;

/** The model a format's runs are counted for when none is named (the CLI's rule too). */
function defaultModel(format: MessageFormat): string {
  return wireFormat(format).defaultModel;
}

function checkOptions(options: EvalOptions): void {
  const r = options.budgetRatio;
  if (typeof r !== 'number' || !Number.isFinite(r) || r <= 0 || r > 1) {
    throw new ConfigurationError('budgetRatio', `expected a number in (0, 1], got ${JSON.stringify(r)}`);
  }
}

/** Tokens of a request: its messages and the counter's per-request overhead. */
function requestTokens(messages: readonly Message[], counter: TokenCounter, format: MessageFormat): number {
  let sum = counter.requestOverhead;
  for (const m of messages) sum += counter.countMessage(m, format);
  return sum;
}

/**
 * What no view can do without: system messages, the task (the first user message, unless the
 * manager's `protectTask` is off; over a quarter of the budget, only that share of it counts: its
 * head and tail are kept), the latest user message (not a tool result), and the last exchange after
 * it (the newest assistant message and what answers it). The rest of the
 * turn in progress may have its older results cleared when it does not fit (DESIGN invariant 3),
 * so an agent run that is one long turn (a SWE-agent trajectory: one task, then only calls and
 * results) is not an overflow at every budget below its whole size.
 */
function floorMessages(
  messages: readonly Message[],
  keepTask: boolean,
): { floor: Message[]; task?: Message } {
  const isRequest = (m: Message) =>
    m.role === 'user' &&
    (typeof m.content === 'string' ||
      (m.content ?? []).some((block) => block.type !== 'tool_result') ||
      hasNonToolResultContent(m));
  let latest = messages.length;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (isRequest(messages[i]!)) {
      latest = i;
      break;
    }
  }
  const system = messages.slice(0, latest).filter((m) => m.role === 'system' || m.role === 'developer');
  let lastReply = messages.length;
  for (let i = messages.length - 1; i > latest; i--) {
    if (messages[i]!.role === 'assistant') {
      lastReply = i;
      break;
    }
  }
  // The task (the first user message, `protectTask`, on by default) is in every view too.
  const first = keepTask ? messages.findIndex(isRequest) : -1;
  const task = first >= 0 && first < latest ? messages[first] : undefined;
  const floor = [
    ...system,
    ...(task ? [task] : []),
    ...messages.slice(latest, latest + 1),
    ...messages.slice(lastReply),
  ];
  return task ? { floor, task } : { floor };
}

function measureView(
  view: readonly Message[],
  budget: number,
  counter: TokenCounter,
  format: MessageFormat,
  facts: readonly string[],
): ViewEvaluation {
  const tokens = requestTokens(view, counter, format);
  const { valid, problems } = validateRequest(view, format);
  return {
    messages: view.length,
    tokens,
    withinBudget: tokens <= budget,
    valid,
    problems: problems.slice(0, PROBLEMS_SHOWN),
    factsHeld: factsHeld(view, facts),
  };
}

/** contextkit's view of one run at `budget`, with the receipt of the compaction that made it. */
async function contextkitView(
  messages: readonly Message[],
  budget: number,
  options: EvalOptions & { model: string; format: MessageFormat },
): Promise<{ view: Message[]; receipt: CompactionReceipt | undefined }> {
  const manager = new ContextManager({
    ...options.manager,
    model: options.model,
    strategy: options.strategy ?? 'summarize',
  });
  let receipt: CompactionReceipt | undefined;
  manager.on('context:post_compact', (event) => {
    receipt = event.receipt;
  });
  for (const message of messages) await manager.addMessage(message);
  try {
    const view = await manager.getMessagesForRequest({ tokenBudget: budget, provider: options.format });
    return { view, receipt };
  } finally {
    await manager.close();
  }
}

function emptyTotals(): ViewTotals {
  return { views: 0, valid: 0, withinBudget: 0, tokens: 0, budgetShare: 0, factsHeld: 0 };
}

function addView(totals: ViewTotals, view: ViewEvaluation, budget: number): void {
  totals.views++;
  if (view.valid) totals.valid++;
  if (view.withinBudget) totals.withinBudget++;
  totals.tokens += view.tokens;
  totals.budgetShare += view.tokens / budget;
  totals.factsHeld += view.factsHeld.length;
}

/** One run at the options' budget ratio: for callers that evaluate runs as they come, or in parallel. */
export async function evaluateRun(
  run: TauBenchRun,
  index: number,
  options: EvalOptions,
): Promise<RunEvaluation> {
  checkOptions(options);
  const format = options.format ?? 'openai';
  const modelId = options.model ?? defaultModel(format);
  const info = getModelInfo(modelId);
  if (!info) throw new ConfigurationError('model', `${JSON.stringify(modelId)} is not in the model catalog`);
  const counter = createTokenCounter(info);
  const messages: Message[] = convertMessages(run.messages, format);
  const tokens = requestTokens(messages, counter, format);
  const budget = Math.floor(options.budgetRatio * tokens);
  const { floor, task } = floorMessages(messages, options.manager?.protectTask !== false);
  let floorTokens = requestTokens(floor, counter, format);
  // A task over a quarter of the budget is kept as its head and tail within that share.
  if (task) floorTokens -= Math.max(0, counter.countMessage(task, format) - Math.floor(budget * TASK_SHARE));
  const presentFacts = factsHeld(messages, run.presentFacts);
  const result: RunEvaluation = {
    index,
    taskId: run.taskId,
    trial: run.trial,
    messages: messages.length,
    tokens,
    budget,
    floorTokens,
    overflow: floorTokens > budget,
    presentFacts,
    contextkit: null,
    truncation: null,
    lostByTruncation: [],
    keptOfLost: [],
  };
  if (result.overflow) return result;

  const truncated = truncationBaseline(messages, { budget, counter, format });
  result.truncation = measureView(truncated.messages, budget, counter, format, presentFacts);
  const truncationHeld = new Set(result.truncation.factsHeld);
  result.lostByTruncation = presentFacts.filter((fact) => !truncationHeld.has(fact));

  try {
    const { view, receipt } = await contextkitView(messages, budget, { ...options, model: info.id, format });
    result.contextkit = measureView(view, budget, counter, format, presentFacts);
    const held = new Set(result.contextkit.factsHeld);
    result.keptOfLost = result.lostByTruncation.filter((fact) => held.has(fact));
    if (receipt) {
      result.compaction = {
        dropped: receipt.dropped.length,
        summarized: receipt.summarized.length,
        factsKept: receipt.facts.kept,
        factsOmitted: receipt.facts.omitted,
        factValues: receipt.facts.values,
        durationMs: receipt.durationMs,
      };
    }
  } catch (error) {
    if (!(error instanceof ContextOverflowError)) throw error;
    result.contextkitError = error.message;
  }
  return result;
}

/** Totals and the goal's verdict over per-run results. */
export function summarizeRuns(results: readonly RunEvaluation[], options: EvalOptions): EvalSummary {
  const format = options.format ?? 'openai';
  const contextkit = { ...emptyTotals(), failures: 0 };
  const truncation = emptyTotals();
  let compared = 0;
  let presentFacts = 0;
  let lost = 0;
  let kept = 0;
  const compactions = { runs: 0, summarizedRuns: 0, factsKept: 0, factsOmitted: 0, cappedRuns: 0 };
  for (const r of results) {
    if (r.overflow) continue;
    if (r.compaction) {
      compactions.runs++;
      if (r.compaction.summarized > 0) compactions.summarizedRuns++;
      compactions.factsKept += r.compaction.factsKept;
      compactions.factsOmitted += r.compaction.factsOmitted;
      if (r.compaction.factsOmitted > 0) compactions.cappedRuns++;
    }
    compared++;
    presentFacts += r.presentFacts.length;
    lost += r.lostByTruncation.length;
    kept += r.keptOfLost.length;
    if (r.truncation) addView(truncation, r.truncation, r.budget);
    if (r.contextkit) addView(contextkit, r.contextkit, r.budget);
    else contextkit.failures++;
  }
  const keptShare = lost > 0 ? kept / lost : null;
  const allValid = contextkit.failures === 0 && contextkit.valid === contextkit.views;
  const allWithinBudget = contextkit.failures === 0 && contextkit.withinBudget === contextkit.views;
  return {
    budgetRatio: options.budgetRatio,
    format,
    model: getModelInfo(options.model ?? defaultModel(format))?.id ?? options.model ?? defaultModel(format),
    strategy: options.strategy ?? 'summarize',
    runs: results.length,
    compared,
    overflows: results.length - compared,
    presentFacts,
    contextkit,
    truncation,
    lostByTruncation: lost,
    keptOfLost: kept,
    keptShare,
    compactions,
    goal: {
      allValid,
      allWithinBudget,
      keptShare: GOAL_KEPT_SHARE,
      met: allValid && allWithinBudget && (keptShare === null || keptShare >= GOAL_KEPT_SHARE),
    },
  };
}

/**
 * Evaluates every run, one after another (a fresh manager each, so runs cannot influence one
 * another): per-run results and their totals. Runs whose floor (system prompt and latest request)
 * is above the budget are counted as overflows and not compared: no view of them can be valid,
 * so they measure the budget, not the library.
 */
export async function evaluateRuns(runs: readonly TauBenchRun[], options: EvalOptions): Promise<EvalResult> {
  checkOptions(options);
  const results: RunEvaluation[] = [];
  for (let i = 0; i < runs.length; i++) {
    const result = await evaluateRun(runs[i]!, i, options);
    results.push(result);
    options.onRun?.(i + 1, runs.length, result);
  }
  return { summary: summarizeRuns(results, options), runs: results };
}
