/**
 * What Chat Completions accepts as a request beyond each message's shape:
 *
 * - an assistant message's `tool_calls` are each answered by a `tool` message among the messages
 *   right after it, with only `tool` messages in between until all are answered;
 * - a `tool` message answers a still-unanswered call of that assistant message, once;
 * - an assistant message has content or tool calls (empty content with neither is refused);
 *   `tool_calls` and content arrays are never empty.
 */

import { at, isRecord, type PendingCall, type RequestProblem } from '../../messages/request-kit.js';

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
