/**
 * How `ContextManager` counts its conversation: ahead of a request, in slices that yield; what a
 * cold start left bounded, after it, in the background; the exact tokens of the stored history
 * (`getTokenCount`, `usage`). Kept apart so the manager reads as the composition it is; the
 * counts kept with the stored messages are `StoredCounts`' (src/manager-counts.ts).
 */

import { isStated } from './compaction/fact-candidates.js';
import { wireFormat } from './formats/registry.js';
import type { ManagerParts, ManagerSettings } from './manager-parts.js';
import { copyUsage } from './manager-parts.js';
import type { ResolvedRequest } from './measure/measurer.js';
import type { HistoryEntry } from './messages/types.js';
import type { Usage } from './options.js';
import { roleOf } from './wire/content.js';

/** The parts of the manager its counting reads. */
export type CountingParts = Pick<ManagerParts, 'measurer' | 'counts' | 'history' | 'conversation' | 'live'>;

export class ManagerCounting {
  /** How far `countAhead` counted the entries, for which counter and history generation. */
  private counted = { key: '', upTo: 0 };

  constructor(private readonly parts: CountingParts) {}

  /**
   * Before a view is built: the entries counted ahead (`countAhead`), then the counts taken from
   * the store for what a view can hold checked together: ones that add up to too little are
   * counted again before the view is planned (issue 31: a view is never over its budget because a
   * stored figure was wrong), and the right ones kept in their place.
   */
  async beforeView(r: ResolvedRequest): Promise<void> {
    const { measurer, conversation, counts } = this.parts;
    const counting = this.countAhead(r);
    if (counting) await counting;
    const mismatches = measurer.storedMismatches;
    await measurer.recheckStoredCounts(r.counter, conversation.entries, r.format, r.budget);
    if (measurer.storedMismatches !== mismatches) counts.keep(conversation.entries, 0, r.counter);
  }

  /**
   * Counts the entries the request's counter has not counted yet before the view is built, in
   * slices that yield (see `ContextMeasurer.countAhead`): the view then finds every count in the
   * memo. Only an optimization: the memo, keyed by message, keeps counts right whatever happens.
   * A count the store kept with a message under this counter is taken instead of counting, and
   * what had to be counted is kept in the store for next time (`StoredCounts`).
   */
  private countAhead(r: ResolvedRequest): void | Promise<void> {
    const { measurer, conversation, counts, history, live } = this.parts;
    // The entries the provider reads: a new server compaction starts them again (`LiveEntries`).
    const entries = conversation.entries;
    const key = `${r.counter.id}#${r.format}#${history.generation}#${live.compactionSeq ?? ''}`;
    const from = this.counted.key === key ? Math.min(this.counted.upTo, entries.length) : 0;
    counts.use(r.counter, r.format);
    const stored = counts.lookup(r.counter);
    const done = measurer.countAhead(r.counter, entries, from, r.format, stored, {
      budget: r.budget,
      exact: this.keptEverywhere(entries),
    });
    const finish = (upTo: number) => {
      this.counted = { key, upTo };
      counts.keep(entries, from, r.counter);
    };
    if (typeof done === 'number') return finish(done);
    return done.then(finish);
  }

  /**
   * Whether the entry at an index stays in every view whatever a plan does, so a cold start counts
   * it exactly even among the older messages it bounds (see `ContextMeasurer.countAhead`):
   * system and developer messages, critical and pinned ones, a server compaction item, the
   * entries up to the first user message (the task), and the latest request of the user.
   */
  private keptEverywhere(entries: readonly HistoryEntry[]): (index: number) => boolean {
    const wire = wireFormat(this.parts.conversation.format ?? this.parts.history.format ?? 'openai');
    let task = entries.findIndex((e) => roleOf(e.message) === 'user');
    if (task < 0) task = entries.length;
    let latest = entries.length - 1;
    while (
      latest > task &&
      !(roleOf(entries[latest]!.message) === 'user' && isStated(entries[latest]!.message))
    ) {
      latest--;
    }
    return (index) => {
      if (index <= task || index === latest) return true;
      const { message, metadata } = entries[index]!;
      const role = roleOf(message);
      if (role === 'system' || role === 'developer' || metadata.critical || metadata.pinned) return true;
      return wire.holdsCompaction?.(message) ?? false;
    };
  }

  /**
   * What a cold start left bounded (see `ContextMeasurer.countAhead`) is counted after the
   * request, in the background (never in the queue: no request waits for it), and the counts are
   * kept in the store as those of any request.
   */
  countBounded(r: ResolvedRequest): void {
    const { measurer, conversation, counts } = this.parts;
    if (!measurer.hasBounds(r.counter)) return;
    const entries = conversation.entries;
    void measurer
      .countBounded(r.counter, r.format)
      .then(() => {
        if (!measurer.hasBounds(r.counter)) counts.keep(entries, 0, r.counter);
      })
      .catch((err: unknown) =>
        measurer.warn('count_failed', `counting in the background failed: ${String(err)}`),
      );
  }

  /** `getTokenCount`: what a cold start left bounded counted first, in slices, then the exact sum. */
  async tokenCount(): Promise<number> {
    const { measurer, history } = this.parts;
    const counter = measurer.defaultCounter(history.format);
    if (measurer.hasBounds(counter)) await measurer.countBounded(counter, history.format ?? 'openai');
    return this.storedTokens();
  }

  /** Exact tokens of the stored history (never the bounds a cold start left, see `countAhead`). */
  private storedTokens(): number {
    const { measurer, history, counts } = this.parts;
    const format = history.format;
    const counter = measurer.defaultCounter(format);
    const messages = history.messages();
    counts.seed(counter, messages);
    let sum = 0;
    for (const m of messages) sum += measurer.countExact(counter, m, format ?? 'openai');
    return sum;
  }

  /** `usage()`: the last request's figures, or the whole history's against the configured budget. */
  usage(settings: ManagerSettings): Usage {
    const last = this.parts.conversation.lastUsage;
    if (last) return copyUsage(last);
    const budget = this.parts.measurer.defaultBudget();
    const tokens = this.storedTokens();
    return {
      budget,
      tokens,
      pct: tokens / budget,
      trigger: Math.floor(settings.compactThreshold * budget),
      target: Math.floor(settings.targetUsage * budget),
      messages: this.parts.history.entries.length,
    };
  }
}
