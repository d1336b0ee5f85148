import type { HistoryEntry, Message } from '../messages/types.js';
import type { TokenCounter } from '../tokens/types.js';
import { isDialogue } from '../tools/dialogue-memory.js';
import type { ContextTools } from '../tools/types.js';
import type { Atom } from '../wire/atoms.js';
import { isStated, OPENING_REQUESTS } from './fact-candidates.js';
import type { CompactionPlan, PlanSummary } from './plan.js';
import type { ProviderCompactor } from './provider-compaction.js';
import { SUMMARY_FRAME_TOKENS } from './summary-message.js';

/** A summary reads at most this many entries: the newest half of them, the rest the user's requests. */
const SUMMARY_INPUT_ENTRIES = 600;

/**
 * The summary of every summarized atom: the previous summary carried forward (recursive) plus the
 * atoms newly summarized. `memo` keeps texts written during one compaction, so a re-plan that
 * summarizes the same atoms does not write (or call a model) again.
 */
export async function summarizeAtoms(input: {
  entries: readonly HistoryEntry[];
  atoms: readonly Atom[];
  summarized: ReadonlySet<number>;
  /** Atoms the previous plan's summary already covers. */
  already: ReadonlySet<number>;
  previousPlan: CompactionPlan | null;
  maxTokens: number;
  /** Tokens the summary message takes beyond its text (default `SUMMARY_FRAME_TOKENS`). */
  frameTokens?: number;
  counter: TokenCounter;
  tools: ContextTools;
  memo: Map<string, string | Message[]>;
  /** The provider's compaction, tried before the summarizer (`providerCompaction`). */
  compact?: ProviderCompactor;
  warn?: (code: string, message: string) => void;
  /** What the summary should favour (the manager's `summaryInstructions`). */
  focus?: string;
  /** Lets the event loop run when the slice is spent (see src/slices.ts), before summarizing. */
  pause?: () => Promise<void> | undefined;
}): Promise<PlanSummary> {
  const { atoms, summarized, already, previousPlan } = input;
  const fresh: Atom[] = [];
  let at: number | undefined;
  let fromSeq = Number.POSITIVE_INFINITY;
  let toSeq = Number.NEGATIVE_INFINITY;
  // The memo's key names the fresh atoms by their count and a hash of their ids.
  let hash = 0x811c9dc5;
  for (const atom of atoms) {
    if (!summarized.has(atom.id)) continue;
    at ??= atom.id;
    for (const seq of atom.seqs) {
      if (seq < fromSeq) fromSeq = seq;
      if (seq > toSeq) toSeq = seq;
    }
    if (already.has(atom.id)) continue;
    fresh.push(atom);
    hash = Math.imul(hash ^ atom.id, 0x01000193) >>> 0;
  }
  if (at === undefined) throw new Error('contextkit: a summary was asked for no atoms');
  if (fresh.length === 0 && previousPlan?.summary) return { ...previousPlan.summary, at };
  if (input.compact) {
    // The provider compacts the window once per plan, whatever room the re-plans give it.
    const key = `compact|${fresh.length}:${hash}`;
    let items = input.memo.get(key);
    try {
      if (items === undefined) {
        items = await input.compact(compactWindow(previousPlan, fresh));
        input.memo.set(key, items);
      }
      const text = `[the provider compacted seqs ${fromSeq}–${toSeq}]`;
      return { text, at, fromSeq, toSeq, tools: 'provider', items: items as Message[] };
    } catch (error) {
      input.warn?.(
        'provider_compaction_fallback',
        `the provider's compaction failed (${error instanceof Error ? error.message : String(error)}); the ${input.tools.kind} summarizer ran instead`,
      );
    }
  }
  const key = `${previousPlan?.summary?.text.length ?? 0}|${fresh.length}:${hash}|${input.maxTokens}`;
  let text = input.memo.get(key) as string | undefined;
  if (text === undefined) {
    const read = await summaryInput(input.entries, fresh, input.pause);
    const pause = input.pause?.();
    if (pause) await pause;
    text = await input.tools.summarize(read, {
      maxTokens: Math.max(1, input.maxTokens - (input.frameTokens ?? SUMMARY_FRAME_TOKENS)),
      previousSummary: previousPlan?.summary?.text,
      countText: (t) => input.counter.countText(t),
      ...(input.focus ? { focus: input.focus } : {}),
    });
    input.memo.set(key, text);
  }
  return { text, at, fromSeq, toSeq, tools: input.tools.kind };
}

/**
 * What the provider compacts: what the previous summary stood for (the items its compaction
 * returned, or the summary text as a user message), then the fresh atoms as the view shows them.
 */
export function compactWindow(previousPlan: CompactionPlan | null, fresh: readonly Atom[]): Message[] {
  const previous = previousPlan?.summary;
  const window: Message[] = previous?.items
    ? [...previous.items]
    : previous
      ? [{ role: 'user', content: previous.text } as Message]
      : [];
  for (const atom of fresh) window.push(...atom.messages);
  return window;
}

/**
 * What a summary reads of the fresh atoms. One of a few thousand tokens cannot use a long
 * history's every sentence: it reads the user's opening requests, the newest stretch of
 * everything, and as many of the user's other requests, newest first, as make up
 * `SUMMARY_INPUT_ENTRIES`.
 */
async function summaryInput(
  all: readonly HistoryEntry[],
  fresh: readonly Atom[],
  pause: (() => Promise<void> | undefined) | undefined,
): Promise<HistoryEntry[]> {
  const step = async () => {
    const p = pause?.();
    if (p) await p;
  };
  await step();
  const entries: HistoryEntry[] = [];
  let ordered = true;
  for (const atom of fresh) {
    for (const seq of atom.seqs) {
      const entry = all[seq]!;
      if (ordered && entries.length > 0 && entry.seq < entries[entries.length - 1]!.seq) ordered = false;
      entries.push(entry);
    }
  }
  // Atoms hold their seqs in order but for a repaired one (a hook message moved after results).
  if (!ordered) entries.sort((x, y) => x.seq - y.seq);
  await step();
  // A dialogue's memory reads every statement (it is linear in them, and its turns are short).
  if (entries.length <= SUMMARY_INPUT_ENTRIES || isDialogue(entries)) return entries;
  const tail = entries.slice(-SUMMARY_INPUT_ENTRIES / 2);
  const end = entries.length - tail.length;
  const room = SUMMARY_INPUT_ENTRIES - tail.length;
  await step();
  return [...requestsAround(entries, end, room), ...tail];
}

/**
 * The user's requests (`isStated`) among `entries[0, end)` a summary reads: all of them when
 * they are at most `room`, else the first `OPENING_REQUESTS` and the newest `room -
 * OPENING_REQUESTS`. Found from both ends, without reading the requests in between.
 */
function requestsAround(entries: readonly HistoryEntry[], end: number, room: number): HistoryEntry[] {
  const isRequest = (e: HistoryEntry) => e.message.role === 'user' && isStated(e.message);
  const front: number[] = [];
  for (let i = 0; i < end && front.length < OPENING_REQUESTS; i++) if (isRequest(entries[i]!)) front.push(i);
  const stop = front.length > 0 ? front[front.length - 1]! : end;
  const back: number[] = [];
  const newest = Math.max(0, room - OPENING_REQUESTS);
  // Fewer than OPENING_REQUESTS requests in all: the front scan read them all.
  if (front.length === OPENING_REQUESTS) {
    for (let i = end - 1; i > stop && back.length < newest; i--) if (isRequest(entries[i]!)) back.push(i);
  }
  // Whether there are more requests than `room` or not, these are the ones read: all of them when
  // the two scans met, else the opening ones and the newest.
  return [...front, ...back.reverse()].map((i) => entries[i]!);
}
