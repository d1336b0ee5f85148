/**
 * Whether a provider's API would accept a list of messages as a request. Every view contextkit
 * returns is checked with this; it is exported so callers can check their own lists (and the CLI's
 * `validate` command is a thin wrapper over it).
 *
 * The rules are the providers' documented ones and the errors their APIs are known to return:
 *
 * OpenAI Chat Completions
 * - an assistant message's `tool_calls` are each answered by a `tool` message among the messages
 *   right after it, with only `tool` messages in between until all are answered;
 * - a `tool` message answers a still-unanswered call of that assistant message, once;
 * - an assistant message has content or tool calls (empty content with neither is refused);
 *   `tool_calls` and content arrays are never empty.
 *
 * Anthropic Messages
 * - system messages come first (they become the top-level `system` prompt);
 * - the first message after them is from the user;
 * - every `tool_use` is answered by a `tool_result` with its id in the very next message, and every
 *   `tool_result` answers a `tool_use` of the message right before it, once;
 * - in a user message, `tool_result` blocks come before any other block;
 * - `tool_use` ids are unique within the request and match `^[a-zA-Z0-9_-]+$`;
 * - text is never empty or whitespace-only, and no message is empty, except that the final
 *   assistant message (a prefill) may be empty, though it may not end with whitespace;
 * - a `tool_result` has non-empty content or none (and needs content when `is_error` is true);
 * - server tools and the MCP connector pair inside one assistant message: each result block
 *   (`web_search_tool_result`, …, `mcp_tool_result`) answers a `server_tool_use` / `mcp_tool_use`
 *   earlier in the same turn, once (consecutive assistant messages are one turn: a `pause_turn`
 *   reply sent back as it came is continued by the next); a call may wait for its result only at
 *   the end of the request, never across a user message; their ids are unique.
 *
 * OpenAI Responses: see `responses-request.ts` (calls and outputs by `call_id`, reasoning kept with
 * its following item).
 *
 * All: at least one message, and every message well-formed for that provider (`validateMessage`).
 */

import { InvalidMessageError } from '../errors.js';
import { callTypeFor, isInlineCall, isInlineResult } from '../formats/anthropic/blocks.js';
import { geminiProblems } from '../formats/gemini/request.js';
import { responsesProblems } from '../formats/openai-responses/request.js';
import type { Message, MessageFormat } from './types.js';
import { messageProblems } from './validate-message.js';

/** One rule a request breaks. `index` is the message's position, or -1 for the request as a whole. */
export interface RequestProblem {
  index: number;
  path: string;
  message: string;
}

/** The outcome of `validateRequest`: valid exactly when there are no problems. */
export interface RequestValidation {
  valid: boolean;
  problems: RequestProblem[];
}

const ANTHROPIC_TOOL_ID = /^[a-zA-Z0-9_-]+$/;
const EMPTY_TEXT = 'expected non-empty text: Anthropic refuses empty and whitespace-only text blocks';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isBlank(text: unknown): boolean {
  return typeof text === 'string' && text.trim().length === 0;
}

function at(index: number): string {
  return `messages[${index}]`;
}

/** One call waiting for its result, located for error messages. */
interface PendingCall {
  id: string;
  path: string;
  answered: boolean;
}

// ------------------------------------------------------------------------------------ OpenAI

export function openaiProblems(messages: readonly unknown[], problems: RequestProblem[]): void {
  let pending: { index: number; calls: PendingCall[] } | undefined;

  const closeExchange = (before: number | undefined): void => {
    if (!pending) return;
    for (const call of pending.calls) {
      if (call.answered) continue;
      const where =
        before === undefined
          ? 'but the request ends before one'
          : `before ${at(before)}, with only tool messages in between`;
      problems.push({
        index: pending.index,
        path: call.path,
        message: `tool call "${call.id}" is never answered: expected a tool message with tool_call_id "${call.id}" right after ${at(pending.index)} ${where}`,
      });
    }
    pending = undefined;
  };

  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (!isRecord(message)) {
      closeExchange(i);
      continue;
    }
    const role = message.role;
    if (role === 'tool') {
      const id = message.tool_call_id;
      if (typeof id !== 'string') continue; // shape problem already reported
      const path = `${at(i)}.tool_call_id`;
      if (!pending) {
        problems.push({
          index: i,
          path,
          message: `no tool call "${id}" is waiting for this result: a tool message must follow the assistant message whose tool_calls it answers, with only tool messages in between`,
        });
        continue;
      }
      const open = pending.calls.find((c) => c.id === id && !c.answered);
      if (open) {
        open.answered = true;
        continue;
      }
      const again = pending.calls.some((c) => c.id === id);
      problems.push({
        index: i,
        path,
        message: again
          ? `tool call "${id}" of ${at(pending.index)} is already answered: each call is answered once`
          : `no tool call "${id}" in ${at(pending.index)} (its calls: ${pending.calls.map((c) => `"${c.id}"`).join(', ')})`,
      });
      continue;
    }

    closeExchange(i);
    const content = message.content;
    if (
      Array.isArray(content) &&
      content.length === 0 &&
      !(role === 'assistant' && hasOpenAICalls(message))
    ) {
      problems.push({ index: i, path: `${at(i)}.content`, message: 'expected at least one content part' });
    }
    if (role !== 'assistant') continue;

    const calls = message.tool_calls;
    if (Array.isArray(calls) && calls.length === 0) {
      problems.push({
        index: i,
        path: `${at(i)}.tool_calls`,
        message: 'expected at least one tool call (omit tool_calls when there are none)',
      });
    }
    if (!hasOpenAICalls(message) && (content === '' || (Array.isArray(content) && content.length === 0))) {
      problems.push({
        index: i,
        path: `${at(i)}.content`,
        message: 'an assistant message needs content or tool_calls, and this one is empty',
      });
    }
    if (!hasOpenAICalls(message)) continue;
    const seen = new Set<string>();
    const pendingCalls: PendingCall[] = [];
    (calls as unknown[]).forEach((call, j) => {
      if (!isRecord(call) || typeof call.id !== 'string') return;
      const path = `${at(i)}.tool_calls[${j}].id`;
      if (seen.has(call.id)) {
        problems.push({ index: i, path, message: `duplicate tool call id "${call.id}" in one message` });
      }
      seen.add(call.id);
      pendingCalls.push({ id: call.id, path, answered: false });
    });
    pending = { index: i, calls: pendingCalls };
  }
  closeExchange(undefined);
}

function hasOpenAICalls(message: Record<string, unknown>): boolean {
  return Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
}

// ------------------------------------------------------------------------------------ Anthropic

/** A tool_use block of the previous message still waiting for its result. */
interface OpenUse extends PendingCall {
  index: number;
}

export function anthropicProblems(messages: readonly unknown[], problems: RequestProblem[]): void {
  let seenConversation = false;
  let lastConversational = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!isRecord(m) || m.role !== 'system') {
      lastConversational = i;
      break;
    }
  }

  const usedIds = new Map<string, string>();
  const inlineCalls: InlineCalls = new Map();
  let open: OpenUse[] = [];
  let openFrom = -1;

  const closeUses = (next: number | undefined): void => {
    for (const use of open) {
      if (use.answered) continue;
      const where =
        next === undefined
          ? 'the request ends after it'
          : `the next message, ${at(next)}, has no tool_result for it`;
      problems.push({
        index: use.index,
        path: use.path,
        message: `tool_use "${use.id}" is never answered: ${where}; each tool_use needs a tool_result block in the user message right after it`,
      });
    }
    open = [];
  };

  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    const role = isRecord(message) ? message.role : undefined;
    if (role === 'system') {
      if (seenConversation) {
        problems.push({
          index: i,
          path: `${at(i)}.role`,
          message:
            'a system message must come before every user and assistant message: in Anthropic format system messages become the top-level system prompt',
        });
      }
      emptyTextProblems(isRecord(message) ? message.content : undefined, `${at(i)}.content`, i, problems);
      continue;
    }
    if (!seenConversation) {
      seenConversation = true;
      if (role !== 'user') {
        problems.push({
          index: i,
          path: `${at(i)}.role`,
          message: 'expected "user": the first message after the system prompt must be from the user',
        });
      }
    }
    const previous = openFrom;
    const waiting = open;
    open = [];
    if (!isRecord(message)) {
      open = waiting;
      closeUses(i);
      openFrom = i;
      continue;
    }
    const content = message.content;
    const isFinal = i === lastConversational;

    // Empty messages and empty text.
    // (Missing or mistyped content is a shape problem, reported by messageProblems.)
    const empty = isBlank(content) || (Array.isArray(content) && content.length === 0);
    if (empty && !(role === 'assistant' && isFinal)) {
      problems.push({
        index: i,
        path: `${at(i)}.content`,
        message: 'expected non-empty content: only the final assistant message may be empty',
      });
    }
    if (role === 'assistant' && isFinal) trailingWhitespaceProblem(content, i, problems);

    // Results answer the uses of the message just before.
    const blocks: unknown[] = Array.isArray(content) ? content : [];
    let otherBlockSeen = false;
    blocks.forEach((block, k) => {
      if (!isRecord(block)) return;
      if (block.type !== 'tool_result') {
        otherBlockSeen = true;
        if (block.type === 'text' && isBlank(block.text)) {
          problems.push({ index: i, path: `${at(i)}.content[${k}].text`, message: EMPTY_TEXT });
        }
        return;
      }
      if (role === 'user' && otherBlockSeen) {
        problems.push({
          index: i,
          path: `${at(i)}.content[${k}].type`,
          message:
            'tool_result blocks must come before any other block in a user message: move the text after the results',
        });
      }
      toolResultContentProblems(block, `${at(i)}.content[${k}]`, i, problems);
      const id = block.tool_use_id;
      if (typeof id !== 'string') return;
      const use = waiting.find((u) => u.id === id && !u.answered);
      if (use) {
        use.answered = true;
        return;
      }
      const path = `${at(i)}.content[${k}].tool_use_id`;
      const again = waiting.some((u) => u.id === id);
      problems.push({
        index: i,
        path,
        message: again
          ? `tool_use "${id}" is already answered in this message: each tool_use gets one tool_result`
          : previous < 0
            ? `no tool_use "${id}" in the previous message: each tool_result must answer a tool_use of the assistant message right before it`
            : `no tool_use "${id}" in the previous message, ${at(previous)}: each tool_result must answer a tool_use of the assistant message right before it`,
      });
    });
    open = waiting;
    closeUses(i);

    if (role === 'assistant') inlinePairProblems(blocks, i, inlineCalls, usedIds, problems);
    else unansweredInline(inlineCalls, i, problems);

    // Uses this message opens.
    if (role === 'assistant') {
      blocks.forEach((block, k) => {
        if (!isRecord(block) || block.type !== 'tool_use' || typeof block.id !== 'string') return;
        const path = `${at(i)}.content[${k}].id`;
        const earlier = usedIds.get(block.id);
        if (earlier !== undefined) {
          problems.push({
            index: i,
            path,
            message: `tool_use ids must be unique within a request: "${block.id}" is already used at ${earlier}`,
          });
        } else {
          usedIds.set(block.id, path);
        }
        if (!ANTHROPIC_TOOL_ID.test(block.id)) {
          problems.push({ index: i, path, message: 'expected an id matching ^[a-zA-Z0-9_-]+$' });
        }
        open.push({ id: block.id, path, answered: false, index: i });
      });
    }
    openFrom = i;
  }
  closeUses(undefined);
}

/** Server-tool and MCP calls of the current assistant turn, by id. */
type InlineCalls = Map<string, { type: string; answered: boolean; path: string; index: number }>;

/** Server-tool and MCP calls and results inside one assistant turn, paired in order. */
function inlinePairProblems(
  blocks: readonly unknown[],
  index: number,
  calls: InlineCalls,
  usedIds: Map<string, string>,
  problems: RequestProblem[],
): void {
  blocks.forEach((block, k) => {
    if (!isRecord(block)) return;
    const path = `${at(index)}.content[${k}]`;
    if (isInlineCall(block.type) && typeof block.id === 'string') {
      const earlier = usedIds.get(block.id);
      if (earlier !== undefined) {
        problems.push({
          index,
          path: `${path}.id`,
          message: `tool use ids must be unique within a request: "${block.id}" is already used at ${earlier}`,
        });
      } else usedIds.set(block.id, `${path}.id`);
      calls.set(block.id, { type: block.type as string, answered: false, path: `${path}.id`, index });
      return;
    }
    if (!isInlineResult(block.type) || typeof block.tool_use_id !== 'string') return;
    const call = calls.get(block.tool_use_id);
    const wanted = callTypeFor(block.type as string);
    if (!call || call.type !== wanted || call.answered) {
      problems.push({
        index,
        path: `${path}.tool_use_id`,
        message: call?.answered
          ? `${wanted} "${block.tool_use_id}" is already answered: each call gets one result`
          : `no ${wanted} "${block.tool_use_id}" before this ${String(block.type)} in the same turn: a server tool's result follows its call inside the assistant message`,
      });
      return;
    }
    call.answered = true;
  });
}

/** A user message ends the assistant turn: its server-tool and MCP calls must all be answered. */
function unansweredInline(calls: InlineCalls, next: number, problems: RequestProblem[]): void {
  for (const [id, call] of calls) {
    if (call.answered) continue;
    problems.push({
      index: call.index,
      path: call.path,
      message: `${call.type} "${id}" has no result before ${at(next)}: a server tool's result follows its call in the same assistant turn (only the last turn of a request may stop at a running call, as a pause_turn reply does)`,
    });
  }
  calls.clear();
}

/** Empty or whitespace-only text blocks in a list, which Anthropic refuses wherever they appear. */
function emptyTextProblems(content: unknown, path: string, index: number, problems: RequestProblem[]): void {
  if (!Array.isArray(content)) return;
  content.forEach((block: unknown, k) => {
    if (isRecord(block) && block.type === 'text' && isBlank(block.text)) {
      problems.push({ index, path: `${path}[${k}].text`, message: EMPTY_TEXT });
    }
  });
}

function toolResultContentProblems(
  block: Record<string, unknown>,
  path: string,
  index: number,
  problems: RequestProblem[],
): void {
  const content = block.content;
  const empty = content === undefined || content === '' || (Array.isArray(content) && content.length === 0);
  if (empty && block.is_error === true) {
    problems.push({
      index,
      path: `${path}.content`,
      message: 'expected content: a tool_result with is_error true needs content',
    });
  } else if (content !== undefined && empty) {
    problems.push({
      index,
      path: `${path}.content`,
      message: 'expected non-empty content: omit "content" for a tool that returned nothing',
    });
  }
  emptyTextProblems(content, `${path}.content`, index, problems);
}

function trailingWhitespaceProblem(content: unknown, index: number, problems: RequestProblem[]): void {
  let text: unknown = content;
  let path = `${at(index)}.content`;
  if (Array.isArray(content)) {
    const k = content.length - 1;
    const last: unknown = content[k];
    if (!isRecord(last) || last.type !== 'text') return;
    text = last.text;
    path = `${path}[${k}].text`;
  }
  if (typeof text === 'string' && text.length > 0 && /\s$/.test(text)) {
    problems.push({
      index,
      path,
      message: 'the final assistant message (a prefill) may not end with whitespace',
    });
  }
}

// ------------------------------------------------------------------------------------ entry points

/**
 * Checks `messages` against what `provider`'s API accepts and lists every problem with the
 * message index and the path of the offending field. Never throws; see `assertValidRequest`.
 */
export function validateRequest(messages: readonly unknown[], provider: MessageFormat): RequestValidation {
  const problems: RequestProblem[] = [];
  if (!Array.isArray(messages)) {
    problems.push({ index: -1, path: 'messages', message: 'expected an array of messages' });
    return { valid: false, problems };
  }
  if (messages.length === 0) {
    problems.push({ index: -1, path: 'messages', message: 'expected at least one message' });
  }
  for (let i = 0; i < messages.length; i++) {
    for (const issue of messageProblems(messages[i], at(i), provider)) problems.push({ index: i, ...issue });
  }
  if (provider === 'openai') openaiProblems(messages, problems);
  else if (provider === 'openai-responses') responsesProblems(messages, problems);
  else {
    if (provider === 'gemini') geminiProblems(messages, problems);
    else anthropicProblems(messages, problems);
    if (messages.length > 0 && !messages.some((m) => isRecord(m) && m.role !== 'system')) {
      problems.push({
        index: -1,
        path: 'messages',
        message: 'expected at least one user message besides the system prompt',
      });
    }
  }
  problems.sort((a, b) => a.index - b.index);
  return { valid: problems.length === 0, problems };
}

/**
 * Throws `InvalidMessageError` (code `invalid_request`) listing every problem when `messages`
 * would be refused by `provider`; returns them typed otherwise.
 */
export function assertValidRequest(messages: readonly unknown[], provider: MessageFormat): Message[] {
  const { problems } = validateRequest(messages, provider);
  if (problems.length > 0) {
    throw new InvalidMessageError(
      problems.map(({ path, message }) => ({ path, message })),
      'invalid_request',
    );
  }
  return messages as Message[];
}
