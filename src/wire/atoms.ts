import { wireFormat } from '../formats/registry.js';
import type { WireFormat } from '../formats/wire-format.js';
import { type Atom, layeredIds, type Repair } from '../messages/atom-kit.js';
import type { HistoryEntry, Message, MessageFormat } from '../messages/types.js';
import { shownEntries } from './shown-entries.js';

/**
 * Atoms are the units a view keeps or drops whole. Building them also repairs, in the view only,
 * what real logs get wrong: calls whose results never came, results whose call is gone, and
 * messages a hook slipped between a call and its results. Stored entries are never touched; the
 * repaired messages are new frozen objects, and clean atoms reuse the stored objects as they are.
 * How a format groups is its `buildAtoms` (src/formats/<format>/atoms.ts).
 */

export {
  type Atom,
  type AtomKind,
  type BuildResult,
  distinctCallIds,
  interimEnd,
  layeredIds,
  missingResultText,
  type Repair,
  type SeenIds,
  type ToolResultSlot,
} from '../messages/atom-kit.js';

// ------------------------------------------------------------------------------------ incremental

/**
 * Groups a history into atoms. Incremental: `update` re-groups only from the first entry of the
 * open tail exchange, so a request over a long, unchanged history costs O(new messages).
 */
export class AtomIndex {
  readonly format: MessageFormat;
  /** The conversation's format, resolved once. */
  readonly wire: WireFormat<Message>;
  private closed: Atom[] = [];
  /** Tool ids the closed atoms show (Anthropic, Responses), so a reused id further on gets a new one. */
  private closedIds = new Set<string>();
  private closedRepairs: Repair[] = [];
  private tail: Atom[] = [];
  private tailRepairs: Repair[] = [];
  /** Index into the entries of the first entry not yet in `closed`. */
  private closedUntil = 0;
  private seen = 0;
  /** Index of the latest closed atom holding a server compaction item (0: none). */
  private closedCompaction = 0;
  /** The entries last grouped (they only grow), for the metadata of the atoms kept before a compaction item. */
  private entries: readonly HistoryEntry[] = [];
  /** The atoms before the latest compaction item that stay in view, for the `compactedBefore` they were found at. */
  private keptMemo: { before: number; kept: ReadonlySet<number> } | null = null;

  constructor(
    format: MessageFormat,
    /** Keep the first user message (the task) before a compaction item, as `protectTask` does. */
    private readonly protectTask = false,
    /**
     * For an index that groups only the entries after a point another process grouped up to (a
     * view served from its stored record, src/view/stored-view.ts): asked about each tool id the
     * closed atoms here lack, whether the atoms before that point showed it.
     */
    private readonly earlierIds?: (id: string) => boolean,
  ) {
    this.format = format;
    this.wire = wireFormat(format);
  }

  /**
   * Brings the atoms up to date with `entries` (which only ever grow; call `reset` otherwise), or
   * with their first `upTo` (grouping a long history a part at a time: as if they were appended).
   */
  update(entries: readonly HistoryEntry[], upTo = entries.length): void {
    if (upTo === this.seen) return;
    if (upTo < this.seen) throw new Error('AtomIndex.update: history shrank; call reset() first');
    this.entries = entries;
    const shown = shownEntries(entries, this.closedUntil, this.wire, upTo);
    const built = this.wire.buildAtoms(shown.entries, 0, layeredIds(this.closedIds, this.earlierIds));
    const closedUntil = built.closedUntil < shown.entries.length ? shown.at[built.closedUntil]! : upTo;
    // Atoms before the open tail can never change again: later entries cannot reach back past it.
    let split = built.atoms.length;
    if (closedUntil < upTo) {
      const firstOpenSeq = entries[closedUntil]!.seq;
      split = built.atoms.findIndex((a) => a.seqs.some((s) => s >= firstOpenSeq));
      if (split < 0) split = built.atoms.length;
    }
    for (let k = 0; k < split; k++) {
      const atom = built.atoms[k]!;
      if (holdsServerCompaction(atom, this.wire)) this.closedCompaction = this.closed.length;
      this.closed.push(atom);
      if (this.wire.uniqueToolIds) for (const slot of atom.results) this.closedIds.add(slot.callId);
    }
    this.tail = built.atoms.slice(split);
    const boundarySeq = closedUntil < upTo ? entries[closedUntil]!.seq : Number.POSITIVE_INFINITY;
    for (const r of built.repairs) {
      if (r.seq < boundarySeq) this.closedRepairs.push(r);
    }
    this.tailRepairs = built.repairs.filter((r) => r.seq >= boundarySeq);
    this.closedUntil = closedUntil;
    this.seen = upTo;
  }

  /** How many entries the atoms cover (`update` was last given). */
  get covered(): number {
    return this.seen;
  }

  /** Index into the entries of the first one the open tail holds (all of them when none is open). */
  get openFrom(): number {
    return this.closedUntil;
  }

  /** Forgets everything (after `setMessages` or `clear`). */
  reset(): void {
    this.closed = [];
    this.closedIds = new Set();
    this.closedRepairs = [];
    this.tail = [];
    this.tailRepairs = [];
    this.closedUntil = 0;
    this.seen = 0;
    this.closedCompaction = 0;
    this.entries = [];
    this.keptMemo = null;
  }

  /**
   * Index of the atom holding the latest server compaction item (0 when there is none). The
   * provider reads the conversation from there: the compaction item carries what came before it,
   * so a view leaves the atoms before it out, the system ones excepted (see `View.build`).
   */
  get compactedBefore(): number {
    let at = this.closedCompaction;
    for (let k = this.tail.length - 1; k >= 0; k--)
      if (holdsServerCompaction(this.tail[k]!, this.wire)) {
        at = this.closed.length + k;
        break;
      }
    // `/responses/compact` returns "all user messages, followed by a single compaction item": user
    // messages right before the compaction item are part of the window it stands for.
    while (at > 0 && isUserMessageAtom(this.at(at - 1))) at--;
    return at;
  }

  /**
   * Indexes of the atoms before the latest compaction item that every view still sends, in place:
   * what contextkit keeps whoever compacted (the README\'s "What every view holds", 3): system messages, `critical`
   * and `pinned` ones, the task (with `protectTask`) and the user's latest request before the item
   * (the turn the server compacted in). OpenAI's guide lets a client drop the items before the
   * latest compaction item, it does not require it
   * (developers.openai.com/api/docs/guides/compaction: "you can drop items that came before the
   * most recent compaction item"); a view keeps these and leaves the rest to the item. Decided once
   * per item, so every view until the next one sends the same.
   */
  keptBeforeCompaction(): ReadonlySet<number> {
    const before = this.compactedBefore;
    if (this.keptMemo?.before === before) return this.keptMemo.kept;
    const kept = new Set<number>();
    if (before > 0) {
      const bySeq = new Map<number, HistoryEntry>();
      const end = Math.max(...this.at(before - 1).seqs);
      for (const e of this.entries) {
        bySeq.set(e.seq, e);
        if (e.seq >= end) break;
      }
      let task = -1;
      let latest = -1;
      for (let k = 0; k < before; k++) {
        const atom = this.at(k);
        if (atom.kind === 'system') kept.add(k);
        if (!atom.hasUserContent) continue;
        if (task < 0) task = k;
        latest = k;
      }
      if (this.protectTask && task >= 0) kept.add(task);
      // The latest request before the item, unless one between the two is shown already (the user
      // messages `/responses/compact` returns beside the item).
      if (latest >= 0 && !this.at(before).hasUserContent) kept.add(latest);
      for (let k = 0; k < before; k++) {
        const atom = this.at(k);
        if (atom.open) continue;
        if (atom.seqs.some((s) => bySeq.get(s)?.metadata.critical || bySeq.get(s)?.metadata.pinned))
          kept.add(k);
      }
    }
    this.keptMemo = { before, kept };
    return kept;
  }

  /**
   * The atoms a view may send: from the latest server compaction on, and before it those every
   * view keeps (`keptBeforeCompaction`).
   */
  visible(): Atom[] {
    const from = this.compactedBefore;
    const all = this.all();
    if (from === 0) return all;
    const kept = this.keptBeforeCompaction();
    return all.filter((_atom, k) => k >= from || kept.has(k));
  }

  /** The tool ids the closed atoms show, where the format wants them unique (else none). */
  get closedToolIds(): ReadonlySet<string> {
    return this.closedIds;
  }

  /** Number of atoms that will never change again. */
  get closedCount(): number {
    return this.closed.length;
  }

  get length(): number {
    return this.closed.length + this.tail.length;
  }

  at(index: number): Atom {
    return index < this.closed.length ? this.closed[index]! : this.tail[index - this.closed.length]!;
  }

  all(): Atom[] {
    return this.tail.length === 0 ? this.closed.slice() : [...this.closed, ...this.tail];
  }

  repairs(): Repair[] {
    return [...this.closedRepairs, ...this.tailRepairs];
  }
}

function isUserMessageAtom(atom: Atom): boolean {
  return atom.kind === 'message' && atom.messages.length === 1 && atom.messages[0]!.role === 'user';
}

/** Whether an atom holds a provider's server compaction item (`isCompactionItem`: OpenAI Responses `compaction`). */
export function holdsServerCompaction(atom: Atom, wire: WireFormat<Message>): boolean {
  const isItem = wire.isCompactionItem;
  if (isItem === undefined) return false;
  for (const message of atom.messages) if (isItem(message)) return true;
  return false;
}

/** Groups a whole history into atoms at once (see `AtomIndex` for the incremental form). */
export function buildAtoms(
  entries: readonly HistoryEntry[],
  format: MessageFormat,
): { atoms: Atom[]; repairs: Repair[] } {
  const wire = wireFormat(format);
  const built = wire.buildAtoms(shownEntries(entries, 0, wire).entries, 0, layeredIds(new Set()));
  return { atoms: built.atoms, repairs: built.repairs };
}
