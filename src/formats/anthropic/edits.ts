/**
 * Clearing a tool result in an Anthropic message: a `tool_result` block becomes the placeholder
 * text (its id, error flag and cache breakpoint kept), and a server-tool or MCP result inside the
 * assistant message is shortened in its own shape (`shortenedResult`).
 */
import { freezeDeep } from '../../messages/freeze.js';
import type {
  AnthropicContentBlock,
  AnthropicMessage,
  AnthropicToolResultBlock,
  Message,
} from '../../messages/types.js';
import { inlineResultText, isInlineResult, shortenedResult } from './blocks.js';

/** The message with the result at `blockIndex` cleared to `text`; undefined when there is no block there. */
export function anthropicClearedResult(
  message: Message,
  blockIndex: number,
  text: string,
): Message | undefined {
  const blocks = (message as AnthropicMessage).content;
  if (!Array.isArray(blocks)) return undefined;
  const old = blocks[blockIndex] as AnthropicToolResultBlock | undefined;
  if (old === undefined) return undefined;
  const next = blocks.slice() as AnthropicContentBlock[];
  if (old.type === 'tool_result') {
    const cleared: AnthropicToolResultBlock = {
      type: 'tool_result',
      tool_use_id: old.tool_use_id,
      content: text,
    };
    if (old.is_error) cleared.is_error = true;
    // A prompt-cache breakpoint stays where the caller put it.
    if (old.cache_control !== undefined) cleared.cache_control = old.cache_control;
    next[blockIndex] = cleared;
  } else {
    next[blockIndex] = shortenedResult(
      old as unknown as Record<string, unknown>,
      text,
    ) as unknown as AnthropicContentBlock;
  }
  return freezeDeep({ ...(message as AnthropicMessage), content: next } as Message);
}

/** The text a server-tool or MCP result carries (undefined for any other block). */
export function anthropicResultContent(block: Record<string, unknown>): string | undefined {
  return isInlineResult(block.type) ? inlineResultText(block) : undefined;
}
