/**
 * Provider SDK helpers: take what `openai.chat.completions.create()` or
 * `anthropic.messages.create()` returned, and in one call add the reply to the conversation and
 * let the manager learn from the usage the provider billed.
 */

import { InvalidMessageError } from '../errors.js';
import { addBedrockResponse } from '../formats/bedrock/respond.js';
import { isCompactionItem, itemType } from '../formats/openai-responses/items.js';
import { FORMATS } from '../formats/registry.js';
import type { AddMessageOptions, ContextManager } from '../manager.js';
import type { GeminiContent } from '../messages/gemini-types.js';
import type { ResponsesItem } from '../messages/responses-types.js';
import type { AnthropicAssistantMessage, Message, OpenAIAssistantMessage } from '../messages/types.js';
import { usageFromAnthropic, usageFromGemini, usageFromOpenAI } from '../meter/usage.js';

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
    if (hasUsage) await manager.recordUsage(response);
    noteCompactions(manager, response.output, response.usage);
    return added;
  }
  const reply = FORMATS.openai.replyMessages(response)[0] as OpenAIAssistantMessage;
  const hasUsage = isRecord(response) && response.usage !== undefined && response.usage !== null;
  if (hasUsage) usageFromOpenAI(response);
  await manager.addMessage(reply, options);
  if (hasUsage) await manager.recordUsage(response);
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
  if (hasUsage) await manager.recordUsage(response);
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
  if (usage) await manager.recordUsage(response as object);
  return reply;
}

/** Which provider's response a value is, by the fields each API documents for its reply. */
function responseKind(
  response: unknown,
): 'responses' | 'chat' | 'anthropic' | 'gemini' | 'bedrock' | undefined {
  if (!isRecord(response)) return undefined;
  if (Array.isArray(response.output)) return 'responses';
  if (Array.isArray(response.choices)) return 'chat';
  if (Array.isArray(response.candidates)) return 'gemini';
  if (isRecord(response.output) && 'message' in response.output) return 'bedrock';
  if (Array.isArray(response.content) && (response.type === 'message' || response.role === 'assistant'))
    return 'anthropic';
  return undefined;
}

/**
 * Adds a provider's reply to the conversation and records the usage it was billed, in one call,
 * whichever API it came from (told apart by the fields each documents):
 * - OpenAI Chat Completions (`choices`): `choices[0].message`;
 * - OpenAI Responses (`output` items): every item, in order, as the API returned it;
 * - Anthropic Messages (`content` blocks): `{ role: 'assistant', content }`;
 * - Gemini `generateContent` (`candidates`): `candidates[0].content`, thought signatures included;
 * - Bedrock Converse (`output.message`): the message as it came.
 * All or nothing: the usage is read (an unreadable one refused with `InvalidUsageError`) and every
 * message validated before any is stored, and the usage is recorded once they are. Resolves with
 * the messages added. Throws `InvalidMessageError` for a value no provider's response looks like,
 * or a response with no reply in it.
 */
export async function addResponse(
  manager: ContextManager,
  response: unknown,
  options?: AddMessageOptions,
): Promise<Message[]> {
  switch (responseKind(response)) {
    case 'responses':
      return addOpenAIResponse(manager, response as { output: readonly unknown[] }, options);
    case 'chat':
      return [await addOpenAIResponse(manager, response, options)];
    case 'anthropic':
      return [await addAnthropicResponse(manager, response, options)];
    case 'gemini':
      return [await addGeminiResponse(manager, response, options)];
    case 'bedrock':
      return [(await addBedrockResponse(manager, response, options)) as unknown as Message];
    default:
      throw new InvalidMessageError([
        {
          path: 'response',
          message:
            'not a provider response: expected OpenAI choices or output, Anthropic content, Gemini candidates or Bedrock output.message',
        },
      ]);
  }
}
