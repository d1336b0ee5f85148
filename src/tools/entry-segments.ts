/**
 * A conversation as the context tools read it: a flat list of labelled pieces of text (what the
 * user said, what the assistant said, each tool call's arguments, each tool result), in order,
 * each with the sequence number of its entry. The summarizer, the fact extractor and the LLM
 * transcript all read entries through this, so they agree on what a message "says".
 */

import type { HistoryEntry, Message } from '../messages/types.js';
import type { Steps } from '../slices.js';
import { messageText, ownReader } from '../wire/content.js';

/** Whether a segment is prose, a tool call's arguments, or a tool's result. */
export type SegmentKind = 'text' | 'call' | 'result';

/** One labelled piece of text from an entry. */
export interface Segment {
  seq: number;
  role: 'system' | 'user' | 'assistant' | 'tool';
  kind: SegmentKind;
  /** `user`, `assistant`, `system`, `call get_user`, `tool get_user` (or `tool` when the name is unknown). */
  label: string;
  /** The tool's name for calls and results, when known. */
  toolName?: string;
  /** For calls: the arguments as JSON text. */
  text: string;
  /** An Anthropic tool_result with `is_error: true`. */
  isError?: boolean;
  /** For calls and results: the call's id, where the format gives one (pairs a result with its call). */
  callId?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function argumentsText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (input === undefined) return '';
  try {
    return JSON.stringify(input) ?? '';
  } catch {
    return '';
  }
}

/**
 * The segments of `entries`, in order. Tool results are labelled with their call's name, found by
 * the call id among the calls seen so far (the latest call with that id wins, which pairs reused
 * ids by adjacency as the atoms do). Empty texts are left out. A caller reading a history in
 * batches passes one `callNames` map to every batch, so a result finds its call in an earlier one.
 */
export function entrySegments(
  entries: readonly HistoryEntry[],
  callNames: Map<string, string> = new Map(),
): Segment[] {
  const out: Segment[] = [];
  for (const entry of entries) pushEntry(out, entry.seq, entry.message as Message, callNames);
  return out;
}

/** Entries {@link entrySegmentSteps} reads into segments between two of its pauses. */
const SEGMENT_BATCH = 256;

/**
 * The segments of `entries` that `keep` keeps, in order, as steps (see `Steps`) that pause after
 * every few hundred entries: the same segments as {@link entrySegments} reads at once.
 */
export function* entrySegmentSteps(
  entries: readonly HistoryEntry[],
  keep: (segment: Segment) => boolean,
): Steps<Segment[]> {
  // One map across the batches: a result finds its call in an earlier one.
  const callNames = new Map<string, string>();
  const kept: Segment[] = [];
  for (let from = 0; from < entries.length; from += SEGMENT_BATCH) {
    for (const s of entrySegments(entries.slice(from, from + SEGMENT_BATCH), callNames))
      if (keep(s)) kept.push(s);
    yield;
  }
  return kept;
}

function pushEntry(out: Segment[], seq: number, message: Message, callNames: Map<string, string>): void {
  const role = message.role;
  // A message of a shape only its format has (Gemini's parts), read piece by piece by it.
  const pieces = role === 'system' ? undefined : ownReader(message)?.pieces;
  if (pieces) {
    for (const piece of pieces(message)) {
      if (piece.kind === 'call') {
        const name = piece.name ?? 'tool';
        if (piece.id !== undefined) callNames.set(piece.id, name);
        pushCall(out, seq, name, piece.text, piece.id);
      } else if (piece.kind === 'result') {
        const name = piece.name ?? (piece.id === undefined ? undefined : callNames.get(piece.id));
        pushResult(out, seq, name, piece.text, piece.isError === true, piece.id);
      } else pushText(out, { seq, role: piece.role, kind: 'text', label: piece.role, text: piece.text });
    }
    return;
  }
  if (role === undefined) {
    pushItem(out, seq, message as unknown as Record<string, unknown>, callNames);
    return;
  }
  if (role === 'system' || role === 'developer') {
    pushText(out, { seq, role: 'system', kind: 'text', label: 'system', text: messageText(message) });
    return;
  }
  if (role === 'tool') {
    const id = message.tool_call_id;
    const name = typeof message.name === 'string' ? message.name : callNames.get(id);
    pushResult(out, seq, name, messageText(message), false, id);
    return;
  }
  if (role === 'assistant') {
    pushText(out, { seq, role: 'assistant', kind: 'text', label: 'assistant', text: messageText(message) });
    if ('tool_calls' in message && Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls as unknown[]) {
        if (!isRecord(call) || !isRecord(call.function)) continue;
        const name = typeof call.function.name === 'string' ? call.function.name : 'tool';
        if (typeof call.id === 'string') callNames.set(call.id, name);
        pushCall(out, seq, name, argumentsText(call.function.arguments), call.id);
      }
    }
    if (Array.isArray(message.content)) {
      for (const block of message.content as unknown[]) {
        if (!isRecord(block) || block.type !== 'tool_use') continue;
        const name = typeof block.name === 'string' ? block.name : 'tool';
        if (typeof block.id === 'string') callNames.set(block.id, name);
        pushCall(out, seq, name, argumentsText(block.input), block.id);
      }
    }
    return;
  }
  // user: plain text, or blocks among which Anthropic tool results, each labelled on its own.
  const content: unknown = message.content;
  if (!Array.isArray(content) || !content.some((b) => isRecord(b) && b.type === 'tool_result')) {
    pushText(out, { seq, role: 'user', kind: 'text', label: 'user', text: messageText(message) });
    return;
  }
  for (const block of content) {
    if (!isRecord(block)) continue;
    const single = { role: 'user', content: [block] } as unknown as Message;
    if (block.type === 'tool_result') {
      const id = block.tool_use_id;
      const name = typeof id === 'string' ? callNames.get(id) : undefined;
      pushResult(out, seq, name, messageText(single), block.is_error === true, id);
    } else {
      pushText(out, { seq, role: 'user', kind: 'text', label: 'user', text: messageText(single) });
    }
  }
}

/**
 * A Responses API item without a role: a call (`function_call`, `custom_tool_call`, …: a `name`
 * and its `arguments` or `input`), a tool's output (an `output` answering a `call_id`), or
 * something the model produced (reasoning, a server tool's call), which is the assistant's. Never
 * the user's: a tool's output read as a user turn would be attributed to the user.
 */
function pushItem(
  out: Segment[],
  seq: number,
  item: Record<string, unknown>,
  callNames: Map<string, string>,
): void {
  const callId = typeof item.call_id === 'string' ? item.call_id : undefined;
  if ('output' in item) {
    const name = callId === undefined ? undefined : callNames.get(callId);
    pushResult(out, seq, name, messageText(item as unknown as Message), false, callId);
    return;
  }
  if (typeof item.name === 'string' && ('arguments' in item || 'input' in item)) {
    if (callId !== undefined) callNames.set(callId, item.name);
    pushCall(out, seq, item.name, argumentsText(item.arguments ?? item.input), callId);
    return;
  }
  pushText(out, {
    seq,
    role: 'assistant',
    kind: 'text',
    label: 'assistant',
    text: messageText(item as unknown as Message),
  });
}

function pushText(out: Segment[], segment: Segment): void {
  if (segment.text.trim() !== '') out.push(segment);
}

function pushCall(out: Segment[], seq: number, name: string, text: string, id?: unknown): void {
  if (text.trim() === '' || text.trim() === '{}') return;
  const segment: Segment = {
    seq,
    role: 'assistant',
    kind: 'call',
    label: `call ${name}`,
    toolName: name,
    text,
  };
  if (typeof id === 'string') segment.callId = id;
  out.push(segment);
}

function pushResult(
  out: Segment[],
  seq: number,
  name: string | undefined,
  text: string,
  isError: boolean,
  id?: unknown,
): void {
  if (text.trim() === '') return;
  const segment: Segment = { seq, role: 'tool', kind: 'result', label: name ? `tool ${name}` : 'tool', text };
  if (name) segment.toolName = name;
  if (isError) segment.isError = true;
  if (typeof id === 'string') segment.callId = id;
  out.push(segment);
}
