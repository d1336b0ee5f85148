/**
 * Replaying a recorded conversation through a `ContextManager`, turn by turn, as the agent that
 * produced it would have: before each assistant message the agent asks for the view and calls
 * the model. What each call would have sent, when compaction ran and what it did, and whether the
 * provider's prompt cache would have kept hitting are the figures the replay report draws.
 */

import type { StrategyOption } from '../compaction/strategy.js';
import { ContextOverflowError } from '../errors.js';
import type { CompactionReceipt } from '../events.js';
import { wireFormat } from '../formats/registry.js';
import { ContextManager } from '../manager.js';
import type { Message, MessageFormat } from '../messages/types.js';
import { checkOptionNamesOf } from '../option-names.js';
import type { Economy } from '../options.js';
import { modelCounter } from '../tokens/model-counter.js';
import { messageText, roleOf } from '../wire/content.js';
import { detectConversationFormat } from '../wire/detect.js';
import {
  REPLAY_TURN_SECONDS,
  type ReplayCost,
  ReplayCostTracker,
  type TurnCost,
  turnCost,
} from './replay-cost.js';

/** The built-in compaction strategies, by name (a report names the one it replayed with). */
export type ReplayStrategy = Exclude<StrategyOption, (...args: never[]) => unknown>;

/** The built-in strategy names, for command-line choices. */
export const REPLAY_STRATEGIES: readonly ReplayStrategy[] = ['summarize', 'truncate', 'smart', 'layered'];

/** The names `ReplayOptions` takes. */
const REPLAY_OPTION_NAMES = [
  'model',
  'maxTokens',
  'strategy',
  'economy',
  'cacheBreakpoints',
  'source',
  'previews',
  'now',
  'secondsBefore',
  'compactWhenCacheExpired',
];

/** How to replay: the model to count and budget for, an explicit budget, the compaction strategy. */
export interface ReplayOptions {
  /** Model id from the catalog (default: gpt-4o, or claude-sonnet-4-5 for Anthropic format). */
  model?: string;
  /**
   * The context's limit on every request (the seeds' `max_tokens`; not the provider's output
   * `max_tokens`); without it, the model's window decides.
   */
  maxTokens?: number;
  /** Default `summarize`, as the manager's. */
  strategy?: ReplayStrategy;
  /** The manager's `economy` (default `balanced`). */
  economy?: Economy;
  /**
   * The manager's `cacheBreakpoints` (default `off`). With `off`, Anthropic caches nothing, and
   * the cost section bills contextkit's views uncached.
   */
  cacheBreakpoints?: 'auto' | 'off';
  /** Where the conversation came from (a file name), shown in the report. */
  source?: string;
  /** Keep a short text preview of every message in the report (default true). */
  previews?: boolean;
  /** Clock for `generatedAt` (tests). */
  now?: () => Date;
  /** Seconds before model call `turn` (1-based); default 30 each (recorded conversations carry no times). */
  secondsBefore?: (turn: number) => number;
  /** The manager's `compactWhenCacheExpired` (default true). */
  compactWhenCacheExpired?: boolean;
}

/** How the view of one turn relates to the view of the turn before, for the prompt cache. */
export type PrefixState =
  /** It starts with the previous view byte for byte: the cached prefix is reused. */
  | 'kept'
  /** A compaction rewrote the view: the cache starts again (expected, and rare by design). */
  | 'compacted'
  /** The view changed without a compaction: a cache miss the library should not cause. */
  | 'broken'
  /** Nothing to compare with: the first turn, or a turn whose request failed. */
  | 'none';

/** One model call of the replay. */
export interface ReplayTurn {
  /** 1-based. */
  turn: number;
  /** Seq (0-based index in the input) of the message the call produced; the message count for a call after the last one. */
  beforeSeq: number;
  /** Messages stored so far and what sending them all would cost. */
  storedMessages: number;
  storedTokens: number;
  /** The view the manager returned; `sentTokens` is null when the request failed. */
  sentMessages: number;
  sentTokens: number | null;
  budget: number;
  trigger: number;
  target: number;
  /** Indexes into `ReplayReport.compactions` of the compactions this call ran (usually none). */
  compactions: number[];
  /** Common prefix with the previous view, in messages and in tokens. */
  prefix: { state: PrefixState; messages: number; tokens: number };
  durationMs: number;
  /** Why the request failed (`ContextOverflowError`): what must be kept did not fit. */
  overflow?: string;
  /** What the call's input was billed: cached, written and fresh tokens, and the price where known. */
  cost?: TurnCost;
}

/** One compaction and the turn that ran it. */
export interface ReplayCompaction {
  /** 1-based, in order. */
  number: number;
  turn: number;
  receipt: CompactionReceipt;
}

/**
 * A compaction the provider ran on its server: an Anthropic `compaction` block in a reply, or an
 * OpenAI `compaction` item in the history. The seq of the message that carries it, the call after
 * which it arrived, and for Anthropic its summary's length (OpenAI's is encrypted).
 */
export interface ReplayServerCompaction {
  provider: 'anthropic' | 'openai';
  seq: number;
  turn: number;
  summaryChars?: number;
}

/** A stored message in brief, so a report can say what seq 41 was. */
export interface MessagePreview {
  seq: number;
  role: string;
  tokens: number;
  /** The first characters of its text, whitespace collapsed (empty when previews are off). */
  text: string;
  /** Names of the tools it calls (assistant messages). */
  tools?: string[];
}

/** What the whole replay comes to. */
export interface ReplayTotals {
  turns: number;
  compactions: number;
  /** Compactions the provider ran on its server (see `ReplayServerCompaction`), beside contextkit's. */
  serverCompactions: number;
  /** Requests that failed because what must be kept did not fit the budget. */
  overflows: number;
  messages: number;
  /** The stored history at the end, in tokens. */
  finalStoredTokens: number;
  /** Summed over the turns: what sending the whole history each time would cost, and what was sent. */
  storedTokens: number;
  sentTokens: number;
  /** 1 − sent / stored. */
  savedShare: number;
  averageSent: number;
  maxSent: number;
  /** Highest sent / budget of any turn. */
  peakUsage: number;
  /** Turns (after the first) whose view starts with the previous view; and their share. */
  cacheStableTurns: number;
  cacheStableShare: number;
  /** Turns whose view changed although no compaction ran (should be 0). */
  cacheBreaks: number;
  /** Tokens of the common prefixes, summed: what a prompt cache could have reused; and the share of sent. */
  cachedPrefixTokens: number;
  cachedPrefixShare: number;
  /** Time of the whole replay and of the compactions within it. */
  durationMs: number;
  compactionMs: number;
}

/** Everything the replay report shows; `--json` writes it as is. */
export interface ReplayReport {
  version: 1;
  generatedAt: string;
  source: string;
  format: MessageFormat | 'either';
  model: string;
  counter: { id: string; exact: boolean; label: string };
  strategy: ReplayStrategy;
  /** The budget asked for, or the model's (window − output − safety margin). */
  budget: { tokens: number; source: 'option' | 'model' };
  turns: ReplayTurn[];
  compactions: ReplayCompaction[];
  /** Compactions the provider ran on its server, found in the replies (beside contextkit's own). */
  serverCompactions: ReplayServerCompaction[];
  messages: MessagePreview[];
  totals: ReplayTotals;
  /** Billed input: contextkit's, a sliding window's at the same budget, and no compaction's. */
  cost: ReplayCost;
  /** Warnings the manager raised (each once). */
  warnings: string[];
}

/** Called after each stored message: how many of how many are done. */
export type ReplayProgress = (done: number, total: number) => void;

const PREVIEW_CHARS = 140;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The tools an assistant message calls, in either format. */
function toolNames(message: Message): string[] {
  const names: string[] = [];
  if (message.role !== 'assistant') return names;
  if ('tool_calls' in message && Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls as unknown[]) {
      if (isRecord(call) && isRecord(call.function) && typeof call.function.name === 'string')
        names.push(call.function.name);
    }
  }
  if (Array.isArray(message.content)) {
    for (const block of message.content as unknown[]) {
      if (isRecord(block) && block.type === 'tool_use' && typeof block.name === 'string')
        names.push(block.name);
    }
  }
  return names;
}

function preview(message: Message): string {
  const text = messageText(message).replace(/\s+/g, ' ').trim();
  return text.length <= PREVIEW_CHARS ? text : `${text.slice(0, PREVIEW_CHARS - 1)}…`;
}

/**
 * Serializes each view message once: the manager hands back the same frozen objects from one view
 * to the next, so comparing two views is mostly comparing identical strings by reference.
 */
class ViewBytes {
  private readonly memo = new WeakMap<object, { json: string; tokens: number }>();
  constructor(private readonly countTokens: (m: Message) => number) {}

  of(message: Message): { json: string; tokens: number } {
    let found = this.memo.get(message);
    if (!found) {
      // A prompt-cache mark is not content (the provider caches the text, not the mark), so a
      // message marked in one view and not in the next is the same prefix.
      found = {
        json: JSON.stringify(message, (key, value: unknown) => (key === 'cache_control' ? undefined : value)),
        tokens: this.countTokens(message),
      };
      this.memo.set(message, found);
    }
    return found;
  }
}

/** Leading messages two views share byte for byte, and their tokens. */
function commonPrefix(
  previous: ReadonlyArray<{ json: string; tokens: number }>,
  next: ReadonlyArray<{ json: string; tokens: number }>,
): { messages: number; tokens: number } {
  let messages = 0;
  let tokens = 0;
  const n = Math.min(previous.length, next.length);
  while (messages < n && previous[messages]!.json === next[messages]!.json) {
    tokens += next[messages]!.tokens;
    messages++;
  }
  return { messages, tokens };
}

/** Index of each message the agent would have called the model for (before every assistant message, and after a trailing non-assistant one). */
function turnPoints(messages: readonly Message[]): number[] {
  const points: number[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'assistant' && i > 0) points.push(i);
  });
  const last = messages.at(-1);
  if (last && last.role !== 'assistant' && last.role !== 'system') points.push(messages.length);
  return points;
}

function totalsOf(
  turns: readonly ReplayTurn[],
  compactions: readonly ReplayCompaction[],
  serverCompactions: number,
  messages: number,
  finalStoredTokens: number,
  durationMs: number,
): ReplayTotals {
  let storedTokens = 0;
  let sentTokens = 0;
  let sentTurns = 0;
  let maxSent = 0;
  let peakUsage = 0;
  let compared = 0;
  let stable = 0;
  let breaks = 0;
  let cached = 0;
  let overflows = 0;
  for (const t of turns) {
    storedTokens += t.storedTokens;
    if (t.overflow !== undefined) overflows++;
    if (t.sentTokens !== null) {
      sentTokens += t.sentTokens;
      sentTurns++;
      maxSent = Math.max(maxSent, t.sentTokens);
      peakUsage = Math.max(peakUsage, t.sentTokens / t.budget);
    }
    if (t.prefix.state !== 'none') compared++;
    if (t.prefix.state === 'kept') stable++;
    if (t.prefix.state === 'broken') breaks++;
    cached += t.prefix.tokens;
  }
  return {
    turns: turns.length,
    compactions: compactions.length,
    serverCompactions,
    overflows,
    messages,
    finalStoredTokens,
    storedTokens,
    sentTokens,
    savedShare: storedTokens > 0 ? 1 - sentTokens / storedTokens : 0,
    averageSent: sentTurns > 0 ? sentTokens / sentTurns : 0,
    maxSent,
    peakUsage,
    cacheStableTurns: stable,
    cacheStableShare: compared > 0 ? stable / compared : 1,
    cacheBreaks: breaks,
    cachedPrefixTokens: cached,
    cachedPrefixShare: sentTokens > 0 ? cached / sentTokens : 0,
    durationMs,
    compactionMs: compactions.reduce((n, c) => n + c.receipt.durationMs, 0),
  };
}

/**
 * Replays `messages` through a fresh in-memory `ContextManager`: each message is added in order,
 * and before each assistant message the view is requested as the agent would have, so the
 * figures are those a live run would have produced with this configuration. A request the
 * budget cannot satisfy is recorded on its turn (`overflow`) and the replay goes on.
 */
export async function replayConversation(
  messages: readonly Message[],
  options: ReplayOptions = {},
  onProgress?: ReplayProgress,
): Promise<ReplayReport> {
  checkOptionNamesOf('replayConversation', options, REPLAY_OPTION_NAMES);
  const started = performance.now();
  const format = detectConversationFormat(messages);
  const model = modelCounter(options.model, format);
  const counter = model.counter;
  const strategy = options.strategy ?? 'summarize';
  const warnings = new Set<string>();
  if (model.warning) warnings.add(model.warning);

  // Recorded conversations carry no times: one model call every REPLAY_TURN_SECONDS.
  let clock = Date.UTC(2026, 0, 1);
  const manager = new ContextManager({
    model: model.info.id,
    strategy,
    ...(options.economy !== undefined ? { economy: options.economy } : {}),
    ...(options.cacheBreakpoints !== undefined ? { cacheBreakpoints: options.cacheBreakpoints } : {}),
    now: () => new Date(clock),
    compactWhenCacheExpired: options.compactWhenCacheExpired ?? true,
  });
  // `usage_high` is the guard's per-request heads-up; the chart shows every request's usage.
  manager.on('context:warn', (e) => {
    if (e.code !== 'usage_high') warnings.add(e.message);
  });
  const compactions: ReplayCompaction[] = [];
  let turnNumber = 0;
  manager.on('context:post_compact', (e) => {
    compactions.push({ number: compactions.length + 1, turn: turnNumber, receipt: e.receipt });
  });
  const serverCompactions: ReplayServerCompaction[] = [];
  manager.on('context:provider_context', (e) => {
    if (e.compactionSeq === undefined) return;
    const block = (
      messages[e.compactionSeq] as { content?: Array<{ type?: string; content?: unknown }> }
    ).content?.find((b) => b.type === 'compaction');
    const summaryChars = typeof block?.content === 'string' ? block.content.length : 0;
    serverCompactions.push({ provider: 'anthropic', seq: e.compactionSeq, turn: turnNumber, summaryChars });
  });

  const viewFormat = (): MessageFormat => manager.messageFormat ?? format ?? 'openai';
  const bytes = new ViewBytes((m) => counter.countMessage(m, viewFormat()));
  const costs = new ReplayCostTracker(
    model.info,
    (m) => bytes.of(m).tokens,
    counter.requestOverhead,
    viewFormat,
  );
  const request = options.maxTokens === undefined ? {} : { tokenBudget: options.maxTokens };
  const points = turnPoints(messages);
  const turns: ReplayTurn[] = [];
  let previous: Array<{ json: string; tokens: number }> | null = null;
  let next = 0;
  let serverSeen = 0;

  const callModel = async (beforeSeq: number): Promise<void> => {
    turnNumber++;
    clock += (options.secondsBefore?.(turnNumber) ?? REPLAY_TURN_SECONDS) * 1000;
    const compactionsBefore = compactions.length;
    const serverBefore = serverSeen;
    serverSeen = serverCompactions.length;
    const t0 = performance.now();
    let view: Message[] | null = null;
    let overflow: ContextOverflowError | undefined;
    try {
      view = await manager.getMessagesForRequest(request);
    } catch (error) {
      if (!(error instanceof ContextOverflowError)) throw error;
      overflow = error;
    }
    const durationMs = performance.now() - t0;
    const storedTokens = (await manager.getTokenCount()) + counter.requestOverhead;
    // A failed request leaves the last figures in place: rescale them to this request's budget.
    const usage = manager.usage();
    const budget = overflow ? (options.maxTokens ?? overflow.budget) : usage.budget;
    const scale = budget / usage.budget;
    const ran = compactions.slice(compactionsBefore).map((c) => c.number - 1);
    const turn: ReplayTurn = {
      turn: turnNumber,
      beforeSeq,
      storedMessages: beforeSeq,
      storedTokens,
      sentMessages: view?.length ?? 0,
      sentTokens: view ? usage.tokens : null,
      budget,
      trigger: overflow ? Math.floor(usage.trigger * scale) : usage.trigger,
      target: overflow ? Math.floor(usage.target * scale) : usage.target,
      compactions: ran,
      prefix: { state: 'none', messages: 0, tokens: 0 },
      durationMs,
    };
    const billed = usage.cost?.last;
    costs.call(billed?.at ?? clock, messages.slice(0, beforeSeq), budget, turnNumber, view, usage.tokens);
    if (view && billed) turn.cost = turnCost(billed);
    if (view) {
      const current = view.map((m) => bytes.of(m));
      if (previous) {
        const shared = commonPrefix(previous, current);
        const kept = shared.messages === previous.length;
        // A reply with a server compaction block since the last call starts a new view too.
        const compacted = ran.length > 0 || serverSeen > serverBefore;
        turn.prefix = { state: kept ? 'kept' : compacted ? 'compacted' : 'broken', ...shared };
      }
      previous = current;
    } else {
      turn.overflow = overflow?.message;
      previous = null;
    }
    turns.push(turn);
  };

  try {
    for (let i = 0; i < messages.length; i++) {
      while (points[next] === i) {
        await callModel(i);
        next++;
      }
      await manager.addMessage(messages[i]);
      // A compaction item (OpenAI's) stands in the history; the conversation is of its format once stored.
      if (wireFormat(viewFormat()).isCompactionItem?.(messages[i]!))
        serverCompactions.push({ provider: 'openai', seq: i, turn: turnNumber });
      onProgress?.(i + 1, messages.length);
    }
    while (points[next] === messages.length) {
      await callModel(messages.length);
      next++;
    }
    const entries = await manager.getEntries();
    const previews: MessagePreview[] = entries.map((e) => {
      const message = e.message as Message;
      const tools = toolNames(message);
      return {
        seq: e.seq,
        role: roleOf(message),
        tokens: counter.countMessage(message, viewFormat()),
        text: options.previews === false ? '' : preview(message),
        ...(tools.length > 0 ? { tools } : {}),
      };
    });
    const finalStored = (await manager.getTokenCount()) + counter.requestOverhead;
    const firstBudget = turns[0]?.budget ?? manager.usage().budget;
    return {
      version: 1,
      generatedAt: (options.now ?? (() => new Date()))().toISOString(),
      source: options.source ?? 'conversation',
      format: format ?? 'either',
      model: model.info.id,
      counter: { id: counter.id, exact: counter.exact, label: model.label },
      strategy,
      budget: {
        tokens: options.maxTokens ?? firstBudget,
        source: options.maxTokens === undefined ? 'model' : 'option',
      },
      turns,
      compactions,
      serverCompactions,
      messages: previews,
      totals: totalsOf(
        turns,
        compactions,
        serverCompactions.length,
        messages.length,
        finalStored,
        performance.now() - started,
      ),
      cost: costs.summary(manager.usage().cost?.totals, options.maxTokens ?? firstBudget),
      warnings: [...warnings],
    };
  } finally {
    await manager.close();
  }
}
