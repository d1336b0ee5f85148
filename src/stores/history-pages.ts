/**
 * A stored conversation read a page at a time (issue 32 item 2), for workers that export, index
 * or copy a history without holding it whole.
 */

import { InvalidArgumentError, StoreError } from '../errors.js';
import type { ConversationStore, StoredEntry } from './types.js';

/** Entries per page when no `pageSize` is given. */
const DEFAULT_PAGE_SIZE = 1_000;

/** Options of {@link historyPages}. */
export interface HistoryPagesOptions {
  /** Entries per page, at most (default 1,000); every page but the last holds exactly this many. */
  pageSize?: number;
  /** The seq to start at (default 0). */
  fromSeq?: number;
}

/**
 * The conversation's entries from `fromSeq` on, a page of at most `pageSize` at a time, in seq
 * order, each page read from the store as the loop asks for it (`store.read` with `fromSeq` and
 * `limit`), so only one page is held. Every page belongs to the generation the conversation had
 * when paging began (`store.epoch`, read then and again after each page): when another writer
 * replaced, popped or deleted it meanwhile, the next page rejects with a `StoreError` (code
 * `conflict`) rather than mix two histories; start again to read the new one. Entries appended
 * meanwhile are read when they land before the last page is read. A conversation without a
 * generation (never written, or written before generations existed) that takes one meanwhile is
 * a conflict too: a replace cannot be told from an append then. Bad options throw an
 * `InvalidArgumentError` at once.
 */
export function historyPages(
  store: ConversationStore,
  conversationId: string,
  options: HistoryPagesOptions = {},
): AsyncIterable<StoredEntry[]> {
  const { pageSize = DEFAULT_PAGE_SIZE, fromSeq = 0 } = options;
  if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
    throw new InvalidArgumentError(
      'options.pageSize',
      `must be a whole number of entries, 1 or more; got ${pageSize}`,
    );
  }
  if (!Number.isSafeInteger(fromSeq) || fromSeq < 0) {
    throw new InvalidArgumentError(
      'options.fromSeq',
      `must be a seq, a whole number 0 or more; got ${fromSeq}`,
    );
  }
  return pages(store, conversationId, pageSize, fromSeq);
}

async function* pages(
  store: ConversationStore,
  conversationId: string,
  pageSize: number,
  start: number,
): AsyncGenerator<StoredEntry[], void, undefined> {
  const epoch = await store.epoch(conversationId);
  let fromSeq = start;
  for (;;) {
    const page = await store.read(conversationId, { fromSeq, limit: pageSize });
    // A generation never comes back: the same one after the read means no replace came before it.
    const now = await store.epoch(conversationId);
    if (now !== epoch) {
      throw new StoreError(
        conversationId,
        `the conversation was replaced while paging (generation ${JSON.stringify(epoch)}, now ${JSON.stringify(now)}); read from the start again`,
        { code: 'conflict' },
      );
    }
    if (page.length === 0) return;
    yield page;
    if (page.length < pageSize) return;
    fromSeq = page[page.length - 1]!.seq + 1;
  }
}
