/**
 * What the Messages API accepts as a request beyond each message's shape:
 *
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
 */

import {
  at,
  isBlank,
  isRecord,
  type PendingCall,
  type RequestProblem,
  userTurnProblem,
} from '../../messages/request-kit.js';
import { callTypeFor, isInlineCall, isInlineResult } from './blocks.js';

const ANTHROPIC_TOOL_ID = /^[a-zA-Z0-9_-]+$/;
const EMPTY_TEXT = 'expected non-empty text: Anthropic refuses empty and whitespace-only text blocks';

/** A tool_use block of the previous message still waiting for its result. */
interface OpenUse extends PendingCall {
  index: number;
}

function anthropicProblems(messages: readonly unknown[], problems: RequestProblem[]): void {
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

/** Every problem of a request to the Messages API, the system-only request included. */
export function anthropicRequestProblems(messages: readonly unknown[], problems: RequestProblem[]): void {
  anthropicProblems(messages, problems);
  userTurnProblem(messages, problems);
}
