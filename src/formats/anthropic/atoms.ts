/**
 * Atoms of a conversation in the Anthropic Messages format: an assistant message with `tool_use`
 * blocks and the user message of their `tool_result` blocks are one atom; a `pause_turn` reply
 * and the assistant messages continuing it are one (see `src/messages/atom-kit.ts`).
 */

import {
  type Atom,
  BlockExchange,
  type BuildResult,
  groupEntries,
  missingResultText,
  type Repair,
  ResultScan,
  type SeenIds,
  singleAtom,
  type ToolResultSlot,
} from '../../messages/atom-kit.js';
import { freezeDeep } from '../../messages/freeze.js';
import type {
  AnthropicContentBlock,
  AnthropicMessage,
  AnthropicToolResultBlock,
  AnthropicToolUseBlock,
  HistoryEntry,
} from '../../messages/types.js';
import { isInlineCall, isInlineResult, isShortenableResult } from './blocks.js';

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
  const stray: Repair[] = [];
  const entries = withoutStrayInline(all, stray);
  const built = groupEntries(entries, from, (i, grouping) => {
    const { atoms, repairs } = grouping;
    const entry = entries[i]!;
    const message = entry.message as AnthropicMessage;
    const uses = toolUses(message);
    if (uses.length > 0) {
      const viewIds = uses.map((use) => viewToolId(use.id, entry.seq, seenIds));
      const renamed = viewIds.some((id, n) => id !== uses[n]!.id);
      const exchange = new BlockExchange<
        AnthropicToolUseBlock,
        AnthropicToolResultBlock,
        AnthropicContentBlock
      >(entry, uses, viewIds);
      const scan = new ResultScan();
      let j = i + 1;
      while (j < entries.length && exchange.pending.length > 0) {
        const next = entries[j]!;
        const nextMessage = next.message as AnthropicMessage;
        const blocks = blocksOf(nextMessage);
        const hasResults = nextMessage.role === 'user' && blocks?.some((b) => b.type === 'tool_result');
        if (hasResults && blocks) {
          scan.lastAnswer = j;
          if (j !== i + 1) exchange.clean = false;
          exchange.take(blocks, next.seq, repairs, {
            resultOf: (block) => (block.type === 'tool_result' ? block : undefined),
            answers: (use, result) => use.id === result.tool_use_id,
            isBlank: isEmptyTextBlock,
            orphanDetail: (result) =>
              `tool_result for ${result.tool_use_id} answers no pending tool_use; left out`,
          });
          j++;
        } else {
          const byModel = nextMessage.role === 'assistant';
          const makesCalls = byModel && toolUses(nextMessage).length > 0;
          if (!scan.pass(next, j, byModel, makesCalls, nextMessage.role === 'user')) break;
          j++;
        }
      }
      // Results may still come: regroup from here.
      const { stop, open } = exchange.settle(scan, grouping, i, j);
      // The results must all sit in the one user message right after the call, results first.
      const answered = exchange.results(repairs, {
        found: (hit, viewId) => {
          const block = cleanResultBlock(hit.result, viewId);
          return { block: block as AnthropicContentBlock, changed: block !== hit.result };
        },
        missing: (use, viewId): AnthropicContentBlock => ({
          type: 'tool_result',
          tool_use_id: viewId,
          content: missingResultText(use.name),
          is_error: true,
        }),
        missingDetail: (use) => `tool_use ${use.id} (${use.name}) has no result; a placeholder answers it`,
      });
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
      atoms.push(
        exchange.atom({
          callMessage,
          answer: entries[i + 1]?.message,
          resultBlocks: answered.blocks,
          slots: [...inlineSlots(callMessage, entry.seq), ...answered.slots],
          open,
        }),
      );
      scan.placeMoved(repairs, `tool_use ${entry.seq}`, (moved) =>
        pushAnthropicSingle(atoms, repairs, moved),
      );
      return stop;
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
      if (rest.length > 0) atoms.push(anthropicSingle(entry, freezeDeep({ role: 'user', content: rest })));
      return i + 1;
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
      if (open && grouping.closedUntil === entries.length) grouping.closedUntil = i;
      if (members.length > 1 || open) {
        atoms.push(pausedAtom(members, open));
        return j;
      }
    }
    pushAnthropicSingle(atoms, repairs, entry);
    return i + 1;
  });
  return { ...built, repairs: [...stray, ...built.repairs] };
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
  atoms.push(anthropicSingle(entry, cleaned));
}

/** A lone message as an atom, with the server-tool results inside it as slots. */
function anthropicSingle(entry: HistoryEntry, message: AnthropicMessage): Atom {
  return singleAtom(
    entry,
    message,
    inlineSlots(message, entry.seq),
    message.role === 'user' && anthropicUserHasContent(message),
  );
}
