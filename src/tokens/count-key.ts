/**
 * The key a stored token count is kept under (issue 24 item 3): the counter's id (provider,
 * encoding and, for estimates, the factor) and the version of the counting rules. A count under
 * another key is another tokenizer's and is never read as this one's; bump
 * {@link COUNTING_VERSION} whenever `countMessage` would count a stored message differently
 * (framing, media costs, field walks), so counts kept by an older contextkit are made again
 * rather than trusted. The wire format is not part of it: `countMessage` walks a message by its
 * own shape and frames it as the counter's provider bills, whatever the format it is sent in.
 */

import type { TokenCounter } from './types.js';

/** The version of the counting rules; part of every stored count's key. */
export const COUNTING_VERSION = 1;

/** The key of `counter`'s stored counts. */
export function countKey(counter: Pick<TokenCounter, 'id'>): string {
  return `${counter.id}/v${COUNTING_VERSION}`;
}
