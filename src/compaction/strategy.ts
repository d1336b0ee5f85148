import type { Message } from '../messages/types.js';
import type { AtomKind } from '../wire/atoms.js';
import type { Protection } from './draft.js';
import type { Level } from './zones.js';

/** What a custom strategy sees: the atoms as they stand in the view, and the numbers to reach. */
export interface StrategyInput {
  atoms: ReadonlyArray<{
    id: number;
    seqs: readonly number[];
    kind: AtomKind;
    /** Tokens in the view now (0 when already out of it). */
    tokens: number;
    protection: Protection;
    inView: boolean;
    messages: readonly Message[];
  }>;
  budget: number;
  target: number;
  /** Tokens of the whole view now. */
  total: number;
  /** The layered level the usage is at (after jump escalation). */
  level: Level | undefined;
}

/**
 * What a custom strategy decides, by atom id: which atoms leave the view for the summary, which
 * leave without one. Protected atoms cannot be chosen (such choices are ignored with a warning),
 * and whatever is still over the target afterwards is dropped oldest first, so a view always fits.
 */
export interface StrategyDecision {
  summarize?: readonly number[];
  drop?: readonly number[];
  /**
   * A warning to raise (`context:warn` with code `strategy_warn`); the view is still made and
   * returned. The seed's `{ action: 'warn', message }`.
   */
  warn?: string;
  /**
   * Refuse the request: no view is returned and `getMessagesForRequest` throws
   * `ContextDeclinedError` with this reason (the seed's `{ action: 'decline', reason }`). The
   * plan is not kept, so the next request asks the strategy again.
   */
  decline?: string;
}

/** Your own strategy: given the atoms and the numbers, say which atoms leave the view. */
export type CustomStrategy = (input: StrategyInput) => StrategyDecision | Promise<StrategyDecision>;

/** The built-in strategies, or your own function. */
export type StrategyOption = 'summarize' | 'truncate' | 'smart' | 'layered' | CustomStrategy;
