/**
 * The entries a provider still reads after its own compaction. Anthropic's server-side compaction
 * puts a `compaction` block at the start of an assistant reply, and on later requests "the API
 * automatically drops all message blocks prior to the compaction block"
 * (platform.claude.com/docs/en/build-with-claude/compaction, "How compaction works"). So what the
 * guard counts, plans and sends is the system prompt and everything from the message holding the
 * last compaction block on: counting what the server dropped would compact it a second time.
 *
 * The stored history stays whole: recall, facts and replay read `History.entries`, not this.
 */

import { wireFormat } from '../formats/registry.js';
import type { WireFormat } from '../formats/wire-format.js';
import type { HistoryEntry, Message, MessageFormat } from '../messages/types.js';

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
  /**
   * Seq of the compaction entry the slice last started at (undefined: none); null before the first
   * scan, which is no shift: a plan kept beside a loaded history was made on its slice.
   */
  private knownSeq: number | undefined | null = null;

  constructor(private readonly onShift: () => void) {}

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
    if (entries !== this.source || entries.length < this.seen) this.rescan();
    this.source = entries;
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
    if (moved) {
      // The system prompt goes as the top-level `system`, which no compaction drops.
      const system: HistoryEntry[] = [];
      for (const e of entries) {
        if (e.message.role !== 'system') break;
        system.push(e);
      }
      this.live = [...system, ...entries.slice(this.start)];
    } else {
      for (let i = from; i < entries.length; i++) this.live.push(entries[i]!);
    }
    return this.live;
  }
}
