import { InvalidArgumentError } from './errors.js';
import { type AnthropicRequestParts, toAnthropicRequest } from './formats/anthropic/request.js';
import {
  type BedrockRequest,
  type BedrockRequestOptions,
  toBedrockRequest,
} from './formats/bedrock/request.js';
import { type GeminiRequest, toGeminiRequest } from './formats/gemini/request.js';
import type { ConvertOptions } from './messages/convert-options.js';
import type { GeminiMessage } from './messages/gemini-types.js';
import type { ResponsesItem } from './messages/responses-types.js';
import type { Message, MessageFormat, OpenAIMessage } from './messages/types.js';
import { convertMessages } from './wire/convert.js';
import { detectConversationFormat } from './wire/detect.js';

/** The request parts each format's API takes, as `toRequest` gives them. */
export interface ProviderRequests {
  openai: { messages: OpenAIMessage[] };
  'openai-responses': { input: ResponsesItem[] };
  anthropic: AnthropicRequestParts;
  gemini: GeminiRequest;
  bedrock: BedrockRequest;
}

/** Options of `toRequest`: how a view in another format is converted, and Bedrock's request options. */
export interface ToRequestOptions extends ConvertOptions, BedrockRequestOptions {}

const REQUEST_FORMATS: readonly MessageFormat[] = [
  'openai',
  'openai-responses',
  'anthropic',
  'gemini',
  'bedrock',
];

/**
 * A view (what `getMessagesForRequest` returned) as the parts of `format`'s request body, to spread
 * into the provider SDK's call beside `model` and the output `max_tokens`:
 * - `'openai'`: `{ messages }` for Chat Completions;
 * - `'openai-responses'`: `{ input }` for the Responses API;
 * - `'anthropic'`: `{ system, messages }` for the Messages API (system messages lifted out);
 * - `'gemini'`: `{ systemInstruction, contents }` for `generateContent`;
 * - `'bedrock'`: `{ system, messages, toolConfig?, inferenceConfig? }` for Converse.
 * A view in another format is converted first (`convertMessages`, with `options`). For Anthropic
 * server compaction and context editing, use `ContextManager.getAnthropicRequest()`, which adds the
 * `context_management` edits this view-only function cannot know.
 */
export function toRequest(
  view: readonly Message[],
  format: 'openai',
  options?: ToRequestOptions,
): ProviderRequests['openai'];
export function toRequest(
  view: readonly Message[],
  format: 'openai-responses',
  options?: ToRequestOptions,
): ProviderRequests['openai-responses'];
export function toRequest(
  view: readonly Message[],
  format: 'anthropic',
  options?: ToRequestOptions,
): ProviderRequests['anthropic'];
export function toRequest(
  view: readonly Message[],
  format: 'gemini',
  options?: ToRequestOptions,
): ProviderRequests['gemini'];
export function toRequest(
  view: readonly Message[],
  format: 'bedrock',
  options?: ToRequestOptions,
): ProviderRequests['bedrock'];
export function toRequest(
  view: readonly Message[],
  format: MessageFormat,
  options?: ToRequestOptions,
): ProviderRequests[MessageFormat];
export function toRequest(
  view: readonly Message[],
  format: MessageFormat,
  options: ToRequestOptions = {},
): ProviderRequests[MessageFormat] {
  if (!REQUEST_FORMATS.includes(format)) {
    throw new InvalidArgumentError(
      'format',
      `expected one of ${REQUEST_FORMATS.join(', ')}, got ${JSON.stringify(format)}`,
    );
  }
  const { tools, toolChoice, inferenceConfig, ...convert } = options;
  const from = detectConversationFormat(view);
  const messages = from === format ? view : convertMessages(view, format, convert);
  switch (format) {
    case 'openai':
      return { messages: messages.slice() as OpenAIMessage[] };
    case 'openai-responses':
      return { input: messages.slice() as ResponsesItem[] };
    case 'anthropic':
      return toAnthropicRequest(messages);
    case 'gemini':
      return toGeminiRequest(messages as readonly GeminiMessage[]);
    default: {
      const bedrock: BedrockRequestOptions = {};
      if (tools !== undefined) bedrock.tools = tools;
      if (toolChoice !== undefined) bedrock.toolChoice = toolChoice;
      if (inferenceConfig !== undefined) bedrock.inferenceConfig = inferenceConfig;
      return toBedrockRequest(messages, bedrock);
    }
  }
}
