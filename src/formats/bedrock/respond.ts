/**
 * Adding a Converse response to a conversation: its assistant message as it came (reasoning and
 * its signature untouched) and its usage, cache reads and writes included.
 */

import type { ContextManager } from '../../manager.js';
import type { BedrockConversationMessage } from '../../messages/bedrock-types.js';
import type { AddMessageOptions } from '../../options.js';
import { isRecord } from './blocks.js';
import { bedrockReplyMessages, usageFromBedrock } from './request.js';

/**
 * Adds a Converse response's `output.message` to the conversation and records its `usage`
 * (`inputTokens`, `cacheReadInputTokens`, `cacheWriteInputTokens`) against the request that
 * produced it. Returns the message added. Throws `InvalidMessageError` for a response with no
 * assistant message, `InvalidUsageError` for unreadable usage.
 */
export async function addBedrockResponse(
  manager: ContextManager,
  response: unknown,
  options?: AddMessageOptions,
): Promise<BedrockConversationMessage> {
  const [reply] = bedrockReplyMessages(response);
  // All or nothing: an unreadable usage is refused before the reply is stored, and the usage is
  // recorded only once the reply is.
  const usage =
    isRecord(response) && response.usage !== undefined && response.usage !== null
      ? usageFromBedrock(response)
      : null;
  await manager.addMessage(reply!, options);
  if (usage) await manager.recordUsage(response as object);
  return reply!;
}
