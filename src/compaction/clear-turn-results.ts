import { PLACEHOLDER_TOKENS, resultTokens } from './clear-tool-results.js';
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
  const start = latestUserAtomIndex(ctx.atoms);
  let next: PlanDraft = { ...draft, cleared: new Map(draft.cleared), atomTokens: draft.atomTokens.slice() };
  // What would not fit even with every result cleared leaves first (oldest first): clearing it
  // would be wasted work, and its sizes may be a cold start's bounds, where the rest is counted.
  const survivor = firstSurvivor(ctx, next, start, memory);
  if (survivor > start + 1) next = dropTurnOldest(ctx, next, memory, survivor);
  const slots = turnSlots(ctx, next);
  if (slots.length === 0) return next;
  for (const slot of slots) {
    if (next.total - memory <= ctx.target) break;
    const atom = ctx.atoms[slot.index]!;
    const before = next.atomTokens[slot.index]!;
    next.cleared.set(slot.key, turnResultTokens(ctx, atom.messages[slot.messageIndex], slot.blockIndex));
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
 * single-turn agent run: one request, hundreds of calls): its atoms leave the view oldest first,
 * down to the target; the exchange in progress (the turn's last) and an atom still open never. Their facts are read
 * like those of any atom that leaves.
 */
export function dropTurnOldest(
  ctx: PlanContext,
  draft: PlanDraft,
  memory = 0,
  /** Drop only atoms before this index (all of the turn's but the last exchange by default). */
  before = ctx.atoms.length,
): PlanDraft {
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
  for (let i = start + 1; i < before && next.total - memory > ctx.target; i++) {
    const atom = ctx.atoms[i]!;
    if (i === last || ctx.protection[i] !== 'keep' || atom.open || next.dropped.has(atom.id)) continue;
    next.dropped.add(atom.id);
    next.total -= next.atomTokens[i]!;
    next.atomTokens[i] = 0;
  }
  if (next.dropped.size === draft.dropped.size) return draft;
  next.cleared = new Map([...next.cleared].filter(([key]) => !next.dropped.has(Number(key.split(':')[0]))));
  return next;
}

/**
 * Walking back from the turn's newest atom with every result cleared (sizes only: each result's
 * share of its message's count, less a placeholder's), the index of the first atom of the turn
 * that still fits under the budget; the atoms before it cannot stay whatever is cleared.
 */
function firstSurvivor(ctx: PlanContext, draft: PlanDraft, start: number, memory: number): number {
  let total = draft.total - memory;
  for (let i = start + 1; i < ctx.atoms.length; i++) {
    if (ctx.protection[i] === 'keep' && !draft.dropped.has(ctx.atoms[i]!.id)) total -= draft.atomTokens[i]!;
  }
  for (let i = ctx.atoms.length - 1; i > start; i--) {
    const atom = ctx.atoms[i]!;
    if (ctx.protection[i] !== 'keep' || draft.dropped.has(atom.id)) continue;
    let minimal = draft.atomTokens[i]!;
    for (const slot of atom.results) {
      if (slot.resultSeq === null || draft.cleared.has(slot.key)) continue;
      const tokens = resultTokens(ctx, atom.messages[slot.messageIndex], slot.blockIndex);
      minimal -= Math.max(0, tokens - PLACEHOLDER_TOKENS);
    }
    if (total + minimal > ctx.budget) return i + 1;
    total += minimal;
  }
  return start + 1;
}

/**
 * A turn result's tokens for its placeholder's "about N tokens", counted from its text where it is
 * one string: the turn's older results may carry a cold start's upper bounds, and a placeholder
 * must read the same whichever way its message was counted.
 */
function turnResultTokens(ctx: PlanContext, message: unknown, blockIndex: number): number {
  const m = message as { content?: unknown };
  const content =
    blockIndex < 0
      ? m.content
      : Array.isArray(m.content)
        ? (m.content[blockIndex] as { content?: unknown } | undefined)?.content
        : undefined;
  if (typeof content === 'string') return ctx.countText(content);
  return resultTokens(ctx, message, blockIndex);
}
