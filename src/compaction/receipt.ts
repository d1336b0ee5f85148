import type { CompactionReceipt } from '../events.js';
import type { WireFormat } from '../formats/wire-format.js';
import type { Message } from '../messages/types.js';
import type { Atom } from '../wire/atoms.js';
import { textParts } from './edit-atom.js';
import type { CompactionPlan, PlanEdits } from './plan.js';

/** The figures of a receipt that the planner does not decide. */
export type ReceiptBase = Omit<
  CompactionReceipt,
  | 'dropped'
  | 'summarized'
  | 'summary'
  | 'facts'
  | 'cleared'
  | 'truncated'
  | 'repairs'
  | 'atFloor'
  | 'noSummary'
>;

/**
 * What a plan did that its predecessor had not: messages dropped or summarized, results cleared,
 * texts cut (by seq), the summary and facts block now in the view, and whether the view stops at
 * the floor of what must be kept.
 */
export function planReceipt(input: {
  atoms: readonly Atom[];
  /** The format of the conversation the atoms are of (how its texts are found by key). */
  wire: WireFormat<Message>;
  previousPlan: CompactionPlan | null;
  previous: PlanEdits;
  plan: CompactionPlan;
  now: PlanEdits;
  factsOmitted: number;
  /** Why no summary was written, where the strategy writes one (said only when messages were dropped). */
  noSummary?: string | undefined;
  repairs: CompactionReceipt['repairs'];
  base: ReceiptBase;
}): CompactionReceipt {
  const { atoms, previous, plan, now, base } = input;
  const dropped: number[] = [];
  const summarized: number[] = [];
  const cleared: CompactionReceipt['cleared'] = [];
  const truncated: CompactionReceipt['truncated'] = [];
  const slots = new Map<string, { seq: number; tool: string }>();
  for (const atom of atoms) {
    if (now.dropped.has(atom.id) && !previous.dropped.has(atom.id)) {
      (now.summarized?.has(atom.id) ? summarized : dropped).push(...atom.seqs);
    }
    for (const slot of atom.results) {
      if (slot.resultSeq !== null && now.cleared.has(slot.key) && !previous.cleared.has(slot.key)) {
        slots.set(slot.key, { seq: slot.resultSeq, tool: slot.toolName });
      }
    }
  }
  for (const [key, tokens] of plan.cleared) {
    if (previous.cleared.has(key)) continue;
    const slot = slots.get(key);
    cleared.push({
      seq: slot?.seq ?? -1,
      callSeq: Number(key.split(':')[0]),
      tool: slot?.tool ?? 'tool',
      tokens,
    });
  }
  // Cut now, or cut further than before (a smaller budget).
  const fresh = plan.truncated.filter(([key, keep]) => {
    const before = previous.truncated.get(key);
    return before === undefined || before.head !== keep.head || before.tail !== keep.tail;
  });
  const byId = fresh.length > 0 ? new Map(atoms.map((a) => [a.id, a])) : undefined;
  // The texts a plan may cut, by key, of each atom it cut (read as the plan found them).
  const texts = new Map<number, Map<string, string>>();
  for (const [key, keep] of fresh) {
    const [idPart, rest] = key.split('@') as [string, string];
    const atom = byId?.get(Number(idPart));
    const [mi] = rest.split('.').map(Number) as [number];
    let byKey = atom ? texts.get(atom.id) : undefined;
    if (atom && !byKey) {
      byKey = new Map(textParts(atom, input.wire).map((p) => [p.key, p.text]));
      texts.set(atom.id, byKey);
    }
    const length = byKey?.get(key)?.length ?? 0;
    truncated.push({
      seq: atom?.seqs[mi] ?? Number(idPart),
      removedChars: Math.max(0, length - keep.head - keep.tail),
    });
  }
  dropped.sort((a, b) => a - b);
  summarized.sort((a, b) => a - b);
  const oldFacts = new Set((input.previousPlan?.facts ?? []).map((f) => `${f.category}\u0000${f.value}`));
  const facts = plan.facts ?? [];
  return {
    ...base,
    dropped,
    summarized,
    ...(input.noSummary !== undefined && dropped.length > 0 && summarized.length === 0
      ? { noSummary: input.noSummary }
      : {}),
    ...(plan.summary && summarized.length > 0
      ? {
          summary: {
            fromSeq: plan.summary.fromSeq,
            toSeq: plan.summary.toSeq,
            tools: plan.summary.tools,
            chars: plan.summary.text.length,
          },
        }
      : {}),
    facts: {
      kept: facts.length,
      added: facts.filter((f) => !oldFacts.has(`${f.category}\u0000${f.value}`)).length,
      omitted: input.factsOmitted,
      values: facts.map((f) => f.value),
    },
    cleared,
    truncated,
    repairs: input.repairs,
    // Above the target by more than the facts block's slack: what must be kept does not fit in it.
    atFloor: plan.tokens > base.target + Math.floor((base.trigger - base.target) / 4),
  };
}
