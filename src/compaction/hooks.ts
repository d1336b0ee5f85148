/**
 * Hooks before and after compaction (`onBeforeCompaction`, `onAfterCompaction`): the application
 * may veto a compaction or add pinned content (instruction files, the task's state) that the view
 * keeps until the next compaction. What they add is bounded: it counts against the budget and is
 * trimmed, or refused, where it would not fit (with a `context:warn`); a hook that throws costs
 * nothing stored.
 */
import type { CompactionReceipt } from '../events.js';

/** What `onBeforeCompaction` is told. */
export interface BeforeCompactionInfo {
  /** Why the compaction runs (`threshold`, `over_budget`, `requested` by the compact tool, …). */
  reason: CompactionReceipt['reason'];
  /** Tokens of the view before it, and the budget. */
  tokens: number;
  budget: number;
  messageCount: number;
  /** What the hooks added at the last compaction (leaves the view now unless added again). */
  pinned: readonly string[];
}

/** What `onBeforeCompaction` may answer. */
export interface BeforeCompactionResult {
  /**
   * Skip this compaction. Honoured while the view still fits the budget; over it, the compaction
   * runs anyway (`context:warn` `hook_veto_refused`): a veto never sends a view over budget.
   */
  veto?: boolean;
  /** Text(s) the view keeps after this compaction, as pinned content. */
  pinned?: string | readonly string[];
}

/** What `onAfterCompaction` may answer. */
export interface AfterCompactionResult {
  /** Text(s) to add back to the view after this compaction (e.g. the instruction files). */
  pinned?: string | readonly string[];
}

/** The hooks, as `ContextManagerOptions` takes them. */
export interface CompactionHooks {
  onBeforeCompaction?: (
    info: BeforeCompactionInfo,
  ) => BeforeCompactionResult | undefined | Promise<BeforeCompactionResult | undefined>;
  onAfterCompaction?: (
    receipt: CompactionReceipt,
  ) => AfterCompactionResult | undefined | Promise<AfterCompactionResult | undefined>;
}

/** Most characters one hook's texts may hold together, before any token bound. */
export const MAX_PINNED_CHARS = 200_000;

/**
 * The texts a hook's answer pins, or a reason it gives none: strings only, empty ones skipped,
 * within `MAX_PINNED_CHARS` in all.
 */
export function pinnedTexts(value: unknown): { texts: string[]; problem?: string } {
  if (value === undefined || value === null) return { texts: [] };
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((t) => typeof t !== 'string')) {
    return { texts: [], problem: 'pinned must be a string or an array of strings' };
  }
  const texts = (list as string[]).filter((t) => t.trim() !== '');
  let chars = 0;
  const kept: string[] = [];
  for (const text of texts) {
    if (chars + text.length > MAX_PINNED_CHARS) {
      return { texts: kept, problem: `pinned content past ${MAX_PINNED_CHARS} characters was refused` };
    }
    chars += text.length;
    kept.push(text);
  }
  return { texts: kept };
}

/** Marks where a pinned text was cut to fit. */
export const TRIMMED_MARK = '\n[… trimmed to fit the context budget]';

/** A trimmed text shorter than this many tokens says too little: it is refused instead. */
const MIN_TRIMMED_TOKENS = 16;

/**
 * The texts that fit in `room` tokens together (as `tokensOf` measures the block they make), in
 * order: a text that does not fit whole is cut at its end (marked) when enough of it fits, else
 * refused along with every text after it. Says what it trimmed or refused.
 */
export function fitPinned(
  texts: readonly string[],
  room: number,
  tokensOf: (texts: readonly string[]) => number,
): { texts: string[]; trimmed: number; refused: number } {
  const kept: string[] = [];
  for (let i = 0; i < texts.length; i++) {
    const text = texts[i] as string;
    if (tokensOf([...kept, text]) <= room) {
      kept.push(text);
      continue;
    }
    // The longest head of the text that fits, found by halving.
    let lo = 0;
    let hi = text.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (tokensOf([...kept, text.slice(0, mid) + TRIMMED_MARK]) <= room) lo = mid;
      else hi = mid - 1;
    }
    const head = text.slice(0, lo);
    const used = tokensOf([...kept, head + TRIMMED_MARK]) - (kept.length > 0 ? tokensOf(kept) : 0);
    if (lo > 0 && used >= MIN_TRIMMED_TOKENS) {
      kept.push(head + TRIMMED_MARK);
      return { texts: kept, trimmed: 1, refused: texts.length - i - 1 };
    }
    return { texts: kept, trimmed: 0, refused: texts.length - i };
  }
  return { texts: kept, trimmed: 0, refused: 0 };
}
