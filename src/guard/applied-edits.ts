/**
 * The context edits Anthropic applied on its server before the prompt reached the model, as a
 * response reports them in `context_management.applied_edits`: per edit its `type`
 * (`clear_tool_uses_20250919`, `clear_thinking_20251015`) and what it cleared
 * (platform.claude.com/docs/en/build-with-claude/context-editing, "Response format").
 */

/** One applied edit, in contextkit's names. */
export interface AppliedEdit {
  type: string;
  /** Input tokens the edit removed from what the model read. */
  clearedInputTokens: number;
  /** Tool uses cleared (`clear_tool_uses_20250919`). */
  clearedToolUses?: number;
  /** Thinking turns cleared (`clear_thinking_20251015`). */
  clearedThinkingTurns?: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const count = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;

/** The edits a Messages response reports; empty when it reports none. Fields it cannot read are left out. */
export function appliedEditsOf(response: unknown): AppliedEdit[] {
  const management = isRecord(response) ? response.context_management : undefined;
  const edits = isRecord(management) ? management.applied_edits : undefined;
  if (!Array.isArray(edits)) return [];
  return edits.filter(isRecord).map((e) => {
    const out: AppliedEdit = {
      type: typeof e.type === 'string' ? e.type : 'unknown',
      clearedInputTokens: count(e.cleared_input_tokens) ?? 0,
    };
    const uses = count(e.cleared_tool_uses);
    const turns = count(e.cleared_thinking_turns);
    if (uses !== undefined) out.clearedToolUses = uses;
    if (turns !== undefined) out.clearedThinkingTurns = turns;
    return out;
  });
}
