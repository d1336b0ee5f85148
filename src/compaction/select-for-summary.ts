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
  const end = turnInProgress(ctx);
  for (let i = 0; i < end && next.total > ctx.target; i++) {
    if (ctx.protection[i] !== 'none' || next.dropped.has(ctx.atoms[i]!.id)) continue;
    take(ctx, next, i);
  }
  if (next.summarized.size === draft.summarized.size) return draft;
  return next;
}

/** Index of the turn in progress (the latest user message and what follows it): never summarized. */
function turnInProgress(ctx: PlanContext): number {
  for (let i = ctx.atoms.length - 1; i >= 0; i--) if (ctx.atoms[i]!.hasUserContent) return i;
  return ctx.atoms.length;
}

/**
 * The selection of a range prepared ahead (its seqs, see `SummaryAhead`), where it is one the
 * plan may take: whole atoms that may leave the view (unprotected, before the turn in progress,
 * not dropped), every atom already summarized among them, and taking them brings the view within
 * `slack` tokens of the target (below it is fine). Undefined otherwise: selection runs as usual.
 */
export function selectPrepared(
  ctx: PlanContext,
  draft: PlanDraft,
  reserve: number,
  seqs: ReadonlySet<number>,
  slack: number,
): PlanDraft | undefined {
  const end = turnInProgress(ctx);
  const indices: number[] = [];
  let covered = 0;
  for (let i = 0; i < ctx.atoms.length; i++) {
    const atom = ctx.atoms[i]!;
    const inside = atom.seqs.filter((seq) => seqs.has(seq)).length;
    if (inside === 0) continue;
    if (inside !== atom.seqs.length) return undefined;
    if (draft.summarized.has(atom.id)) {
      covered++;
      continue;
    }
    if (i >= end || ctx.protection[i] !== 'none' || draft.dropped.has(atom.id)) return undefined;
    indices.push(i);
  }
  if (indices.length === 0 || covered !== draft.summarized.size) return undefined;
  const next = toSummary(draft, indices, reserve, ctx);
  return next.total <= ctx.target + slack ? next : undefined;
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
