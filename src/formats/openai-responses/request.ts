/**
 * Request rules of the OpenAI Responses API over a list of input items, as its reference and the
 * errors it returns state them:
 * - every function, custom tool, computer and local shell call is answered by one output item
 *   with its `call_id` later in the input ("No tool output found for function call …");
 * - every output answers a call before it, once; call ids are unique;
 * - a `reasoning` item is followed by the item it belongs to ("… of type 'reasoning' was
 *   provided without its required following item");
 * - an `mcp_approval_response` answers an `mcp_approval_request` before it.
 */

import type { RequestProblem } from '../../messages/request-kit.js';
import { itemType, outputCallId, RESPONSES_CALLS, RESPONSES_OUTPUTS } from './items.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Adds the Responses API's pairing and order problems of `items` to `problems`. */
export function responsesProblems(items: readonly unknown[], problems: RequestProblem[]): void {
  const calls = new Map<string, { index: number; type: string; answered: boolean }>();
  const approvals = new Set<string>();
  items.forEach((item, i) => {
    if (!isRecord(item)) return;
    const type = itemType(item);
    const at = `input[${i}]`;
    if (type === 'reasoning') {
      const next = items[i + 1];
      if (next === undefined || itemType(next) === undefined)
        problems.push({
          index: i,
          path: at,
          message: `item of type 'reasoning' was provided without its required following item`,
        });
      return;
    }
    if (type === 'mcp_approval_request' && typeof item.id === 'string') approvals.add(item.id);
    if (type === 'mcp_approval_response' && !approvals.has(String(item.approval_request_id)))
      problems.push({
        index: i,
        path: `${at}.approval_request_id`,
        message: `no mcp_approval_request "${String(item.approval_request_id)}" before this response`,
      });
    if (type !== undefined && type in RESPONSES_CALLS && typeof item.call_id === 'string') {
      if (calls.has(item.call_id))
        problems.push({ index: i, path: `${at}.call_id`, message: `duplicate call_id "${item.call_id}"` });
      else calls.set(item.call_id, { index: i, type, answered: false });
      return;
    }
    if (type === undefined || !(type in RESPONSES_OUTPUTS)) return;
    const id = outputCallId(item);
    const call = id === undefined ? undefined : calls.get(id);
    if (!call || RESPONSES_CALLS[call.type] !== type || call.answered) {
      problems.push({
        index: i,
        path: `${at}.call_id`,
        message: call?.answered
          ? `call "${String(id)}" is already answered: each call gets one output`
          : `no ${String(RESPONSES_OUTPUTS[type])} with call_id "${String(id)}" before this ${type}`,
      });
      return;
    }
    call.answered = true;
  });
  for (const [id, call] of calls) {
    if (call.answered) continue;
    problems.push({
      index: call.index,
      path: `input[${call.index}].call_id`,
      message: `No tool output found for ${call.type.replace(/_/g, ' ')} with call_id ${id}: each call needs its ${RESPONSES_CALLS[call.type]} later in the input`,
    });
  }
}
