/**
 * Listing for drivers that hold every id in hand (memory, file): one place decides the order,
 * the prefix match and what a cursor means, so their pages agree with the database drivers.
 */

import { StoreError } from '../errors.js';
import { compareIds } from './keys.js';
import type { ConversationPage } from './types.js';

/** `list` options, checked. */
export interface ListOptions {
  prefix: string;
  cursor: string | undefined;
  limit: number;
}

/**
 * Checks `list` options. A cursor is the last id of the previous page, so a page never
 * repeats or skips an id even when conversations are added or deleted between pages.
 */
export function listOptions(
  options: { prefix?: string; cursor?: string; limit?: number } | undefined,
): ListOptions {
  const prefix = options?.prefix ?? '';
  const cursor = options?.cursor;
  const limit = options?.limit;
  if (typeof prefix !== 'string') {
    throw new StoreError(undefined, `list prefix must be a string, got ${typeof prefix}`, {
      code: 'invalid_argument',
    });
  }
  if (cursor !== undefined && typeof cursor !== 'string') {
    throw new StoreError(
      undefined,
      `list cursor must be a string from a previous page, got ${typeof cursor}`,
      {
        code: 'invalid_argument',
      },
    );
  }
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1)) {
    throw new StoreError(undefined, `list limit must be a positive integer, got ${String(limit)}`, {
      code: 'invalid_argument',
    });
  }
  return { prefix, cursor, limit: limit ?? Number.POSITIVE_INFINITY };
}

/** One page of `ids` (in any order, no duplicates) under the checked options. */
export function pageIds(ids: Iterable<string>, options: ListOptions): ConversationPage {
  const { prefix, cursor, limit } = options;
  const matching: string[] = [];
  for (const id of ids) {
    if (!id.startsWith(prefix)) continue;
    if (cursor !== undefined && compareIds(id, cursor) <= 0) continue;
    matching.push(id);
  }
  matching.sort(compareIds);
  if (matching.length <= limit) return { ids: matching };
  const page = matching.slice(0, limit);
  return { ids: page, cursor: page[page.length - 1] as string };
}
