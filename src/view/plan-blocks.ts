import { NO_EDITS } from '../compaction/edit-atom.js';
import type { CompactionPlan, PlanEdits, PlanSummary } from '../compaction/plan.js';
import {
  type FactsSite,
  factsMessage,
  pinnedMessage,
  type SummaryRole,
  summaryMessage,
} from '../compaction/summary-message.js';
import { type ToolEffect, toolEffectByName } from '../messages/tool-effect.js';
import type { Message, MessageFormat } from '../messages/types.js';
import type { ExtractedFact } from '../tools/types.js';

const NO_PLAN_EDITS: PlanEdits = { ...NO_EDITS, dropped: new Set(), summarized: new Set() };

/**
 * What a plan looks like to the renderer, made once per plan and shared by the planner and the
 * view: its decisions as sets and maps, and its summary and facts block as message objects. One
 * object per summary or facts list means each is tokenized once (while planning) and its count is
 * found again in the memo when the view is built.
 */
export class PlanBlocks {
  /** The message of each facts list and summary, with the format it was made for. */
  private readonly blockMessages = new WeakMap<
    object,
    { format: MessageFormat | undefined; message: Message }
  >();
  private readonly editsOfPlan = new WeakMap<CompactionPlan, PlanEdits>();

  constructor(
    /** Where the facts block goes. */
    readonly factsSite: FactsSite,
    /** Cleared results have their calls' inputs cleared too (context editing's `clear_tool_inputs`). */
    readonly clearInputs: boolean,
    /** The manager offers the `recall` tool: the summary and facts block say so (`RECALL_NOTE`). */
    readonly recall = false,
    /** The role the summary and facts block take (`summaryRole`, default `user`). */
    readonly summaryRole: SummaryRole = 'user',
    /** Whether a tool only reads, for its cleared results' placeholders (`readOnlyTools`, `sideEffectTools`). */
    readonly effectOf: (toolName: string) => ToolEffect = toolEffectByName,
  ) {}

  /** A plan's decisions as sets and maps (read-only: steps copy before they change anything). */
  edits(plan: CompactionPlan | null): PlanEdits {
    if (!plan) return NO_PLAN_EDITS;
    let edits = this.editsOfPlan.get(plan);
    if (edits === undefined) {
      edits = {
        cleared: new Map(plan.cleared),
        truncated: new Map(plan.truncated),
        clearInputs: this.clearInputs,
        effectOf: this.effectOf,
        dropped: new Set(plan.dropped),
        summarized: new Set(plan.summarized ?? []),
      };
      this.editsOfPlan.set(plan, edits);
    }
    return edits;
  }

  /** Records the sets a plan was drafted with, so the view uses them without converting back. */
  setEdits(plan: CompactionPlan, edits: PlanEdits): void {
    this.editsOfPlan.set(plan, edits);
  }

  /** The facts block of one list of facts, the same message object every time. */
  factsMessage(facts: readonly ExtractedFact[], format?: MessageFormat): Message {
    const made = this.blockMessages.get(facts);
    if (made !== undefined && made.format === format) return made.message;
    const message = factsMessage(facts, this.factsSite, this.recall, format, this.summaryRole);
    this.blockMessages.set(facts, { format, message });
    return message;
  }

  /** The hooks' block of one list of texts, the same message object every time. */
  pinnedMessage(texts: readonly string[], format?: MessageFormat): Message {
    const made = this.blockMessages.get(texts);
    if (made !== undefined && made.format === format) return made.message;
    const message = pinnedMessage(texts, format);
    this.blockMessages.set(texts, { format, message });
    return message;
  }

  /** The summary as a message, one object per summary and format. */
  summaryMessage(summary: PlanSummary, format: MessageFormat): Message {
    const made = this.blockMessages.get(summary);
    if (made !== undefined && made.format === format) return made.message;
    const message = summaryMessage(summary, format, this.recall, this.summaryRole);
    this.blockMessages.set(summary, { format, message });
    return message;
  }

  /**
   * The messages standing for a summary: the window a provider's compaction returned (kept as it
   * came), else the one summary message.
   */
  summaryMessages(summary: PlanSummary, format: MessageFormat): readonly Message[] {
    return summary.items ?? [this.summaryMessage(summary, format)];
  }

  /** The plan's summary and facts block as the view shows them (none where the plan has none). */
  planMessages(
    plan: CompactionPlan | null,
    format: MessageFormat,
  ): { summary?: readonly Message[]; facts?: Message; pinned?: Message } {
    const out: { summary?: readonly Message[]; facts?: Message; pinned?: Message } = {};
    if (plan?.pinned && plan.pinned.length > 0) out.pinned = this.pinnedMessage(plan.pinned, format);
    if (plan?.summary) out.summary = this.summaryMessages(plan.summary, format);
    if (plan?.facts && plan.facts.length > 0 && this.factsSite !== 'none') {
      out.facts = this.factsMessage(plan.facts, format);
    }
    return out;
  }
}
