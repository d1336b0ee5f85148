/**
 * The OpenAI Agents SDK's items as the Responses API input items they are sent as (the
 * `'openai-responses'` format), one item for one item, for counting and planning; and back.
 *
 * The SDK's items are the Responses API's in its own spelling (`callId`, `function_call_result`,
 * `input_image.image`, …): `message`, `function_call` / `function_call_result`, `computer_call`
 * / `computer_call_result` and `reasoning` map to their Responses items as they are. Items the
 * Responses input has no client-side form for are stood in for: a call that waits for the client
 * (shell, apply_patch) by a `function_call` named after its type with its action as arguments, and
 * its result by a `function_call_output`; a tool the provider ran (`hosted_tool_call`) and any
 * other item by an assistant note. Contextkit therefore pairs calls with results by `call_id` and
 * keeps reasoning with the item after it, as the API does.
 *
 * Items go back as they were stored; only what a plan rewrote (a cleared result, a cut text) or
 * wrote (a summary, the facts block, a placeholder result) is made anew.
 */

import type { AgentInputItem } from '@openai/agents';
import type { MessageIssue } from '../../errors.js';
import type { ResponsesContentPart, ResponsesItem } from '../../messages/responses-types.js';

type Item = Record<string, unknown>;

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

/** Text of a tool result's output (images and files as short notes). */
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

function partText(part: Item): string {
  if (typeof part.text === 'string') return part.text;
  if (typeof part.refusal === 'string') return part.refusal;
  if (typeof part.transcript === 'string') return part.transcript;
  return `[${String(part.type)}]`;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: unknown) => (isRecord(part) ? partText(part) : '')).join('');
}

/** An SDK content part as a Responses part (`image` → `image_url` / `file_id`, `file` → `file_data` / …). */
function partToResponses(part: unknown, role: string): ResponsesContentPart {
  if (!isRecord(part)) return { type: 'input_text', text: '' };
  const textType = role === 'assistant' ? 'output_text' : 'input_text';
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: textType, text: String(part.text ?? '') } as ResponsesContentPart;
    case 'refusal':
      return { type: 'refusal', refusal: String(part.refusal ?? '') };
    case 'input_image': {
      const image = part.image;
      const detail = typeof part.detail === 'string' ? part.detail : 'auto';
      if (typeof image === 'string') return { type: 'input_image', image_url: image, detail };
      if (isRecord(image) && typeof image.id === 'string')
        return { type: 'input_image', file_id: image.id, detail };
      return { type: textType, text: '[image]' } as ResponsesContentPart;
    }
    case 'input_file': {
      const file = part.file;
      const filename = typeof part.filename === 'string' ? part.filename : 'file';
      if (typeof file === 'string')
        return file.startsWith('data:')
          ? { type: 'input_file', file_data: file, filename }
          : { type: 'input_file', file_url: file, filename };
      if (isRecord(file) && typeof file.id === 'string')
        return { type: 'input_file', file_id: file.id, filename };
      if (isRecord(file) && typeof file.url === 'string')
        return { type: 'input_file', file_url: file.url, filename };
      return { type: textType, text: '[file]' } as ResponsesContentPart;
    }
    default:
      return { type: textType, text: partText(part) } as ResponsesContentPart;
  }
}

function note(text: string): ResponsesItem {
  return { type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] };
}

/** One SDK item as the Responses input item that stands for it (see the module note). */
function itemToResponses(item: Item, index: number): ResponsesItem {
  if (isConversationMessage(item)) {
    const role =
      item.role === 'developer' || item.role === 'system' || item.role === 'user' ? item.role : 'assistant';
    const content = item.content;
    if (typeof content === 'string') return { type: 'message', role, content };
    const parts = Array.isArray(content) ? content.map((p) => partToResponses(p, role)) : [];
    return { type: 'message', role, content: parts };
  }
  const callId = String(item.callId);
  switch (item.type) {
    case 'function_call':
      return {
        type: 'function_call',
        call_id: callId,
        name: String(item.name),
        arguments: String(item.arguments ?? ''),
      };
    case 'computer_call':
      return {
        type: 'computer_call',
        call_id: callId,
        id: String(item.id ?? `cu_${index}`),
        action: isRecord(item.action) ? item.action : {},
      };
    case 'computer_call_result': {
      const output = isRecord(item.output) ? item.output : {};
      return {
        type: 'computer_call_output',
        call_id: callId,
        output: { type: 'computer_screenshot', image_url: String(output.data ?? '') },
      };
    }
    case 'reasoning':
      return {
        type: 'reasoning',
        id: String(item.id ?? `rs_${index}`),
        summary: [{ type: 'summary_text', text: contentText(item.content) }],
      };
    case 'hosted_tool_call':
      return note(`[${String(item.name)} run by the provider]`);
    case 'compaction':
      // The provider's compaction (OpenAI `responses.compact`): opaque, sent back as it came.
      return {
        type: 'compaction',
        encrypted_content: String(item.encrypted_content),
        ...(typeof item.id === 'string' ? { id: item.id } : {}),
      };
  }
  if (isResult(item))
    return { type: 'function_call_output', call_id: callId, output: outputText(item.output) };
  if (isCall(item)) {
    const action = item.arguments ?? item.action ?? item.operation ?? {};
    return {
      type: 'function_call',
      call_id: callId,
      name: typeof item.name === 'string' ? item.name : String(item.type),
      arguments: typeof action === 'string' ? action : JSON.stringify(action),
    };
  }
  return note(`[${String(item.type)}]`);
}

/** Responses API input types the SDK spells otherwise, and its spelling. */
const SDK_SPELLING: Record<string, string> = {
  function_call_output: 'function_call_result',
  computer_call_output: 'computer_call_result',
};

/**
 * Why the SDK could not send `item` (at `path`), if it is in the Responses API's own spelling
 * rather than the SDK's: the SDK refuses a `function_call_output` ("Unsupported item") and sends a
 * call's `call_id` only from `callId`, so such an item would pair with nothing here and break the
 * next run far from where it was stored. A `callId` given must be a non-empty string to pair at all.
 */
export function agentItemIssue(item: unknown, path: string): MessageIssue | undefined {
  if (!isRecord(item)) return undefined;
  const sdkType = typeof item.type === 'string' ? SDK_SPELLING[item.type] : undefined;
  if (sdkType !== undefined)
    return {
      path: `${path}.type`,
      message: `'${String(item.type)}' is the Responses API's spelling; the Agents SDK's item is '${sdkType}' with a callId`,
    };
  if ('callId' in item) {
    // `null` where the SDK allows it (a tool search's call), else a non-empty string.
    if (item.callId === '' || (item.callId != null && typeof item.callId !== 'string'))
      return {
        path: `${path}.callId`,
        message: 'must be a non-empty string (the id that pairs a call with its result)',
      };
    return undefined;
  }
  if ('call_id' in item)
    return {
      path: `${path}.call_id`,
      message: "is the Responses API's spelling; the Agents SDK's items carry the id as callId",
    };
  return undefined;
}

/** The SDK's items as Responses API input items, one for one, in order. */
export function agentItemsToResponses(items: readonly AgentInputItem[], start = 0): ResponsesItem[] {
  return items.map((item, index) => itemToResponses(item as Item, start + index));
}

function textOf(item: Item): string {
  const content = item.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isRecord(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

/** A user message the plan cut, back in the SDK's spelling. */
function userItem(item: Item): AgentInputItem {
  const content = item.content;
  if (typeof content === 'string' || !Array.isArray(content)) return { role: 'user', content: textOf(item) };
  return {
    role: 'user',
    content: (content as Item[]).map((part) => {
      if (part.type === 'input_image')
        return { type: 'input_image' as const, image: String(part.image_url ?? part.file_id ?? '') };
      if (part.type === 'input_file')
        return {
          type: 'input_file' as const,
          file: String(part.file_data ?? part.file_url ?? part.file_id ?? ''),
          filename: String(part.filename ?? 'file'),
        };
      return { type: 'input_text' as const, text: String(part.text ?? '') };
    }),
  };
}

/**
 * The SDK items for a fitted view: the stored item for every item the plan left alone (`seq` set,
 * the item's index), and for the others items rebuilt on the stored ones: a cleared function
 * result keeps its call id and name with the new output text, cleared call arguments go on the
 * stored call, a cut text becomes a new message. What contextkit wrote becomes a system message.
 */
export function responsesToAgentItems(
  view: ReadonlyArray<{ message: ResponsesItem; seq: number | undefined }>,
  items: readonly AgentInputItem[],
): AgentInputItem[] {
  const byCall = new Map<string, { call?: Item; result?: Item }>();
  for (const raw of items) {
    const item = raw as Item;
    if (typeof item.callId !== 'string') continue;
    const pair = byCall.get(item.callId) ?? {};
    if (isResult(item)) pair.result = item;
    else pair.call = item;
    byCall.set(item.callId, pair);
  }
  const out: AgentInputItem[] = [];
  for (const { message, seq } of view) {
    if (seq !== undefined) {
      out.push(items[seq]!);
      continue;
    }
    const m = message as Item;
    const pair = typeof m.call_id === 'string' ? byCall.get(m.call_id) : undefined;
    if (m.type === 'function_call_output') {
      const text = typeof m.output === 'string' ? m.output : outputText(m.output);
      const original = pair?.result;
      if (original?.type === 'function_call_result') {
        // The SDK writes text outputs as `{ type: 'text', text }`: the new text keeps that form.
        const output =
          isRecord(original.output) && original.output.type === 'text' ? { ...original.output, text } : text;
        out.push({ ...original, output } as AgentInputItem);
      } else if (original) {
        // Other results (shell output, patches) have a shape text cannot take: kept as they are.
        out.push(original as AgentInputItem);
      } else {
        out.push({
          type: 'function_call_result',
          callId: String(m.call_id),
          name: typeof pair?.call?.name === 'string' ? pair.call.name : 'tool',
          status: 'completed',
          output: text,
        });
      }
    } else if (m.type === 'function_call' && pair?.call) {
      const call = pair.call;
      out.push(
        call.type === 'function_call' && call.arguments !== m.arguments
          ? ({ ...call, arguments: m.arguments } as AgentInputItem)
          : (call as AgentInputItem),
      );
    } else if (m.type === 'function_call') {
      // A call the plan renamed (its id repeated an earlier call's): the SDK sends it only with a `callId`.
      out.push({
        type: 'function_call',
        callId: String(m.call_id),
        name: String(m.name),
        arguments: String(m.arguments ?? ''),
        status: 'completed',
      });
    } else if (m.role === 'user') out.push(userItem(m));
    else if (m.role === 'assistant') {
      const text = textOf(m);
      if (text !== '')
        out.push({
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text }],
        });
    } else if (m.role === 'system' || m.role === 'developer')
      out.push({ role: 'system', content: textOf(m) });
    else out.push(message as unknown as AgentInputItem);
  }
  return out;
}
