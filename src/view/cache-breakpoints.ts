/**
 * Where a request's stable prefix ends, for formats that mark prompt-cache breakpoints
 * (`WireFormat.withCacheBreakpoints`, with `cacheBreakpoints: 'auto'`): what stays the same from
 * one request to the next is the system prompt, the facts/summary block, and the messages the
 * previous request also sent.
 */

import type { Message } from '../messages/types.js';

/** Length of the prefix `messages` shares with `previous`, by identity (views reuse their objects). */
export function unchangedPrefix(messages: readonly Message[], previous: readonly Message[]): number {
  const n = Math.min(messages.length, previous.length);
  let k = 0;
  while (k < n && messages[k] === previous[k]) k++;
  return k;
}

/**
 * Where the stable prefix ends in a request: the last leading system message, the facts and
 * summary blocks, and the last message of the prefix shared with the previous request, in that
 * order of preference from last to first (the longest cached prefix saves the most).
 */
export function stablePrefixEnds(
  messages: readonly Message[],
  blocks: readonly (Message | undefined)[],
  unchanged: number,
): number[] {
  const wanted: number[] = [];
  if (unchanged > 0) wanted.push(unchanged - 1);
  for (const block of blocks) {
    if (!block) continue;
    const at = messages.indexOf(block);
    if (at >= 0) wanted.push(at);
  }
  let system = -1;
  while (system + 1 < messages.length && messages[system + 1]!.role === 'system') system++;
  if (system >= 0) wanted.push(system);
  return wanted;
}
