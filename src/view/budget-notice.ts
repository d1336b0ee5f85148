/**
 * The budget notice (`budgetNotice: [0.5, 0.75, 0.9]`): when the view sent first reaches one of
 * the levels the user set, a short message at its end tells the model how much room is left, as
 * Codex does at 25/50/75%. Once per level on the way up; a level is told again only after the
 * usage fell below it (a compaction), so the model is not told the same thing every turn.
 */

/** The highest level already told, or undefined when none is. */
export type BudgetNoticeState = number | undefined;

/**
 * The level to tell now (if any) and the state after this request. `usage` is the share of the
 * budget the view takes; `levels` are ascending, in (0, 1].
 */
export function nextBudgetNotice(
  state: BudgetNoticeState,
  usage: number,
  levels: readonly number[],
): { state: BudgetNoticeState; level?: number } {
  let reached: number | undefined;
  for (const level of levels) if (usage >= level) reached = level;
  if (reached === undefined) return { state: undefined };
  if (state !== undefined && reached <= state) return { state: reached };
  return { state: reached, level: reached };
}

/** The notice's text: the share in use and the tokens left, in round figures. */
export function budgetNoticeText(tokens: number, budget: number): string {
  const used = Math.min(100, Math.floor((100 * tokens) / budget));
  const left = Math.max(0, budget - tokens);
  const round =
    left >= 10_000 ? Math.floor(left / 1_000) * 1_000 : left >= 1_000 ? Math.floor(left / 100) * 100 : left;
  return `[contextkit: ${used}% of the context budget is in use; about ${round.toLocaleString('en-US')} tokens are left before older turns are compacted. Keep replies and tool calls focused.]`;
}
