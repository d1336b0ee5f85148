import type { PlanContext, PlanDraft } from './draft.js';

/**
 * Step 2: leaves out whole atoms, oldest first, until the view is at the target. Protected atoms
 * stay where they are; a tool call never leaves without its results, nor a result without its call.
 */
export function dropOldest(ctx: PlanContext, draft: PlanDraft): PlanDraft {
  if (draft.total <= ctx.target) return draft;
  const next: PlanDraft = { ...draft, dropped: new Set(draft.dropped), atomTokens: draft.atomTokens.slice() };
  for (let i = 0; i < ctx.atoms.length && next.total > ctx.target; i++) {
    const atom = ctx.atoms[i]!;
    if (ctx.protection[i] !== 'none' || next.dropped.has(atom.id)) continue;
    next.dropped.add(atom.id);
    next.total -= next.atomTokens[i]!;
    next.atomTokens[i] = 0;
  }
  // Edits of atoms that are gone would only clutter the receipt.
  if (next.dropped.size > draft.dropped.size) {
    next.cleared = new Map([...next.cleared].filter(([key]) => !next.dropped.has(Number(key.split(':')[0]))));
    next.truncated = new Map(
      [...next.truncated].filter(([key]) => !next.dropped.has(Number(key.split('@')[0]))),
    );
  }
  return next;
}
