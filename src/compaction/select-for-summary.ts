import type { PlanContext, PlanDraft } from './draft.js';

/**
 * Step 2 of the summarizing strategy: takes the oldest unprotected atoms before the latest user
 * message out of the view, to be replaced by one summary of at most `reserve` tokens, until the
 * view is at the target. Like
 * dropping, it moves whole atoms, so a summary boundary never splits a tool call from its result.
 * Atoms already summarized by an earlier plan stay summarized (the new summary includes the old).
 */
export function selectForSummary(ctx: PlanContext, draft: PlanDraft, reserve: number): PlanDraft {
  if (draft.total <= ctx.target) return draft;
  // The summary costs its reserve once; with a summary already in the view, it grows within it.
  const next = toSummary(draft, [], reserve);
  // The turn in progress (the latest user message and what follows it) is never summarized.
  let end = ctx.atoms.length;
  for (let i = ctx.atoms.length - 1; i >= 0; i--) {
    if (ctx.atoms[i]!.hasUserContent) {
      end = i;
      break;
    }
  }
  for (let i = 0; i < end && next.total > ctx.target; i++) {
    if (ctx.protection[i] !== 'none' || next.dropped.has(ctx.atoms[i]!.id)) continue;
    take(ctx, next, i);
  }
  if (next.summarized.size === draft.summarized.size) return draft;
  return next;
}

/** A copy of `draft` with the atoms at `indices` moved into the summary (reserve counted once). */
export function toSummary(
  draft: PlanDraft,
  indices: readonly number[],
  reserve: number,
  ctx?: PlanContext,
): PlanDraft {
  const next: PlanDraft = {
    ...draft,
    dropped: new Set(draft.dropped),
    summarized: new Set(draft.summarized),
    atomTokens: draft.atomTokens.slice(),
  };
  if (next.summarized.size === 0) next.total += reserve;
  if (ctx) for (const i of indices) take(ctx, next, i);
  return next;
}

function take(ctx: PlanContext, draft: PlanDraft, i: number): void {
  const id = ctx.atoms[i]!.id;
  draft.dropped.add(id);
  draft.summarized.add(id);
  draft.total -= draft.atomTokens[i]!;
  draft.atomTokens[i] = 0;
}
