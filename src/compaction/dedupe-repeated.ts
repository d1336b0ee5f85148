import type { PlanContext, PlanDraft } from './draft.js';

/**
 * Drops an unprotected atom whose messages say exactly what a later atom says (a status polled
 * twice with the same answer, a repeated "ok"): the later copy carries it. Runs before anything
 * else leaves the view, and only while the view is over the target.
 */
export function dedupeRepeated(ctx: PlanContext, draft: PlanDraft): PlanDraft {
  if (draft.total <= ctx.target) return draft;
  const seen = new Set<string>();
  const repeats: number[] = [];
  for (let i = ctx.atoms.length - 1; i >= 0; i--) {
    const atom = ctx.atoms[i]!;
    if (draft.dropped.has(atom.id)) continue;
    // Tool call ids differ between repeats; what was asked and answered is what counts.
    const key = JSON.stringify(atom.messages, (k, v) =>
      k === 'id' || k === 'tool_call_id' || k === 'tool_use_id' ? undefined : v,
    );
    if (seen.has(key) && ctx.protection[i] === 'none') repeats.push(i);
    seen.add(key);
  }
  if (repeats.length === 0) return draft;
  const next: PlanDraft = { ...draft, dropped: new Set(draft.dropped), atomTokens: draft.atomTokens.slice() };
  for (const i of repeats.reverse()) {
    if (next.total <= ctx.target) break;
    next.dropped.add(ctx.atoms[i]!.id);
    next.total -= next.atomTokens[i]!;
    next.atomTokens[i] = 0;
  }
  return next;
}
