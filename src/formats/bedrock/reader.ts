/**
 * Reading Converse messages for the shared readers (`wire/content.ts`, `entrySegments`, the
 * CLI's breakdown, recall, facts and the replay's cost): blocks are keyed by their member and have
 * no `type`, so the shared block readers see nothing in them. Reasoning, media and cache points
 * are not conversation text.
 */

import type { BedrockToolResult, BedrockToolUse } from '../../messages/bedrock-types.js';
import type { Message } from '../../messages/types.js';
import type { CallRef, MessagePiece, MessageReader } from '../wire-format.js';
import {
  bedrockText,
  blocksOf,
  isBlankText,
  isRecord,
  memberOf,
  toolResultText,
  toolUsesOf,
} from './blocks.js';
import { isConverseMessage } from './shorten.js';

/** The `toolUse` blocks of an assistant message as calls; each block is what a message holding only that call carries. */
function calls(message: Message): CallRef[] {
  if (message.role !== 'assistant') return [];
  const out: CallRef[] = [];
  for (const block of blocksOf(message)) {
    if (!isRecord(block.toolUse)) continue;
    const use = block.toolUse as unknown as BedrockToolUse;
    out.push({
      id: String(use.toolUseId),
      name: String(use.name),
      args: JSON.stringify(use.input ?? {}),
      block,
    });
  }
  return out;
}

/** The `toolResult` blocks of a user message with the block holding each. */
function resultBlocks(
  message: Message,
): Array<{ result: BedrockToolResult; block: Record<string, unknown> }> {
  if (message.role !== 'user') return [];
  const out: Array<{ result: BedrockToolResult; block: Record<string, unknown> }> = [];
  for (const block of blocksOf(message))
    if (isRecord(block.toolResult))
      out.push({ result: block.toolResult as unknown as BedrockToolResult, block });
  return out;
}

/** The text of the message's `text` blocks, joined by newlines. */
function plainText(message: Message): string {
  const texts: string[] = [];
  for (const block of blocksOf(message)) if (memberOf(block) === 'text') texts.push(String(block.text));
  return texts.join('\n');
}

/** Assistant text and calls, or user text and tool results, block by block. */
function pieces(message: Message): MessagePiece[] {
  if (message.role === 'assistant') {
    const out: MessagePiece[] = [{ role: 'assistant', kind: 'text', text: plainText(message) }];
    for (const call of calls(message))
      out.push({ role: 'assistant', kind: 'call', name: call.name, text: call.args, id: call.id });
    return out;
  }
  const out: MessagePiece[] = [];
  for (const block of blocksOf(message)) {
    const member = memberOf(block);
    if (member === 'toolResult') {
      const result = block.toolResult as unknown as BedrockToolResult;
      const piece: MessagePiece = { role: 'user', kind: 'result', text: toolResultText(result) };
      if (typeof result.toolUseId === 'string') piece.id = result.toolUseId;
      if (result.status === 'error') piece.isError = true;
      out.push(piece);
    } else if (member === 'text') out.push({ role: 'user', kind: 'text', text: String(block.text) });
  }
  return out;
}

/** How the shared readers read Converse messages. */
export const bedrockReader: MessageReader = {
  owns: isConverseMessage,
  text: bedrockText,
  hasCalls: (message) => toolUsesOf(message).length > 0,
  callIds: (message) => toolUsesOf(message).map((use) => String(use.toolUseId)),
  calls,
  resultIds: (message) => resultBlocks(message).map(({ result }) => String(result.toolUseId)),
  isResult: (message) => resultBlocks(message).length > 0,
  results: (message) =>
    resultBlocks(message).map(({ result, block }) => ({
      id: String(result.toolUseId),
      alone: { role: 'user', content: [block] } as unknown as Message,
    })),
  hasUserContent: (message) =>
    blocksOf(message).some((block) => {
      const member = memberOf(block);
      if (member === undefined || member === 'toolResult' || member === 'cachePoint') return false;
      return member !== 'text' || !isBlankText(block);
    }),
  pieces,
};
