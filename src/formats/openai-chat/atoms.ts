/**
 * Atoms of a conversation in the Chat Completions format: an assistant message with `tool_calls`
 * and the `tool` messages answering them are one atom (see `src/messages/atom-kit.ts`).
 */

import {
  type Atom,
  type BuildResult,
  distinctCallIds,
  groupEntries,
  missingResultText,
  type Repair,
  ResultScan,
  singleAtom,
  type ToolResultSlot,
} from '../../messages/atom-kit.js';
import { freezeDeep } from '../../messages/freeze.js';
import type {
  HistoryEntry,
  Message,
  OpenAIAssistantMessage,
  OpenAIMessage,
  OpenAIToolMessage,
} from '../../messages/types.js';

function openAICalls(message: OpenAIMessage): OpenAIAssistantMessage['tool_calls'] {
  return message.role === 'assistant' && message.tool_calls && message.tool_calls.length > 0
    ? message.tool_calls
    : undefined;
}

function openAIHasContent(message: OpenAIMessage): boolean {
  const content = message.content;
  if (content === null || content === undefined) return false;
  if (typeof content === 'string') return content.length > 0;
  return content.length > 0;
}

export function buildOpenAI(entries: readonly HistoryEntry[], from: number): BuildResult {
  return groupEntries(entries, from, (i, grouping) => {
    const { atoms, repairs } = grouping;
    const entry = entries[i]!;
    const message = entry.message as OpenAIMessage;
    const calls = openAICalls(message);
    if (!calls) {
      pushOpenAISingle(atoms, repairs, entry);
      return i + 1;
    }
    const viewIds = distinctCallIds(
      calls.map((c) => c.id),
      entry.seq,
    );
    const pending = calls.map((call, index) => ({ call, index }));
    const results: Array<{ entry: HistoryEntry; index: number }> = [];
    const scan = new ResultScan();
    let j = i + 1;
    while (j < entries.length && pending.length > 0) {
      const next = entries[j]!;
      const nextMessage = next.message as OpenAIMessage;
      if (nextMessage.role === 'tool') {
        const at = pending.findIndex((p) => p.call.id === (nextMessage as OpenAIToolMessage).tool_call_id);
        if (at >= 0) {
          results.push({ entry: next, index: pending[at]!.index });
          pending.splice(at, 1);
          scan.lastAnswer = j;
        } else {
          repairs.push({
            kind: 'orphan_result',
            seq: next.seq,
            detail: `tool result for ${nextMessage.tool_call_id} answers no pending call; left out`,
          });
        }
        j++;
      } else {
        const byModel = nextMessage.role === 'assistant';
        const makesCalls = byModel && openAICalls(nextMessage) !== undefined;
        if (!scan.pass(next, j, byModel, makesCalls, nextMessage.role === 'user')) break;
        j++;
      }
    }
    // Results may still come: regroup from here.
    const { stop, open } = scan.settle(grouping, i, j, pending.length > 0);
    const resultBySlot = new Map(results.map((r) => [r.index, r.entry]));
    const renamed = viewIds.some((id, n) => id !== calls[n]!.id);
    const callMessage = renamed
      ? freezeDeep({
          ...message,
          tool_calls: calls.map((call, n) => ({ ...call, id: viewIds[n]! })),
        } as OpenAIAssistantMessage)
      : message;
    if (renamed)
      repairs.push({
        kind: 'renamed_id',
        seq: entry.seq,
        detail: `tool call ids ${calls.map((c) => c.id).join(', ')} shown as ${viewIds.join(', ')} (the API wants distinct ids in one message)`,
      });
    const messages: Message[] = [callMessage];
    const seqs = [entry.seq];
    const slots: ToolResultSlot[] = [];
    let repaired = scan.displaced.length > 0 || renamed;
    // Results keep their stored order (providers accept any); placeholders follow them.
    const placeOrder = [...results.map((r) => r.index), ...pending.map((p) => p.index).sort((a, b) => a - b)];
    for (const index of placeOrder) {
      const call = calls[index]!;
      const id = viewIds[index]!;
      const resultEntry = resultBySlot.get(index);
      if (resultEntry) {
        const result = resultEntry.message as OpenAIToolMessage;
        messages.push(id === result.tool_call_id ? result : freezeDeep({ ...result, tool_call_id: id }));
        seqs.push(resultEntry.seq);
      } else {
        repaired = true;
        repairs.push({
          kind: 'missing_result',
          seq: entry.seq,
          detail: `call ${call.id} (${call.function.name}) has no result; a placeholder answers it`,
        });
        messages.push(
          freezeDeep({
            role: 'tool',
            tool_call_id: id,
            content: missingResultText(call.function.name),
          }),
        );
      }
      slots.push({
        key: `${entry.seq}:${index}`,
        callId: id,
        toolName: call.function.name,
        resultSeq: resultEntry ? resultEntry.seq : null,
        messageIndex: messages.length - 1,
        blockIndex: -1,
      });
    }
    atoms.push({
      id: entry.seq,
      kind: 'exchange',
      seqs,
      messages,
      results: slots,
      repaired,
      open,
      hasUserContent: false,
    });
    scan.placeMoved(repairs, `call ${entry.seq}`, (moved) => pushOpenAISingle(atoms, repairs, moved));
    return stop;
  });
}

/** A message outside any exchange: an orphan result and empty messages are left out. */
function pushOpenAISingle(atoms: Atom[], repairs: Repair[], entry: HistoryEntry): void {
  let message = entry.message as OpenAIMessage;
  if (message.role === 'tool') {
    repairs.push({
      kind: 'orphan_result',
      seq: entry.seq,
      detail: `tool result for ${message.tool_call_id} has no call before it; left out`,
    });
    return;
  }
  if (message.role === 'assistant' && Array.isArray(message.tool_calls)) {
    // `tool_calls: []` is refused ("empty array. Expected an array with minimum length 1",
    // https://github.com/openai/openai-node/pull/1341): the view shows the message without it.
    const { tool_calls: _none, ...rest } = message;
    message = freezeDeep(rest);
    repairs.push({ kind: 'empty_text', seq: entry.seq, detail: 'empty tool_calls left out' });
  }
  if (!openAIHasContent(message)) {
    repairs.push({ kind: 'empty_text', seq: entry.seq, detail: `empty ${message.role} message left out` });
    return;
  }
  atoms.push(singleAtom(entry, message, [], message.role === 'user'));
}
