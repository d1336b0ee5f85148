/**
 * Token counts that persist (issue 24 item 3), between the manager's measurer and its history:
 * new messages are counted as they are added (or set) with the counter the requests use, and the
 * count goes to the store with the message; a resumed history's counts are taken from the store
 * instead of counting again (the store leaves out a count whose message bytes changed, and a
 * count under another tokenizer's key is not this one's); what a request had to count anyway (a
 * history stored without counts, a changed model) is kept beside the entries for next time.
 */

import type { EntryCounter, History } from './history/history.js';
import type { ContextMeasurer } from './measure/measurer.js';
import type { HistoryEntry, Message, MessageFormat } from './messages/types.js';
import { mapInSlices } from './slices.js';
import type { EntryCounts } from './stores/types.js';
import { countKey } from './tokens/count-key.js';
import type { TokenCounter } from './tokens/types.js';

interface Target {
  counter: TokenCounter;
  format: MessageFormat;
}

export class StoredCounts implements EntryCounter {
  /** The last request's counter and format: what the next messages are counted with. */
  private target: Target | null = null;
  private pending = new Set<Promise<unknown>>();

  constructor(
    private readonly measurer: ContextMeasurer,
    private readonly history: () => History,
    private readonly warn: (code: string, message: string) => void,
  ) {}

  /** Counts new messages with the counter and format of the requests from now on. */
  use(counter: TokenCounter, format: MessageFormat): void {
    this.target = { counter, format };
  }

  private targetFor(format: MessageFormat | undefined): Target {
    if (this.target) return this.target;
    return { counter: this.measurer.defaultCounter(format), format: format ?? 'openai' };
  }

  one(message: Message, format: MessageFormat | undefined): EntryCounts {
    const { counter, format: f } = this.targetFor(format);
    return { [countKey(counter)]: this.measurer.countExact(counter, message, f) };
  }

  /** The counts of a whole history being stored (`setMessages`, an import), counted in slices. */
  async all(messages: readonly Message[], format: MessageFormat | undefined): Promise<EntryCounts[]> {
    const { counter, format: f } = this.targetFor(format);
    const done = this.measurer.countAhead(
      counter,
      messages.map((message) => ({ message })),
      0,
      f,
    );
    if (typeof done !== 'number') await done;
    const key = countKey(counter);
    return mapInSlices(messages, (message) => ({ [key]: this.measurer.countExact(counter, message, f) }));
  }

  /**
   * Puts the counts the store kept under `counter` of `messages` into the measurer's memo (where
   * it holds none), so what reads the memo alone (`getTokenCount`, `usage`) finds them.
   */
  seed(counter: TokenCounter, messages: readonly Message[]): void {
    const memo = this.measurer.memoFor(counter);
    const stored = this.lookup(counter);
    for (const message of messages) {
      if (memo.has(message)) continue;
      const n = stored(message);
      if (n !== undefined) memo.set(message, n);
    }
  }

  /**
   * The stored count of a message under `counter`, for `countAhead`, checked against what the
   * message can hold (`ContextMeasurer.checkedStoredCount`): one that disagrees is counted again,
   * and `keep` then writes the right count in its place.
   */
  lookup(counter: TokenCounter): (message: Message) => number | undefined {
    const key = countKey(counter);
    const history = this.history();
    const format = history.format ?? 'openai';
    return (message) => {
      const stored = history.countsOf(message)?.[key];
      return stored === undefined
        ? undefined
        : this.measurer.checkedStoredCount(counter, message, format, stored);
    };
  }

  /**
   * Keeps in the store the counts of `entries[from…]` that it holds none of under this counter
   * (counted by the request just made), without holding the request: the write goes on in the
   * background, in the generation the history holds now, and a failure only warns.
   */
  keep(entries: ReadonlyArray<Pick<HistoryEntry, 'message'>>, from: number, counter: TokenCounter): void {
    const history = this.history();
    if (!history.store) return;
    const key = countKey(counter);
    const memo = this.measurer.memoFor(counter);
    const counted: Array<{ message: object; counts: EntryCounts }> = [];
    for (let i = from; i < entries.length; i++) {
      const message = entries[i]!.message;
      if (!history.isStored(message)) continue;
      const n = memo.get(message);
      // None kept yet, or a wrong one counted again (`lookup`): the count made goes in its place.
      if (n !== undefined && history.countsOf(message)?.[key] !== n)
        counted.push({ message, counts: { [key]: n } });
    }
    if (counted.length === 0) return;
    const saving = history.saveCounts(counted).catch((err: unknown) => {
      this.warn('store_counts', `could not keep ${counted.length} token counts in the store: ${String(err)}`);
    });
    this.pending.add(saving);
    void saving.finally(() => this.pending.delete(saving));
  }

  /** Resolves when the counts being kept are written (or failed). */
  async settled(): Promise<void> {
    await Promise.all(this.pending);
  }
}
