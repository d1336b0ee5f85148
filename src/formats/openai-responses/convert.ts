/**
 * Conversion between OpenAI Chat Completions messages and Responses API input items, where it is
 * lossless. Messages map to message items (text, images, files; refusals), `tool_calls` to
 * `function_call` items and `tool` messages to `function_call_output` items, and back. What has no
 * counterpart (reasoning with its encrypted content, hosted tool calls, MCP items, custom tool and
 * computer calls, item references, audio input) makes the conversion fail with an
 * `InvalidMessageError` (code `not_convertible`) listing every item that cannot go across.
 */

import { InvalidMessageError, type MessageIssue } from '../../errors.js';
import type { ConvertOptions } from '../../messages/convert-options.js';
import type {
  Message,
  OpenAIAssistantMessage,
  OpenAIContentPart,
  OpenAIMessage,
  OpenAITextPart,
  OpenAIToolCall,
} from '../../messages/types.js';
import { itemType } from './items.js';

type Item = Record<string, unknown>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(issues: MessageIssue[]): never {
  throw new InvalidMessageError(issues, 'not_convertible');
}

function cannot(path: string, what: string, to: string): MessageIssue {
  return { path, message: `${what} has no ${to} counterpart and cannot be converted` };
}

// ------------------------------------------------------------------------- Responses -> Chat

function partsToChat(parts: readonly unknown[], path: string, issues: MessageIssue[]): OpenAIContentPart[] {
  const out: OpenAIContentPart[] = [];
  parts.forEach((p, k) => {
    if (!isRecord(p)) return;
    switch (p.type) {
      case 'input_text':
      case 'output_text':
        if (Array.isArray(p.annotations) && p.annotations.length > 0)
          issues.push(
            cannot(`${path}[${k}].annotations`, 'an output_text with annotations', 'Chat Completions'),
          );
        out.push({ type: 'text', text: String(p.text) });
        return;
      case 'refusal':
        out.push({ type: 'refusal', refusal: String(p.refusal) });
        return;
      case 'input_image':
        if (typeof p.image_url !== 'string') {
          issues.push(cannot(`${path}[${k}]`, 'an input_image by file_id', 'Chat Completions'));
          return;
        }
        out.push({
          type: 'image_url',
          image_url: {
            url: p.image_url,
            ...(p.detail === 'low' || p.detail === 'high' || p.detail === 'auto' ? { detail: p.detail } : {}),
          },
        });
        return;
      case 'input_file':
        if (typeof p.file_url === 'string') {
          issues.push(cannot(`${path}[${k}]`, 'an input_file by URL', 'Chat Completions'));
          return;
        }
        out.push({
          type: 'file',
          file: {
            ...(typeof p.file_data === 'string' ? { file_data: p.file_data } : {}),
            ...(typeof p.file_id === 'string' ? { file_id: p.file_id } : {}),
            ...(typeof p.filename === 'string' ? { filename: p.filename } : {}),
          },
        });
        return;
      default:
        issues.push(cannot(`${path}[${k}]`, `a "${String(p.type)}" part`, 'Chat Completions'));
    }
  });
  return out;
}

function chatContent(parts: OpenAIContentPart[]): string | OpenAIContentPart[] {
  return parts.length === 1 && parts[0]!.type === 'text' ? parts[0]!.text : parts;
}

/**
 * Responses input items as Chat Completions messages; throws listing what cannot go across. With
 * `dropThinking`, reasoning items (their `encrypted_content` is readable by OpenAI only, and only
 * whole) are left out instead, as the view does for another provider.
 */
export function responsesToChat(items: readonly Message[], options: ConvertOptions = {}): OpenAIMessage[] {
  const out: OpenAIMessage[] = [];
  const issues: MessageIssue[] = [];
  let open: OpenAIAssistantMessage | undefined; // the assistant message calls are added to
  items.forEach((raw, i) => {
    const item = raw as unknown as Item;
    const path = `messages[${i}]`;
    const type = itemType(item);
    if (type === 'message') {
      const role = item.role as 'user' | 'assistant' | 'system' | 'developer';
      const content =
        typeof item.content === 'string'
          ? item.content
          : chatContent(partsToChat(item.content as unknown[], `${path}.content`, issues));
      if (role === 'assistant') {
        const parts =
          typeof content === 'string'
            ? content
            : content.filter((p) => p.type === 'text' || p.type === 'refusal');
        open = { role: 'assistant', content: parts as string | OpenAITextPart[] };
        out.push(open);
      } else {
        open = undefined;
        out.push({ role, content } as OpenAIMessage);
      }
      return;
    }
    if (type === 'function_call') {
      const call: OpenAIToolCall = {
        id: String(item.call_id),
        type: 'function',
        function: { name: String(item.name), arguments: String(item.arguments) },
      };
      if (!open) {
        open = { role: 'assistant', content: null };
        out.push(open);
      }
      open.tool_calls = [...(open.tool_calls ?? []), call];
      return;
    }
    if (type === 'reasoning' && options.dropThinking === true) return;
    open = undefined;
    if (type === 'function_call_output') {
      const output = item.output;
      const content =
        typeof output === 'string'
          ? output
          : (partsToChat(output as unknown[], `${path}.output`, issues).filter(
              (p) => p.type === 'text',
            ) as OpenAITextPart[]);
      out.push({ role: 'tool', tool_call_id: String(item.call_id), content });
      return;
    }
    const what =
      type === 'reasoning'
        ? typeof item.encrypted_content === 'string'
          ? 'a reasoning item (its encrypted_content)'
          : 'a reasoning item'
        : `a "${String(type)}" item`;
    issues.push(cannot(path, what, 'Chat Completions'));
  });
  if (issues.length > 0) fail(issues);
  return out;
}

// ------------------------------------------------------------------------- Chat -> Responses

function partsToResponses(
  parts: readonly OpenAIContentPart[],
  role: string,
  path: string,
  issues: MessageIssue[],
): Item[] {
  const out: Item[] = [];
  parts.forEach((p, k) => {
    switch (p.type) {
      case 'text':
        out.push({ type: role === 'assistant' ? 'output_text' : 'input_text', text: p.text });
        return;
      case 'refusal':
        out.push({ type: 'refusal', refusal: p.refusal });
        return;
      case 'image_url':
        out.push({ type: 'input_image', image_url: p.image_url.url, detail: p.image_url.detail ?? 'auto' });
        return;
      case 'file':
        out.push({ type: 'input_file', ...p.file });
        return;
      default:
        issues.push(cannot(`${path}[${k}]`, `an "${p.type}" part`, 'Responses API'));
    }
  });
  return out;
}

/** Chat Completions messages as Responses input items; throws listing what cannot go across. */
export function chatToResponses(messages: readonly OpenAIMessage[]): Message[] {
  const out: Item[] = [];
  const issues: MessageIssue[] = [];
  messages.forEach((m, i) => {
    const path = `messages[${i}]`;
    if (m.role === 'tool') {
      const content = m.content;
      out.push({
        type: 'function_call_output',
        call_id: m.tool_call_id,
        output: typeof content === 'string' ? content : content.map((p) => p.text).join('\n'),
      });
      return;
    }
    const content = m.content;
    const hasContent =
      typeof content === 'string' ? content.length > 0 : Array.isArray(content) && content.length > 0;
    if (hasContent || m.role !== 'assistant') {
      out.push({
        type: 'message',
        role: m.role,
        content:
          typeof content === 'string'
            ? content
            : partsToResponses((content ?? []) as OpenAIContentPart[], m.role, `${path}.content`, issues),
      });
    }
    if (m.role === 'assistant') {
      if (typeof m.refusal === 'string')
        out.push({ type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: m.refusal }] });
      for (const call of m.tool_calls ?? []) {
        out.push({
          type: 'function_call',
          call_id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        });
      }
    }
  });
  if (issues.length > 0) fail(issues);
  return out as unknown as Message[];
}
