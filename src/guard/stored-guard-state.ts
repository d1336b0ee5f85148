/**
 * The guard's running state as kept beside the conversation (metadata field `guard`; issue 32: the
 * plan and its running counts are stored state): the level it last acted at, the usage of the last
 * view, and whether the last request compacted (the tokens it left the view at). A worker that
 * never saw the conversation starts from it, so it holds back or escalates the next compaction as
 * the worker that served the last request would.
 *
 * Like the plan, it keeps the digest of its own JSON (`sum`, src/record-sum.ts). One whose sum does
 * not hold (changed where it is kept, damaged, written by a version that kept none) or whose fields
 * are not of their kind is not used, with a warning: the guard starts afresh, as for a conversation
 * that kept none. A `compacted` changed by hand would otherwise hold back a compaction the view is
 * due (a view left past its trigger), and a `level` out of the list would escalate wrongly.
 */

import { LEVELS, type Level } from '../compaction/zones.js';
import { resetUsageWarning, type UsageWarningState } from '../meter/usage-warning.js';
import { heldSum, withSum } from '../record-sum.js';

/** The guard's state as kept (before its sum). */
export interface StoredGuardState {
  level: Level | null;
  usage: number | null;
  /** Tokens of the view the last request's compaction left; null when it did not compact. */
  compacted: number | null;
}

/** The record to keep under `guard`, with its sum. */
export function encodeGuardState(state: StoredGuardState): StoredGuardState & { sum: string } {
  return withSum({ level: state.level, usage: state.usage, compacted: state.compacted });
}

/**
 * The state kept under `guard`: `absent` for none, `unreadable` for one that is not used (its sum
 * missing or not holding, a field not of its kind).
 */
export function decodeGuardState(value: unknown): StoredGuardState | 'absent' | 'unreadable' {
  if (value === undefined || value === null) return 'absent';
  if (heldSum(value) === undefined) return 'unreadable';
  const { level, usage, compacted } = value as Record<string, unknown>;
  const levelOk = level === null || LEVELS.some((l) => l.level === level);
  const usageOk = usage === null || (typeof usage === 'number' && Number.isFinite(usage) && usage >= 0);
  const compactedOk = compacted === null || (Number.isSafeInteger(compacted) && (compacted as number) >= 0);
  if (!levelOk || !usageOk || !compactedOk) return 'unreadable';
  return {
    level: level as Level | null,
    usage: usage as number | null,
    compacted: compacted as number | null,
  };
}

/**
 * The `usage_high` warning's state (src/meter/usage-warning.ts) as kept beside the conversation
 * (metadata field `usageWarning`, with its sum), apart from `guard`, which dates from the last
 * compaction: written when it changes (the warning fires, a compaction follows it, it is
 * re-armed), so that a worker that never saw the conversation warns once per crossing as the
 * worker that served it would, not at every turn the view stays past `warnAt`.
 */
export function encodeUsageWarning(state: UsageWarningState, epoch: string | null): Record<string, unknown> {
  return withSum({
    epoch,
    warned: state.warned,
    compactedSinceWarning: state.compactedSinceWarning,
    budget: state.budget ?? null,
  });
}

/**
 * The warning's state kept under `usageWarning` for the generation `epoch` (one kept for another:
 * `absent`, the history was replaced since), `absent` for none, `unreadable` for one that is not used.
 */
export function decodeUsageWarning(
  value: unknown,
  epoch: string | null,
): UsageWarningState | 'absent' | 'unreadable' {
  if (value === undefined || value === null) return 'absent';
  if (heldSum(value) === undefined) return 'unreadable';
  const { epoch: kept, warned, compactedSinceWarning, budget } = value as Record<string, unknown>;
  if (!(kept === null || typeof kept === 'string')) return 'unreadable';
  if (typeof warned !== 'boolean' || typeof compactedSinceWarning !== 'boolean') return 'unreadable';
  if (!(budget === null || (Number.isSafeInteger(budget) && (budget as number) > 0))) return 'unreadable';
  if (kept !== epoch) return 'absent';
  if (!warned) return resetUsageWarning();
  return { warned, compactedSinceWarning, budget: (budget as number | null) ?? undefined };
}

/** Whether two states of the warning are the same (nothing to write). */
export function sameUsageWarning(a: UsageWarningState, b: UsageWarningState): boolean {
  return (
    a.warned === b.warned && a.compactedSinceWarning === b.compactedSinceWarning && a.budget === b.budget
  );
}

/**
 * The budget notice's state (`budgetNotice`: the highest level already told, src/view/budget-notice.ts)
 * as kept beside the conversation (metadata field `budgetNoticed`, with its sum), written when it
 * changes, in the generation it was reached in: a worker that never saw the conversation tells a
 * level once on the way up, as the worker that served the turns before would, not at every turn.
 */
export function encodeBudgetNoticed(
  level: number | undefined,
  epoch: string | null,
): Record<string, unknown> {
  return withSum({ epoch, level: level ?? null });
}

/**
 * The level kept under `budgetNoticed` for the generation `epoch` (`absent` for none, or one kept
 * for another generation; `unreadable` for one that is not used: its sum missing or not holding,
 * a level that is not a share).
 */
export function decodeBudgetNoticed(
  value: unknown,
  epoch: string | null,
): { level: number | undefined } | 'absent' | 'unreadable' {
  if (value === undefined || value === null) return 'absent';
  if (heldSum(value) === undefined) return 'unreadable';
  const { epoch: kept, level } = value as Record<string, unknown>;
  if (!(kept === null || typeof kept === 'string')) return 'unreadable';
  if (!(level === null || (typeof level === 'number' && level > 0 && level <= 1))) return 'unreadable';
  if (kept !== epoch) return 'absent';
  return { level: (level as number | null) ?? undefined };
}
