import type { Message } from '../messages/types.js';
import type { ExtractedFact } from '../tools/types.js';
import { initialDraft, type PlanContext, type PlanDraft } from './draft.js';
import type { AtomEdits } from './edit-atom.js';

/** A compaction plan: what the view leaves out or shortens, kept between requests. */
export interface CompactionPlan {
  v: 1;
  /** Atom ids (first seq of each atom) left out of the view. */
  dropped: number[];
  /** Result slot keys cleared, with the tokens each result had. */
  cleared: Array<[string, number]>;
  /** Text part keys cut, with the characters kept at head and tail. */
  truncated: Array<[string, { head: number; tail: number }]>;
  /** History length when the plan was made: later messages are outside it and always kept. */
  historyLength: number;
  /** The budget the plan was made for. */
  budget: number;
  /** Tokens of the view right after planning. */
  tokens: number;
  /** The counter the tokens were counted with. */
  counterId: string;
  /** Atom ids the summary stands for (all of them also in `dropped`). */
  summarized?: number[];
  /** One summary in place of the summarized atoms, standing where the first of them stood. */
  summary?: PlanSummary;
  /** Facts of everything that left the view, merged across plans; never replaced. */
  facts?: ExtractedFact[];
  /** Atom id before which the facts block stands (right after the leading system messages). */
  factsAt?: number;
  /**
   * What the compaction hooks added (`onBeforeCompaction`, `onAfterCompaction`), kept in the view
   * until the next compaction, where the hooks are asked again; counted in `tokens`.
   */
  pinned?: string[];
  /** Atom id before which the hooks' block stands (after the facts block). */
  pinnedAt?: number;
}

/** A summary kept in a plan: what it covers, where it stands, who wrote it. */
export interface PlanSummary {
  text: string;
  /** Atom id the summary message stands before. */
  at: number;
  fromSeq: number;
  toSeq: number;
  /** `offline`, `openai`, `anthropic`, `openai-compact` (the provider's own compaction), … */
  tools: string;
  /**
   * The window the provider's compaction endpoint returned for the range (OpenAI
   * `/responses/compact`: the user messages, then one `compaction` item), sent in place of the
   * summary message, as it came.
   */
  items?: Message[];
}

/** A plan's decisions as the sets and maps the steps and the renderer work with. */
export interface PlanEdits extends AtomEdits {
  dropped: ReadonlySet<number>;
  summarized?: ReadonlySet<number>;
}

/** The draft a new plan starts from: the previous plan's decisions, measured afresh. */
export function startDraft(ctx: PlanContext, previous: PlanEdits, measured?: number[]): PlanDraft {
  return initialDraft(ctx, previous, previous.dropped, previous.summarized, measured);
}

/** A plan as kept in a store's metadata (plain JSON). */
export function encodePlan(plan: CompactionPlan): Record<string, unknown> {
  return { ...plan };
}

/** A plan read back from a store, or null when what was stored is not one this version can apply. */
export function decodePlan(value: unknown): CompactionPlan | null {
  const p = value as Partial<CompactionPlan> | undefined;
  if (p?.v !== 1 || !Array.isArray(p.dropped) || !Array.isArray(p.cleared) || !Array.isArray(p.truncated)) {
    return null;
  }
  return p as CompactionPlan;
}
