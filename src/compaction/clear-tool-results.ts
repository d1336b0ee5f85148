import type { WireFormat } from '../formats/wire-format.js';
import type { Message } from '../messages/types.js';
import type { Atom, ToolResultSlot } from '../wire/atoms.js';
import { draftEdits, type PlanContext, type PlanDraft } from './draft.js';

/** About what a cleared-result placeholder costs, for sizing before the exact measure. */
export const PLACEHOLDER_TOKENS = 40;

/**
 * The newest `keepToolResults` results, counted from the end across all atoms. A result of an
 * older turn larger than half the target is not kept whole: keeping it would push every older turn
 * out of the view (a huge read the model already answered, say), where its placeholder and facts
 * leave them room.
 */
function newestSlots(ctx: PlanContext): Set<string> {
  let toKeep = ctx.keepToolResults;
  const kept = new Set<string>();
  for (let i = ctx.atoms.length - 1; i >= 0 && toKeep > 0; i--) {
    const atom = ctx.atoms[i]!;
    const results = atom.results;
    for (let r = results.length - 1; r >= 0 && toKeep > 0; r--) {
      const slot = results[r]!;
      if (slot.resultSeq === null) continue;
      if (
        ctx.protection[i] === 'none' &&
        resultTokens(ctx, atom.messages[slot.messageIndex], slot.blockIndex) > ctx.target / 2
      ) {
        continue;
      }
      kept.add(slot.key);
      toKeep--;
    }
  }
  return kept;
}

function clearable(atom: Atom, draft: PlanDraft, kept: ReadonlySet<string>, excluded: ReadonlySet<string>) {
  return atom.results.filter(
    (s) => s.resultSeq !== null && !kept.has(s.key) && !draft.cleared.has(s.key) && !excluded.has(s.toolName),
  );
}

/**
 * Where dropping will begin: walking back from the newest atom with every clearable result cleared,
 * the first atom that no longer fits. Clearing results older than that would be wasted work.
 */
function firstSurvivor(
  ctx: PlanContext,
  draft: PlanDraft,
  kept: ReadonlySet<string>,
  excluded: ReadonlySet<string>,
): number {
  let total = ctx.fixedTokens;
  ctx.atoms.forEach((atom, i) => {
    if (ctx.protection[i] !== 'none' && !draft.dropped.has(atom.id)) total += draft.atomTokens[i]!;
  });
  for (let i = ctx.atoms.length - 1; i >= 0; i--) {
    const atom = ctx.atoms[i]!;
    if (ctx.protection[i] !== 'none' || draft.dropped.has(atom.id)) continue;
    const slots = clearable(atom, draft, kept, excluded);
    let minimal = draft.atomTokens[i]!;
    // Sizing only: each result's share of its message's memoized count, less a placeholder's.
    for (const slot of slots) {
      minimal -= Math.max(
        0,
        resultTokens(ctx, atom.messages[slot.messageIndex], slot.blockIndex) - PLACEHOLDER_TOKENS,
      );
    }
    if (total + minimal > ctx.target) return i + 1;
    total += minimal;
  }
  return 0;
}

/**
 * Step 1: replaces the oldest tool results with a short placeholder, oldest first, until the view
 * is at the target. The newest `keepToolResults` results and those of protected atoms stay, and so
 * do results of atoms that dropping will remove anyway. `pause` (the planner's slices) is asked
 * after each atom measured: a first plan over a long history measures thousands (one such pass
 * held the event loop 40-70 ms at 20,000 messages); it changes nothing of what is cleared.
 */
export async function clearToolResults(
  ctx: PlanContext,
  draft: PlanDraft,
  pause: () => Promise<void> | undefined = () => undefined,
): Promise<PlanDraft> {
  if (draft.total <= ctx.target) return draft;
  const kept = newestSlots(ctx);
  const excluded = new Set(ctx.clearing?.excludeTools ?? []);
  const from = ctx.clearing?.clearOnly ? 0 : firstSurvivor(ctx, draft, kept, excluded);
  // What the drop step will take out anyway does not need clearing to get under the target.
  let doomed = 0;
  for (let i = 0; i < from; i++) {
    if (ctx.protection[i] === 'none' && !draft.dropped.has(ctx.atoms[i]!.id)) doomed += draft.atomTokens[i]!;
  }
  const start = draft.total;
  // With clearAtLeast, a clearing that starts goes on until it has saved that much.
  const goal = Math.min(ctx.target + doomed, start - (ctx.clearing?.clearAtLeast ?? 0));
  const next: PlanDraft = { ...draft, cleared: new Map(draft.cleared), atomTokens: draft.atomTokens.slice() };
  // A result too large to keep whole (over half the target) goes first: clearing the smaller, older
  // ones before it would take them all and still leave the view over the target.
  for (let i = from; i < ctx.atoms.length && next.total > goal; i++) {
    const atom = ctx.atoms[i]!;
    if (ctx.protection[i] !== 'none' || next.dropped.has(atom.id)) continue;
    for (const slot of clearable(atom, next, kept, excluded)) {
      const tokens = resultTokens(ctx, atom.messages[slot.messageIndex], slot.blockIndex);
      if (tokens <= ctx.target / 2 || next.total <= goal) continue;
      const before = next.atomTokens[i]!;
      next.cleared.set(slot.key, tokens);
      const after = ctx.measure(atom, draftEdits(next));
      next.atomTokens[i] = after;
      next.total -= before - after;
    }
    const paused = pause();
    if (paused) await paused;
  }
  for (let i = from; i < ctx.atoms.length && next.total > goal; i++) {
    const atom = ctx.atoms[i]!;
    if (ctx.protection[i] !== 'none' || next.dropped.has(atom.id)) continue;
    const slots = clearable(atom, next, kept, excluded);
    if (slots.length > 1 && clearAll(ctx, next, i, slots, goal)) continue;
    for (const slot of slots) {
      if (next.total <= goal) break;
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
    const paused = pause();
    if (paused) await paused;
  }
  return next;
}

/**
 * Clears every one of an atom's results at once (one measure instead of one per result) when each
 * is clearly longer than its placeholder and all of them together do not take the view below the
 * goal; otherwise leaves the draft as it was and says so, for the one-at-a-time path.
 */
function clearAll(
  ctx: PlanContext,
  next: PlanDraft,
  i: number,
  slots: readonly ToolResultSlot[],
  goal: number,
) {
  const atom = ctx.atoms[i]!;
  const sizes = slots.map((slot) => resultTokens(ctx, atom.messages[slot.messageIndex], slot.blockIndex));
  let saving = 0;
  for (const tokens of sizes) {
    if (tokens <= 2 * PLACEHOLDER_TOKENS) return false;
    saving += tokens - PLACEHOLDER_TOKENS;
  }
  if (next.total - saving < goal) return false;
  const before = next.atomTokens[i]!;
  slots.forEach((slot, k) => {
    next.cleared.set(slot.key, sizes[k]!);
  });
  const after = ctx.measure(atom, draftEdits(next));
  if (after >= before) {
    for (const slot of slots) next.cleared.delete(slot.key);
    return false;
  }
  next.atomTokens[i] = after;
  next.total -= before - after;
  return true;
}

/**
 * About how many tokens one result's content has, for the placeholder's "about N tokens": the
 * message's memoized count shared out by characters, so clearing never re-tokenizes a result.
 */
export function resultTokens(ctx: PlanContext, message: unknown, blockIndex: number): number {
  const wire = ctx.wire;
  const sized = wire.resultSize?.(message as Message, blockIndex);
  if (sized) {
    // A result the format sizes itself (Gemini's parts, by the length of their JSON).
    if (!ctx.messageTokens) return Math.ceil(sized.part / 4);
    const tokens = ctx.messageTokens(message as Message);
    return sized.whole > 0 ? Math.round((tokens * sized.part) / sized.whole) : 0;
  }
  // A Responses API output item keeps its text in `output`.
  const m = message as { content?: unknown; output?: unknown };
  const whole = m.content ?? m.output;
  const block = blockIndex < 0 ? undefined : (m.content as Array<Record<string, unknown>>)[blockIndex];
  const content = blockIndex < 0 ? whole : block?.content;
  // A result kept elsewhere than its block's `content` (a server tool's output, a Converse toolResult).
  const own = block === undefined ? undefined : wire.resultContent?.(block);
  const chars = textLength(own !== undefined ? own : content, wire);
  if (!ctx.messageTokens) return typeof content === 'string' ? ctx.countText(content) : Math.ceil(chars / 4);
  const wholeChars = textLength(whole, wire);
  const tokens = ctx.messageTokens(message as Message);
  return wholeChars > 0 ? Math.round((tokens * chars) / wholeChars) : 0;
}

/** Characters of text in `content`, blocks the format keeps its own way read through `resultContent`. */
function textLength(content: unknown, wire: WireFormat<Message>): number {
  if (typeof content === 'string') return content.length;
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const part of content as Array<Record<string, unknown>>) {
    const own = wire.resultContent?.(part);
    if (own !== undefined) n += textLength(own, wire);
    else if (typeof part.text === 'string') n += part.text.length;
    else if (part.content !== undefined) n += textLength(part.content, wire);
  }
  return n;
}
