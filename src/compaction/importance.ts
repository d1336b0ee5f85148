import type { Atom } from '../wire/atoms.js';
import { messageText } from '../wire/content.js';
import type { PlanContext, PlanDraft } from './draft.js';

const DECISION =
  /\b(decided|decision|we will|we'll|let's go with|chose|choose|agreed|confirm(?:ed)?|approved?|yes,? (?:please|proceed|go ahead)|proceed|must|never|always)\b/i;
const ERROR = /\b(error|failed|failure|exception|traceback|cannot|can't|denied|refused|invalid)\b/i;
const FACT =
  /(?:[\w.-]+\/[\w./-]+|\b[A-Z]{2,}[0-9]{2,}\b|\b[a-z]+_[a-z0-9_]*[0-9]+\b|\b\d{4}-\d{2}-\d{2}\b|\$\s?\d[\d,.]*|\b[\w.+-]+@[\w-]+\.[\w.]+)/g;

/**
 * How much an atom is worth keeping: a user's decision or an error weighs more than chatter,
 * and facts (paths, ids, dates, amounts) add weight; recency breaks ties. Deterministic.
 */
export function atomImportance(atom: Atom, position: number, count: number): number {
  let score = 0;
  let text = '';
  for (const m of atom.messages) text += `${messageText(m)}\n`;
  const sample = text.length > 20_000 ? text.slice(0, 10_000) + text.slice(-10_000) : text;
  if (atom.hasUserContent) score += 2;
  if (DECISION.test(sample)) score += atom.hasUserContent ? 4 : 2;
  if (ERROR.test(sample)) score += 2;
  if (atom.messages.some((m) => JSON.stringify(m).includes('"is_error":true'))) score += 2;
  score += Math.min(4, (sample.match(FACT)?.length ?? 0) / 2);
  return score + position / Math.max(1, count);
}

/**
 * The "smart" drop: leaves out the least valuable unprotected atoms first (see `atomImportance`)
 * until the view is at the target, so an early decision outlives later chatter. Atoms go whole.
 */
export function dropByImportance(ctx: PlanContext, draft: PlanDraft): PlanDraft {
  if (draft.total <= ctx.target) return draft;
  const candidates: Array<{ i: number; score: number }> = [];
  ctx.atoms.forEach((atom, i) => {
    if (ctx.protection[i] === 'none' && !draft.dropped.has(atom.id)) {
      candidates.push({ i, score: atomImportance(atom, i, ctx.atoms.length) });
    }
  });
  candidates.sort((a, b) => a.score - b.score || a.i - b.i);
  const next: PlanDraft = { ...draft, dropped: new Set(draft.dropped), atomTokens: draft.atomTokens.slice() };
  for (const { i } of candidates) {
    if (next.total <= ctx.target) break;
    next.dropped.add(ctx.atoms[i]!.id);
    next.total -= next.atomTokens[i]!;
    next.atomTokens[i] = 0;
  }
  return next;
}
