import type { Atom } from '../wire/atoms.js';
import { draftEdits, type PlanContext, type PlanDraft, type Protection } from './draft.js';
import { cutMiddle, textParts } from './edit-atom.js';

/** Tokens never cut below: a text shorter than this is left whole. */
const MIN_KEEP_TOKENS = 128;
/** Passes over the exchange in progress, each cutting what is still over the window. */
const RECUT_PASSES = 3;
/** How many of the longest texts are looked at; the rest are too short to matter. */
const CANDIDATES = 64;

/**
 * Finds how many head and tail characters of `text` fit in `maxTokens` with the marker between.
 * Returns undefined when the text already fits.
 */
export function fitText(
  text: string,
  maxTokens: number,
  countText: (text: string) => number,
): { head: number; tail: number } | undefined {
  const tokens = countText(text);
  if (tokens <= maxTokens) return undefined;
  let keep = Math.floor((text.length * maxTokens) / tokens);
  for (let attempt = 0; attempt < 8 && keep > 0; attempt++) {
    const head = Math.ceil(keep / 2);
    const tail = keep - head;
    if (countText(cutMiddle(text, head, tail)) <= maxTokens) return { head, tail };
    keep = Math.floor(keep * 0.85);
  }
  return { head: 0, tail: 0 };
}

interface Candidate {
  index: number;
  atom: Atom;
  key: string;
  /** The text as stored (a cut is always made from it). */
  text: string;
  /** The text as the view shows it now: cut already, where the draft cuts it. */
  shown: string;
}

/** `text` as a view shows it under the draft's cut `keep` (none: whole). */
function shownText(text: string, keep: { head: number; tail: number } | undefined): string {
  return keep ? cutMiddle(text, keep.head, keep.tail) : text;
}

/**
 * The longest texts of the atoms `allowed` lets be cut, longest (as shown) first. A text the draft
 * already cuts is one only where `recut`: the exchange in progress must fit a budget smaller than
 * the one it was cut for (another model, more tools), and the task its share of it.
 */
function candidates(
  ctx: PlanContext,
  draft: PlanDraft,
  allowed: (p: Protection) => boolean,
  recut = false,
): Candidate[] {
  const found: Candidate[] = [];
  for (let i = 0; i < ctx.atoms.length; i++) {
    const atom = ctx.atoms[i]!;
    if (!allowed(ctx.protection[i]!) || draft.dropped.has(atom.id)) continue;
    for (const part of textParts(atom, ctx.wire)) {
      if (part.slotKey && draft.cleared.has(part.slotKey)) continue;
      const keep = draft.truncated.get(part.key);
      if (keep && !recut) continue;
      const shown = shownText(part.text, keep);
      found.push({ index: i, atom, key: part.key, text: part.text, shown });
    }
  }
  found.sort((a, b) => b.shown.length - a.shown.length || a.index - b.index);
  return found.slice(0, CANDIDATES);
}

function cut(ctx: PlanContext, draft: PlanDraft, c: Candidate, maxTokens: number): boolean {
  const fit = fitText(c.text, Math.max(MIN_KEEP_TOKENS, maxTokens), ctx.countText);
  if (!fit) return false;
  draft.truncated.set(c.key, fit);
  const after = ctx.measure(c.atom, draftEdits(draft));
  draft.total -= draft.atomTokens[c.index]! - after;
  draft.atomTokens[c.index] = after;
  return true;
}

/**
 * After dropping: a text of the current turn (never dropped) is cut only when what must stay is
 * still over the budget without it being cut (`memory`, the summary and facts in `draft.total`,
 * set aside: they give way first), and only by that excess: older atoms are
 * summarized or dropped first, so a result the model just asked for is kept whole whenever the
 * window can hold it.
 */
export function capProtectedOversized(ctx: PlanContext, draft: PlanDraft, memory = 0): PlanDraft {
  if (draft.total - memory <= ctx.budget) return draft;
  const next: PlanDraft = {
    ...draft,
    truncated: new Map(draft.truncated),
    atomTokens: draft.atomTokens.slice(),
  };
  // A cut text may cost more in its message than alone (a structured result cut becomes a string,
  // its quotes escaped): a text still over is cut again, a few passes at most.
  for (let pass = 0; pass < RECUT_PASSES && next.total - memory > ctx.budget; pass++) {
    const before = next.total;
    for (const c of candidates(ctx, next, (p) => p === 'keep', true)) {
      if (next.total - memory <= ctx.budget) break;
      const tokens = ctx.countText(c.shown);
      if (tokens <= MIN_KEEP_TOKENS) continue;
      cut(ctx, next, c, tokens - (next.total - memory - ctx.budget));
    }
    if (next.total >= before) break;
  }
  return next;
}

/**
 * Step 3: cuts the middle out of the longest texts still in the view (head and tail kept, a marker
 * between), largest first, until the view is at the target. Verbatim atoms and the exchange in
 * progress are never cut here.
 */
export function truncateOversized(ctx: PlanContext, draft: PlanDraft): PlanDraft {
  if (draft.total <= ctx.target) return draft;
  const next: PlanDraft = {
    ...draft,
    truncated: new Map(draft.truncated),
    atomTokens: draft.atomTokens.slice(),
  };
  // The exchange in progress is cut only to fit the window (capProtectedOversized), not the target.
  for (const c of candidates(ctx, next, (p) => p !== 'verbatim' && p !== 'keep')) {
    if (next.total <= ctx.target) break;
    const tokens = ctx.countText(c.shown);
    if (tokens <= MIN_KEEP_TOKENS) continue;
    cut(ctx, next, c, tokens - (next.total - ctx.target));
  }
  return next;
}

/** The share of the budget the task may take whole; past it, its head and tail are kept. */
export const TASK_SHARE = 0.25;

/**
 * The task kept in every view, but never at the cost of the whole view: a first user message over
 * `TASK_SHARE` of the budget keeps its head and tail (its longest texts cut in the middle, with a
 * marker) within that share. The whole of it stays stored, where `recall` finds it. `task` is its
 * atom's index (-1 for none); only a task kept verbatim, that is not the latest user message, is cut.
 * `cap` is the task's room (a quarter of the budget unless a view that must hold more asks less).
 */
export function capTask(
  ctx: PlanContext,
  draft: PlanDraft,
  task: number,
  latestUser: number,
  cap = Math.floor(ctx.budget * TASK_SHARE),
): PlanDraft {
  if (task < 0 || task === latestUser || ctx.protection[task] !== 'verbatim') return draft;
  const atom = ctx.atoms[task]!;
  if (atom.kind === 'system' || draft.dropped.has(atom.id)) return draft;
  if (draft.atomTokens[task]! <= cap) return draft;
  const next: PlanDraft = {
    ...draft,
    truncated: new Map(draft.truncated),
    atomTokens: draft.atomTokens.slice(),
  };
  // A part cut for a larger budget is cut again to this one's share.
  const parts = textParts(atom, ctx.wire)
    .map((p) => {
      const keep = next.truncated.get(p.key);
      return { ...p, shown: shownText(p.text, keep) };
    })
    .sort((a, b) => b.shown.length - a.shown.length);
  for (const part of parts) {
    const over = next.atomTokens[task]! - cap;
    if (over <= 0) break;
    const tokens = ctx.countText(part.shown);
    if (tokens <= MIN_KEEP_TOKENS) continue;
    cut(ctx, next, { index: task, atom, key: part.key, text: part.text, shown: part.shown }, tokens - over);
  }
  return next;
}
