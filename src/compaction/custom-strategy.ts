import type { PlanContext, PlanDraft } from './draft.js';
import type { CustomStrategy, StrategyDecision } from './strategy.js';
import type { Level } from './zones.js';

/** A custom strategy's decision applied to a draft, with what it refused and what it said. */
export interface CustomOutcome {
  draft: PlanDraft;
  /** Protected atoms the strategy chose; they stay in the view. */
  refused: number[];
  warn?: string;
  decline?: string;
}

/**
 * Asks a custom strategy which atoms leave the view and applies its choice, keeping to what it may
 * touch: protected atoms are refused, and whatever is still too much is left to the steps after it.
 */
export async function applyCustomStrategy(
  strategy: CustomStrategy,
  ctx: PlanContext,
  draft: PlanDraft,
  reserve: number,
  level: Level | undefined,
): Promise<CustomOutcome> {
  const decision: StrategyDecision = await strategy({
    atoms: ctx.atoms.map((atom, i) => ({
      id: atom.id,
      seqs: atom.seqs,
      kind: atom.kind,
      tokens: draft.atomTokens[i]!,
      protection: ctx.protection[i]!,
      inView: !draft.dropped.has(atom.id),
      messages: atom.messages,
    })),
    budget: ctx.budget,
    target: ctx.target,
    total: draft.total,
    level,
  });
  const next: PlanDraft = {
    ...draft,
    dropped: new Set(draft.dropped),
    summarized: new Set(draft.summarized),
    atomTokens: draft.atomTokens.slice(),
  };
  const index = new Map(ctx.atoms.map((a, i) => [a.id, i]));
  const refused: number[] = [];
  const take = (id: number, summarize: boolean) => {
    const i = index.get(id);
    if (i === undefined || next.dropped.has(id)) return;
    if (ctx.protection[i] !== 'none') {
      refused.push(id);
      return;
    }
    if (summarize && reserve > 0) {
      if (next.summarized.size === 0) next.total += reserve;
      next.summarized.add(id);
    }
    next.dropped.add(id);
    next.total -= next.atomTokens[i]!;
    next.atomTokens[i] = 0;
  };
  for (const id of decision?.summarize ?? []) take(id, true);
  for (const id of decision?.drop ?? []) take(id, false);
  const outcome: CustomOutcome = { draft: next, refused };
  if (typeof decision?.warn === 'string' && decision.warn !== '') outcome.warn = decision.warn;
  if (typeof decision?.decline === 'string' && decision.decline !== '') outcome.decline = decision.decline;
  return outcome;
}
