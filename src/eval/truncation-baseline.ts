/**
 * Plain truncation, the baseline contextkit is measured against: the system prompt plus the
 * newest messages that fit, what most agent frameworks do when a conversation outgrows the
 * window. Written as simply as the technique is, so that the comparison measures the technique
 * and not a weak implementation of it: tool calls and their results are kept or dropped together,
 * and the kept part starts where the provider accepts a conversation to start.
 */

import { wireFormat } from '../formats/registry.js';
import type { Message, MessageFormat } from '../messages/types.js';
import type { TokenCounter } from '../tokens/types.js';

/** What to truncate to. */
export interface TruncationOptions {
  /** Tokens the whole request may take, request overhead included. */
  budget: number;
  counter: TokenCounter;
  format: MessageFormat;
}

/** The truncated request and what it costs. */
export interface TruncatedView {
  messages: Message[];
  /** Tokens of the request as `counter` counts it (messages plus the request overhead). */
  tokens: number;
}

function isSystem(message: Message): boolean {
  return message.role === 'system' || message.role === 'developer';
}

function callsTools(message: Message): boolean {
  if (message.role !== 'assistant') return false;
  if ('tool_calls' in message && message.tool_calls && message.tool_calls.length > 0) return true;
  return Array.isArray(message.content) && message.content.some((block) => block.type === 'tool_use');
}

function isToolResult(message: Message): boolean {
  if (message.role === 'tool') return true;
  return (
    message.role === 'user' &&
    Array.isArray(message.content) &&
    message.content.some((block) => block.type === 'tool_result')
  );
}

/**
 * The conversation (system messages aside) cut into the units truncation keeps or drops whole: an
 * assistant message that calls tools together with the results that follow it (the `tool`
 * messages, or the Anthropic user message of `tool_result` blocks), every other message alone.
 */
function groups(messages: readonly Message[]): Message[][] {
  const out: Message[][] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    const group = [message];
    if (callsTools(message)) {
      // The results that follow: `tool` messages, or the user message of `tool_result` blocks.
      while (messages[i + 1] !== undefined && isToolResult(messages[i + 1]!)) group.push(messages[++i]!);
    }
    out.push(group);
  }
  return out;
}

/** Whether a request may start its conversation with this unit. */
function canOpen(group: readonly Message[], format: MessageFormat): boolean {
  const first = group[0]!;
  if (isToolResult(first)) return false;
  return !wireFormat(format).userTurnFirst || first.role === 'user';
}

/**
 * The system messages and the longest run of newest units that fits `budget` with them; the
 * oldest kept units are dropped until one can open the conversation (a user message for
 * Anthropic; anything but an orphaned tool result for OpenAI). When the system messages alone do
 * not fit they are returned anyway, over the budget: truncation has nothing else to offer.
 */
export function truncationBaseline(messages: readonly Message[], options: TruncationOptions): TruncatedView {
  const { budget, counter, format } = options;
  const count = (m: Message) => counter.countMessage(m, format);
  const system = messages.filter(isSystem);
  let tokens = counter.requestOverhead + system.reduce((sum, m) => sum + count(m), 0);
  const units = groups(messages.filter((m) => !isSystem(m)));
  const sizes = units.map((unit) => unit.reduce((sum, m) => sum + count(m), 0));
  let start = units.length;
  while (start > 0 && tokens + sizes[start - 1]! <= budget) {
    start--;
    tokens += sizes[start]!;
  }
  while (start < units.length && !canOpen(units[start]!, format)) {
    tokens -= sizes[start]!;
    start++;
  }
  return { messages: [...system, ...units.slice(start).flat()], tokens };
}
