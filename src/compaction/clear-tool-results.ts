import { draftEdits, type PlanContext, type PlanDraft } from './draft.js';

/**
 * Step 1: replaces the oldest tool results with a short placeholder, oldest first, until the view
 * is at the target. The newest `keepToolResults` results and those of protected atoms stay.
 */
export function clearToolResults(ctx: PlanContext, draft: PlanDraft): PlanDraft {
  if (draft.total <= ctx.target) return draft;
  // Count the newest results from the end, across all atoms, to find which are kept.
  let toKeep = ctx.keepToolResults;
  const keptSlots = new Set<string>();
  for (let i = ctx.atoms.length - 1; i >= 0 && toKeep > 0; i--) {
    const results = ctx.atoms[i]!.results;
    for (let r = results.length - 1; r >= 0 && toKeep > 0; r--) {
      if (results[r]!.resultSeq === null) continue;
      keptSlots.add(results[r]!.key);
      toKeep--;
    }
  }
  const next: PlanDraft = { ...draft, cleared: new Map(draft.cleared), atomTokens: draft.atomTokens.slice() };
  for (let i = 0; i < ctx.atoms.length && next.total > ctx.target; i++) {
    const atom = ctx.atoms[i]!;
    if (ctx.protection[i] !== 'none' || next.dropped.has(atom.id)) continue;
    for (const slot of atom.results) {
      if (next.total <= ctx.target) break;
      if (slot.resultSeq === null || keptSlots.has(slot.key) || next.cleared.has(slot.key)) continue;
      const before = next.atomTokens[i]!;
      next.cleared.set(slot.key, resultTokens(ctx, atom.messages[slot.messageIndex], slot.blockIndex));
      const after = ctx.measure(atom, draftEdits(next));
      if (after >= before) {
        // A result shorter than its placeholder: clearing would cost tokens, not save them.
        next.cleared.delete(slot.key);
        continue;
      }
      next.atomTokens[i] = after;
      next.total -= before - after;
    }
  }
  return next;
}

/** Tokens of one result's own content, for the placeholder's "about N tokens". */
function resultTokens(ctx: PlanContext, message: unknown, blockIndex: number): number {
  const m = message as { content?: unknown };
  const content =
    blockIndex < 0 ? m.content : (m.content as Array<{ content?: unknown }>)[blockIndex]?.content;
  if (typeof content === 'string') return ctx.countText(content);
  if (!Array.isArray(content)) return 0;
  let sum = 0;
  for (const part of content as Array<{ text?: unknown }>) {
    if (typeof part.text === 'string') sum += ctx.countText(part.text);
  }
  return sum;
}
