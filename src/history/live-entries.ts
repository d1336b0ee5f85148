/**
 * The entries a provider still reads after its own compaction. Anthropic's server-side compaction
 * puts a `compaction` block at the start of an assistant reply, and on later requests "the API
 * automatically drops all message blocks prior to the compaction block"
 * (platform.claude.com/docs/en/build-with-claude/compaction, "How compaction works"). So what the
 * guard counts, plans and sends is the system prompt and everything from the message holding the
 * last compaction block on: counting what the server dropped would compact it a second time.
 *
 * What contextkit promises to keep in every view (the task with `protectTask`, `critical` and
 * `pinned` messages, the user's request the compaction came in the middle of) is re-sent after the
 * block: the same page shows messages kept through a compaction placed after the compaction block
 * (its `pause_after_compaction` section: the block, then the preserved messages, then the
 * conversation goes on), and the API takes consecutive turns of one role as one turn (Messages API
 * reference, `messages`). They go, stored entries as they are, right after the block's reply and
 * the results of its tool calls (never between a call and its results), in conversation order,
 * decided once per block: every later view carries them at the same place, so the prefix the
 * provider caches stays the same from turn to turn.
 *
 * The stored history stays whole: recall, facts and replay read `History.entries`, not this.
 */

import { wireFormat } from '../formats/registry.js';
import type { WireFormat } from '../formats/wire-format.js';
import type { HistoryEntry, Message, MessageFormat } from '../messages/types.js';
import { buildAtoms } from '../wire/atoms.js';

/** What LiveEntries re-sends after a compaction block. */
export interface LiveEntriesOptions {
  /** Re-send the first user message (the task), as `protectTask` keeps it. */
  protectTask?: boolean;
}

/**
 * Keeps the live slice of one history, extended as entries are appended (O(new entries) a
 * request). `onShift` runs when a newly seen entry moves the start (a new server compaction): what
 * was derived from the old slice (the view's atoms and plan) no longer applies.
 */
export class LiveEntries {
  private source: readonly HistoryEntry[] | null = null;
  private seen = 0;
  /** Index in `source` of the entry with the last compaction block; -1: none. */
  private start = -1;
  private live: HistoryEntry[] = [];
  /** Entries before the block still to be re-sent after it (null: placed, or none). */
  private carry: HistoryEntry[] | null = null;
  /** Format the slice was scanned in. */
  private format: MessageFormat | undefined;
  /**
   * Seq of the compaction entry the slice last started at (undefined: none); null before the first
   * scan, which is no shift: a plan kept beside a loaded history was made on its slice.
   */
  private knownSeq: number | undefined | null = null;

  constructor(
    private readonly onShift: () => void,
    private readonly options: LiveEntriesOptions = {},
  ) {}

  /** Seq of the stored message holding the last compaction block, if any. */
  get compactionSeq(): number | undefined {
    return this.start < 0 ? undefined : this.source?.[this.start]?.seq;
  }

  /** Forgets what was scanned (the history was replaced, cleared or reloaded: derived state was reset too). */
  reset(): void {
    this.rescan();
    this.knownSeq = null;
  }

  private rescan(): void {
    this.source = null;
    this.seen = 0;
    this.start = -1;
    this.live = [];
    this.carry = null;
  }

  /** The entries the provider reads: `entries` itself while no compaction block was stored. */
  of(entries: readonly HistoryEntry[], format: MessageFormat | undefined): readonly HistoryEntry[] {
    const starts: WireFormat<Message>['isCompactionStart'] =
      format === undefined ? undefined : wireFormat(format).isCompactionStart;
    if (starts === undefined) {
      // No block yet (a conversation of plain strings shows its format with the first block).
      if (entries.length > 0) this.knownSeq = undefined;
      return entries;
    }
    if (entries !== this.source || entries.length < this.seen || format !== this.format) this.rescan();
    this.source = entries;
    this.format = format;
    let moved = false;
    for (let i = this.seen; i < entries.length; i++) {
      if (starts(entries[i]!.message)) {
        this.start = i;
        moved = true;
      }
    }
    const from = this.seen;
    this.seen = entries.length;
    const seq = this.compactionSeq;
    if (this.knownSeq !== null && seq !== this.knownSeq) this.onShift();
    this.knownSeq = seq;
    if (this.start < 0) return entries;
    const f = format as MessageFormat;
    let next = from;
    if (moved) {
      // The system prompt goes as the top-level `system`, which no compaction drops.
      const system: HistoryEntry[] = [];
      for (const e of entries) {
        if (e.message.role !== 'system') break;
        system.push(e);
      }
      this.live = [...system, entries[this.start]!];
      this.carry = carriedEntries(entries, this.start, f, this.options.protectTask === true);
      if (this.carry.length === 0) this.carry = null;
      next = this.start + 1;
    }
    for (let i = next; i < entries.length; i++) {
      this.placeCarry(entries, i, f);
      this.live.push(entries[i]!);
    }
    this.placeCarry(entries, entries.length, f);
    return this.live;
  }

  /**
   * Puts the carried entries in once the block's reply is whole (its tool calls answered, or none):
   * before `entries[upTo]`, with `entries[start..upTo)` already in the slice.
   */
  private placeCarry(entries: readonly HistoryEntry[], upTo: number, format: MessageFormat): void {
    if (this.carry === null) return;
    const block = buildAtoms(entries.slice(this.start, upTo), format).atoms[0];
    if (block === undefined || block.open) return;
    // The reply's atom ends before `upTo` (a result that never came is a repair, not a wait).
    const last = block.seqs.at(-1)!;
    if (upTo < entries.length && entries[upTo]!.seq <= last) return;
    this.live.push(...this.carry);
    this.carry = null;
  }
}

/**
 * The entries before the compaction block at `start` that every view keeps (see the module note):
 * whole atoms (a call with its results), in conversation order, never a system message (it goes
 * as `system`) nor another compaction block (the API would read from that one instead). Only the
 * few candidates are grouped, each in a window of its neighbours (a call and its results are
 * adjacent in a format with server compaction): a long history costs a scan of its metadata.
 */
function carriedEntries(
  entries: readonly HistoryEntry[],
  start: number,
  format: MessageFormat,
  protectTask: boolean,
): HistoryEntry[] {
  const wire = wireFormat(format);
  const atomAt = (i: number) => {
    const lo = Math.max(0, i - 1);
    const { atoms } = buildAtoms(entries.slice(lo, Math.min(start, i + 2)), format);
    return atoms.find((a) => a.seqs.includes(entries[i]!.seq));
  };
  const candidates: number[] = [];
  if (protectTask) {
    for (let i = 0; i < start; i++)
      if (entries[i]!.message.role === 'user' && atomAt(i)?.hasUserContent) {
        candidates.push(i);
        break;
      }
  }
  // The user's request the block came in the middle of: the reply goes on (tool calls) or holds
  // nothing but the block (`pause_after_compaction`). A reply that answered it leaves it out.
  const block = entries[start]!.message;
  const onlyBlock =
    Array.isArray(block.content) &&
    (block.content as unknown[]).every(
      (b) => wire.isCompactionStart?.({ role: 'assistant', content: [b] } as Message) === true,
    );
  if (onlyBlock || hasCalls(entries, start, format)) {
    for (let i = start - 1; i >= 0; i--)
      if (entries[i]!.message.role === 'user' && atomAt(i)?.hasUserContent) {
        candidates.push(i);
        break;
      }
  }
  for (let i = 0; i < start; i++) {
    const { metadata } = entries[i]!;
    if (metadata.critical || metadata.pinned) candidates.push(i);
  }
  const bySeq = new Map<number, HistoryEntry>();
  for (const i of candidates) {
    const atom = atomAt(i);
    if (atom === undefined || atom.kind === 'system' || atom.open) continue;
    const lo = Math.max(0, i - 1);
    const members = atom.seqs.flatMap((s) => entries.slice(lo, i + 2).filter((e) => e.seq === s));
    if (members.some((e) => wire.holdsCompaction?.(e.message) === true || e.message.role === 'system'))
      continue;
    for (const e of members) bySeq.set(e.seq, e);
  }
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

/** Whether the reply at `start` calls tools (its atom waits for or holds results). */
function hasCalls(entries: readonly HistoryEntry[], start: number, format: MessageFormat): boolean {
  const atom = buildAtoms(entries.slice(start, start + 1), format).atoms[0];
  return atom !== undefined && (atom.open || atom.results.length > 0);
}
