/**
 * Which facts a plan weighs for its facts block: those of what the plan takes out of the view,
 * read within a budget (a plan over a long history does not read all of it), merged with the
 * facts kept so far; and the ranking that caps the block.
 */

import type { HistoryEntry, Message } from '../messages/types.js';
import { entrySegments } from '../tools/entry-segments.js';
import { mergeFacts } from '../tools/merge-facts.js';
import { OfflineFactExtractor } from '../tools/offline-facts.js';
import type { ContextTools, ExtractedFact } from '../tools/types.js';
import type { Atom } from '../wire/atoms.js';
import { hasNonToolResultContent, messageText } from '../wire/content.js';
import type { PlanDraft } from './draft.js';
import type { PlanEdits } from './plan.js';
import { capFacts } from './summary-message.js';

/** The user's first messages, always read for facts however long the history. */
export const OPENING_REQUESTS = 16;
/** Fact candidates are read until their lines would fill the block this many times over… */
const FACT_CANDIDATES_OVER_ROOM = 3;
/** …and there are at least this many, so a small block still gets a choice. */
const MIN_FACT_CANDIDATES = 60;
/** Characters of tool results a plan reads for facts, newest first (what was said is read first). */
const FACT_RESULT_CHARS = 256_000;
/** Entries handed to the extractor at a time, newest chunk first. */
const CHUNK = 64;

/** A message whose words are the user's or the agent's own: user text, assistant text and tool calls. */
export function isStated(message: Message): boolean {
  if (message.role === 'assistant' || message.role === 'model') return true;
  if (message.role !== 'user') return false;
  if (typeof message.content === 'string') return true;
  if (!Array.isArray(message.content)) return hasNonToolResultContent(message);
  // Anthropic's `tool_result` blocks, and Converse's (keyed `toolResult`), are not the user's words.
  return (message.content as Array<{ type?: string; toolResult?: unknown }>).some(
    (b) => b.type !== 'tool_result' && b.toolResult === undefined,
  );
}

/**
 * The seqs this plan takes out of the view, ascending: every message of an atom newly left out
 * or newly cut, and each newly cleared result.
 */
export function leavingSeqs(atoms: readonly Atom[], previous: PlanEdits, draft: PlanDraft): number[] {
  const cut = new Set<number>();
  for (const key of draft.truncated.keys()) {
    if (!previous.truncated.has(key)) cut.add(Number(key.split('@')[0]));
  }
  const seqs: number[] = [];
  let sorted = true;
  const push = (seq: number) => {
    if (seqs.length > 0 && seq <= seqs[seqs.length - 1]!) sorted = false;
    seqs.push(seq);
  };
  for (const atom of atoms) {
    if ((draft.dropped.has(atom.id) && !previous.dropped.has(atom.id)) || cut.has(atom.id)) {
      for (const seq of atom.seqs) push(seq);
      continue;
    }
    for (const slot of atom.results) {
      if (slot.resultSeq !== null && draft.cleared.has(slot.key) && !previous.cleared.has(slot.key)) {
        push(slot.resultSeq);
      }
    }
  }
  // Repaired atoms may hold their messages out of stored order (a hook message moved after results).
  return sorted ? seqs : [...new Set(seqs)].sort((a, b) => a - b);
}

/**
 * About what one fact adds to the facts block, in tokens, without counting it: ids, dates, paths
 * and numbers run nearer three characters a token than prose's four, plus the line's framing.
 */
function factLineEstimate(fact: ExtractedFact): number {
  return Math.ceil((fact.key.length + fact.value.length) / 3) + 3;
}

/** What reading facts out of leaving entries takes, whichever way the entries are chosen. */
export interface FactReading {
  entries: readonly HistoryEntry[];
  oldFacts: readonly ExtractedFact[];
  room: number;
  tools: ContextTools;
  offlineTools: boolean;
  /**
   * Facts a model already wrote for what is read (prepared ahead): merged with the offline
   * extractor's, in place of asking `tools` (which are then not called).
   */
  modelFacts?: (read: readonly HistoryEntry[]) => readonly ExtractedFact[];
  /** Lets the event loop run between chunks when the slice is spent (see src/slices.ts). */
  pause?: () => Promise<void> | undefined;
}

/**
 * The facts of what this plan takes out of the view (cleared results, dropped, summarized and
 * cut messages), merged with the facts kept so far. The opening requests are always read; then
 * what the user said, what the agent said and passed to tools, and tool results (up to
 * `FACT_RESULT_CHARS` of them), each newest first, until the candidates would fill the block
 * about three times over. The offline extractor decides how far to read (it keeps what it found
 * between chunks, so each entry is read once); tools of another kind then extract from what it
 * read, in one call.
 */
export async function factCandidates(
  input: FactReading & { atoms: readonly Atom[]; previous: PlanEdits; draft: PlanDraft },
): Promise<ExtractedFact[]> {
  const seqs = leavingSeqs(input.atoms, input.previous, input.draft);
  const pause = input.pause?.();
  if (pause) await pause;
  return factsOfSeqs({ ...input, seqs });
}

/** Items a loop handles between two looks at the slice's clock (`pause`). */
const PAUSE_EVERY = 512;

/**
 * The facts of the entries at `seqs` (ascending; indexes of `entries`), read as `factCandidates`
 * reads what leaves a view, merged with `oldFacts`.
 */
export async function factsOfSeqs(
  input: FactReading & { seqs: readonly number[] },
): Promise<ExtractedFact[]> {
  const { entries, oldFacts, room, seqs: leaving } = input;
  if (leaving.length === 0) return [...oldFacts];
  const said: HistoryEntry[] = [];
  const agent: HistoryEntry[] = [];
  const results: HistoryEntry[] = [];
  for (let i = 0; i < leaving.length; i++) {
    const entry = entries[leaving[i]!]!;
    if (!isStated(entry.message)) results.push(entry);
    else if (entry.message.role === 'user') said.push(entry);
    else agent.push(entry);
    if (i % PAUSE_EVERY === PAUSE_EVERY - 1) {
      const pause = input.pause?.();
      if (pause) await pause;
    }
  }
  const request = currentRequest(entries);
  const extractor = new OfflineFactExtractor({ previousFacts: oldFacts, ...(request ? { request } : {}) });
  let estimated = 0;
  let counted = 0;
  const enough = (): boolean => {
    const found = extractor.found;
    for (; counted < found.length; counted++) estimated += factLineEstimate(found[counted]!);
    return found.length >= MIN_FACT_CANDIDATES && estimated >= FACT_CANDIDATES_OVER_ROOM * room;
  };
  // The first requests of a conversation usually state the task and its ids: always read.
  const read = said.slice(0, OPENING_REQUESTS);
  extractor.add(read);
  // Tool results can be long logs and listings: past a reading budget the older ones are skipped.
  let resultChars = 0;
  for (const group of [said.slice(OPENING_REQUESTS), agent, results]) {
    for (let end = group.length; end > 0 && !enough(); end -= CHUNK) {
      if (group === results && resultChars >= FACT_RESULT_CHARS) break;
      const chunk = group.slice(Math.max(0, end - CHUNK), end);
      if (group === results) for (const e of chunk) resultChars += messageText(e.message).length;
      if (group === results) {
        // Each result is read for what its call asked: the call often stays in the view (a
        // cleared result) and so is not among what is read.
        for (const e of chunk) {
          const turn = callsBefore(entries, e.seq);
          extractor.knowCalls(turn.calls, turn.request ?? null).add([e]);
        }
      } else {
        extractor.add(chunk);
      }
      read.push(...chunk);
      const pause = input.pause?.();
      if (pause) await pause;
    }
  }
  if (input.modelFacts) {
    const found = extractor.facts();
    const more = input.modelFacts(read.sort((a, b) => a.seq - b.seq));
    return more.length > 0 ? mergeFacts(found, more) : found;
  }
  if (input.offlineTools) return extractor.facts();
  return input.tools.extractFacts(
    read.sort((a, b) => a.seq - b.seq),
    { previousFacts: oldFacts, ...(request ? { request } : {}) },
  );
}

/** Characters of the current request passed to the extractor. */
const REQUEST_CHARS = 4_000;

/** The text of the latest message the user wrote (not a message of tool results), if any. */
export function currentRequest(entries: readonly HistoryEntry[]): string | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const message = entries[i]!.message;
    if (message.role === 'user' && isStated(message)) {
      const text = messageText(message).slice(0, REQUEST_CHARS);
      return text.trim() === '' ? undefined : text;
    }
  }
  return undefined;
}

/** How far back from a result its calls, and its turn's request, are looked for. */
const CALL_LOOKBACK = 32;
const REQUEST_LOOKBACK = 512;

/**
 * The entries holding the calls a result at `seq` answers (the run of messages with calls right
 * before it, results of parallel calls between them skipped) and the text of the user's message
 * its turn answers: what the agent was asked when it made the call.
 */
function callsBefore(
  entries: readonly HistoryEntry[],
  seq: number,
): { calls: HistoryEntry[]; request: string | undefined } {
  const found: HistoryEntry[] = [];
  let searching = true;
  for (let i = seq - 1; i >= 0 && i >= seq - REQUEST_LOOKBACK; i--) {
    const entry = entries[i];
    if (entry === undefined) break;
    const message = entry.message;
    if (message.role === 'user' && isStated(message)) {
      const text = messageText(message).slice(0, REQUEST_CHARS);
      return { calls: found.reverse(), request: text.trim() === '' ? undefined : text };
    }
    if (searching && i >= seq - CALL_LOOKBACK && (isStated(message) || message.role === undefined)) {
      if (hasCall(entry)) found.push(entry);
      else if (found.length > 0) searching = false;
    }
  }
  return { calls: found.reverse(), request: undefined };
}

function hasCall(entry: HistoryEntry): boolean {
  return entrySegments([entry]).some((s) => s.kind === 'call');
}

/**
 * `capFacts` with the plan's ranking: what a result read in the current turn was read for (its
 * seq after `turnFrom`, the latest user message's: cleared only when the turn outgrew the budget;
 * its facts with relevance) goes first, so that a value read in this turn stays readable until it
 * ends; then facts the user stated or the agent passed to a tool (their source is a user or
 * assistant message, not a tool result), whichever plan found them, so the block does not trade
 * old facts for new ones of the same rank; then the rest.
 */
export function capFactsFor(
  facts: readonly ExtractedFact[],
  room: number,
  entries: readonly HistoryEntry[],
  measureBlock: (facts: readonly ExtractedFact[]) => number,
  countText: (text: string) => number,
  turnFrom = Number.POSITIVE_INFINITY,
): { facts: ExtractedFact[]; omitted: number } {
  const rank = (fact: ExtractedFact) => {
    const entry = entries[fact.seq];
    if (entry === undefined) return 2;
    const stated = isStated(entry.message);
    if (stated) return 1;
    // Of a result read in this turn, what its call was for (a line holding a term of the call's
    // arguments or the request: relevance) goes first; the rest of it ranks as any result's does
    // (ranked first whole, a long listing's every id pushed out the ids the user gave).
    return fact.seq > turnFrom && (fact.relevance ?? 0) > 0 ? 0 : 2;
  };
  return capFacts(facts, room, (f) => (f.length > 0 ? measureBlock(f) : 0), countText, rank);
}
