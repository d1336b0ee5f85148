/**
 * The OpenAI Agents SDK's items (Responses API items: `message`, `function_call`,
 * `function_call_result`, `reasoning`, …) as contextkit's OpenAI Chat Completions messages, for
 * counting and planning, and back.
 *
 * A run of assistant-side items (reasoning, an assistant message, the calls it makes) is one
 * assistant message with `tool_calls`, so the calls and their results, paired by `callId`, form
 * one atom that is kept or dropped whole. Items go back as they were stored; only what a plan
 * rewrote (a cleared result, a cut text) or wrote (a summary, the facts block) is made anew.
 */

import type { AgentInputItem } from '@openai/agents';
import type { OpenAIContentPart, OpenAIMessage, OpenAIToolCall } from '../../messages/types.js';

type Item = Record<string, unknown>;

/** OpenAI messages standing for items, and which items each one stands for. */
export interface ItemProxies {
  messages: OpenAIMessage[];
  /** `origins[i]`: indexes of the items `messages[i]` stands for. */
  origins: number[][];
  /** Item index of each call and each result, by call id. */
  calls: Map<string, number>;
  results: Map<string, number>;
  /** Proxy index of the assistant message holding each call, by call id. */
  callProxy: Map<string, number>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A tool's answer: it carries the `callId` of the call it answers. */
function isResult(item: Item): boolean {
  return (
    typeof item.callId === 'string' && typeof item.type === 'string' && /_(result|output)$/.test(item.type)
  );
}

/** A call that waits for a result from the client (function, computer, shell, apply_patch…). */
function isCall(item: Item): boolean {
  return typeof item.callId === 'string' && !isResult(item);
}

function isConversationMessage(item: Item): boolean {
  return (item.type === undefined || item.type === 'message') && typeof item.role === 'string';
}

/** Text contextkit counts for a tool result's output (images and files as short notes). */
function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map(outputText).join('\n');
  if (!isRecord(output)) return output === undefined ? '' : JSON.stringify(output);
  if (typeof output.text === 'string') return output.text;
  const type = String(output.type ?? 'output');
  if (/image|screenshot/.test(type)) return '[image]';
  if (/file/.test(type)) return '[file]';
  return JSON.stringify(output);
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) => {
      if (!isRecord(part)) return '';
      if (typeof part.text === 'string') return part.text;
      if (typeof part.refusal === 'string') return part.refusal;
      if (typeof part.transcript === 'string') return part.transcript;
      return `[${String(part.type)}]`;
    })
    .join('');
}

function userContent(content: unknown): string | OpenAIContentPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: unknown): OpenAIContentPart => {
    if (!isRecord(part)) return { type: 'text', text: '' };
    if (part.type === 'input_text' && typeof part.text === 'string') return { type: 'text', text: part.text };
    if (part.type === 'input_image' && typeof part.image === 'string') {
      const detail =
        part.detail === 'low' || part.detail === 'high' || part.detail === 'auto' ? part.detail : undefined;
      return { type: 'image_url', image_url: detail ? { url: part.image, detail } : { url: part.image } };
    }
    if (part.type === 'input_file' && typeof part.file === 'string' && part.file.startsWith('data:')) {
      return {
        type: 'file',
        file: { file_data: part.file, filename: typeof part.filename === 'string' ? part.filename : 'file' },
      };
    }
    return { type: 'text', text: `[${String(part.type)}]` };
  });
}

function callOf(item: Item): OpenAIToolCall {
  const args =
    typeof item.arguments === 'string'
      ? item.arguments
      : JSON.stringify(item.action ?? item.operation ?? item.arguments ?? {});
  return {
    id: String(item.callId),
    type: 'function',
    function: { name: typeof item.name === 'string' ? item.name : String(item.type), arguments: args },
  };
}

/** Converts items to OpenAI messages for contextkit, remembering which items each stands for. */
export function itemsToProxies(items: readonly AgentInputItem[]): ItemProxies {
  const out: ItemProxies = {
    messages: [],
    origins: [],
    calls: new Map(),
    results: new Map(),
    callProxy: new Map(),
  };
  /** The assistant-side items not yet given a proxy. */
  let run: number[] = [];
  const flushRun = () => {
    if (run.length === 0) return;
    const texts: string[] = [];
    const reasoning: string[] = [];
    const calls: OpenAIToolCall[] = [];
    for (const index of run) {
      const item = items[index] as Item;
      if (isCall(item)) {
        calls.push(callOf(item));
        out.callProxy.set(String(item.callId), out.messages.length);
      } else if (isConversationMessage(item)) texts.push(contentText(item.content));
      else if (item.type === 'reasoning') reasoning.push(contentText(item.content));
      else if (item.type === 'hosted_tool_call') texts.push(`[${String(item.name)} run by the provider]`);
    }
    let text = texts.join('\n');
    if (text === '' && calls.length === 0)
      text = reasoning.join('\n') || `[${String((items[run[0]!] as Item).type)}]`;
    const message: OpenAIMessage = { role: 'assistant', content: text === '' ? null : text };
    if (calls.length > 0) message.tool_calls = calls;
    out.messages.push(message);
    out.origins.push(run);
    run = [];
  };

  items.forEach((raw, index) => {
    const item = raw as Item;
    if (isResult(item)) {
      flushRun();
      out.results.set(String(item.callId), index);
      out.messages.push({
        role: 'tool',
        tool_call_id: String(item.callId),
        content: outputText(item.output),
      });
      out.origins.push([index]);
      return;
    }
    if (isConversationMessage(item) && item.role !== 'assistant') {
      flushRun();
      if (item.role === 'user') out.messages.push({ role: 'user', content: userContent(item.content) });
      else {
        out.messages.push({
          role: item.role === 'developer' ? 'developer' : 'system',
          content: contentText(item.content),
        });
      }
      out.origins.push([index]);
      return;
    }
    if (isCall(item)) out.calls.set(String(item.callId), index);
    run.push(index);
  });
  flushRun();
  return out;
}

function assistantItem(text: string): AgentInputItem {
  return {
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text }],
  };
}

function userItem(content: OpenAIMessage['content']): AgentInputItem {
  if (typeof content === 'string' || !Array.isArray(content)) return { role: 'user', content: content ?? '' };
  return {
    role: 'user',
    content: content.map((part) => {
      switch (part.type) {
        case 'image_url':
          return { type: 'input_image' as const, image: part.image_url.url };
        case 'file':
          return {
            type: 'input_file' as const,
            file: part.file.file_data ?? '',
            filename: part.file.filename ?? 'file',
          };
        case 'text':
          return { type: 'input_text' as const, text: part.text };
        case 'refusal':
          return { type: 'input_text' as const, text: part.refusal };
        default:
          return { type: 'input_text' as const, text: '[audio]' };
      }
    }),
  };
}

function plainText(content: OpenAIMessage['content'] | undefined): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

/**
 * The items for a fitted view: the stored items for every message the plan left alone (`proxy`
 * set), and for the others items rebuilt on the stored ones they came from: a cleared function
 * result keeps its call id and name with the new output text, a cut assistant text keeps its
 * calls and reasoning. What contextkit wrote becomes a system message.
 */
export function proxiesToItems(
  entries: ReadonlyArray<{ message: OpenAIMessage; proxy: number | undefined }>,
  items: readonly AgentInputItem[],
  proxies: ItemProxies,
): AgentInputItem[] {
  const out: AgentInputItem[] = [];
  for (const { message, proxy } of entries) {
    if (proxy !== undefined) {
      for (const index of proxies.origins[proxy]!) out.push(items[index]!);
      continue;
    }
    switch (message.role) {
      case 'tool': {
        const at = proxies.results.get(message.tool_call_id);
        const original = at === undefined ? undefined : (items[at] as Item);
        const text = plainText(message.content);
        if (original && original.type === 'function_call_result') {
          // The SDK writes text outputs as `{ type: 'text', text }`: the new text keeps that form.
          const output =
            isRecord(original.output) && original.output.type === 'text'
              ? { ...original.output, text }
              : text;
          out.push({ ...original, output } as AgentInputItem);
        } else if (original) {
          // Other results (screenshots, shell output) have a shape text cannot take: kept as they are.
          out.push(original as AgentInputItem);
        } else {
          const callAt = proxies.calls.get(message.tool_call_id);
          const call = callAt === undefined ? undefined : (items[callAt] as Item);
          out.push({
            type: 'function_call_result',
            callId: message.tool_call_id,
            name: typeof call?.name === 'string' ? call.name : 'tool',
            status: 'completed',
            output: text,
          });
        }
        break;
      }
      case 'assistant': {
        const text = plainText(message.content);
        const first = message.tool_calls?.[0];
        const at = first ? proxies.callProxy.get(first.id) : undefined;
        if (at === undefined) {
          if (text !== '') out.push(assistantItem(text));
          break;
        }
        const edited = new Map((message.tool_calls ?? []).map((c) => [c.id, c]));
        // Only a cut changes the text; an edit of the calls alone (inputs cleared) leaves it as it was.
        const textCut = text !== plainText(proxies.messages[at]?.content);
        let placed = false;
        for (const index of proxies.origins[at]!) {
          const item = items[index] as Item;
          if (isConversationMessage(item)) {
            if (!textCut) out.push(item as AgentInputItem);
            else if (!placed && text !== '') out.push(assistantItem(text));
            placed = true;
          } else if (isCall(item)) {
            const call = edited.get(String(item.callId));
            if (!call) continue;
            out.push(
              item.type === 'function_call' && call.function.arguments !== item.arguments
                ? ({ ...item, arguments: call.function.arguments } as AgentInputItem)
                : (item as AgentInputItem),
            );
          } else out.push(item as AgentInputItem);
        }
        // A run without a message item had only notes (reasoning, hosted tools) for text: none is owed.
        break;
      }
      case 'user':
        out.push(userItem(message.content));
        break;
      default:
        out.push({ role: 'system', content: plainText(message.content) });
    }
  }
  return out;
}
