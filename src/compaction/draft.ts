import type { WireFormat } from '../formats/wire-format.js';
import type { Message } from '../messages/types.js';
import type { Atom } from '../wire/atoms.js';
import type { AtomEdits } from './edit-atom.js';

/** The options of Anthropic's context editing, for the clearing step. */
export interface ClearingOptions {
  /** Tools whose results are never cleared. */
  excludeTools?: readonly string[];
  /** Once clearing starts, clear at least this many tokens, so the cache it breaks is worth it. */
  clearAtLeast?: number;
  /** Also replace the cleared calls' inputs (arguments) with an empty object. */
  clearToolInputs?: boolean;
  /** Nothing is dropped after this clearing (a clear-only plan): clear from the oldest result. */
  clearOnly?: boolean;
}

/** How far compaction may touch an atom. */
export type Protection =
  /** System, critical, pinned, the latest user message: kept exactly as stored. */
  | 'verbatim'
  /**
   * The current turn (everything after the latest user message): kept, its results cleared (oldest
   * first) only when it is over the budget, an oversized text cut only to fit the budget.
   */
  | 'keep'
  /** Anything else: may be cleared, dropped or cut. */
  | 'none';

/** What a planning step reads: the atoms, how to cost them, and the numbers to reach. */
export interface PlanContext {
  atoms: readonly Atom[];
  /** The format of the conversation the atoms are of: how its results are cleared and texts cut. */
  wire: WireFormat<Message>;
  protection: readonly Protection[];
  /** Tokens of one atom rendered under the given edits (memoized by the caller). */
  measure: (atom: Atom, edits: AtomEdits) => number;
  countText: (text: string) => number;
  /** Tokens of one stored message (memoized by the caller): cheap where `countText` is not. */
  messageTokens?: (message: Message) => number;
  /** Tokens outside the atoms: tool definitions, request framing, reserve for notices. */
  fixedTokens: number;
  budget: number;
  /** Where compaction aims: `targetUsage × budget`. */
  target: number;
  /** The newest results that are never cleared. */
  keepToolResults: number;
  /** Anthropic context-editing style options of the clearing step. */
  clearing?: ClearingOptions;
}

/** The decisions made so far, and what the view costs under them. */
export interface PlanDraft {
  /** Atoms out of the view, whether dropped or summarized. */
  dropped: Set<number>;
  /** The dropped atoms a summary stands for. */
  summarized: Set<number>;
  cleared: Map<string, number>;
  truncated: Map<string, { head: number; tail: number }>;
  /** Tokens of each atom under the draft's edits (0 when dropped), parallel to `ctx.atoms`. */
  atomTokens: number[];
  total: number;
}

/** The draft's edits in the shape `renderAtom` takes. */
export function draftEdits(draft: PlanDraft): AtomEdits {
  return { cleared: draft.cleared, truncated: draft.truncated };
}

/**
 * A draft that makes `edits` and leaves out the `dropped` atoms (of which `summarized` stand in a
 * summary): every other atom measured under the edits; a left-out atom costs nothing and is not
 * rendered. With no arguments past `ctx`, every atom whole.
 */
export function initialDraft(
  ctx: PlanContext,
  edits: AtomEdits,
  dropped: ReadonlySet<number> = new Set(),
  summarized: ReadonlySet<number> = new Set(),
  /** Each atom's tokens under `edits`, when measured already (in slices, by the planner). */
  measured?: number[],
): PlanDraft {
  const atomTokens =
    measured ?? ctx.atoms.map((atom) => (dropped.has(atom.id) ? 0 : ctx.measure(atom, edits)));
  const total = atomTokens.reduce((a, b) => a + b, ctx.fixedTokens);
  return {
    dropped: new Set(dropped),
    summarized: new Set(summarized),
    cleared: new Map(edits.cleared),
    truncated: new Map(edits.truncated),
    atomTokens,
    total,
  };
}
