/**
 * The facts of what a provider's compaction covered. After Anthropic's server compaction the API
 * drops every block before the last `compaction` block (`LiveEntries`); after OpenAI's, the view
 * starts at the latest `compaction` item (`AtomIndex.compactedBefore`). The messages before it
 * leave the view without any plan of contextkit's taking them out, so the facts block, which
 * reads what a plan takes out, would never see their ids, paths and numbers: this reads them, once
 * each, as the stored history grows, and puts their facts in the view's facts block (merged with
 * the facts kept so far, within the block's cap and the room under the target).
 */

import type { Planner } from '../compaction/planner.js';
import type { ContextMeasurer, ResolvedRequest } from '../measure/measurer.js';
import type { MessageFormat } from '../messages/types.js';
import type { GuardConversation } from './guard-types.js';

/** The stored seqs a provider's compaction covered that were not read for facts yet, and where they end. */
function newlyCovered(c: GuardConversation, format: MessageFormat): { seqs: number[]; to: number } | null {
  const from = c.coveredFactsTo ?? 0;
  let to = c.compactionSeq?.() ?? 0;
  const atoms = c.view.atoms(c.entries, format);
  const before = atoms.compactedBefore;
  if (before > 0) to = Math.max(to, atoms.at(before).id);
  if (to <= from) return null;
  const all = c.history ?? c.entries;
  const seqs: number[] = [];
  for (let s = from; s < to; s++) {
    const role = all[s]?.message.role;
    if (role !== undefined && role !== 'system' && role !== 'developer') seqs.push(s);
  }
  return { seqs, to };
}

/**
 * Brings the facts of newly covered messages into the view's plan (see the module note); resolves
 * true when the plan changed. `room`: tokens the facts block may take.
 */
export async function showCoveredFacts(
  c: GuardConversation,
  r: ResolvedRequest,
  format: MessageFormat,
  planner: Planner,
  measurer: ContextMeasurer,
  room: number,
): Promise<boolean> {
  const covered = newlyCovered(c, format);
  if (!covered) return false;
  c.coveredFactsTo = covered.to;
  if (covered.seqs.length === 0) return false;
  const plan = c.view.plan;
  const next = await planner.coveredFacts({
    entries: c.history ?? c.entries,
    atoms: c.view.atoms(c.entries, format).visible(),
    seqs: covered.seqs,
    oldFacts: plan?.facts ?? c.carriedFacts ?? [],
    plan,
    budget: r.budget,
    room,
    format: r.format,
    counter: r.counter,
    count: (m) => measurer.count(r.counter, m, format),
  });
  c.carriedFacts = undefined;
  if (!next) return false;
  c.view.setPlan(next);
  return true;
}
