/**
 * Anthropic prompt-cache breakpoints for `cacheBreakpoints: 'auto'`. Prompt caching
 * (platform.claude.com/docs/en/build-with-claude/prompt-caching) caches the prefix up to a block
 * marked `cache_control: {type: "ephemeral"}`; a request may carry at most 4 such marks, and
 * thinking blocks cannot be marked themselves. The marks go at the end of what stays the same from
 * one request to the next: the system prompt, the facts/summary block, and the last message the
 * previous request also sent (`stablePrefixEnds`, src/view/cache-breakpoints.ts). They are put
 * on copies in the request only, never stored.
 */

import type { AnthropicContentBlock, Message } from '../../messages/types.js';

/** The most `cache_control` marks the Messages API takes in one request. */
export const MAX_CACHE_BREAKPOINTS = 4;

const EPHEMERAL = Object.freeze({ type: 'ephemeral' });

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Marks the caller already put in a message (they count toward the 4). */
function marksIn(message: Message): number {
  const content: unknown = message.content;
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const block of content) {
    if (isRecord(block) && block.cache_control !== undefined && block.cache_control !== null) n++;
  }
  return n;
}

/** Whether a block may carry a mark: not thinking, not empty text (which the API refuses anyway). */
function markable(block: unknown): boolean {
  if (!isRecord(block)) return false;
  if (block.type === 'thinking' || block.type === 'redacted_thinking') return false;
  return !(block.type === 'text' && (typeof block.text !== 'string' || block.text.trim() === ''));
}

/** The message with its last markable block marked, or undefined when it has none. */
function marked(message: Message): Message | undefined {
  const content: unknown = message.content;
  if (typeof content === 'string') {
    if (content.trim() === '') return undefined;
    return { ...message, content: [{ type: 'text', text: content, cache_control: EPHEMERAL }] } as Message;
  }
  if (!Array.isArray(content)) return undefined;
  for (let k = content.length - 1; k >= 0; k--) {
    const block: unknown = content[k];
    if (!markable(block)) continue;
    if ((block as Record<string, unknown>).cache_control !== undefined) return undefined;
    const blocks = content.slice() as AnthropicContentBlock[];
    blocks[k] = { ...(block as AnthropicContentBlock), cache_control: EPHEMERAL } as AnthropicContentBlock;
    return { ...message, content: blocks } as Message;
  }
  return undefined;
}

/**
 * Puts breakpoints on copies of the messages at `wanted` (indexes, in order of preference), as
 * many as fit beside the marks the caller already put in, and returns the list (the same array
 * when nothing was marked). The input messages are never changed.
 */
export function withCacheBreakpoints(messages: readonly Message[], wanted: readonly number[]): Message[] {
  let free = MAX_CACHE_BREAKPOINTS;
  for (const message of messages) free -= marksIn(message);
  let out: Message[] | undefined;
  const done = new Set<number>();
  for (const index of wanted) {
    if (free <= 0) break;
    if (index < 0 || index >= messages.length || done.has(index)) continue;
    done.add(index);
    const copy = marked(messages[index]!);
    if (!copy) continue;
    out ??= messages.slice();
    out[index] = copy;
    free--;
  }
  return out ?? (messages as Message[]);
}
