/**
 * Where a conversation's tokens go: by role, by tool, and the largest messages. This is what
 * `count` and `inspect` print; it answers "what is eating my context window?".
 */

import { wireFormat } from '../formats/registry.js';
import type { CallRef } from '../formats/wire-format.js';
import type { Message, MessageFormat } from '../messages/types.js';
import type { ModelCounter } from '../tokens/model-counter.js';
import type { TokenCounter } from '../tokens/types.js';
import { messageText, ownReader, roleOf } from '../wire/content.js';

/** Tokens and messages of one role. */
export interface RoleTally {
  role: string;
  messages: number;
  tokens: number;
}

/** What one tool costs: its calls (name and arguments) and its results. */
export interface ToolTally {
  tool: string;
  calls: number;
  callTokens: number;
  results: number;
  resultTokens: number;
  /** The largest single result, in tokens. */
  largestResult: number;
}

/** One message's size, with a one-line preview to recognise it by. */
export interface MessageSize {
  seq: number;
  role: string;
  tokens: number;
  preview: string;
}

/** The whole picture of a conversation's token use. */
export interface ConversationBreakdown {
  messages: number;
  /** All messages plus the fixed per-request overhead: what sending the whole conversation costs. */
  tokens: number;
  overhead: number;
  byRole: RoleTally[];
  byTool: ToolTally[];
  /** Every message's size, largest first (ties in conversation order). */
  bySize: MessageSize[];
  images: number;
  documents: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function blocks(message: Message): unknown[] {
  const content: unknown = message.content;
  return Array.isArray(content) ? content : [];
}

/** Images and documents anywhere in a message, nested tool results and documents included. */
function countMedia(parts: unknown[], tally: { images: number; documents: number }): void {
  for (const part of parts) {
    if (!isRecord(part)) continue;
    if (part.type === 'image' || part.type === 'image_url') tally.images++;
    else if (part.type === 'document' || part.type === 'file') {
      tally.documents++;
      const source = part.source;
      if (isRecord(source) && Array.isArray(source.content)) countMedia(source.content, tally);
    } else if (part.type === 'tool_result' && Array.isArray(part.content)) countMedia(part.content, tally);
  }
}

const PREVIEW_CHARS = 90;

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The calls a message makes, as `name(args)`, in order. */
function callsOf(message: Message): CallRef[] {
  // A shape only its format has (a Gemini functionCall part): read by that format.
  const own = ownReader(message)?.calls;
  if (own) return own(message);
  const out: CallRef[] = [];
  if (message.role !== 'assistant') return out;
  if ('tool_calls' in message && Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      out.push({ id: call.id, name: call.function.name, args: call.function.arguments, block: call });
    }
  }
  for (const block of blocks(message)) {
    if (isRecord(block) && block.type === 'tool_use') {
      out.push({
        id: String(block.id),
        name: String(block.name),
        args: JSON.stringify(block.input) ?? '',
        block,
      });
    }
  }
  return out;
}

/**
 * A one-line description of a message: its text, the calls it makes (`→ grep(…)`), or which
 * tool a result came from (`[read_file] …`).
 */
export function previewMessage(message: Message, resultOf: string[] = []): string {
  const calls = callsOf(message)
    .map((c) => `${c.name}(${oneLine(c.args, 40)})`)
    .join(', ');
  const text = oneLine(messageText(message), PREVIEW_CHARS);
  const tools = resultOf.length > 0 ? `[${[...new Set(resultOf)].join(', ')}] ` : '';
  const parts = [tools + text, calls ? `→ ${calls}` : ''].filter((p) => p.trim() !== '');
  const preview = parts.join(' ');
  if (preview !== '') return oneLine(preview, PREVIEW_CHARS);
  const media = { images: 0, documents: 0 };
  countMedia(blocks(message), media);
  if (media.images + media.documents > 0) return `(${media.images} image(s), ${media.documents} document(s))`;
  return '(empty)';
}

/**
 * Counts every message with `counter` and attributes tool calls and results to their tool by
 * pairing each result with the pending call of the assistant message before it (by position
 * when ids repeat, as real logs do). A call's tokens are those of an assistant message holding
 * only that call, so framing is included and parallel calls are each charged it.
 */
export function conversationBreakdown(
  messages: readonly Message[],
  format: MessageFormat,
  counter: TokenCounter,
): ConversationBreakdown {
  const roles = new Map<string, RoleTally>();
  const tools = new Map<string, ToolTally>();
  const bySize: MessageSize[] = [];
  const media = { images: 0, documents: 0 };
  let pending: Array<{ id: string; name: string }> = [];
  let total = 0;
  const wire = wireFormat(format);

  const tool = (name: string): ToolTally => {
    let t = tools.get(name);
    if (!t) {
      t = { tool: name, calls: 0, callTokens: 0, results: 0, resultTokens: 0, largestResult: 0 };
      tools.set(name, t);
    }
    return t;
  };
  const answer = (id: string): string => {
    const i = pending.findIndex((p) => p.id === id);
    if (i < 0) return '(unknown call)';
    const [call] = pending.splice(i, 1);
    return call?.name ?? '(unknown call)';
  };
  const addResult = (name: string, tokens: number) => {
    const t = tool(name);
    t.results++;
    t.resultTokens += tokens;
    t.largestResult = Math.max(t.largestResult, tokens);
  };

  messages.forEach((message, seq) => {
    const tokens = counter.countMessage(message, format);
    total += tokens;
    const name = roleOf(message);
    const role = roles.get(name) ?? { role: name, messages: 0, tokens: 0 };
    role.messages++;
    role.tokens += tokens;
    roles.set(name, role);
    countMedia(blocks(message), media);

    const resultOf: string[] = [];
    if (message.role === 'tool') {
      const name = answer(message.tool_call_id);
      resultOf.push(name);
      addResult(name, tokens);
    } else if (message.role === 'user') {
      for (const block of blocks(message)) {
        if (!isRecord(block) || block.type !== 'tool_result') continue;
        const name = answer(String(block.tool_use_id));
        resultOf.push(name);
        addResult(
          name,
          counter.countMessage({ role: 'user', content: [block] } as unknown as Message, format),
        );
      }
      for (const result of ownReader(message)?.results?.(message) ?? []) {
        const name = answer(result.id);
        resultOf.push(name);
        addResult(name, counter.countMessage(result.alone, format));
      }
      if (resultOf.length === 0) pending = [];
    }
    const calls = callsOf(message);
    if (message.role === 'assistant' || message.role === 'model')
      pending = calls.map((c) => ({ id: c.id, name: c.name }));
    for (const call of calls) {
      const t = tool(call.name);
      t.calls++;
      const alone = wire.callAlone?.(call.block) ?? ({ role: 'assistant', content: [call.block] } as Message);
      t.callTokens += counter.countMessage(alone, format);
    }
    bySize.push({ seq, role: roleOf(message), tokens, preview: previewMessage(message, resultOf) });
  });

  bySize.sort((a, b) => b.tokens - a.tokens || a.seq - b.seq);
  const overhead = messages.length > 0 ? counter.requestOverhead : 0;
  return {
    messages: messages.length,
    tokens: total + overhead,
    overhead,
    byRole: [...roles.values()].sort((a, b) => b.tokens - a.tokens),
    byTool: [...tools.values()].sort(
      (a, b) => b.callTokens + b.resultTokens - (a.callTokens + a.resultTokens),
    ),
    bySize,
    images: media.images,
    documents: media.documents,
  };
}

/** The figures `count --json` and `inspect --json` both open with: what was counted, and how. */
export function breakdownHeader(
  conversation: { source: string; format?: MessageFormat | undefined },
  model: ModelCounter,
  b: ConversationBreakdown,
): Record<string, unknown> {
  return {
    source: conversation.source,
    format: conversation.format ?? 'either',
    model: model.info.id,
    counter: { id: model.counter.id, exact: model.counter.exact, label: model.label },
    messages: b.messages,
    tokens: b.tokens,
    overhead: b.overhead,
  };
}
