import { wireFormat } from '../formats/registry.js';
import { freezeDeep } from '../messages/freeze.js';
import type { Message, MessageFormat } from '../messages/types.js';
import { compactFactPiece, compactKey, renderCompactFacts } from '../tools/facts-block.js';
import type { ExtractedFact, FactCategory } from '../tools/types.js';
import type { PlanSummary } from './plan.js';

/** Where the facts block goes: with the system prompt, before the first turn, or nowhere. */
export type FactsSite = 'system' | 'first-user' | 'none';

/** Tokens the summary's header line and framing take beyond its text. */
export const SUMMARY_FRAME_TOKENS = 24;

/** Below this, a summary could say nothing useful: the atoms are dropped instead (facts kept). */
export const MIN_SUMMARY_TOKENS = 64;

/** The default share of the budget the memory of what left the view (summary and facts) may take. */
export const DEFAULT_MEMORY_SHARE = 0.35;

/** A summary never grows past this many tokens, whatever the share allows. */
export const MAX_SUMMARY_TOKENS = 8000;

/**
 * The room of the memory of what left the view: `memoryShare` of the budget, summary and facts
 * block together.
 */
export function memoryRoom(budget: number, memoryShare: number = DEFAULT_MEMORY_SHARE): number {
  return Math.max(0, Math.floor(budget * memoryShare));
}

/**
 * The summary a plan may grow to: the memory's room less the facts block's cap, at most
 * `MAX_SUMMARY_TOKENS`.
 */
export function summaryReserve(budget: number, memoryShare: number = DEFAULT_MEMORY_SHARE): number {
  const room = memoryRoom(budget, memoryShare);
  return Math.max(0, Math.min(MAX_SUMMARY_TOKENS, room - factsCap(budget, memoryShare)));
}

/**
 * The facts block may take a tenth of the budget, at least `min(200, a quarter)` and at most
 * 2,000 tokens (some 300 facts): past that a list stops being a reminder and becomes noise. It
 * never takes more than half of the memory's room.
 */
export function factsCap(budget: number, memoryShare: number = DEFAULT_MEMORY_SHARE): number {
  const cap = Math.min(2000, Math.max(Math.floor(budget * 0.1), Math.min(200, Math.floor(budget / 4))));
  // Within the memory's room, the facts take at most half of it.
  return Math.min(cap, Math.floor(memoryRoom(budget, memoryShare) / 2));
}

/**
 * A note standing among the turns (a summary, the compaction note): a system message where the
 * format takes one anywhere (OpenAI), a user message where the system prompt is only at the top
 * (`WireFormat.userTurnFirst`: Anthropic, Gemini).
 */
export function midConversationMessage(format: MessageFormat, content: string): Message {
  const wire = wireFormat(format);
  return freezeDeep(wire.textMessage(wire.userTurnFirst ? 'user' : 'system', content));
}

/** The summary as a message standing where the summarized messages stood (see `midConversationMessage`). */
export function summaryMessage(summary: PlanSummary, format: MessageFormat, recall = false): Message {
  const note = recall ? `\n${RECALL_NOTE}` : '';
  const content = `[contextkit: summary of earlier messages ${summary.fromSeq}–${summary.toSeq}, which are left out of this request]${note}\n${summary.text}`;
  return midConversationMessage(format, content);
}

/**
 * The sentence the summary and facts block carry when the manager offers the `recall` tool: fixed,
 * so the blocks stay byte-stable from turn to turn.
 */
export const RECALL_NOTE =
  'Earlier turns not shown here can be looked up with the `recall` tool, which searches the whole conversation history.';

/** The facts block as a message: a system message after the system prompt, or a user message. */
export function factsMessage(
  facts: readonly ExtractedFact[],
  site: FactsSite,
  recall = false,
  format?: MessageFormat,
): Message {
  const content = renderCompactFacts(facts);
  const role = site === 'first-user' ? 'user' : 'system';
  const text = recall ? `${content}\n${RECALL_NOTE}` : content;
  return freezeDeep(
    format === undefined ? { role, content: text } : wireFormat(format).textMessage(role, text),
  );
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

/** `capFacts` stops looking for facts that still fit after this many in a row did not. */
const MAX_CAP_MISSES = 64;

/**
 * Keeps the facts block within `maxTokens`, as measured by `measure` (the block as the message it
 * will be). Past the cap, facts the user stated or the agent passed to a tool (`stated`) go first;
 * then the facts of results that answer what they were read for (`relevance`, highest first);
 * then identifiers, paths, URLs and emails, then amounts, dates and names, then bare numbers; among
 * equals the earliest stays. Kept facts keep their order. Line costs are added up cheaply and the
 * result checked with `measure`, so a cap costs a few counts of the block, not one per fact; the
 * search for facts that still fit ends after `MAX_CAP_MISSES` misses in a row.
 */
export function capFacts(
  facts: readonly ExtractedFact[],
  maxTokens: number,
  measure: (facts: readonly ExtractedFact[]) => number,
  countText: (text: string) => number,
  /** True for a fact that goes first; or a rank, lowest first (a boolean is 0 for true, 1 for false). */
  stated: (fact: ExtractedFact) => boolean | number = () => false,
): { facts: ExtractedFact[]; omitted: number } {
  if (facts.length === 0) return { facts: [], omitted: 0 };
  if (maxTokens <= 0) return { facts: [], omitted: facts.length };
  const rankOf = (fact: ExtractedFact) => {
    const r = stated(fact);
    return typeof r === 'number' ? r : r ? 0 : 1;
  };
  const ranked = facts
    .map((fact, index) => ({ fact, index, first: rankOf(fact) }))
    .sort(
      (a, b) =>
        a.first - b.first ||
        (b.fact.relevance ?? 0) - (a.fact.relevance ?? 0) ||
        PRIORITY[a.fact.category] - PRIORITY[b.fact.category] ||
        a.fact.seq - b.fact.seq ||
        a.index - b.index,
    );
  const empty = measure([]);
  const sources = new Set<number>();
  const sourceKeys = new Set<string>();
  let used = empty;
  const chosen: Array<(typeof ranked)[number] & { cost: number }> = [];
  let misses = 0;
  for (const r of ranked) {
    // Every line costs at least two tokens; and once many in a row have not fit, the block is as
    // good as full: looking on would count every remaining fact to win a token or two.
    if (maxTokens - used < 2 || misses >= MAX_CAP_MISSES) break;
    const source = r.fact.seq >= 0 ? r.fact.seq : -1;
    const sourceKey = `${source}\u0000${compactKey(r.fact.key)}`;
    const seen = sourceKeys.has(sourceKey) ? 'key' : sources.has(source) ? 'source' : 'none';
    const cost = countText(compactFactPiece(r.fact, seen));
    if (used + cost > maxTokens) {
      misses += 1;
      continue;
    }
    misses = 0;
    used += cost;
    sources.add(source);
    sourceKeys.add(sourceKey);
    chosen.push({ ...r, cost });
  }
  const inOrder = () =>
    chosen
      .slice()
      .sort((a, b) => a.index - b.index)
      .map((r) => r.fact);
  let kept = inOrder();
  // The sum of line costs can be off by a token here and there: trim the lowest ranked, as many
  // as cover the excess, and measure again, until it fits.
  let measured = kept.length > 0 ? measure(kept) : 0;
  while (kept.length > 0 && measured > maxTokens) {
    let freed = 0;
    while (chosen.length > 0 && freed < measured - maxTokens) freed += chosen.pop()!.cost;
    kept = inOrder();
    measured = kept.length > 0 ? measure(kept) : 0;
  }
  if (kept.length === 0 && empty > maxTokens) return { facts: [], omitted: facts.length };
  return { facts: kept, omitted: facts.length - kept.length };
}

/**
 * The block the compaction hooks added (`pinned` of a plan): a system message after the facts
 * block (an Anthropic request takes it with the system prompt), the texts in the order given.
 */
export function pinnedMessage(texts: readonly string[], format?: MessageFormat): Message {
  const content = `[contextkit: kept after compaction]\n${texts.join('\n\n')}`;
  return freezeDeep(
    format === undefined ? { role: 'system', content } : wireFormat(format).textMessage('system', content),
  );
}
