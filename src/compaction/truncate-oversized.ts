import type { Atom } from '../messages/atoms.js';
import { draftEdits, type PlanContext, type PlanDraft, type Protection } from './draft.js';
import { cutMiddle, textParts } from './edit-atom.js';

/** Tokens never cut below: a text shorter than this is left whole. */
const MIN_KEEP_TOKENS = 128;
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
  text: string;
}

function candidates(ctx: PlanContext, draft: PlanDraft, allowed: (p: Protection) => boolean): Candidate[] {
  const found: Candidate[] = [];
  for (let i = 0; i < ctx.atoms.length; i++) {
    const atom = ctx.atoms[i]!;
    if (!allowed(ctx.protection[i]!) || draft.dropped.has(atom.id)) continue;
    for (const part of textParts(atom)) {
      if (part.slotKey && draft.cleared.has(part.slotKey)) continue;
      if (draft.truncated.has(part.key)) continue;
      found.push({ index: i, atom, key: part.key, text: part.text });
    }
  }
  found.sort((a, b) => b.text.length - a.text.length || a.index - b.index);
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
 * Before dropping: a text in the exchange in progress that is over half the target alone is cut
 * to half the target. It can never be dropped, so keeping it whole would only push out the rest.
 */
export function capProtectedOversized(ctx: PlanContext, draft: PlanDraft): PlanDraft {
  if (draft.total <= ctx.target) return draft;
  const next: PlanDraft = {
    ...draft,
    truncated: new Map(draft.truncated),
    atomTokens: draft.atomTokens.slice(),
  };
  const cap = Math.floor(ctx.target / 2);
  for (const c of candidates(ctx, next, (p) => p === 'keep')) {
    if (c.text.length / 8 < cap) continue; // Too short to be over the cap (BPE ≥ ~1 token per 8 chars).
    cut(ctx, next, c, cap);
  }
  return next;
}

/**
 * Step 3: cuts the middle out of the longest texts still in the view (head and tail kept, a marker
 * between), largest first, until the view is at the target. Verbatim atoms are never cut.
 */
export function truncateOversized(ctx: PlanContext, draft: PlanDraft): PlanDraft {
  if (draft.total <= ctx.target) return draft;
  const next: PlanDraft = {
    ...draft,
    truncated: new Map(draft.truncated),
    atomTokens: draft.atomTokens.slice(),
  };
  for (const c of candidates(ctx, next, (p) => p !== 'verbatim')) {
    if (next.total <= ctx.target) break;
    const tokens = ctx.countText(c.text);
    if (tokens <= MIN_KEEP_TOKENS) continue;
    cut(ctx, next, c, tokens - (next.total - ctx.target));
  }
  return next;
}
