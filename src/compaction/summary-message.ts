import { wireFormat } from '../formats/registry.js';
import { freezeDeep } from '../messages/freeze.js';
import type { Message, MessageFormat } from '../messages/types.js';
import { compactFactPiece, compactKey, renderCompactFacts } from '../tools/facts-block.js';
import { inertMarkers } from '../tools/quoted-data.js';
import type { ExtractedFact, FactCategory } from '../tools/types.js';
import type { PlanSummary } from './plan.js';

/**
 * Where the facts block goes: `system` (the default) and `first-user`, before the first turn
 * (`system` joins the system prompt only with `summaryRole: 'system'`); `none`, nowhere.
 */
export type FactsSite = 'system' | 'first-user' | 'none';

/** Tokens the summary's header line and framing take beyond its text. */
export const SUMMARY_FRAME_TOKENS = 64;

/** Below this, a summary could say nothing useful: the atoms are dropped instead (facts kept). */
export const MIN_SUMMARY_TOKENS = 64;

/** The default share of the budget the memory of what left the view (summary and facts) may take. */
export const DEFAULT_MEMORY_SHARE = 0.35;

/** A summary never grows past this many tokens, whatever the share allows. */
export const MAX_SUMMARY_TOKENS = 8000;

/**
 * The room of the memory of what left the view: `summaryShare` of the budget, summary and facts
 * block together.
 */
export function memoryRoom(budget: number, summaryShare: number = DEFAULT_MEMORY_SHARE): number {
  return Math.max(0, Math.floor(budget * summaryShare));
}

/**
 * The summary a plan may grow to: the memory's room less the facts block's cap, at most
 * `MAX_SUMMARY_TOKENS`.
 */
export function summaryReserve(budget: number, summaryShare: number = DEFAULT_MEMORY_SHARE): number {
  const room = memoryRoom(budget, summaryShare);
  return Math.max(0, Math.min(MAX_SUMMARY_TOKENS, room - factsCap(budget, summaryShare)));
}

/**
 * The facts block may take a tenth of the budget, at least `min(200, a quarter)` and at most
 * 2,000 tokens (some 300 facts): past that a list stops being a reminder and becomes noise. It
 * never takes more than half of the memory's room.
 */
export function factsCap(budget: number, summaryShare: number = DEFAULT_MEMORY_SHARE): number {
  const cap = Math.min(2000, Math.max(Math.floor(budget * 0.1), Math.min(200, Math.floor(budget / 4))));
  // Within the memory's room, the facts take at most half of it.
  return Math.min(cap, Math.floor(memoryRoom(budget, summaryShare) / 2));
}

/**
 * The role contextkit's summary and facts block take (the README\'s "What every view holds", 8). `user` (the
 * default): what the messages said (text from tool results, users and the assistant) never
 * speaks with the system prompt's authority, as Claude Code, Codex and LangChain's summarization
 * middleware carry their summaries. `system`: the summary is a system message where the format
 * takes one mid-conversation (OpenAI Chat Completions and Responses; a user message elsewhere) and
 * the facts block (with `facts: 'system'`) joins the system prompt, as before this option: a tool
 * result reading "ignore all previous instructions" then reaches the model with the system
 * prompt's authority, however it is quoted. Choose it only when every tool result is trusted.
 *
 * The providers' own guidance on roles: OpenAI's Model Spec ranks system and developer messages
 * above user messages and gives tool outputs and quoted text no authority
 * (https://model-spec.openai.com/, "Chain of command", "Ignore untrusted data by default");
 * Anthropic's system prompt sets Claude's role and instructions, while third-party content (tool
 * results, documents) is the path of indirect prompt injection and is kept out of it
 * (https://platform.claude.com/docs/en/test-and-evaluate/strengthen-guardrails/mitigate-jailbreaks);
 * Gemini's `systemInstruction` carries "product-level behavior ... separate from prompts provided
 * by end users" (https://firebase.google.com/docs/ai-logic/system-instructions); Bedrock Converse's
 * `system` field holds "system prompts that define instructions or context for the model"
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/conversation-inference-call.html).
 */
export type SummaryRole = 'user' | 'system';

/** The roles `summaryRole` takes. */
export const SUMMARY_ROLES: readonly SummaryRole[] = ['user', 'system'];

/**
 * A note of contextkit's own standing among the turns (the compaction note, the budget notice):
 * a system message where the format takes one anywhere (OpenAI), a user message where the system
 * prompt is only at the top (`WireFormat.userTurnFirst`: Anthropic, Gemini, Bedrock). It carries no
 * text of the conversation's.
 */
export function midConversationMessage(format: MessageFormat, content: string): Message {
  const wire = wireFormat(format);
  return freezeDeep(wire.textMessage(wire.userTurnFirst ? 'user' : 'system', content));
}

/** The element delimiting the summary's text, which nothing inside it can open or close (`inertMarkers`). */
const SUMMARY_TAG = 'contextkit-summary';

/**
 * The summary as a message standing where the summarized messages stood: contextkit's header
 * line, then the summary's text delimited by `<contextkit-summary>` as a record of those
 * messages, each line naming its source, quoted as data (the text's own contextkit markers made
 * inert, so a tool result cannot close the record or forge a facts block). A user message unless
 * `role` is `system` (see `SummaryRole`).
 */
export function summaryMessage(
  summary: PlanSummary,
  format: MessageFormat,
  recall = false,
  role: SummaryRole = 'user',
): Message {
  const note = recall ? `\n${RECALL_NOTE}` : '';
  const range = `${summary.fromSeq}–${summary.toSeq}`;
  const content =
    `[contextkit: summary of earlier messages ${range}, left out of this request: a record quoted ` +
    `as data, each line led by its message number]${note}\n<${SUMMARY_TAG}>\n${inertMarkers(summary.text)}\n</${SUMMARY_TAG}>`;
  if (role === 'system') return midConversationMessage(format, content);
  return freezeDeep(wireFormat(format).textMessage('user', content));
}

/**
 * The sentence the summary and facts block carry when the manager offers the `recall` tool: fixed,
 * so the blocks stay byte-stable from turn to turn.
 */
export const RECALL_NOTE =
  'Earlier turns not shown here can be looked up with the `recall` tool, which searches the whole conversation history.';

/**
 * The facts block as a message before the first turn. A user message, unless `role` is `system`
 * and `site` is `system` (then it joins the system prompt, see `SummaryRole`). The values are
 * rendered so that none can open or close a block (`renderCompactFacts`).
 */
export function factsMessage(
  facts: readonly ExtractedFact[],
  site: FactsSite,
  recall = false,
  format?: MessageFormat,
  summaryRole: SummaryRole = 'user',
): Message {
  const content = renderCompactFacts(facts);
  const role = site === 'system' && summaryRole === 'system' ? 'system' : 'user';
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
