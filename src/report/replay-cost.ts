/**
 * What a replayed session's requests were billed for their input (the manager's cost meter), beside
 * what the same calls would have been billed with a sliding window at the same budget and with no
 * compaction at all (where the whole history fits the model's window), metered by the same rules;
 * and beside each bill, what that policy's views kept (src/report/view-keeps.ts).
 */

import type { Message, MessageFormat } from '../messages/types.js';
import { CostMeter, type CostTotals, type RequestCost, requestBlocks } from '../meter/cost-meter.js';
import type { ModelInfo } from '../tokens/types.js';
import { isToolResultMessage } from '../wire/content.js';
import { KeptTally, type KeptTotals, unusableReason } from './view-keeps.js';

/** Seconds between two model calls of a replay: recorded conversations carry no times. */
export const REPLAY_TURN_SECONDS = 30;

/** One call's bill, as the replay report draws it. */
export interface TurnCost {
  cached: number;
  written: number;
  fresh: number;
  price?: number;
}

/** A policy's bill for the whole replay. */
export interface CostAlternative {
  name: 'contextkit' | 'sliding window' | 'no compaction';
  /** False when the policy cannot send some call (no compaction: the history outgrew the window). */
  fits: boolean;
  /** Why it does not fit, or how it was built. */
  note: string;
  totals: CostTotals;
  /** What its views kept: accepted by the provider, the task and the latest user turn, facts. */
  kept: KeptTotals;
  /**
   * Why its price may not be ranked beside the others (the provider would refuse its views, or
   * they drop the task or the latest user turn); absent when it may.
   */
  unusable?: string;
}

/** The cost part of a replay report. */
export interface ReplayCost {
  model: string;
  /** Where the prices were read; absent when the model has none (tokens only). */
  pricing?: string;
  turnSeconds: number;
  alternatives: CostAlternative[];
}

/** The bill of one call from the meter's figures. */
export function turnCost(cost: RequestCost): TurnCost {
  const out: TurnCost = { cached: cost.cachedTokens, written: cost.writtenTokens, fresh: cost.freshTokens };
  if (cost.price !== undefined) out.price = cost.price;
  return out;
}

/**
 * The sliding window at `budget`: the system messages, then the longest run of the newest others
 * that fits with them, starting at a user turn (as trimmers keep a turn whole): a user message
 * that does not return tool results, which would start the request with results of calls it
 * does not hold (an Anthropic or Gemini provider refuses that).
 */
export function slidingWindow(
  stored: readonly Message[],
  budget: number,
  tokens: (m: Message) => number,
): Message[] {
  const system = stored.filter((m) => m.role === 'system' || m.role === 'developer');
  let room = budget - system.reduce((n, m) => n + tokens(m), 0);
  let start = stored.length;
  for (let i = stored.length - 1; i >= 0; i--) {
    const m = stored[i]!;
    if (m.role === 'system' || m.role === 'developer') continue;
    const n = tokens(m);
    if (n > room) break;
    room -= n;
    start = i;
  }
  while (start < stored.length && !opensTurn(stored[start]!)) start++;
  return [...system, ...stored.slice(start).filter((m) => m.role !== 'system' && m.role !== 'developer')];
}

function opensTurn(m: Message): boolean {
  return m.role === 'user' && !isToolResultMessage(m);
}

/** Meters the sliding window and no-compaction alternatives call by call, beside contextkit's meter. */
export class ReplayCostTracker {
  private readonly window: CostMeter;
  private readonly whole: CostMeter;
  private wholeFits = true;
  private wholeNote = 'the whole history every call';
  private readonly limit: number;
  private readonly kept: { ours: KeptTally; window: KeptTally; whole: KeptTally };
  private last: { stored: readonly Message[]; ours: readonly Message[] | null; window: readonly Message[] } =
    {
      stored: [],
      ours: null,
      window: [],
    };

  constructor(
    private readonly info: ModelInfo,
    private readonly tokens: (m: Message) => number,
    private readonly overhead: number,
    format: () => MessageFormat,
  ) {
    this.window = new CostMeter(info.pricing);
    this.whole = new CostMeter(info.pricing);
    this.limit = info.contextWindow - info.maxOutputTokens;
    this.kept = { ours: new KeptTally(format), window: new KeptTally(format), whole: new KeptTally(format) };
  }

  /**
   * Bills one call at `at` (ms) for the history stored so far, at the call's budget, and tallies
   * what each policy's view kept; `ours` is the view the manager returned (null when it declined)
   * and `oursTokens` its count.
   */
  call(
    at: number,
    stored: readonly Message[],
    budget: number,
    turn: number,
    ours: readonly Message[] | null,
    oursTokens: number,
  ): void {
    const view = slidingWindow(stored, budget - this.overhead, this.tokens);
    const windowBlocks = requestBlocks(view, this.tokens, this.overhead);
    this.window.bill(at, windowBlocks);
    this.kept.ours.call(stored, ours, oursTokens, budget);
    this.kept.window.call(stored, view, sumTokens(windowBlocks), budget);
    this.last = { stored, ours, window: view };
    const blocks = this.wholeFits ? requestBlocks(stored, this.tokens, this.overhead) : [];
    const total = sumTokens(blocks);
    if (this.wholeFits && total > this.limit) {
      this.wholeFits = false;
      this.wholeNote = `the history outgrew ${this.info.id}'s ${this.limit.toLocaleString('en-US')}-token window at call ${turn}`;
    }
    // Past the window the provider refuses the whole history: nothing is billed, nothing is kept.
    this.kept.whole.call(stored, this.wholeFits ? stored : null, total, this.limit);
    if (this.wholeFits) this.whole.bill(at, blocks);
  }

  /** The three bills, contextkit's first (from the manager's meter totals), each beside what it kept. */
  summary(ours: CostTotals | undefined, budget: number): ReplayCost {
    const { stored } = this.last;
    this.kept.ours.finish(stored, this.last.ours);
    this.kept.window.finish(stored, this.last.window);
    this.kept.whole.finish(stored, this.wholeFits ? stored : null);
    const empty: CostTotals = {
      requests: 0,
      inputTokens: 0,
      cachedTokens: 0,
      writtenTokens: 0,
      freshTokens: 0,
    };
    const out: ReplayCost = {
      model: this.info.id,
      turnSeconds: REPLAY_TURN_SECONDS,
      alternatives: [
        alternative(
          'contextkit',
          true,
          'the views the manager returned',
          ours ?? empty,
          this.kept.ours.totals,
        ),
        alternative(
          'sliding window',
          true,
          `system messages and the newest turns within the ${budget.toLocaleString('en-US')}-token budget`,
          { ...this.window.totals },
          this.kept.window.totals,
        ),
        alternative(
          'no compaction',
          this.wholeFits,
          this.wholeNote,
          { ...this.whole.totals },
          this.kept.whole.totals,
        ),
      ],
    };
    if (this.info.pricing) out.pricing = this.info.pricing.source;
    return out;
  }
}

function sumTokens(blocks: ReadonlyArray<{ tokens: number }>): number {
  let n = 0;
  for (const b of blocks) n += b.tokens;
  return n;
}

function alternative(
  name: CostAlternative['name'],
  fits: boolean,
  note: string,
  totals: CostTotals,
  kept: KeptTotals,
): CostAlternative {
  const out: CostAlternative = { name, fits, note, totals, kept: { ...kept } };
  const why = unusableReason(kept);
  if (why !== null) out.unusable = why;
  return out;
}
