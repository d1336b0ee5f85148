/**
 * Atoms of a conversation in the Gemini format. A model content with `functionCall` parts and the
 * user content that answers them with `functionResponse` parts are one atom. Repairs, in the view
 * only: responses split over several user contents are joined into one, in call order; a call
 * whose response never came (or has not come yet, at the open tail) gets a placeholder response; a response that answers no call before
 * it is left out (its content's other parts stay); contents that slipped between the calls and
 * their responses are moved after them. Model parts are never edited (thought signatures stay
 * exactly where they came).
 */

import type { Atom, BuildResult, Repair, ToolResultSlot } from '../../messages/atom-kit.js';
import { groupEntries, missingResultText, ResultScan } from '../../messages/atom-kit.js';
import { freezeDeep } from '../../messages/freeze.js';
import type { GeminiContentPart } from '../../messages/gemini-types.js';
import type { HistoryEntry, Message } from '../../messages/types.js';
import {
  callKeyOf,
  type GeminiCallRef,
  geminiCalls,
  geminiResponses,
  pairGemini,
  partKind,
} from './parts.js';

type Content = { role: string; parts: readonly GeminiContentPart[] };

function contentOf(entry: HistoryEntry): Content {
  return entry.message as unknown as Content;
}

function single(entry: HistoryEntry, message: Message = entry.message): Atom {
  const role = contentOf(entry).role;
  return {
    id: entry.seq,
    kind: role === 'system' ? 'system' : 'message',
    seqs: [entry.seq],
    messages: [message],
    results: [],
    repaired: message !== entry.message,
    open: false,
    hasUserContent: role === 'user',
  };
}

/** The user content's parts other than function responses, as a content (or undefined if none). */
function withoutResponses(entry: HistoryEntry): Message | undefined {
  const parts = contentOf(entry).parts.filter((p) => partKind(p) !== 'functionResponse');
  if (parts.length === 0) return undefined;
  return freezeDeep({ role: 'user', parts }) as unknown as Message;
}

/** Groups Gemini contents from `from` on (see the module note). */
export function buildGemini(entries: readonly HistoryEntry[], from: number): BuildResult {
  return groupEntries(entries, from, (start, grouping) => {
    const { atoms, repairs } = grouping;
    // Model narration stored as contents of its own right before a call's content ("let me
    // look that up", then the call) joins the call's content: the API refuses a function call
    // turn that does not come right after a user turn or a function response turn.
    let callAt = start;
    while (callAt < entries.length && isNarration(entries[callAt]!)) callAt++;
    if (callAt > start && !(callAt < entries.length && isCallContent(entries[callAt]!))) {
      // Narration no call follows: each content is an atom of its own. At the open tail, the
      // call it announces may come next: regroup from here then.
      if (callAt === entries.length && grouping.closedUntil === entries.length) grouping.closedUntil = start;
      for (let k = start; k < callAt; k++) atoms.push(single(entries[k]!));
      return callAt;
    }
    const before = callAt - start;
    const leading = entries.slice(start, callAt);
    const head = entries[start + before]!;
    const calls = geminiCalls(head.message);
    if (calls.length === 0) {
      if (geminiResponses(head.message).length === 0) {
        atoms.push(single(head));
        return start + 1;
      }
      const rest = withoutResponses(head);
      repairs.push({
        kind: 'orphan_result',
        seq: head.seq,
        detail: 'function responses that answer no call before them left out',
      });
      if (rest) atoms.push(single(head, rest));
      return start + 1;
    }
    // The calls' responses: the user contents after them, until every call is answered.
    let i = start + before + 1;
    const answering: HistoryEntry[] = [];
    const found: Array<{ entry: HistoryEntry; ref: GeminiCallRef }> = [];
    const scan = new ResultScan();
    const answered = () =>
      pairGemini(
        calls,
        found.map((f) => f.ref),
      ).every((k) => k >= 0);
    while (i < entries.length && !answered()) {
      const next = entries[i]!;
      const role = contentOf(next).role;
      const responses = geminiResponses(next.message);
      if (responses.length > 0) {
        answering.push(next);
        for (const ref of responses) found.push({ entry: next, ref });
        scan.lastAnswer = i;
      } else {
        // New calls (a system content too), or the user speaking after the model did: these
        // responses are not coming. Model narration while the functions run moves after the
        // responses, as a user content does.
        const byModel = role === 'model' || role === 'system';
        const newCalls = role === 'system' || (role === 'model' && geminiCalls(next.message).length > 0);
        if (!scan.pass(next, i, byModel, newCalls, role === 'user')) break;
      }
      i++;
    }
    // Results may still come: regroup from here. Open (placeholders that go once the results come)
    // when nothing but what slipped in waits after the calls; narration after them stays put.
    const { stop, open } = scan.settle(grouping, start, i, !answered());
    // Model narration joins the calls' content (stored order kept): a model content between the
    // responses and the next calls would make those calls follow a model turn, which the API refuses.
    const narrations = scan.displaced.filter((d) => contentOf(d).role === 'model');
    const displaced = scan.displaced.filter((d) => contentOf(d).role !== 'model');
    atoms.push(exchange(head, leading, narrations, calls, answering, found, open, repairs));
    for (const joined of leading)
      repairs.push({
        kind: 'moved',
        seq: joined.seq,
        detail: `model content before the calls of ${head.seq} joined to the calls' content`,
      });
    for (const joined of narrations)
      repairs.push({
        kind: 'moved',
        seq: joined.seq,
        detail: `model content between the calls of ${head.seq} and their responses joined to the calls' content`,
      });
    for (const moved of displaced) {
      repairs.push({
        kind: 'moved',
        seq: moved.seq,
        detail: `content between the calls of ${head.seq} and their responses moved after them`,
      });
      atoms.push(single(moved));
    }
    return stop;
  });
}

/** A model content that is only words (no function call or response): narration. */
function isNarration(entry: HistoryEntry): boolean {
  const content = contentOf(entry);
  return (
    content.role === 'model' &&
    geminiCalls(entry.message).length === 0 &&
    geminiResponses(entry.message).length === 0
  );
}

function isCallContent(entry: HistoryEntry): boolean {
  return contentOf(entry).role === 'model' && geminiCalls(entry.message).length > 0;
}

function exchange(
  head: HistoryEntry,
  leading: readonly HistoryEntry[],
  narrations: readonly HistoryEntry[],
  calls: readonly GeminiCallRef[],
  answering: readonly HistoryEntry[],
  found: ReadonlyArray<{ entry: HistoryEntry; ref: GeminiCallRef }>,
  open: boolean,
  repairs: Repair[],
): Atom {
  const pairing = pairGemini(
    calls,
    found.map((f) => f.ref),
  );
  const used = new Set(pairing.filter((k) => k >= 0));
  for (let k = 0; k < found.length; k++) {
    if (used.has(k)) continue;
    repairs.push({
      kind: 'orphan_result',
      seq: found[k]!.entry.seq,
      detail: `function response ${found[k]!.ref.name} answers no call of ${head.seq}; left out`,
    });
  }
  const joined = leading.length > 0 || narrations.length > 0;
  // Stored order kept: narration before the calls, the calls' content, narration after them. Each
  // part is kept as it came (thought signatures stay on the parts that carried them).
  const callContent = !joined
    ? head.message
    : (freezeDeep({
        ...contentOf(head),
        parts: [...leading.map(contentOf), contentOf(head), ...narrations.map(contentOf)].flatMap(
          (c) => c.parts,
        ),
      }) as unknown as Message);
  const callSeqs = [...leading.map((n) => n.seq), head.seq, ...narrations.map((n) => n.seq)];
  const clean =
    !joined &&
    answering.length === 1 &&
    found.length === calls.length &&
    pairing.every((k, n) => k === n) &&
    !open;
  const slots = (messageIndex: number, indexOfCall: (n: number) => number): ToolResultSlot[] =>
    calls.map((call, n) => ({
      key: `${head.seq}:${n}`,
      callId: callKeyOf(call),
      toolName: call.name,
      resultSeq: pairing[n]! >= 0 ? found[pairing[n]!]!.entry.seq : null,
      messageIndex,
      blockIndex: indexOfCall(n),
    }));
  if (clean) {
    return {
      id: head.seq,
      kind: 'exchange',
      seqs: [head.seq, answering[0]!.seq],
      messages: [head.message, answering[0]!.message],
      results: slots(1, (n) => found[n]!.ref.index),
      repaired: false,
      open: false,
      hasUserContent: withoutResponses(answering[0]!) !== undefined,
    };
  }
  // One user content: the responses in call order (placeholders for missing ones), then the
  // other parts the answering contents carried.
  const parts: GeminiContentPart[] = [];
  calls.forEach((call, n) => {
    const k = pairing[n]!;
    if (k >= 0) {
      const f = found[k]!;
      parts.push(contentOf(f.entry).parts[f.ref.index]!);
      return;
    }
    if (!open)
      repairs.push({
        kind: 'missing_result',
        seq: head.seq,
        detail: `functionCall ${callKeyOf(call)} (${call.name}) has no response; a placeholder answers it`,
      });
    const response: NonNullable<GeminiContentPart['functionResponse']> = {
      name: call.name,
      response: { error: missingResultText(call.name) },
    };
    if (call.id !== undefined) response.id = call.id;
    parts.push({ functionResponse: response });
  });
  for (const entry of answering) {
    for (const part of contentOf(entry).parts) if (partKind(part) !== 'functionResponse') parts.push(part);
  }
  const answer = freezeDeep({ role: 'user', parts }) as unknown as Message;
  return {
    id: callSeqs[0]!,
    kind: 'exchange',
    seqs: [...callSeqs, ...answering.map((e) => e.seq)],
    messages: [callContent, answer],
    results: slots(1, (n) => n),
    repaired: true,
    open,
    hasUserContent: answering.some((e) => withoutResponses(e) !== undefined),
  };
}
