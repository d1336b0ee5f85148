import type { Atom } from '../messages/atoms.js';
import type { HistoryEntry, Message } from '../messages/types.js';
import type { TokenCounter } from '../tokens/types.js';
import { isDialogue } from '../tools/dialogue-memory.js';
import type { ContextTools } from '../tools/types.js';
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
    const read = summaryInput(input.entries, fresh);
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
function compactWindow(previousPlan: CompactionPlan | null, fresh: readonly Atom[]): Message[] {
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
function summaryInput(all: readonly HistoryEntry[], fresh: readonly Atom[]): HistoryEntry[] {
  let entries: HistoryEntry[] = [];
  for (const atom of fresh) for (const seq of atom.seqs) entries.push(all[seq]!);
  entries.sort((x, y) => x.seq - y.seq);
  // A dialogue's memory reads every statement (it is linear in them, and its turns are short).
  if (entries.length <= SUMMARY_INPUT_ENTRIES || isDialogue(entries)) return entries;
  const tail = entries.slice(-SUMMARY_INPUT_ENTRIES / 2);
  const from = tail[0]!.seq;
  const requests = entries.filter((e) => e.seq < from && e.message.role === 'user' && isStated(e.message));
  const room = SUMMARY_INPUT_ENTRIES - tail.length;
  entries = [
    ...(requests.length > room
      ? [
          ...requests.slice(0, OPENING_REQUESTS),
          ...requests.slice(requests.length - (room - OPENING_REQUESTS)),
        ]
      : requests),
    ...tail,
  ];
  return entries;
}
