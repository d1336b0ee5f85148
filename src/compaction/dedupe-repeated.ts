import type { PlanContext, PlanDraft } from './draft.js';

/** Texts longer than this are not checked for repeats. */
const REPEAT_MAX_CHARS = 4000;

/**
 * Drops an unprotected atom whose messages say exactly what a later atom says (a status polled
 * twice with the same answer, a repeated "ok"): the later copy carries it. Runs before anything
 * else leaves the view, and only while the view is over the target.
 */
export function dedupeRepeated(ctx: PlanContext, draft: PlanDraft): PlanDraft {
  if (draft.total <= ctx.target) return draft;
  // Only atoms that could stay are worth checking: walking back from the newest, the first atom
  // past the target marks where dropping will begin anyway.
  let from = 0;
  let kept = ctx.fixedTokens;
  for (let i = ctx.atoms.length - 1; i >= 0; i--) {
    kept += draft.atomTokens[i]!;
    if (kept > ctx.target * 2) {
      from = i;
      break;
    }
  }
  // A cheap shape first (roles and text lengths): only atoms that share one can be repeats.
  const shapes = new Map<string, number[]>();
  for (let i = from; i < ctx.atoms.length; i++) {
    const atom = ctx.atoms[i]!;
    if (draft.dropped.has(atom.id)) continue;
    // Repeats worth finding are short (a poll, an "ok"): a long atom is left alone, unserialized.
    if (
      ctx.atoms[i]!.messages.some((m) => typeof m.content === 'string' && m.content.length > REPEAT_MAX_CHARS)
    )
      continue;
    const shape = atom.messages.map((m) => `${m.role}:${contentLength(m.content)}`).join('|');
    const list = shapes.get(shape);
    if (list) list.push(i);
    else shapes.set(shape, [i]);
  }
  const repeats: number[] = [];
  for (const indices of shapes.values()) {
    if (indices.length < 2) continue;
    const seen = new Set<string>();
    for (let k = indices.length - 1; k >= 0; k--) {
      const i = indices[k]!;
      // Tool call ids differ between repeats; what was asked and answered is what counts.
      const key = JSON.stringify(ctx.atoms[i]!.messages, (name, v) =>
        name === 'id' || name === 'tool_call_id' || name === 'tool_use_id' ? undefined : v,
      );
      if (seen.has(key) && ctx.protection[i] === 'none') repeats.push(i);
      seen.add(key);
    }
  }
  repeats.sort((a, b) => b - a);
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

/** Length and both ends of a content: cheap, and almost never shared by messages that differ. */
function contentLength(content: unknown): string {
  if (typeof content === 'string') return `${content.length}:${content.slice(0, 24)}:${content.slice(-24)}`;
  if (!Array.isArray(content)) return '0';
  let n = 0;
  let ends = '';
  for (const part of content as Array<{ text?: unknown; content?: unknown }>) {
    const text =
      typeof part.text === 'string' ? part.text : typeof part.content === 'string' ? part.content : '';
    n += text.length;
    ends += text.slice(0, 12);
  }
  return `${content.length}/${n}:${ends}`;
}
