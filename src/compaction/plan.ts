import { clearToolResults } from './clear-tool-results.js';
import { initialDraft, type PlanContext, type PlanDraft } from './draft.js';
import { dropOldest } from './drop-oldest.js';
import type { AtomEdits } from './edit-atom.js';
import { capProtectedOversized, truncateOversized } from './truncate-oversized.js';

/** A compaction plan: what the view leaves out or shortens, kept between requests. */
export interface CompactionPlan {
  v: 1;
  /** Atom ids (first seq of each atom) left out of the view. */
  dropped: number[];
  /** Result slot keys cleared, with the tokens each result had. */
  cleared: Array<[string, number]>;
  /** Text part keys cut, with the characters kept at head and tail. */
  truncated: Array<[string, { head: number; tail: number }]>;
  /** History length when the plan was made: later messages are outside it and always kept. */
  historyLength: number;
  /** The budget the plan was made for. */
  budget: number;
  /** Tokens of the view right after planning. */
  tokens: number;
  /** The counter the tokens were counted with. */
  counterId: string;
}

/** The steps in the order they run; each returns a new draft. */
export const DEFAULT_STEPS: ReadonlyArray<(ctx: PlanContext, draft: PlanDraft) => PlanDraft> = [
  clearToolResults,
  capProtectedOversized,
  dropOldest,
  truncateOversized,
];

/**
 * Plans a view at or under `ctx.target`: clear old tool results, then drop the oldest atoms, then
 * cut oversized texts. Starts from `previous` edits so a new plan only ever adds to the old one,
 * which keeps what was already cleared cleared (the model has seen the placeholder).
 */
export function planView(
  ctx: PlanContext,
  previous: AtomEdits & { dropped: ReadonlySet<number> },
  steps = DEFAULT_STEPS,
): PlanDraft {
  let draft = initialDraft(ctx, previous);
  if (previous.dropped.size > 0) {
    draft = { ...draft, dropped: new Set(previous.dropped), atomTokens: draft.atomTokens.slice() };
    ctx.atoms.forEach((atom, i) => {
      if (draft.dropped.has(atom.id)) {
        draft.total -= draft.atomTokens[i]!;
        draft.atomTokens[i] = 0;
      }
    });
  }
  for (const step of steps) draft = step(ctx, draft);
  return draft;
}
