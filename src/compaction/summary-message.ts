import { freezeDeep } from '../messages/freeze.js';
import type { Message, MessageFormat } from '../messages/types.js';
import { renderFactsBlock } from '../tools/facts-block.js';
import type { ExtractedFact, FactCategory } from '../tools/types.js';
import type { PlanSummary } from './plan.js';

/** Where the facts block goes: with the system prompt, before the first turn, or nowhere. */
export type FactsSite = 'system' | 'first-user' | 'none';

/** Tokens the summary's header line and framing take beyond its text. */
export const SUMMARY_FRAME_TOKENS = 24;

/** Below this, a summary could say nothing useful: the atoms are dropped instead (facts kept). */
export const MIN_SUMMARY_TOKENS = 64;

/** The summary a plan may grow to: a tenth of the budget, at most 4,000 tokens. */
export function summaryReserve(budget: number): number {
  return Math.min(4000, Math.floor(budget * 0.1));
}

/** The facts block may take this share of the budget, and at least `min(120, a quarter)`. */
export function factsCap(budget: number): number {
  return Math.max(Math.floor(budget * 0.08), Math.min(120, Math.floor(budget / 4)));
}

/**
 * The summary as a message standing where the summarized messages stood. OpenAI takes a system
 * message anywhere; Anthropic only at the top, so there it is a user message.
 */
export function summaryMessage(summary: PlanSummary, format: MessageFormat): Message {
  const content = `[contextkit: summary of earlier messages ${summary.fromSeq}–${summary.toSeq}, which are left out of this request]\n${summary.text}`;
  return freezeDeep(format === 'anthropic' ? { role: 'user', content } : { role: 'system', content });
}

/** The facts block as a message: a system message after the system prompt, or a user message. */
export function factsMessage(facts: readonly ExtractedFact[], site: FactsSite): Message {
  return freezeDeep({ role: site === 'first-user' ? 'user' : 'system', content: renderFactsBlock(facts) });
}

/** Which facts go first when the block must be capped: what an agent acts on. */
const PRIORITY: Readonly<Record<FactCategory, number>> = {
  identifier: 0,
  path: 0,
  url: 0,
  email: 0,
  amount: 1,
  date: 1,
  name: 1,
  phone: 1,
  address: 1,
  time: 2,
  number: 2,
  other: 2,
};

/**
 * Keeps the facts block within `maxTokens`, measured by `measure` (the tokens of the block as the
 * message it will be). Facts are never dropped while they fit; past the cap, identifiers, paths,
 * URLs and emails outrank amounts, dates and names, which outrank bare numbers, and among equals
 * the earliest (an account id stated once at the start) stays. The kept facts keep their order.
 */
export function capFacts(
  facts: readonly ExtractedFact[],
  maxTokens: number,
  measure: (facts: readonly ExtractedFact[]) => number,
): { facts: ExtractedFact[]; omitted: number } {
  if (facts.length === 0 || measure(facts) <= maxTokens) return { facts: [...facts], omitted: 0 };
  const ranked = facts
    .map((fact, index) => ({ fact, index }))
    .sort(
      (a, b) =>
        PRIORITY[a.fact.category] - PRIORITY[b.fact.category] || a.fact.seq - b.fact.seq || a.index - b.index,
    );
  const top = (k: number) =>
    ranked
      .slice(0, k)
      .sort((a, b) => a.index - b.index)
      .map((r) => r.fact);
  // The largest k whose top-ranked facts fit: the block only grows with k.
  let lo = 0;
  let hi = facts.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measure(top(mid)) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  const kept = lo > 0 && measure(top(lo)) <= maxTokens ? top(lo) : [];
  return { facts: kept, omitted: facts.length - kept.length };
}
