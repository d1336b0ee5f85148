/**
 * When the guard's `usage_high` warning fires: once when the view sent first passes `warnAt` of
 * the budget, and again only after usage truly fell back below it.
 *
 * A compaction the manager made itself does not count as falling back. It brings the view to
 * `targetUsage` (0.6 by default), under `warnAt` (0.8), and the view then grows past `warnAt` on
 * its way to the trigger (0.92) before the next one: re-arming on that drop warned once per
 * compaction cycle, about 24 times in the 600-message demo, for a session that was doing fine.
 * What does re-arm it: a view under `warnAt` that no compaction since the warning explains (the
 * caller asked with a larger budget, or at a different budget after a compaction), or a history
 * cleared or replaced ({@link resetUsageWarning}).
 */

/** The warning's state between requests; keep one per manager, start from {@link resetUsageWarning}. */
export interface UsageWarningState {
  /** Whether the warning fired and has not been re-armed since. */
  readonly warned: boolean;
  /** Whether a compaction happened since the warning fired. */
  readonly compactedSinceWarning: boolean;
  /** The declared budget the warning fired at. */
  readonly budget: number | undefined;
}

/** One request, as the guard sees it after compacting. */
export interface UsageWarningInput {
  /** The view sent, as a share of the budget (`tokens / budget`). */
  usage: number;
  /** The guard's warning line, in (0, 1]. */
  warnAt: number;
  /** The declared budget of this request. */
  budget: number;
  /** Whether this request made a new plan (compacted). */
  compacted: boolean;
}

/** The state of a warning that has not fired: for a new manager, `clear()` or a replaced history. */
export function resetUsageWarning(): UsageWarningState {
  return { warned: false, compactedSinceWarning: false, budget: undefined };
}

/** Whether this request warns, and the state for the next one. Pure. */
export function nextUsageWarning(
  state: UsageWarningState,
  input: UsageWarningInput,
): { warn: boolean; state: UsageWarningState } {
  if (input.usage >= input.warnAt) {
    if (!state.warned) {
      return { warn: true, state: { warned: true, compactedSinceWarning: false, budget: input.budget } };
    }
    return { warn: false, state: input.compacted ? { ...state, compactedSinceWarning: true } : state };
  }
  // Under the line. Our own compaction brought it here: the same crossing, still warned.
  const ownDoing = input.compacted || (state.compactedSinceWarning && state.budget === input.budget);
  if (state.warned && ownDoing) {
    return { warn: false, state: input.compacted ? { ...state, compactedSinceWarning: true } : state };
  }
  return { warn: false, state: resetUsageWarning() };
}
