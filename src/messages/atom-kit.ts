/**
 * What every format's grouping shares: the atom and repair types, and the helpers a format's
 * `buildAtoms` uses to scan for a call's results (see `src/formats/<format>/atoms.ts`).
 */

import { freezeDeep } from './freeze.js';
import { toolEffectByName } from './tool-effect.js';
import type { HistoryEntry, Message } from './types.js';

/**
 * Atoms are the units a view keeps or drops whole. Building them also repairs, in the view only,
 * what real logs get wrong: calls whose results never came, results whose call is gone, and
 * messages a hook slipped between a call and its results. Stored entries are never touched; the
 * repaired messages are new frozen objects, and clean atoms reuse the stored objects as they are.
 */

/** Where one tool call's result sits inside an atom's rendered messages. */
export interface ToolResultSlot {
  /** Stable key `seq:index` of the call: the calling message's seq and the call's position in it. */
  key: string;
  callId: string;
  toolName: string;
  /** Seq of the stored message holding the result; null when a placeholder stands in for it. */
  resultSeq: number | null;
  /** Index of the rendered message holding the result within `Atom.messages`. */
  messageIndex: number;
  /**
   * Index of the result block in that message (Anthropic `tool_result`, or a server-tool or MCP
   * result inside an assistant message); -1 for an OpenAI `tool` message.
   */
  blockIndex: number;
}

/** A system message, a lone message, or a tool exchange (calls with all their results). */
export type AtomKind = 'system' | 'message' | 'exchange';

/** A unit a view keeps or drops whole, with the messages it puts in a view. */
export interface Atom {
  /** Seq of the first stored message the atom renders; unique and stable. */
  id: number;
  kind: AtomKind;
  /** Seqs of the stored messages rendered here, in view order. */
  seqs: number[];
  /** The messages this atom puts in a view, valid for the conversation's format. */
  messages: readonly Message[];
  /** Tool results of an exchange, in call order. */
  results: ToolResultSlot[];
  /** True when the view differs from the stored messages (placeholder, reorder, orphan left out). */
  repaired: boolean;
  /** An exchange at the tail still waiting for results; its placeholders go once they arrive. */
  open: boolean;
  /** Contains a user message with content of its own (not only tool results). */
  hasUserContent: boolean;
}

/** What the view did to keep a request valid, by seq, for receipts and warnings. */
export interface Repair {
  kind: 'missing_result' | 'orphan_result' | 'moved' | 'renamed_id' | 'empty_text';
  seq: number;
  detail: string;
}

/**
 * Text given in place of a result that never came (the run was interrupted). A tool that only
 * reads (by its name, `toolEffectByName`) may be called again; for any other the change may or
 * may not have been made, so the model is told to check before repeating it (the README\'s "What every view holds", 9).
 */
export function missingResultText(toolName: string): string {
  const head = `[contextkit: no result was recorded for this ${toolName} call (the run was interrupted before it returned).`;
  return toolEffectByName(toolName) === 'read'
    ? `${head} Call it again if you still need it.]`
    : `${head} It may or may not have taken effect: check before calling ${toolName} again.]`;
}

/**
 * The calls one message makes and the results that come for them, in the formats whose results
 * are blocks of one user message right after the calls (Anthropic, Bedrock Converse): `take` reads
 * each answering message, `results` writes the result blocks the view shows, and `atom` builds the
 * exchange. `clean` stays true while the stored messages are exactly what the view shows.
 */
export class BlockExchange<U extends { name: string }, R, B> {
  /** The calls still unanswered, with their index among `uses`. */
  readonly pending: Array<{ use: U; index: number }>;
  /** The results found, by the index of the call they answer. */
  readonly found = new Map<number, { result: R; seq: number }>();
  /** Seqs of the messages that answered. */
  readonly resultSeqs: number[] = [];
  /** What the answering messages said besides results. */
  readonly extraBlocks: B[] = [];
  clean = true;

  /**
   * @param entry the message making the calls
   * @param uses its calls, in order
   * @param viewIds the id each call carries in views
   */
  constructor(
    readonly entry: HistoryEntry,
    readonly uses: readonly U[],
    readonly viewIds: readonly string[],
  ) {
    this.pending = uses.map((use, index) => ({ use, index }));
  }

  /**
   * Reads `blocks`, a user message at `seq` answering the calls: each result answering a pending
   * call is found, one answering none is left out (an `orphan_result` repair), blank blocks go and
   * other blocks join `extraBlocks`. The message is not as the view shows it when it holds a
   * blank block, a result after other content, or an orphan.
   */
  take(
    blocks: readonly B[],
    seq: number,
    repairs: Repair[],
    rules: {
      /** The block's result, or undefined for other content. */
      resultOf(block: B): R | undefined;
      answers(use: U, result: R): boolean;
      isBlank(block: B): boolean;
      /** The repair detail for a result answering no pending call. */
      orphanDetail(result: R): string;
    },
  ): void {
    const { pending } = this;
    this.resultSeqs.push(seq);
    let seenOther = false;
    for (const block of blocks) {
      const result = rules.resultOf(block);
      if (result === undefined) {
        seenOther = true;
        if (rules.isBlank(block)) this.clean = false;
        else this.extraBlocks.push(block);
        continue;
      }
      if (seenOther) this.clean = false;
      const at = pending.findIndex((p) => rules.answers(p.use, result));
      if (at >= 0) {
        this.found.set(pending[at]!.index, { result, seq });
        pending.splice(at, 1);
      } else {
        this.clean = false;
        repairs.push({ kind: 'orphan_result', seq, detail: rules.orphanDetail(result) });
      }
    }
  }

  /**
   * Settles the wait for the results of the calls at entry `start` that stopped at `j` (see
   * {@link ResultScan.settle}); calls left unanswered, or messages that slipped in between, make
   * the exchange not clean.
   */
  settle(scan: ResultScan, grouping: Grouping, start: number, j: number): { stop: number; open: boolean } {
    const unanswered = this.pending.length > 0;
    const settled = scan.settle(grouping, start, j, unanswered);
    if (unanswered || scan.displaced.length > 0) this.clean = false;
    return settled;
  }

  /**
   * The result blocks the view's user message gives, and their slots: each result found (in the
   * order found, cleaned for the view) then a placeholder for each call left unanswered (in call
   * order, with a `missing_result` repair); `show` says how a format cleans a result and writes
   * one. A result shown otherwise than stored makes the exchange not clean.
   */
  results(
    repairs: Repair[],
    show: {
      /** The found result as the view shows it, and whether that differs from the stored one. */
      found(hit: { result: R; seq: number }, viewId: string): { block: B; changed: boolean };
      /** The placeholder answering `use` under `viewId`. */
      missing(use: U, viewId: string): B;
      /** The repair detail for a call left unanswered. */
      missingDetail(use: U): string;
    },
  ): { blocks: B[]; slots: ToolResultSlot[] } {
    const { uses, viewIds } = this;
    const seq = this.entry.seq;
    const blocks: B[] = [];
    const slots: ToolResultSlot[] = [];
    const slot = (index: number, resultSeq: number | null) =>
      slots.push({
        key: `${seq}:${index}`,
        callId: viewIds[index]!,
        toolName: uses[index]!.name,
        resultSeq,
        messageIndex: 1,
        blockIndex: blocks.length,
      });
    for (const [index, hit] of this.found) {
      const shown = show.found(hit, viewIds[index]!);
      if (shown.changed) this.clean = false;
      slot(index, hit.seq);
      blocks.push(shown.block);
    }
    for (const { use, index } of [...this.pending].sort((a, b) => a.index - b.index)) {
      repairs.push({ kind: 'missing_result', seq, detail: show.missingDetail(use) });
      slot(index, null);
      blocks.push(show.missing(use, viewIds[index]!));
    }
    return { blocks, slots };
  }

  /**
   * The exchange's atom: `callMessage`, then the stored answer itself (`answer`, the message right
   * after the calls) when the exchange is clean and answered by that one message, else a user
   * message of `resultBlocks` and then the other blocks the answers carried.
   */
  atom(input: {
    callMessage: Message;
    answer: Message | undefined;
    resultBlocks: readonly B[];
    slots: ToolResultSlot[];
    open: boolean;
  }): Atom {
    const { entry, resultSeqs, extraBlocks } = this;
    const clean = this.clean && input.callMessage === entry.message;
    const stored = clean && resultSeqs.length === 1 ? input.answer : undefined;
    const answer =
      stored ?? (freezeDeep({ role: 'user', content: [...input.resultBlocks, ...extraBlocks] }) as Message);
    return {
      id: entry.seq,
      kind: 'exchange',
      seqs: [entry.seq, ...resultSeqs],
      messages: [input.callMessage, answer],
      results: input.slots,
      repaired: !clean || resultSeqs.length !== 1,
      open: input.open,
      hasUserContent: extraBlocks.length > 0,
    };
  }
}

/** Atoms grouped from a start index, with the repairs made and where the open tail begins. */
export interface BuildResult {
  atoms: Atom[];
  repairs: Repair[];
  /** Index of the first entry of the open tail atom, or entries.length when all atoms are closed. */
  closedUntil: number;
}

/** A grouping pass under way: the entries grouped and what it has built so far. */
export interface Grouping extends BuildResult {
  readonly entries: readonly HistoryEntry[];
}

/**
 * Groups `entries` from `from` on, the loop every format's `buildAtoms` runs: `step` groups what
 * starts at index `i` into `grouping` (atoms, repairs, and `closedUntil` where results may still
 * come) and returns the index after it (`entries.length` to stop).
 */
export function groupEntries(
  entries: readonly HistoryEntry[],
  from: number,
  step: (i: number, grouping: Grouping) => number,
): BuildResult {
  const grouping: Grouping = { entries, atoms: [], repairs: [], closedUntil: entries.length };
  for (let i = from; i < entries.length; ) i = step(i, grouping);
  return { atoms: grouping.atoms, repairs: grouping.repairs, closedUntil: grouping.closedUntil };
}

/**
 * Where a scan for a call's results ends when assistant narration came while they were pending
 * (frameworks store "Let me check…" while tools run): the narration moves after the results when
 * one came after it; when none did, the exchange ends at the first narration and it stays put.
 * `narration` and `lastAnswer` are entry indexes (-1 for none); `j` is where the scan stopped.
 */
export function interimEnd(narration: number, lastAnswer: number, j: number): number {
  return narration >= 0 && lastAnswer < narration ? narration : j;
}

/**
 * The ids one message's calls carry in views: the stored ones, with a repeat inside the message
 * (the API wants them distinct) made unique. Results pair with repeated ids in order.
 */
export function distinctCallIds(ids: readonly string[], seq: number): string[] {
  const taken = new Set(ids);
  const seen = new Set<string>();
  return ids.map((id, index) => {
    let out = id;
    if (seen.has(out)) {
      out = `${id}_s${seq}_${index}`;
      for (let n = 2; taken.has(out); n++) out = `${id}_s${seq}_${index}_${n}`;
    }
    seen.add(out);
    taken.add(out);
    return out;
  });
}

/** The tool ids views already show: those of closed atoms, and those met while grouping the tail. */
export interface SeenIds {
  has(id: string): boolean;
  add(id: string): void;
}

/**
 * Closed ids read through, the tail's kept apart: no copy of the closed set per update. `earlier`,
 * when given, is told each id the closed set lacks (ids of atoms grouped by another process, which
 * this index never held: see `AtomIndex`'s `earlierIds`); it answers for them too.
 */
export function layeredIds(closed: ReadonlySet<string>, earlier?: (id: string) => boolean): SeenIds {
  const tail = new Set<string>();
  return {
    has: (id) => closed.has(id) || tail.has(id) || (earlier?.(id) ?? false),
    add: (id) => void tail.add(id),
  };
}

/** A lone message as an atom: `results` for what clearing may shorten inside it. */
export function singleAtom(
  entry: HistoryEntry,
  message: Message,
  results: ToolResultSlot[],
  hasUserContent: boolean,
): Atom {
  const role = message.role;
  return {
    id: entry.seq,
    kind: role === 'system' || role === 'developer' ? 'system' : 'message',
    seqs: [entry.seq],
    messages: [message],
    results,
    repaired: message !== entry.message,
    open: false,
    hasUserContent,
  };
}

/**
 * A scan for the results of the calls one message makes, over the messages after it: what came
 * between the calls and their results (`displaced`), the first assistant narration among them
 * and the last answer (entry indexes, -1 for none), and whether the wait ended.
 */
export class ResultScan {
  displaced: HistoryEntry[] = [];
  ended = false;
  narration = -1;
  lastAnswer = -1;

  /**
   * A message at `index` that answers no call while results are pending. New calls by the
   * model, or the user speaking after the model did, end the wait (returns false: stop there);
   * anything else slipped in and moves after the results (returns true).
   */
  pass(entry: HistoryEntry, index: number, byModel: boolean, makesCalls: boolean, byUser: boolean): boolean {
    if ((byModel && makesCalls) || (this.narration >= 0 && byUser)) {
      this.ended = true;
      return false;
    }
    if (byModel && this.narration < 0) this.narration = index;
    this.displaced.push(entry);
    return true;
  }

  /**
   * Settles a scan that stopped at `j` for the calls at entry `start`: where the exchange ends,
   * and whether it is open (results may still come: `unanswered`, the wait not ended, and the log
   * over from `tailFrom` on; and nothing but what slipped in waits after the calls; placeholders
   * go once they come). When results may still come, the grouping's `closedUntil` moves back to
   * `start`. Narration after the last answer stays put: `displaced` keeps only what comes before
   * the end.
   */
  settle(
    grouping: Grouping,
    start: number,
    j: number,
    unanswered: boolean,
    tailFrom = j,
  ): { stop: number; open: boolean } {
    const { entries } = grouping;
    const waiting = unanswered && !this.ended && tailFrom >= entries.length;
    const stop = interimEnd(this.narration, this.lastAnswer, j);
    if (stop < j) this.displaced = this.displaced.filter((d) => d.seq < entries[stop]!.seq);
    if (waiting && grouping.closedUntil === entries.length) grouping.closedUntil = start;
    return { stop, open: waiting && stop === j };
  }

  /**
   * Places each message moved after the results of the calls `what` (`call 4`, `tool_use 4`)
   * with `place`, after the repair that says so.
   */
  placeMoved(repairs: Repair[], what: string, place: (entry: HistoryEntry) => void): void {
    for (const moved of this.displaced) {
      repairs.push({
        kind: 'moved',
        seq: moved.seq,
        detail: `message between ${what} and its results moved after them`,
      });
      place(moved);
    }
  }
}
