/**
 * Atoms of a conversation in the OpenAI Responses API format. A `reasoning` item stays with the
 * item it precedes (the API refuses a reasoning item without its following item, and a call
 * without the reasoning it came with); calls stay with their outputs, matched by `call_id`, and
 * an MCP approval request with its response. Repairs, in the view only: an output whose call is
 * gone is left out, a call whose output never came gets a placeholder output (a computer call,
 * whose output must be a screenshot, is left out instead), items that slipped between calls and
 * their outputs are moved after them.
 */

import type { Atom, BuildResult, Repair, SeenIds, ToolResultSlot } from '../../messages/atom-kit.js';
import { groupEntries, missingResultText, ResultScan } from '../../messages/atom-kit.js';
import { freezeDeep } from '../../messages/freeze.js';
import type { HistoryEntry, Message } from '../../messages/types.js';
import { itemType, outputCallId, RESPONSES_CALLS, RESPONSES_OUTPUTS } from './items.js';

type Item = Record<string, unknown>;

function isCall(type: string | undefined): boolean {
  return type !== undefined && (type in RESPONSES_CALLS || type === 'mcp_approval_request');
}

function isOutput(type: string | undefined): boolean {
  return type !== undefined && (type in RESPONSES_OUTPUTS || type === 'mcp_approval_response');
}

/** The id an answer must carry for a call: `call_id`, or the request id for an MCP approval. */
function callKey(item: Item): string {
  return item.type === 'mcp_approval_request' ? String(item.id) : String(item.call_id);
}

function answerKey(item: Item): string | undefined {
  if (item.type === 'mcp_approval_response') return String(item.approval_request_id);
  return outputCallId(item);
}

function single(entry: HistoryEntry): Atom {
  const item = entry.message as Item;
  const role = item.role;
  return {
    id: entry.seq,
    kind: role === 'system' || role === 'developer' ? 'system' : 'message',
    seqs: [entry.seq],
    messages: [entry.message],
    results: [],
    repaired: false,
    open: false,
    hasUserContent: role === 'user',
  };
}

/** Index of the first item at or after `i` that is not reasoning. */
function afterReasoning(entries: readonly HistoryEntry[], i: number): number {
  let k = i;
  while (k < entries.length && itemType(entries[k]!.message) === 'reasoning') k++;
  return k;
}

function isAssistantMessage(item: Item): boolean {
  return itemType(item) === 'message' && item.role === 'assistant';
}

/** Groups Responses items from `from` on (see the module note). */
export function buildResponses(entries: readonly HistoryEntry[], from: number, seen: SeenIds): BuildResult {
  return groupEntries(entries, from, (start, grouping) => {
    const { atoms, repairs } = grouping;
    let i = start;
    // Reasoning goes with what follows it.
    while (i < entries.length && itemType(entries[i]!.message) === 'reasoning') i++;
    if (i >= entries.length) {
      // Reasoning at the very end waits for its item, out of the view until it comes (the API
      // refuses reasoning "provided without its required following item"): an open tail.
      if (grouping.closedUntil === entries.length) grouping.closedUntil = start;
      return entries.length;
    }
    const head = entries[i]!;
    const headType = itemType(head.message);
    if (isOutput(headType)) {
      repairs.push({
        kind: 'orphan_result',
        seq: head.seq,
        detail: `${String(headType)} for ${String(answerKey(head.message as Item))} answers no call before it; left out`,
      });
      if (start < i) {
        // Reasoning before an orphan output belongs to the item after the output (a call whose
        // id names the reasoning, which the API refuses without it): grouped on as if the output
        // were not there.
        const rest = [...entries.slice(0, i), ...entries.slice(i + 1)];
        const tail = buildResponses(rest, start, seen);
        atoms.push(...tail.atoms);
        repairs.push(...tail.repairs);
        const open =
          tail.closedUntil >= rest.length
            ? entries.length
            : tail.closedUntil + (tail.closedUntil >= i ? 1 : 0);
        if (grouping.closedUntil === entries.length) grouping.closedUntil = open;
        return entries.length;
      }
      return i + 1;
    }
    if (!isCall(headType) && start < i && isAssistantMessage(head.message)) {
      // Reasoning, then the model's message (an empty one, narration), then its call: one turn.
      // The call's id names the reasoning, so the reasoning goes with the call, the message too.
      let k = i + 1;
      while (
        k < entries.length &&
        (isAssistantMessage(entries[k]!.message) || itemType(entries[k]!.message) === 'reasoning')
      )
        k++;
      if (k < entries.length && isCall(itemType(entries[k]!.message))) i = k;
    }
    if (!isCall(itemType(entries[i]!.message))) {
      const members = entries.slice(start, i + 1);
      atoms.push(members.length === 1 ? single(head) : group(members, [], false));
      return i + 1;
    }
    // Calls (parallel calls come one after another, reasoning may sit between them).
    const calls: HistoryEntry[] = [];
    const leading = entries.slice(start, i);
    while (i < entries.length) {
      const t = itemType(entries[i]!.message);
      if (isCall(t)) calls.push(entries[i]!);
      else if (t !== 'reasoning' || !isCall(itemType(entries[afterReasoning(entries, i)]?.message))) break;
      else leading.push(entries[i]!);
      i++;
    }
    // Outputs pair with calls by key; calls that share one (real logs reuse ids) pair in order.
    const answers = new Map<HistoryEntry, HistoryEntry>();
    const unanswered = (key: string | undefined) =>
      calls.find((c) => callKey(c.message as Item) === key && !answers.has(c));
    const scan = new ResultScan();
    while (i < entries.length && answers.size < calls.length) {
      const next = entries[i]!;
      const item = next.message as Item;
      const t = itemType(item);
      if (isOutput(t)) {
        const key = answerKey(item);
        const call = unanswered(key);
        if (call) {
          answers.set(call, next);
          scan.lastAnswer = i;
        } else
          repairs.push({
            kind: 'orphan_result',
            seq: next.seq,
            detail: `${String(t)} for ${String(key)} answers no pending call; left out`,
          });
        i++;
        continue;
      }
      // Assistant narration while the tools run (reasoning first, maybe) moves after the outputs.
      const k = afterReasoning(entries, i);
      const narrates = k < entries.length && isAssistantMessage(entries[k]!.message as Item);
      // Reasoning at the very end waits for its item, which may be another call: waiting too.
      if (t === 'reasoning' && k >= entries.length) break;
      if (isCall(t) || (t === 'reasoning' && !narrates) || (scan.narration >= 0 && item.role === 'user')) {
        // New calls, or the user speaking after the assistant did: these outputs are not coming.
        scan.ended = true;
        break;
      }
      if (narrates && scan.narration < 0) scan.narration = i;
      const upTo = narrates ? k + 1 : i + 1;
      scan.displaced.push(...entries.slice(i, Math.min(upTo, entries.length)));
      i = upTo;
    }
    // Results may still come: regroup from here. Open (placeholders that go once the results come)
    // when nothing but what slipped in waits after the calls; narration after them stays put.
    const waitFrom = afterReasoning(entries, i);
    const { stop, open } = scan.settle(grouping, start, i, answers.size < calls.length, waitFrom);
    const { displaced } = scan;
    const atom = exchange([...leading], calls, answers, open, repairs, seen);
    if (displaced.length > 0) atom.repaired = true;
    atoms.push(atom);
    for (const moved of displaced)
      repairs.push({
        kind: 'moved',
        seq: moved.seq,
        detail: `item between call ${head.seq} and its outputs moved after them`,
      });
    // Moved reasoning stays with the item it precedes.
    for (let d = 0; d < displaced.length; ) {
      let e = d;
      while (e < displaced.length - 1 && itemType(displaced[e]!.message) === 'reasoning') e++;
      const members = displaced.slice(d, e + 1);
      atoms.push(members.length === 1 ? single(members[0]!) : group(members, [], false));
      d = e + 1;
    }
    return stop;
  });
}

function group(members: readonly HistoryEntry[], results: ToolResultSlot[], open: boolean): Atom {
  return {
    id: members[0]!.seq,
    kind: 'message',
    seqs: members.map((m) => m.seq),
    messages: members.map((m) => m.message),
    results,
    repaired: false,
    open,
    hasUserContent: members.some((m) => (m.message as Item).role === 'user'),
  };
}

function exchange(
  leading: HistoryEntry[],
  calls: readonly HistoryEntry[],
  answers: ReadonlyMap<HistoryEntry, HistoryEntry>,
  open: boolean,
  repairs: Repair[],
  seen: SeenIds,
): Atom {
  // Real logs reuse call ids; the API pairs by call_id over the whole input, so a reused one is
  // shown renamed (call and output alike), the same way in every view.
  const viewIds = new Map<HistoryEntry, string>();
  for (const call of calls) {
    const id = callKey(call.message as Item);
    if ((call.message as Item).type === 'mcp_approval_request') {
      viewIds.set(call, id); // approvals pair by the request's own id, which the API assigned
      continue;
    }
    let out = id;
    if (seen.has(out)) out = `${id}_s${call.seq}`;
    for (let n = 2; seen.has(out); n++) out = `${id}_s${call.seq}_${n}`;
    seen.add(out);
    viewIds.set(call, out);
    if (out !== id)
      repairs.push({
        kind: 'renamed_id',
        seq: call.seq,
        detail: `call_id ${id} shown as ${out} (the API wants unique call ids)`,
      });
  }
  const renamed = (entry: HistoryEntry, call: HistoryEntry, field: string): Message => {
    const id = viewIds.get(call)!;
    if (id === callKey(call.message as Item)) return entry.message;
    return freezeDeep({ ...(entry.message as Item), [field]: id }) as unknown as Message;
  };
  // Stored order for reasoning and calls; outputs after all the calls, in call order.
  const head = [...leading, ...calls].sort((a, b) => a.seq - b.seq);
  const messages: Message[] = [];
  const seqs: number[] = [];
  let repaired = false;
  for (const entry of head) {
    const item = entry.message as Item;
    if (item.type === 'computer_call' && !answers.has(entry) && !open) {
      repaired = true;
      repairs.push({
        kind: 'missing_result',
        seq: entry.seq,
        detail: 'computer_call without its output left out',
      });
      continue;
    }
    const isCallEntry = calls.includes(entry) && item.type !== 'mcp_approval_request';
    messages.push(isCallEntry ? renamed(entry, entry, 'call_id') : entry.message);
    if (messages.at(-1) !== entry.message) repaired = true;
    seqs.push(entry.seq);
  }
  const results: ToolResultSlot[] = [];
  calls.forEach((call, index) => {
    const item = call.message as Item;
    const answer = answers.get(call);
    const key = viewIds.get(call)!;
    const name = String(item.name ?? item.type);
    if (answer) {
      const field = (answer.message as Item).call_id !== undefined ? 'call_id' : 'id';
      messages.push(renamed(answer, call, field));
      if (messages.at(-1) !== answer.message) repaired = true;
      seqs.push(answer.seq);
    } else if (item.type === 'mcp_approval_request' || item.type === 'computer_call') {
      return; // an approval may go unanswered; a computer call without output was left out
    } else {
      repaired = true;
      repairs.push({
        kind: 'missing_result',
        seq: call.seq,
        detail: `${String(item.type)} ${key} (${name}) has no output; a placeholder answers it`,
      });
      messages.push(
        freezeDeep({
          type: RESPONSES_CALLS[String(item.type)]!,
          call_id: key,
          output: missingResultText(name),
        }),
      );
    }
    if (item.type === 'mcp_approval_request' || item.type === 'computer_call') return;
    results.push({
      key: `${call.seq}:${index}`,
      callId: key,
      toolName: name,
      resultSeq: answer ? answer.seq : null,
      messageIndex: messages.length - 1,
      blockIndex: -1,
    });
  });
  return {
    id: head[0]!.seq,
    kind: 'exchange',
    seqs,
    messages,
    results,
    repaired,
    open,
    hasUserContent: false,
  };
}
