/**
 * Provider SDK helpers: take what `openai.chat.completions.create()` or
 * `anthropic.messages.create()` returned, and in one call add the reply to the conversation and
 * let the manager learn from the usage the provider billed.
 */

import { isCompactionItem, itemType } from '../formats/openai-responses/items.js';
import { FORMATS } from '../formats/registry.js';
import { usageFromAnthropic, usageFromGemini, usageFromOpenAI } from '../guard/usage.js';
import type { AddMessageOptions, ContextManager } from '../manager.js';
import type { GeminiContent } from '../messages/gemini-types.js';
import type { ResponsesItem } from '../messages/responses-types.js';
import type { AnthropicAssistantMessage, Message, OpenAIAssistantMessage } from '../messages/types.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Adds a Chat Completions response's `choices[0].message` to the conversation, as OpenAI's own
 * examples send it back, and records the response's `usage` (when it has one) against the
 * request that produced it, so the next estimates learn from the billed count. Returns the
 * message added. Throws `InvalidMessageError` when the response has no message.
 */
export async function addOpenAIResponse(
  manager: ContextManager,
  response: { output: readonly unknown[] },
  options?: AddMessageOptions,
): Promise<ResponsesItem[]>;
export async function addOpenAIResponse(
  manager: ContextManager,
  response: unknown,
  options?: AddMessageOptions,
): Promise<OpenAIAssistantMessage>;
/**
 * A Responses API response (`responses.create()`): each item of its `output` (reasoning, calls,
 * messages, hosted tool calls) is added in order, as the API returned it, and its `usage` recorded.
 * Returns the items added.
 */
export async function addOpenAIResponse(
  manager: ContextManager,
  response: unknown,
  options?: AddMessageOptions,
): Promise<OpenAIAssistantMessage | ResponsesItem[]> {
  if (isRecord(response) && Array.isArray(response.output)) {
    // Refuses a response without output items before anything is recorded.
    FORMATS['openai-responses'].replyMessages(response);
    const hasUsage = response.usage !== undefined && response.usage !== null;
    // All or nothing: the usage is read (an unreadable one refused) and every item validated
    // before any is stored; the items are appended in one batch, and what the usage teaches is
    // recorded only once they are stored, so a refused reply leaves nothing and a retry adds once.
    if (hasUsage) usageFromOpenAI(response);
    const added = response.output.slice() as ResponsesItem[];
    await manager.addMessages(added, options);
    if (hasUsage) await manager.recordOpenAIUsage(response);
    noteCompactions(manager, response.output, response.usage);
    return added;
  }
  const reply = FORMATS.openai.replyMessages(response)[0] as OpenAIAssistantMessage;
  const hasUsage = isRecord(response) && response.usage !== undefined && response.usage !== null;
  if (hasUsage) usageFromOpenAI(response);
  await manager.addMessage(reply, options);
  if (hasUsage) await manager.recordOpenAIUsage(response);
  return reply;
}

/**
 * Notes what each `compaction` item of a Responses output costs when sent back: the output tokens
 * the API billed, less the other items of the output (counted) and the reasoning tokens, shared
 * among the compaction items (see src/tokens/compaction-tokens.ts).
 */
function noteCompactions(manager: ContextManager, output: readonly unknown[], usage: unknown): void {
  const compactions = output.filter(isCompactionItem);
  if (compactions.length === 0 || !isRecord(usage) || typeof usage.output_tokens !== 'number') return;
  const details = usage.output_tokens_details;
  const reasoning =
    isRecord(details) && typeof details.reasoning_tokens === 'number' ? details.reasoning_tokens : 0;
  const counter = manager.measurer.defaultCounter('openai-responses');
  let others = 0;
  for (const item of output) {
    if (isCompactionItem(item) || itemType(item) === 'reasoning' || !isRecord(item)) continue;
    others += manager.measurer.count(counter, item as unknown as Message, 'openai-responses');
  }
  const each = (usage.output_tokens - reasoning - others) / compactions.length;
  for (const item of compactions)
    manager.measurer.noteCompaction(item.encrypted_content, each, 'usage.output_tokens');
}

/**
 * Adds an Anthropic Messages response as `{ role: 'assistant', content: response.content }` and
 * records its `usage` (cache reads and writes included) against the request that produced it.
 * Returns the message added. Throws `InvalidMessageError` when the response has no content.
 */
export async function addAnthropicResponse(
  manager: ContextManager,
  response: unknown,
  options?: AddMessageOptions,
): Promise<AnthropicAssistantMessage> {
  const reply = FORMATS.anthropic.replyMessages(response)[0] as AnthropicAssistantMessage;
  const hasUsage = isRecord(response) && response.usage !== undefined && response.usage !== null;
  // All or nothing: an unreadable usage is refused before the reply is stored, and the usage is
  // recorded only once the reply is.
  if (hasUsage) usageFromAnthropic(response);
  await manager.addMessage(reply, options);
  if (hasUsage) await manager.recordAnthropicUsage(response);
  return reply;
}

/**
 * Adds a Gemini `generateContent` response's `candidates[0].content` (role `model`, its parts as
 * they came, thought signatures included) to the conversation and records its `usageMetadata`
 * (prompt tokens, cached content tokens) against the request that produced it. Returns the
 * content added. Throws `InvalidMessageError` when the response has no candidate content.
 */
export async function addGeminiResponse(
  manager: ContextManager,
  response: unknown,
  options?: AddMessageOptions,
): Promise<GeminiContent> {
  const reply = FORMATS.gemini.replyMessages(response)[0] as GeminiContent;
  // All or nothing: an unreadable usage is refused before the reply is stored, and the usage is
  // recorded only once the reply is.
  const usage = isRecord(response) && isRecord(response.usageMetadata) ? usageFromGemini(response) : null;
  await manager.addMessage(reply, options);
  if (usage) {
    await manager.recordUsage({
      model: usage.model,
      inputTokens: usage.inputTokens,
      cacheReadTokens: usage.cacheReadTokens,
    });
  }
  return reply;
}
