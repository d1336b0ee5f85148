import type { Message } from '../messages/types.js';
import { heldSum, withSum } from '../record-sum.js';
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

/**
 * A plan as kept in a store's metadata (plain JSON). The atom ids it drops and summarizes, which
 * grow with the history (tens of thousands in a long one), are kept as a bitmap over seqs (base64:
 * a bit per seq, set for an id listed) once there are more than a few: an eighth of a byte per seq
 * where a JSON list takes about six bytes per id, so a worker reading the plan to serve a turn reads
 * kilobytes, not megabytes. Last comes `sum`, the digest of the rest (src/record-sum.ts):
 * a plan changed or damaged where it is kept is not applied.
 */
export function encodePlan(plan: CompactionPlan): Record<string, unknown> & { sum: string } {
  const encoded: Record<string, unknown> = { ...plan, dropped: encodeIds(plan.dropped) };
  if (plan.summarized) encoded.summarized = encodeIds(plan.summarized);
  return withSum(encoded);
}

/** The digest `plan` is kept under (its `sum` as `encodePlan` keeps it), null for none. */
export function planSum(plan: CompactionPlan | null): string | null {
  return plan ? encodePlan(plan).sum : null;
}

/**
 * The digest of a plan as stored (its `sum`, which records name it by), null for none; undefined
 * when its sum does not hold (damaged, changed, or kept by a version that wrote none), which names
 * no record's plan.
 */
export function storedPlanSum(stored: unknown): string | null | undefined {
  if (stored === undefined || stored === null) return null;
  return heldSum(stored);
}

/**
 * A plan read back from a store, or null when what was stored is not one this version can apply:
 * not of this shape, or its `sum` does not hold (damaged, changed by hand, or kept by a version
 * that wrote none). `sumChecked`: the caller found the sum to hold already (`storedPlanSum` of
 * the same value). Its `dropped` and `summarized` ids are decoded from their bitmaps when first read:
 * a worker serving a turn from a stored view record (which covers the plan) never reads them, and
 * at 100k messages they are over 100,000 ids.
 */
export function decodePlan(value: unknown, options: { sumChecked?: boolean } = {}): CompactionPlan | null {
  const p = value as Record<string, unknown> | undefined;
  if (p?.v !== 1 || !Array.isArray(p.cleared) || !Array.isArray(p.truncated)) return null;
  if (!idsReadable(p.dropped) || (p.summarized !== undefined && !idsReadable(p.summarized))) return null;
  if (!options.sumChecked && heldSum(p) === undefined) return null;
  const { sum: _, ...kept } = p;
  const plan = kept as unknown as CompactionPlan;
  decodedWhenRead(plan, 'dropped', p.dropped);
  if (p.summarized !== undefined) decodedWhenRead(plan, 'summarized', p.summarized);
  return plan;
}

/** Whether `decodeIds` reads `value` (a list of integers, or a bitmap: any base64 text decodes). */
function idsReadable(value: unknown): boolean {
  if (Array.isArray(value)) return value.every((id) => Number.isSafeInteger(id));
  return typeof (value as { bits?: unknown } | null)?.bits === 'string';
}

/**
 * Makes `plan[key]` the ids `stored` holds, decoded on the first read (an enumerable property, as
 * JSON, spreads and clones see it); a value set on it replaces them.
 */
function decodedWhenRead(plan: CompactionPlan, key: 'dropped' | 'summarized', stored: unknown): void {
  let ids: number[] | undefined;
  if (key === 'dropped') {
    // A bitmap holds no id where every byte is 0 (base64 "A"s, with its padding).
    undecodedDrops.set(plan, () =>
      ids
        ? ids.length > 0
        : Array.isArray(stored)
          ? stored.length > 0
          : /[^A=]/.test((stored as { bits: string }).bits),
    );
  }
  Object.defineProperty(plan, key, {
    enumerable: true,
    configurable: true,
    get: () => {
      ids ??= decodeIds(stored)!;
      return ids;
    },
    set: (value: number[]) => {
      ids = value;
    },
  });
}

/** Whether the ids of each plan decoded from a store (`decodedWhenRead`) are any, told without decoding them. */
const undecodedDrops = new WeakMap<CompactionPlan, () => boolean>();

/**
 * Whether `plan` leaves any atom out of the view, without decoding a stored plan's `dropped` ids
 * (a view's start notice asks it on every request; at 100k messages they are over 100,000 ids).
 */
export function dropsAny(plan: CompactionPlan): boolean {
  return undecodedDrops.get(plan)?.() ?? plan.dropped.length > 0;
}

/** Lists up to this long stay JSON lists (a short plan reads as it always did). */
const LISTED_IDS = 64;

/** Ascending ids as kept: a short list as it is, a longer one as `{ bits }` (see `encodePlan`). */
function encodeIds(ids: readonly number[]): number[] | { bits: string } {
  const ascending = ids.every(
    (id, i) => Number.isSafeInteger(id) && id >= 0 && (i === 0 || id > ids[i - 1]!),
  );
  if (ids.length <= LISTED_IDS || !ascending) return ids.slice();
  const bytes = new Uint8Array((ids.at(-1)! >> 3) + 1);
  for (const id of ids) bytes[id >> 3]! |= 1 << (id & 7);
  return { bits: Buffer.from(bytes).toString('base64') };
}

/** How many bits each byte value has set. */
const BITS_SET = Uint8Array.from({ length: 256 }, (_, byte) => {
  let n = 0;
  for (let b = byte; b !== 0; b &= b - 1) n++;
  return n;
});

/** Ids as `encodeIds` keeps them, ascending; null when what is stored is neither form. */
function decodeIds(value: unknown): number[] | null {
  if (Array.isArray(value)) return value.every((id) => Number.isSafeInteger(id)) ? (value as number[]) : null;
  const bits = (value as { bits?: unknown } | null)?.bits;
  if (typeof bits !== 'string') return null;
  const bytes = Buffer.from(bits, 'base64');
  let n = 0;
  for (let at = 0; at < bytes.length; at++) n += BITS_SET[bytes[at]!]!;
  // Sized once (a list grown id by id is copied again and again).
  const ids = new Array<number>(n);
  let k = 0;
  for (let at = 0; at < bytes.length; at++) {
    let byte = bytes[at]!;
    while (byte !== 0) {
      const lowest = byte & -byte;
      ids[k++] = at * 8 + 31 - Math.clz32(lowest);
      byte ^= lowest;
    }
  }
  return ids;
}
