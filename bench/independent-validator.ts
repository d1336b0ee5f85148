/**
 * Whether a provider would accept a request, written for the peers benchmark apart from the library
 * (`src/wire/validate-request.ts` is what is under test, so it cannot also be the judge). The
 * rules are the providers' documented ones and the errors their APIs return:
 *
 * OpenAI Chat Completions: every `tool_calls` entry is answered by a `tool` message among the
 * messages right after the assistant message, with nothing else in between; a `tool` message
 * answers a pending call, once; an assistant message has content or tool calls; no empty arrays.
 *
 * Anthropic Messages: system messages first; then a user message; every `tool_use` answered in the
 * very next message, every `tool_result` answers a `tool_use` of the message right before; results
 * come first in their user message; `tool_use` ids unique in the request and `[A-Za-z0-9_-]+`;
 * no empty or whitespace-only text; no empty message but a final assistant prefill.
 */
import type { MessageFormat } from '../src/messages/types.js';

type Loose = Record<string, unknown>;

function isObject(value: unknown): value is Loose {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function blank(value: unknown): boolean {
  return typeof value === 'string' && value.trim() === '';
}

function openaiProblems(messages: readonly unknown[]): string[] {
  const problems: string[] = [];
  let pending = new Set<string>();
  let pendingAt = -1;
  messages.forEach((raw, i) => {
    if (!isObject(raw)) {
      problems.push(`${i}: not an object`);
      return;
    }
    if (raw.role !== 'tool' && pending.size > 0) {
      problems.push(`${pendingAt}: calls ${[...pending].join(',')} not answered before message ${i}`);
      pending = new Set();
    }
    switch (raw.role) {
      case 'system':
      case 'developer':
      case 'user':
        if (raw.content === undefined || raw.content === null) problems.push(`${i}: no content`);
        if (Array.isArray(raw.content) && raw.content.length === 0) problems.push(`${i}: empty parts`);
        break;
      case 'assistant': {
        const calls = raw.tool_calls;
        const hasContent =
          (typeof raw.content === 'string' && raw.content !== '') ||
          (Array.isArray(raw.content) && raw.content.length > 0);
        if (Array.isArray(raw.content) && raw.content.length === 0) problems.push(`${i}: empty parts`);
        if (calls !== undefined) {
          if (!Array.isArray(calls) || calls.length === 0) {
            problems.push(`${i}: tool_calls empty`);
          } else {
            for (const call of calls) {
              const id = isObject(call) && typeof call.id === 'string' ? call.id : undefined;
              if (id === undefined) problems.push(`${i}: tool call without id`);
              else if (pending.has(id)) problems.push(`${i}: tool call id ${id} twice`);
              else pending.add(id);
            }
            pendingAt = i;
          }
        } else if (!hasContent) {
          problems.push(`${i}: assistant message with neither content nor tool calls`);
        }
        break;
      }
      case 'tool': {
        const id = typeof raw.tool_call_id === 'string' ? raw.tool_call_id : '';
        if (!pending.delete(id)) problems.push(`${i}: tool result ${id} answers no pending call`);
        break;
      }
      default:
        problems.push(`${i}: unknown role ${String(raw.role)}`);
    }
  });
  if (pending.size > 0) problems.push(`${pendingAt}: calls ${[...pending].join(',')} never answered`);
  return problems;
}

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;

function blocksOf(content: unknown): Loose[] | undefined {
  if (!Array.isArray(content)) return undefined;
  return content.filter(isObject);
}

function anthropicProblems(messages: readonly unknown[]): string[] {
  const problems: string[] = [];
  const usedIds = new Set<string>();
  let previousUses = new Set<string>();
  let seenConversation = false;
  messages.forEach((raw, i) => {
    if (!isObject(raw)) {
      problems.push(`${i}: not an object`);
      return;
    }
    const isLast = i === messages.length - 1;
    if (raw.role === 'system') {
      if (seenConversation) problems.push(`${i}: system message after the conversation began`);
      return;
    }
    if (!seenConversation && raw.role !== 'user') problems.push(`${i}: first message is not from the user`);
    seenConversation = true;
    const content = raw.content;
    const blocks = blocksOf(content);
    const uses = new Set<string>();
    if (typeof content === 'string') {
      if (blank(content) && !(isLast && raw.role === 'assistant' && content === '')) {
        problems.push(`${i}: empty text`);
      }
    } else if (blocks === undefined || (blocks.length === 0 && !(isLast && raw.role === 'assistant'))) {
      problems.push(`${i}: empty content`);
    }
    const answered = new Set<string>();
    let otherSeen = false;
    for (const block of blocks ?? []) {
      if (block.type === 'text' && blank(block.text)) problems.push(`${i}: empty text block`);
      if (block.type === 'tool_use') {
        if (raw.role !== 'assistant') problems.push(`${i}: tool_use outside an assistant message`);
        const id = typeof block.id === 'string' ? block.id : '';
        if (!TOOL_ID.test(id)) problems.push(`${i}: bad tool_use id ${id}`);
        if (usedIds.has(id)) problems.push(`${i}: tool_use id ${id} used twice in the request`);
        usedIds.add(id);
        uses.add(id);
      } else if (block.type === 'tool_result') {
        const id = typeof block.tool_use_id === 'string' ? block.tool_use_id : '';
        if (raw.role !== 'user') problems.push(`${i}: tool_result outside a user message`);
        if (otherSeen) problems.push(`${i}: tool_result after another block`);
        if (!previousUses.has(id) || answered.has(id))
          problems.push(`${i}: tool_result ${id} answers nothing`);
        answered.add(id);
        const c = block.content;
        if (block.is_error === true && (c === undefined || (Array.isArray(c) && c.length === 0))) {
          problems.push(`${i}: error result without content`);
        }
        if (blank(c) || (Array.isArray(c) && c.length === 0))
          problems.push(`${i}: empty tool_result content`);
        for (const inner of blocksOf(c) ?? []) {
          if (inner.type === 'text' && blank(inner.text)) problems.push(`${i}: empty text in tool_result`);
        }
      } else {
        otherSeen = true;
      }
    }
    for (const id of previousUses) {
      if (!answered.has(id)) problems.push(`${i}: tool_use ${id} not answered in this message`);
    }
    if (isLast && raw.role === 'assistant') {
      const last = blocks?.[blocks.length - 1];
      const text = typeof content === 'string' ? content : last?.type === 'text' ? last.text : undefined;
      if (typeof text === 'string' && text !== text.trimEnd())
        problems.push(`${i}: prefill ends with whitespace`);
    }
    previousUses = uses;
  });
  if (previousUses.size > 0) problems.push(`last: tool_use ${[...previousUses].join(',')} never answered`);
  if (!messages.some((m) => isObject(m) && m.role !== 'system')) problems.push('no conversation message');
  return problems;
}

/** The rules a request breaks for `format` (empty when the provider would accept it). */
export function requestProblems(messages: readonly unknown[], format: MessageFormat): string[] {
  if (messages.length === 0) return ['no messages'];
  return format === 'openai' ? openaiProblems(messages) : anthropicProblems(messages);
}
