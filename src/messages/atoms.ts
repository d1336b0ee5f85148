import { isInlineCall, isInlineResult, isShortenableResult } from '../formats/anthropic/blocks.js';
import { buildGemini } from '../formats/gemini/atoms.js';
import { buildResponses } from '../formats/openai-responses/atoms.js';
import { isCompactionItem } from '../formats/openai-responses/items.js';
import { freezeDeep } from './freeze.js';
import { shownEntries } from './shown-entries.js';
import type {
  AnthropicContentBlock,
  AnthropicMessage,
  AnthropicToolResultBlock,
  AnthropicToolUseBlock,
  HistoryEntry,
  Message,
  MessageFormat,
  OpenAIAssistantMessage,
  OpenAIMessage,
  OpenAIToolMessage,
} from './types.js';

/**
 * Atoms are the units a view keeps or drops whole. Building them also repairs, in the view only,
 * what real logs get wrong: calls whose results never came, results whose call is gone, and
 * messages a hook slipped between a call and its results. Stored entries are never touched; the
 * repaired messages are new frozen objects, and clean atoms reuse the stored objects as they are.
 */

/** Where one tool call's result sits inside an atom's rendered messages. */
export interface ToolResultSlot {
  /** Stable key `seq:index` of the call: the calling message's seq and the call's position in it. */
  key: string;
  callId: string;
  toolName: string;
  /** Seq of the stored message holding the result; null when a placeholder stands in for it. */
  resultSeq: number | null;
  /** Index of the rendered message holding the result within `Atom.messages`. */
  messageIndex: number;
  /**
   * Index of the result block in that message (Anthropic `tool_result`, or a server-tool or MCP
   * result inside an assistant message); -1 for an OpenAI `tool` message.
   */
  blockIndex: number;
}

/** A system message, a lone message, or a tool exchange (calls with all their results). */
export type AtomKind = 'system' | 'message' | 'exchange';

/** A unit a view keeps or drops whole, with the messages it puts in a view. */
export interface Atom {
  /** Seq of the first stored message the atom renders; unique and stable. */
  id: number;
  kind: AtomKind;
  /** Seqs of the stored messages rendered here, in view order. */
  seqs: number[];
  /** The messages this atom puts in a view, valid for the conversation's format. */
  messages: readonly Message[];
  /** Tool results of an exchange, in call order. */
  results: ToolResultSlot[];
  /** True when the view differs from the stored messages (placeholder, reorder, orphan left out). */
  repaired: boolean;
  /** An exchange at the tail still waiting for results; its placeholders go once they arrive. */
  open: boolean;
  /** Contains a user message with content of its own (not only tool results). */
  hasUserContent: boolean;
}

/** What the view did to keep a request valid, by seq, for receipts and warnings. */
export interface Repair {
  kind: 'missing_result' | 'orphan_result' | 'moved' | 'renamed_id' | 'empty_text';
  seq: number;
  detail: string;
}

/** Text given in place of a result that never came. */
export function missingResultText(toolName: string): string {
  return `[contextkit: no result was recorded for this ${toolName} call (the run was interrupted before it returned). Call it again if you still need it.]`;
}

// ---------------------------------------------------------------------------------------- OpenAI

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

/** Atoms grouped from a start index, with the repairs made and where the open tail begins. */
export interface BuildResult {
  atoms: Atom[];
  repairs: Repair[];
  /** Index of the first entry of the open tail atom, or entries.length when all atoms are closed. */
  closedUntil: number;
}

/**
 * Where a scan for a call's results ends when assistant narration came while they were pending
 * (frameworks store "Let me check…" while tools run): the narration moves after the results when
 * one came after it; when none did, the exchange ends at the first narration and it stays put.
 * `narration` and `lastAnswer` are entry indexes (-1 for none); `j` is where the scan stopped.
 */
export function interimEnd(narration: number, lastAnswer: number, j: number): number {
  return narration >= 0 && lastAnswer < narration ? narration : j;
}

/**
 * The ids one message's calls carry in views: the stored ones, with a repeat inside the message
 * (the API wants them distinct) made unique. Results pair with repeated ids in order.
 */
export function distinctCallIds(ids: readonly string[], seq: number): string[] {
  const taken = new Set(ids);
  const seen = new Set<string>();
  return ids.map((id, index) => {
    let out = id;
    if (seen.has(out)) {
      out = `${id}_s${seq}_${index}`;
      for (let n = 2; taken.has(out); n++) out = `${id}_s${seq}_${index}_${n}`;
    }
    seen.add(out);
    taken.add(out);
    return out;
  });
}

export function buildOpenAI(entries: readonly HistoryEntry[], from: number): BuildResult {
  const atoms: Atom[] = [];
  const repairs: Repair[] = [];
  let closedUntil = entries.length;
  let i = from;
  while (i < entries.length) {
    const entry = entries[i]!;
    const message = entry.message as OpenAIMessage;
    const calls = openAICalls(message);
    if (!calls) {
      pushOpenAISingle(atoms, repairs, entry);
      i++;
      continue;
    }
    const viewIds = distinctCallIds(
      calls.map((c) => c.id),
      entry.seq,
    );
    const pending = calls.map((call, index) => ({ call, index }));
    const results: Array<{ entry: HistoryEntry; index: number }> = [];
    let displaced: HistoryEntry[] = [];
    let j = i + 1;
    let ended = false;
    let narration = -1;
    let lastAnswer = -1;
    while (j < entries.length && pending.length > 0) {
      const next = entries[j]!;
      const nextMessage = next.message as OpenAIMessage;
      if (nextMessage.role === 'tool') {
        const at = pending.findIndex((p) => p.call.id === (nextMessage as OpenAIToolMessage).tool_call_id);
        if (at >= 0) {
          results.push({ entry: next, index: pending[at]!.index });
          pending.splice(at, 1);
          lastAnswer = j;
        } else {
          repairs.push({
            kind: 'orphan_result',
            seq: next.seq,
            detail: `tool result for ${nextMessage.tool_call_id} answers no pending call; left out`,
          });
        }
        j++;
      } else if (
        (nextMessage.role === 'assistant' && openAICalls(nextMessage)) ||
        (narration >= 0 && nextMessage.role === 'user')
      ) {
        // New calls, or the user speaking after the assistant did: these results are not coming.
        ended = true;
        break;
      } else {
        if (nextMessage.role === 'assistant' && narration < 0) narration = j;
        displaced.push(next);
        j++;
      }
    }
    // Results may still come: regroup from here. Open (placeholders that go once the results come)
    // when nothing but what slipped in waits after the calls; narration after them stays put.
    const waiting = pending.length > 0 && !ended && j >= entries.length;
    if (waiting && closedUntil === entries.length) closedUntil = i;
    const stop = interimEnd(narration, lastAnswer, j);
    const open = waiting && stop === j;
    if (stop < j) displaced = displaced.filter((d) => d.seq < entries[stop]!.seq);
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
    let repaired = displaced.length > 0 || renamed;
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
    for (const moved of displaced) {
      repairs.push({
        kind: 'moved',
        seq: moved.seq,
        detail: `message between call ${entry.seq} and its results moved after them`,
      });
      pushOpenAISingle(atoms, repairs, moved);
    }
    i = stop;
  }
  return { atoms, repairs, closedUntil };
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
  atoms.push(singleAtom(entry, 'openai', message));
}

function singleAtom(entry: HistoryEntry, format: MessageFormat, message: Message = entry.message): Atom {
  const role = message.role;
  return {
    id: entry.seq,
    kind: role === 'system' || role === 'developer' ? 'system' : 'message',
    seqs: [entry.seq],
    messages: [message],
    results: format === 'anthropic' ? inlineSlots(message as AnthropicMessage, entry.seq) : [],
    repaired: message !== entry.message,
    open: false,
    hasUserContent:
      role === 'user' && (format === 'openai' || anthropicUserHasContent(message as AnthropicMessage)),
  };
}

// ------------------------------------------------------------------------------------- Anthropic

function blocksOf(message: AnthropicMessage): readonly AnthropicContentBlock[] | undefined {
  return typeof message.content === 'string' ? undefined : (message.content as AnthropicContentBlock[]);
}

/**
 * Slots for the server-tool and MCP results inside an assistant message (their calls sit in the
 * same message, so the pair is one atom by construction) that clearing may shorten. Keyed
 * `seq:b<block index>`, apart from the `seq:<call index>` keys of client tool calls.
 */
function inlineSlots(
  message: AnthropicMessage,
  seq: number,
  messageIndex = 0,
  names = new Map<string, string>(),
): ToolResultSlot[] {
  if (message.role !== 'assistant') return [];
  const blocks = blocksOf(message);
  if (!blocks?.some((b) => isInlineCall(b.type) || isInlineResult(b.type))) return [];
  const slots: ToolResultSlot[] = [];
  blocks.forEach((block, index) => {
    const b = block as unknown as Record<string, unknown>;
    if (isInlineCall(b.type) && typeof b.id === 'string') names.set(b.id, String(b.name));
    else if (isInlineResult(b.type) && isShortenableResult(b)) {
      const callId = String(b.tool_use_id);
      const toolName = names.get(callId);
      if (toolName === undefined) return;
      slots.push({
        key: `${seq}:b${index}`,
        callId,
        toolName,
        resultSeq: seq,
        messageIndex,
        blockIndex: index,
      });
    }
  });
  return slots;
}

/** Ids of the server-tool and MCP calls a message makes that no result in it answers yet. */
function settleInline(running: Set<string>, message: AnthropicMessage): Set<string> {
  for (const block of blocksOf(message) ?? []) {
    const b = block as unknown as Record<string, unknown>;
    if (isInlineCall(b.type) && typeof b.id === 'string') running.add(b.id);
    else if (isInlineResult(b.type)) running.delete(String(b.tool_use_id));
  }
  return running;
}

/**
 * A `pause_turn` reply (a server tool still running) and the assistant messages that continue it:
 * one turn for the API, so one atom, with the shortenable results of all of them as slots.
 */
function pausedAtom(members: readonly HistoryEntry[], open: boolean): Atom {
  const names = new Map<string, string>();
  const messages = members.map(
    (m) => withoutEmptyText(m.message as AnthropicMessage) ?? (m.message as AnthropicMessage),
  );
  return {
    id: members[0]!.seq,
    kind: 'message',
    seqs: members.map((m) => m.seq),
    messages,
    results: messages.flatMap((m, k) => inlineSlots(m, members[k]!.seq, k, names)),
    repaired: messages.some((m, k) => m !== members[k]!.message),
    open,
    hasUserContent: false,
  };
}

function anthropicUserHasContent(message: AnthropicMessage): boolean {
  const blocks = blocksOf(message);
  if (!blocks) return (message.content as string).length > 0;
  return blocks.some((b) => b.type !== 'tool_result');
}

function toolUses(message: AnthropicMessage): AnthropicToolUseBlock[] {
  if (message.role !== 'assistant') return [];
  const blocks = blocksOf(message);
  if (!blocks) return [];
  return blocks.filter((b): b is AnthropicToolUseBlock => b.type === 'tool_use');
}

function isEmptyTextBlock(block: AnthropicContentBlock): boolean {
  return block.type === 'text' && block.text.trim().length === 0;
}

/**
 * A result the API would refuse as it is: empty or blank content must be left out (or, for an
 * error, say so), and blank text blocks inside it go. Returns the block itself when it is fine.
 */
function cleanResultBlock(block: AnthropicToolResultBlock, id: string): AnthropicToolResultBlock {
  let content = block.content;
  if (Array.isArray(content) && content.some((b) => b.type === 'text' && b.text.trim().length === 0)) {
    content = content.filter((b) => !(b.type === 'text' && b.text.trim().length === 0));
  }
  const empty =
    content !== undefined &&
    ((typeof content === 'string' && content.trim().length === 0) || content.length === 0);
  if (!empty && content === block.content && id === block.tool_use_id) return block;
  const { content: _old, ...rest } = block;
  const out: AnthropicToolResultBlock = { ...rest, tool_use_id: id };
  if (!empty && content !== undefined) out.content = content;
  else if (block.is_error) out.content = '[the tool reported an error with no output]';
  return out;
}

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;

/**
 * The id a tool_use carries in views: the stored one, unless the API would refuse it (a reused
 * id, or characters outside `[a-zA-Z0-9_-]`). Depends only on the history, so views stay stable.
 */
/** The tool ids views already show: those of closed atoms, and those met while grouping the tail. */
export interface SeenIds {
  has(id: string): boolean;
  add(id: string): void;
}

/** Closed ids read through, the tail's kept apart: no copy of the closed set per update. */
export function layeredIds(closed: ReadonlySet<string>): SeenIds {
  const tail = new Set<string>();
  return { has: (id) => closed.has(id) || tail.has(id), add: (id) => void tail.add(id) };
}

function viewToolId(id: string, seq: number, seen: SeenIds): string {
  let out = TOOL_ID.test(id) ? id : id.replace(/[^a-zA-Z0-9_-]/g, '_') || 'tool';
  if (seen.has(out)) out = `${out}_s${seq}`;
  for (let n = 2; seen.has(out); n++) out = `${out}_${n}`;
  seen.add(out);
  return out;
}

/** Drops empty text blocks the API would reject; returns the same object when there are none. */
function withoutEmptyText(message: AnthropicMessage): AnthropicMessage | undefined {
  const blocks = blocksOf(message);
  if (!blocks) return (message.content as string).length > 0 ? message : undefined;
  if (!blocks.some(isEmptyTextBlock)) return blocks.length > 0 ? message : undefined;
  const kept = blocks.filter((b) => !isEmptyTextBlock(b));
  if (kept.length === 0) return undefined;
  return freezeDeep({ ...message, content: kept } as AnthropicMessage);
}

/**
 * Server-tool and MCP calls whose result never came, left out of their message where the view
 * would put a user message after them: a call may wait for its result only at the very end of a
 * request (a `pause_turn` reply), never across a user turn. Only the messages that change are new
 * entries; a message left with nothing is left out.
 */
function withoutStrayInline(entries: readonly HistoryEntry[], repairs: Repair[]): readonly HistoryEntry[] {
  let out: HistoryEntry[] | undefined;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const message = entry.message as AnthropicMessage;
    if (message.role !== 'assistant') continue;
    const own = settleInline(new Set(), message);
    if (own.size === 0) continue;
    const running = new Set(own);
    let callsFollow = toolUses(message).length > 0;
    let k = i + 1;
    for (; k < entries.length && entries[k]!.message.role === 'assistant'; k++) {
      const next = entries[k]!.message as AnthropicMessage;
      settleInline(running, next);
      if (toolUses(next).length > 0) callsFollow = true;
    }
    const stray = new Set([...own].filter((id) => running.has(id)));
    if (stray.size === 0 || (k >= entries.length && !callsFollow)) continue;
    const kept = (blocksOf(message) ?? []).filter(
      (b) => !(isInlineCall(b.type) && stray.has(String((b as unknown as { id: unknown }).id))),
    );
    for (const id of stray)
      repairs.push({
        kind: 'missing_result',
        seq: entry.seq,
        detail: `${id} has no result before the next user turn (the API refuses that); left out`,
      });
    out ??= entries.slice();
    out[i] = { ...entry, message: freezeDeep({ ...message, content: kept } as AnthropicMessage) };
  }
  return out ?? entries;
}

export function buildAnthropic(all: readonly HistoryEntry[], from: number, seenIds: SeenIds): BuildResult {
  const atoms: Atom[] = [];
  const repairs: Repair[] = [];
  const entries = withoutStrayInline(all, repairs);
  let closedUntil = entries.length;
  let i = from;
  while (i < entries.length) {
    const entry = entries[i]!;
    const message = entry.message as AnthropicMessage;
    const uses = toolUses(message);
    if (uses.length > 0) {
      const viewIds = uses.map((use) => viewToolId(use.id, entry.seq, seenIds));
      const renamed = viewIds.some((id, n) => id !== uses[n]!.id);
      const pending = uses.map((use, index) => ({ use, index }));
      const found = new Map<number, { block: AnthropicToolResultBlock; seq: number }>();
      const resultSeqs: number[] = [];
      const extraBlocks: AnthropicContentBlock[] = [];
      let displaced: HistoryEntry[] = [];
      let clean = true;
      let j = i + 1;
      let ended = false;
      let narration = -1;
      let lastAnswer = -1;
      while (j < entries.length && pending.length > 0) {
        const next = entries[j]!;
        const nextMessage = next.message as AnthropicMessage;
        const blocks = blocksOf(nextMessage);
        const hasResults = nextMessage.role === 'user' && blocks?.some((b) => b.type === 'tool_result');
        if (hasResults && blocks) {
          lastAnswer = j;
          resultSeqs.push(next.seq);
          if (j !== i + 1) clean = false;
          let seenOther = false;
          for (const block of blocks) {
            if (block.type !== 'tool_result') {
              seenOther = true;
              if (isEmptyTextBlock(block)) clean = false;
              else extraBlocks.push(block);
              continue;
            }
            if (seenOther) clean = false;
            const at = pending.findIndex((p) => p.use.id === block.tool_use_id);
            if (at >= 0) {
              found.set(pending[at]!.index, { block, seq: next.seq });
              pending.splice(at, 1);
            } else {
              clean = false;
              repairs.push({
                kind: 'orphan_result',
                seq: next.seq,
                detail: `tool_result for ${block.tool_use_id} answers no pending tool_use; left out`,
              });
            }
          }
          j++;
        } else if (
          (nextMessage.role === 'assistant' && toolUses(nextMessage).length > 0) ||
          (narration >= 0 && nextMessage.role === 'user')
        ) {
          // New calls, or the user speaking after the assistant did: these results are not coming.
          ended = true;
          break;
        } else {
          if (nextMessage.role === 'assistant' && narration < 0) narration = j;
          displaced.push(next);
          j++;
        }
      }
      // Results may still come: regroup from here. Open (placeholders that go once the results come)
      // when nothing but what slipped in waits after the calls; narration after them stays put.
      const waiting = pending.length > 0 && !ended && j >= entries.length;
      if (waiting && closedUntil === entries.length) closedUntil = i;
      const stop = interimEnd(narration, lastAnswer, j);
      const open = waiting && stop === j;
      if (stop < j) displaced = displaced.filter((d) => d.seq < entries[stop]!.seq);
      if (pending.length > 0 || displaced.length > 0) clean = false;
      // The results must all sit in the one user message right after the call, results first.
      const resultBlocks: AnthropicContentBlock[] = [];
      const slots: ToolResultSlot[] = [];
      for (const index of found.keys()) {
        const use = uses[index]!;
        const hit = found.get(index)!;
        const block = cleanResultBlock(hit.block, viewIds[index]!);
        if (block !== hit.block) clean = false;
        slots.push({
          key: `${entry.seq}:${index}`,
          callId: viewIds[index]!,
          toolName: use.name,
          resultSeq: hit.seq,
          messageIndex: 1,
          blockIndex: resultBlocks.length,
        });
        resultBlocks.push(block);
      }
      for (const { use, index } of [...pending].sort((a, b) => a.index - b.index)) {
        repairs.push({
          kind: 'missing_result',
          seq: entry.seq,
          detail: `tool_use ${use.id} (${use.name}) has no result; a placeholder answers it`,
        });
        slots.push({
          key: `${entry.seq}:${index}`,
          callId: viewIds[index]!,
          toolName: use.name,
          resultSeq: null,
          messageIndex: 1,
          blockIndex: resultBlocks.length,
        });
        resultBlocks.push({
          type: 'tool_result',
          tool_use_id: viewIds[index]!,
          content: missingResultText(use.name),
          is_error: true,
        });
      }
      let callMessage = withoutEmptyText(message) ?? message;
      if (renamed) {
        let n = 0;
        const blocks = (callMessage.content as AnthropicContentBlock[]).map((b) =>
          b.type === 'tool_use' ? { ...b, id: viewIds[n++]! } : b,
        );
        callMessage = freezeDeep({ ...callMessage, content: blocks } as AnthropicMessage);
        repairs.push({
          kind: 'renamed_id',
          seq: entry.seq,
          detail: `tool_use ids ${uses.map((u) => u.id).join(', ')} shown as ${viewIds.join(', ')} (the API wants unique ids)`,
        });
      }
      if (callMessage !== message) clean = false;
      slots.unshift(...inlineSlots(callMessage, entry.seq));
      const messages: Message[] = [callMessage];
      if (clean && resultSeqs.length === 1) {
        messages.push(entries[i + 1]!.message);
      } else {
        messages.push(freezeDeep({ role: 'user', content: [...resultBlocks, ...extraBlocks] }));
      }
      atoms.push({
        id: entry.seq,
        kind: 'exchange',
        seqs: [entry.seq, ...resultSeqs],
        messages,
        results: slots,
        repaired: !clean || resultSeqs.length !== 1,
        open,
        hasUserContent: extraBlocks.length > 0,
      });
      for (const moved of displaced) {
        repairs.push({
          kind: 'moved',
          seq: moved.seq,
          detail: `message between tool_use ${entry.seq} and its results moved after them`,
        });
        pushAnthropicSingle(atoms, repairs, moved);
      }
      i = stop;
      continue;
    }
    const blocks = blocksOf(message);
    if (message.role === 'user' && blocks?.some((b) => b.type === 'tool_result')) {
      // Results with no tool_use right before them: keep whatever else the message says.
      const rest = blocks.filter((b) => b.type !== 'tool_result' && !isEmptyTextBlock(b));
      repairs.push({
        kind: 'orphan_result',
        seq: entry.seq,
        detail: 'tool_result blocks with no tool_use before them; left out',
      });
      if (rest.length > 0)
        atoms.push(singleAtom(entry, 'anthropic', freezeDeep({ role: 'user', content: rest })));
      i++;
      continue;
    }
    const running = message.role === 'assistant' ? settleInline(new Set(), message) : undefined;
    if (running && running.size > 0) {
      // A pause_turn reply: the assistant messages that continue it join it in one atom.
      const members = [entry];
      let j = i + 1;
      while (running.size > 0 && j < entries.length) {
        const next = entries[j]!.message as AnthropicMessage;
        if (next.role !== 'assistant' || toolUses(next).length > 0) break;
        members.push(entries[j]!);
        settleInline(running, next);
        j++;
      }
      const open = running.size > 0 && j >= entries.length;
      if (open && closedUntil === entries.length) closedUntil = i;
      if (members.length > 1 || open) {
        atoms.push(pausedAtom(members, open));
        i = j;
        continue;
      }
    }
    pushAnthropicSingle(atoms, repairs, entry);
    i++;
  }
  return { atoms, repairs, closedUntil };
}

function pushAnthropicSingle(atoms: Atom[], repairs: Repair[], entry: HistoryEntry): void {
  const message = entry.message as AnthropicMessage;
  const cleaned = withoutEmptyText(message);
  if (!cleaned) {
    repairs.push({
      kind: 'empty_text',
      seq: entry.seq,
      detail: 'message with no non-empty content left out',
    });
    return;
  }
  if (cleaned !== message) {
    repairs.push({ kind: 'empty_text', seq: entry.seq, detail: 'empty text blocks left out' });
  }
  atoms.push(singleAtom(entry, 'anthropic', cleaned));
}

// ------------------------------------------------------------------------------------ incremental

/**
 * Groups a history into atoms. Incremental: `update` re-groups only from the first entry of the
 * open tail exchange, so a request over a long, unchanged history costs O(new messages).
 */
export class AtomIndex {
  readonly format: MessageFormat;
  private closed: Atom[] = [];
  /** Tool ids the closed atoms show (Anthropic, Responses), so a reused id further on gets a new one. */
  private closedIds = new Set<string>();
  private closedRepairs: Repair[] = [];
  private tail: Atom[] = [];
  private tailRepairs: Repair[] = [];
  /** Index into the entries of the first entry not yet in `closed`. */
  private closedUntil = 0;
  private seen = 0;
  /** Index of the latest closed atom holding a server compaction item (0: none). */
  private closedCompaction = 0;

  constructor(format: MessageFormat) {
    this.format = format;
  }

  /** Brings the atoms up to date with `entries` (which only ever grow; call `reset` otherwise). */
  update(entries: readonly HistoryEntry[]): void {
    if (entries.length === this.seen) return;
    if (entries.length < this.seen) throw new Error('AtomIndex.update: history shrank; call reset() first');
    const shown = shownEntries(entries, this.closedUntil, this.format);
    const built = buildFrom(shown.entries, this.format, layeredIds(this.closedIds));
    const closedUntil =
      built.closedUntil < shown.entries.length ? shown.at[built.closedUntil]! : entries.length;
    // Atoms before the open tail can never change again: later entries cannot reach back past it.
    let split = built.atoms.length;
    if (closedUntil < entries.length) {
      const firstOpenSeq = entries[closedUntil]!.seq;
      split = built.atoms.findIndex((a) => a.seqs.some((s) => s >= firstOpenSeq));
      if (split < 0) split = built.atoms.length;
    }
    for (let k = 0; k < split; k++) {
      const atom = built.atoms[k]!;
      if (holdsServerCompaction(atom)) this.closedCompaction = this.closed.length;
      this.closed.push(atom);
      if (this.format !== 'openai' && this.format !== 'gemini')
        for (const slot of atom.results) this.closedIds.add(slot.callId);
    }
    this.tail = built.atoms.slice(split);
    const boundarySeq = closedUntil < entries.length ? entries[closedUntil]!.seq : Number.POSITIVE_INFINITY;
    for (const r of built.repairs) {
      if (r.seq < boundarySeq) this.closedRepairs.push(r);
    }
    this.tailRepairs = built.repairs.filter((r) => r.seq >= boundarySeq);
    this.closedUntil = closedUntil;
    this.seen = entries.length;
  }

  /** Forgets everything (after `setMessages` or `clear`). */
  reset(): void {
    this.closed = [];
    this.closedIds = new Set();
    this.closedRepairs = [];
    this.tail = [];
    this.tailRepairs = [];
    this.closedUntil = 0;
    this.seen = 0;
    this.closedCompaction = 0;
  }

  /**
   * Index of the atom holding the latest server compaction item (0 when there is none). The
   * provider reads the conversation from there: the compaction item carries what came before it,
   * so a view leaves the atoms before it out, the system ones excepted (see `View.build`).
   */
  get compactedBefore(): number {
    let at = this.closedCompaction;
    for (let k = this.tail.length - 1; k >= 0; k--)
      if (holdsServerCompaction(this.tail[k]!)) {
        at = this.closed.length + k;
        break;
      }
    // `/responses/compact` returns "all user messages, followed by a single compaction item": user
    // messages right before the compaction item are part of the window it stands for.
    while (at > 0 && isUserMessageAtom(this.at(at - 1))) at--;
    return at;
  }

  /** The atoms a view may send: from the latest server compaction on, and the system ones before it. */
  visible(): Atom[] {
    const from = this.compactedBefore;
    const all = this.all();
    return from === 0 ? all : all.filter((atom, k) => k >= from || atom.kind === 'system');
  }

  /** Number of atoms that will never change again. */
  get closedCount(): number {
    return this.closed.length;
  }

  get length(): number {
    return this.closed.length + this.tail.length;
  }

  at(index: number): Atom {
    return index < this.closed.length ? this.closed[index]! : this.tail[index - this.closed.length]!;
  }

  all(): Atom[] {
    return this.tail.length === 0 ? this.closed.slice() : [...this.closed, ...this.tail];
  }

  repairs(): Repair[] {
    return [...this.closedRepairs, ...this.tailRepairs];
  }
}

/** The atoms of `entries` (as `shownEntries` gives them) in `format`, ids already shown in `seen`. */
function buildFrom(entries: readonly HistoryEntry[], format: MessageFormat, seen: SeenIds): BuildResult {
  if (format === 'openai') return buildOpenAI(entries, 0);
  if (format === 'openai-responses') return buildResponses(entries, 0, seen);
  if (format === 'gemini') return buildGemini(entries, 0);
  return buildAnthropic(entries, 0, seen);
}

function isUserMessageAtom(atom: Atom): boolean {
  return atom.kind === 'message' && atom.messages.length === 1 && atom.messages[0]!.role === 'user';
}

/** Whether an atom holds a provider's server compaction item (OpenAI Responses `compaction`). */
export function holdsServerCompaction(atom: Atom): boolean {
  return atom.messages.some(isCompactionItem);
}

/** Groups a whole history into atoms at once (see `AtomIndex` for the incremental form). */
export function buildAtoms(
  entries: readonly HistoryEntry[],
  format: MessageFormat,
): { atoms: Atom[]; repairs: Repair[] } {
  const built = buildFrom(shownEntries(entries, 0, format).entries, format, layeredIds(new Set()));
  return { atoms: built.atoms, repairs: built.repairs };
}
