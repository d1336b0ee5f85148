/**
 * A second, deliberately plain reading of the providers' request rules. The library has its own
 * `validateRequest`; tests run both over the same messages so that a bug in one shows up as a
 * disagreement instead of hiding behind a shared mistake. Nothing here is imported from `src/`
 * except the message types, and the code favours obviousness over speed.
 *
 * Rules checked (from the providers' API documentation and the errors their APIs return):
 *
 * OpenAI Chat Completions
 * - an assistant message's tool calls are each answered exactly once by the `tool` messages that
 *   directly follow it (the block of consecutive `tool` messages); ids within one message differ;
 * - a `tool` message stands only in such a block and answers an id that the block's assistant
 *   message called;
 * - `tool_calls`, when present, is not an empty array, and an assistant message without tool calls
 *   has content.
 *   (OpenAI accepts empty strings and system messages anywhere, so neither is checked.)
 *
 * Anthropic Messages (with the system prompt given as leading `role: "system"` messages)
 * - system messages only before the first non-system message; the first non-system message is a
 *   user message; the only roles are system, user and assistant;
 * - every `tool_use` is answered by a `tool_result` in the very next message, which is a user
 *   message; every `tool_result` answers a `tool_use` of the message just before, once;
 * - in a user message the `tool_result` blocks come before every other block; `tool_use` appears
 *   only in assistant messages and `tool_result` only in user messages;
 * - no empty text: no text block and no string content that is empty or whitespace only (the API
 *   answers "text content blocks must contain non-whitespace text"), no empty content array,
 *   except for a final assistant message (a prefill may be empty).
 */
import type { Message, MessageFormat } from '../../src/messages/types.js';

/**
 * Lists every rule that `messages` break for `format`, each as `messages[i]…: what is wrong`.
 * An empty list means the provider would accept the conversation's tool pairing and shape.
 */
export function referenceProblems(messages: readonly Message[], format: MessageFormat): string[] {
  return format === 'openai' ? openaiProblems(messages) : anthropicProblems(messages);
}

// ---------------------------------------------------------------- reading messages loosely

/** Messages are read as plain records so malformed input yields problems, not crashes. */
type Loose = Record<string, unknown>;

function asRecord(value: unknown): Loose | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Loose) : undefined;
}

function roleOf(message: unknown): string {
  const role = asRecord(message)?.role;
  return typeof role === 'string' ? role : '(no role)';
}

function blocksOf(message: unknown): Loose[] {
  const content = asRecord(message)?.content;
  if (!Array.isArray(content)) return [];
  return content.map((block) => asRecord(block) ?? {});
}

function isBlank(text: unknown): boolean {
  return typeof text !== 'string' || text.trim() === '';
}

// ---------------------------------------------------------------- OpenAI

function openaiToolCallIds(message: unknown): string[] | undefined {
  const calls = asRecord(message)?.tool_calls;
  if (!Array.isArray(calls)) return undefined;
  return calls.map((call) => {
    const id = asRecord(call)?.id;
    return typeof id === 'string' ? id : '';
  });
}

function openaiHasContent(message: unknown): boolean {
  const content = asRecord(message)?.content;
  if (typeof content === 'string') return content.length > 0;
  return Array.isArray(content) && content.length > 0;
}

function openaiProblems(messages: readonly Message[]): string[] {
  const problems: string[] = [];
  let i = 0;
  while (i < messages.length) {
    const message = messages[i];
    const role = roleOf(message);
    if (role === 'tool') {
      const id = asRecord(message)?.tool_call_id;
      problems.push(
        `messages[${i}]: tool result for ${String(id)} does not follow an assistant message with tool calls`,
      );
      i += 1;
      continue;
    }
    if (role !== 'assistant') {
      i += 1;
      continue;
    }
    const ids = openaiToolCallIds(message);
    if (ids !== undefined && ids.length === 0) {
      problems.push(`messages[${i}].tool_calls: empty array (omit it instead)`);
    }
    if ((ids === undefined || ids.length === 0) && !openaiHasContent(message)) {
      problems.push(`messages[${i}]: assistant message has neither content nor tool calls`);
    }
    if (ids === undefined || ids.length === 0) {
      i += 1;
      continue;
    }
    ids.forEach((id, k) => {
      if (ids.indexOf(id) !== k) problems.push(`messages[${i}].tool_calls[${k}]: id ${id} is used twice`);
    });
    const answered = new Set<string>();
    let j = i + 1;
    while (j < messages.length && roleOf(messages[j]) === 'tool') {
      const rawId = asRecord(messages[j])?.tool_call_id;
      const id = typeof rawId === 'string' ? rawId : String(rawId);
      if (!ids.includes(id)) {
        problems.push(`messages[${j}]: tool result for ${id} answers no tool call of messages[${i}]`);
      } else if (answered.has(id)) {
        problems.push(`messages[${j}]: tool call ${id} of messages[${i}] is answered twice`);
      } else {
        answered.add(id);
      }
      j += 1;
    }
    ids.forEach((id, k) => {
      if (!answered.has(id) && ids.indexOf(id) === k) {
        problems.push(
          `messages[${i}].tool_calls[${k}]: call ${id} has no tool result in the messages right after it`,
        );
      }
    });
    i = j;
  }
  return problems;
}

// ---------------------------------------------------------------- Anthropic

function toolUseIds(message: unknown): string[] {
  if (roleOf(message) !== 'assistant') return [];
  return blocksOf(message)
    .filter((block) => block.type === 'tool_use')
    .map((block) => (typeof block.id === 'string' ? block.id : String(block.id)));
}

function toolResultIds(message: unknown): string[] {
  return blocksOf(message)
    .filter((block) => block.type === 'tool_result')
    .map((block) => (typeof block.tool_use_id === 'string' ? block.tool_use_id : String(block.tool_use_id)));
}

/** Empty text anywhere a provider would see it, including text blocks inside tool results. */
function emptyTextProblems(message: unknown, at: string, isFinalAssistant: boolean): string[] {
  const problems: string[] = [];
  const content = asRecord(message)?.content;
  if (typeof content === 'string') {
    if (isBlank(content) && !isFinalAssistant) problems.push(`${at}.content: empty text`);
    return problems;
  }
  if (!Array.isArray(content)) {
    problems.push(`${at}.content: expected a string or an array of blocks`);
    return problems;
  }
  if (content.length === 0 && !isFinalAssistant) problems.push(`${at}.content: no content blocks`);
  blocksOf(message).forEach((block, b) => {
    if (block.type === 'text' && isBlank(block.text)) problems.push(`${at}.content[${b}]: empty text block`);
    if (block.type === 'tool_result') {
      const inner = block.content;
      if (typeof inner === 'string') return; // an empty result string is accepted by the API
      if (!Array.isArray(inner)) return;
      inner.forEach((part, p) => {
        const record = asRecord(part);
        if (record?.type === 'text' && isBlank(record.text)) {
          problems.push(`${at}.content[${b}].content[${p}]: empty text block`);
        }
      });
    }
  });
  return problems;
}

function anthropicProblems(messages: readonly Message[]): string[] {
  const problems: string[] = [];
  let started = false;
  messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    const role = roleOf(message);
    if (role === 'system') {
      if (started) problems.push(`${at}: system message after the conversation started`);
      problems.push(...emptyTextProblems(message, at, false));
      return;
    }
    if (role !== 'user' && role !== 'assistant') {
      problems.push(`${at}: role ${role} is not an Anthropic role`);
      return;
    }
    if (!started) {
      started = true;
      if (role !== 'user') problems.push(`${at}: the first non-system message must be from the user`);
    }
    const isFinalAssistant = role === 'assistant' && i === messages.length - 1;
    problems.push(...emptyTextProblems(message, at, isFinalAssistant));

    const blocks = blocksOf(message);
    if (role === 'user') {
      blocks.forEach((block, b) => {
        if (block.type === 'tool_use') problems.push(`${at}.content[${b}]: tool_use in a user message`);
      });
      const firstOther = blocks.findIndex((block) => block.type !== 'tool_result');
      if (firstOther >= 0) {
        blocks.forEach((block, b) => {
          if (block.type === 'tool_result' && b > firstOther) {
            problems.push(`${at}.content[${b}]: tool_result after another block (results must come first)`);
          }
        });
      }
      const called = toolUseIds(messages[i - 1]);
      const answered = new Set<string>();
      toolResultIds(message).forEach((id) => {
        if (!called.includes(id)) {
          problems.push(`${at}: tool_result for ${id} answers no tool_use of the message just before`);
        } else if (answered.has(id)) {
          problems.push(`${at}: tool_use ${id} is answered twice`);
        }
        answered.add(id);
      });
      return;
    }

    blocks.forEach((block, b) => {
      if (block.type === 'tool_result')
        problems.push(`${at}.content[${b}]: tool_result in an assistant message`);
    });
    const ids = toolUseIds(message);
    if (ids.length === 0) return;
    ids.forEach((id, k) => {
      if (ids.indexOf(id) !== k) problems.push(`${at}: tool_use id ${id} is used twice in one message`);
    });
    const next = messages[i + 1];
    const results = next !== undefined && roleOf(next) === 'user' ? toolResultIds(next) : [];
    ids.forEach((id, k) => {
      if (ids.indexOf(id) === k && !results.includes(id)) {
        problems.push(`${at}: tool_use ${id} has no tool_result in the next message`);
      }
    });
  });
  return problems;
}
