import type { PlanContext, PlanDraft } from './draft.js';
import { toSummary } from './select-for-summary.js';

/** The seed's LayeredStrategy levels, from the usage at which each begins. */
export type Level = 'healthy' | 'pressure' | 'urgent' | 'critical';

/** The layered strategy's levels and the usage at which each begins. */
export const LEVELS: ReadonlyArray<{ level: Level; at: number }> = [
  { level: 'healthy', at: 0.5 },
  { level: 'pressure', at: 0.7 },
  { level: 'urgent', at: 0.85 },
  { level: 'critical', at: 0.95 },
];

/** The highest level whose threshold `usage` has reached, or undefined below the first. */
export function levelOf(usage: number, levels = LEVELS): Level | undefined {
  let found: Level | undefined;
  for (const l of levels) if (usage >= l.at) found = l.level;
  return found;
}

/** One level up (jump escalation), staying at the top. */
export function escalate(level: Level | undefined): Level {
  const i = level === undefined ? -1 : LEVELS.findIndex((l) => l.level === level);
  return LEVELS[Math.min(LEVELS.length - 1, i + 1)]!.level;
}

/**
 * The layered selection: splits the unprotected atoms into old, middle and recent zones (the
 * newest `recentCount` are recent, the rest halved) and takes out of the view, for a summary,
 * the old zone at `healthy`, old and middle at `pressure`, all but half the recent zone at
 * `urgent`, and all but the last two at `critical`. Whole atoms only.
 */
export function selectByZones(
  ctx: PlanContext,
  draft: PlanDraft,
  level: Level,
  recentCount: number,
  reserve: number,
): PlanDraft {
  const open: number[] = [];
  ctx.atoms.forEach((atom, i) => {
    if (ctx.protection[i] === 'none' && !draft.dropped.has(atom.id)) open.push(i);
  });
  const recent = Math.min(open.length, recentCount);
  const rest = open.length - recent;
  const oldEnd = Math.floor(rest / 2);
  const keepLast =
    level === 'healthy'
      ? open.length - oldEnd
      : level === 'pressure'
        ? recent
        : level === 'urgent'
          ? Math.ceil(recent / 2)
          : 2;
  const take = open.slice(0, Math.max(0, open.length - keepLast));
  if (take.length === 0) return draft;
  const next = toSummary(draft, take, reserve, ctx);
  return next;
}
