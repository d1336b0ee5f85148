import type { PlanContext, PlanDraft } from './draft.js';

/**
 * Step 2 of the summarizing strategy: takes the oldest unprotected atoms out of the view, to be
 * replaced by one summary of at most `reserve` tokens, until the view is at the target. Like
 * dropping, it moves whole atoms, so a summary boundary never splits a tool call from its result.
 * Atoms already summarized by an earlier plan stay summarized (the new summary includes the old).
 */
export function selectForSummary(ctx: PlanContext, draft: PlanDraft, reserve: number): PlanDraft {
  if (draft.total <= ctx.target) return draft;
  const next: PlanDraft = {
    ...draft,
    dropped: new Set(draft.dropped),
    summarized: new Set(draft.summarized),
    atomTokens: draft.atomTokens.slice(),
  };
  // The summary costs its reserve once, whether it is new or grows from the previous one.
  if (next.summarized.size === 0) next.total += reserve;
  for (let i = 0; i < ctx.atoms.length && next.total > ctx.target; i++) {
    const atom = ctx.atoms[i]!;
    if (ctx.protection[i] !== 'none' || next.dropped.has(atom.id)) continue;
    next.dropped.add(atom.id);
    next.summarized.add(atom.id);
    next.total -= next.atomTokens[i]!;
    next.atomTokens[i] = 0;
  }
  if (next.summarized.size === draft.summarized.size) return draft;
  return next;
}
