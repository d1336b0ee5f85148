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
 * Where a request marks breakpoints, in order of preference: its last message (Anthropic writes the
 * whole prompt there for the next request to read, as its automatic caching does: "applies the
 * cache breakpoint to the last cacheable block and moves it forward as conversations grow",
 * platform.claude.com/docs/en/build-with-claude/prompt-caching), the last message of the prefix
 * shared with the previous request (where that request wrote: a hit even when more than the
 * documented 20-block lookback was added since), then the facts and summary blocks and the last
 * leading system message (what survives a compaction).
 */
export function stablePrefixEnds(
  messages: readonly Message[],
  blocks: readonly (Message | undefined)[],
  unchanged: number,
): number[] {
  const wanted: number[] = [];
  if (messages.length > 0) wanted.push(messages.length - 1);
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
