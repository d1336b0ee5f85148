import { resultTokens } from './clear-tool-results.js';
import { draftEdits, type PlanContext, type PlanDraft } from './draft.js';
import { latestUserAtomIndex } from './protections.js';

/**
 * The current turn's results that may be cleared when the turn is over the budget, oldest first:
 * those of every exchange after the latest user message but the last one (the exchange in
 * progress, whose results the model is about to read), and not of an excluded tool.
 */
function turnSlots(ctx: PlanContext, draft: PlanDraft) {
  const start = latestUserAtomIndex(ctx.atoms);
  const excluded = new Set(ctx.clearing?.excludeTools ?? []);
  let last = -1;
  for (let i = ctx.atoms.length - 1; i > start; i--) {
    if (ctx.atoms[i]!.kind === 'exchange') {
      last = i;
      break;
    }
  }
  const slots: Array<{ index: number; key: string; messageIndex: number; blockIndex: number }> = [];
  if (start < 0) return slots;
  for (let i = start + 1; i < last; i++) {
    const atom = ctx.atoms[i]!;
    if (ctx.protection[i] !== 'keep' || draft.dropped.has(atom.id)) continue;
    for (const slot of atom.results) {
      if (slot.resultSeq === null || draft.cleared.has(slot.key) || excluded.has(slot.toolName)) continue;
      slots.push({ index: i, key: slot.key, messageIndex: slot.messageIndex, blockIndex: slot.blockIndex });
    }
  }
  return slots;
}

/**
 * The current turn stays verbatim while it fits the budget: older turns give way to it first, and
 * the target yields to it. Only when the view is still over the budget once they are gone are the
 * turn's results cleared, oldest first (the exchange in progress last of all, by
 * `capProtectedOversized`), down to the target, so that the next steps of the turn do not compact
 * again at once. `memory` is what the summary and facts block take of `draft.total`: they give way
 * first (shrunk or left out afterwards), so they never push the turn out. Their facts rank first
 * in the facts block (see `capFactsFor`).
 */
export function clearTurnResults(ctx: PlanContext, draft: PlanDraft, memory = 0): PlanDraft {
  if (draft.total - memory <= ctx.budget) return draft;
  const slots = turnSlots(ctx, draft);
  if (slots.length === 0) return draft;
  const next: PlanDraft = { ...draft, cleared: new Map(draft.cleared), atomTokens: draft.atomTokens.slice() };
  for (const slot of slots) {
    if (next.total - memory <= ctx.target) break;
    const atom = ctx.atoms[slot.index]!;
    const before = next.atomTokens[slot.index]!;
    next.cleared.set(slot.key, resultTokens(ctx, atom.messages[slot.messageIndex], slot.blockIndex));
    const after = ctx.measure(atom, draftEdits(next));
    if (after >= before) {
      // A result shorter than its placeholder: clearing it would cost tokens.
      next.cleared.delete(slot.key);
      continue;
    }
    next.atomTokens[slot.index] = after;
    next.total -= before - after;
  }
  return next;
}

/**
 * The last resort, for a turn that is over the budget even with its results cleared (a long
 * single-turn agent run: one request, hundreds of calls): its oldest atoms leave the view, the
 * exchange in progress and an atom still open never, down to the target. Their facts are read
 * like those of any atom that leaves.
 */
export function dropTurnOldest(ctx: PlanContext, draft: PlanDraft, memory = 0): PlanDraft {
  if (draft.total - memory <= ctx.budget) return draft;
  const start = latestUserAtomIndex(ctx.atoms);
  if (start < 0) return draft;
  let last = -1;
  for (let i = ctx.atoms.length - 1; i > start; i--) {
    if (ctx.atoms[i]!.kind === 'exchange') {
      last = i;
      break;
    }
  }
  const next: PlanDraft = { ...draft, dropped: new Set(draft.dropped), atomTokens: draft.atomTokens.slice() };
  for (let i = start + 1; i < last && next.total - memory > ctx.target; i++) {
    const atom = ctx.atoms[i]!;
    if (ctx.protection[i] !== 'keep' || atom.open || next.dropped.has(atom.id)) continue;
    next.dropped.add(atom.id);
    next.total -= next.atomTokens[i]!;
    next.atomTokens[i] = 0;
  }
  if (next.dropped.size === draft.dropped.size) return draft;
  next.cleared = new Map([...next.cleared].filter(([key]) => !next.dropped.has(Number(key.split(':')[0]))));
  return next;
}
