/**
 * LangChain.js messages (`BaseMessage`: `SystemMessage`, `HumanMessage`, `AIMessage` with
 * `tool_calls`, `ToolMessage` with `tool_call_id`) as contextkit's OpenAI Chat Completions
 * messages, one for one, and back.
 */

import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  type MessageContent,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import type { Message, OpenAIContentPart, OpenAIMessage, OpenAIToolCall } from '../../messages/types.js';
import { convertMessages } from '../../wire/convert.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Text of LangChain content: text blocks joined, other blocks (tool_use, thinking) left to their own fields. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block: unknown) =>
      isRecord(block) && block.type === 'text' && typeof block.text === 'string' ? block.text : '',
    )
    .join('');
}

function imageUrl(block: Record<string, unknown>): string | undefined {
  const image = block.image_url;
  if (typeof image === 'string') return image;
  if (isRecord(image) && typeof image.url === 'string') return image.url;
  if (typeof block.url === 'string') return block.url;
  const data =
    typeof block.data === 'string' ? block.data : typeof block.base64 === 'string' ? block.base64 : undefined;
  const mime =
    typeof block.mimeType === 'string'
      ? block.mimeType
      : typeof block.mime_type === 'string'
        ? block.mime_type
        : undefined;
  if (data !== undefined)
    return data.startsWith('data:') ? data : `data:${mime ?? 'image/png'};base64,${data}`;
  return undefined;
}

function userContent(content: unknown): string | OpenAIContentPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((block: unknown): OpenAIContentPart => {
    if (!isRecord(block)) return { type: 'text', text: '' };
    if (block.type === 'text' && typeof block.text === 'string') return { type: 'text', text: block.text };
    if (block.type === 'image_url' || block.type === 'image') {
      const url = imageUrl(block);
      if (url !== undefined) return { type: 'image_url', image_url: { url } };
    }
    return { type: 'text', text: `[${String(block.type)}]` };
  });
}

function toolCallsOf(message: AIMessage, index: number): OpenAIToolCall[] {
  return (message.tool_calls ?? []).map((call, k) => ({
    id: call.id ?? `lc_${index}_${k}`,
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
  }));
}

/** The OpenAI message contextkit counts and plans with for one LangChain message. */
export function toOpenAIMessage(message: BaseMessage, index = 0): OpenAIMessage {
  switch (message.type) {
    case 'system':
      return { role: 'system', content: contentText(message.content) };
    case 'human':
      return { role: 'user', content: userContent(message.content) };
    case 'ai': {
      const calls = toolCallsOf(message as AIMessage, index);
      const text = contentText(message.content);
      const out: OpenAIMessage = {
        role: 'assistant',
        content: text === '' && calls.length > 0 ? null : text,
      };
      if (calls.length > 0) out.tool_calls = calls;
      return out;
    }
    case 'tool':
      return {
        role: 'tool',
        tool_call_id: (message as ToolMessage).tool_call_id,
        content: contentText(message.content),
      };
    default: {
      // ChatMessage (a custom role), FunctionMessage and the like: counted as what they say.
      const role = 'role' in message && typeof message.role === 'string' ? message.role : message.type;
      return { role: 'user', content: `[${role}] ${contentText(message.content)}` };
    }
  }
}

/** Converts LangChain messages to contextkit's OpenAI messages, one for one. */
export function fromBaseMessages(messages: readonly BaseMessage[]): OpenAIMessage[] {
  return messages.map((m, i) => toOpenAIMessage(m, i));
}

function langchainContent(content: OpenAIMessage['content'] | undefined): MessageContent {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => {
    switch (part.type) {
      case 'text':
        return { type: 'text', text: part.text };
      case 'refusal':
        return { type: 'text', text: part.refusal };
      case 'image_url':
        return { type: 'image_url', image_url: { url: part.image_url.url } };
      case 'input_audio':
        return { type: 'text', text: '[audio]' };
      default:
        return { type: 'text', text: `[file ${part.file.filename ?? part.file.file_id ?? ''}]` };
    }
  });
}

function parseArgs(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args);
    return isRecord(parsed) ? parsed : { input: parsed };
  } catch {
    return { input: args };
  }
}

/** Converts contextkit messages (either format) to LangChain messages. */
export function toBaseMessages(messages: readonly Message[]): BaseMessage[] {
  return convertMessages(messages, 'openai', { dropThinking: true }).map((m, i) =>
    rebuild(m, undefined, i > 0),
  );
}

/**
 * A LangChain message for `message`, built on `original` (the message it was made from, when
 * known) so that ids, names and provider fields carry over. A system message inside the
 * conversation becomes a human message: most chat models take system messages only first.
 */
export function rebuild(
  message: OpenAIMessage,
  original: BaseMessage | undefined,
  inside: boolean,
): BaseMessage {
  const base = original
    ? {
        id: original.id,
        name: original.name,
        additional_kwargs: original.additional_kwargs,
        response_metadata: original.response_metadata,
      }
    : {};
  switch (message.role) {
    case 'tool': {
      const fields =
        original instanceof ToolMessage ? { status: original.status, artifact: original.artifact } : {};
      return new ToolMessage({
        ...base,
        ...fields,
        tool_call_id: message.tool_call_id,
        content: langchainContent(message.content),
      });
    }
    case 'assistant': {
      const ids = new Set((message.tool_calls ?? []).map((c) => c.id));
      const kept =
        original instanceof AIMessage
          ? (original.tool_calls ?? []).filter((c) => c.id !== undefined && ids.has(c.id))
          : [];
      const toolCalls =
        kept.length === ids.size
          ? kept
          : (message.tool_calls ?? []).map((c) => ({
              id: c.id,
              name: c.function.name,
              args: parseArgs(c.function.arguments),
              type: 'tool_call' as const,
            }));
      return new AIMessage({
        ...base,
        content: langchainContent(message.content ?? ''),
        tool_calls: toolCalls,
      });
    }
    case 'user':
      return new HumanMessage({ ...base, content: langchainContent(message.content) });
    default:
      return inside
        ? new HumanMessage({ content: langchainContent(message.content) })
        : new SystemMessage({ ...base, content: langchainContent(message.content) });
  }
}
