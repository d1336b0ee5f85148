/**
 * Atoms of a Bedrock Converse conversation. An assistant message with `toolUse` blocks and the
 * user message(s) answering them with `toolResult` blocks are one atom; parallel calls are
 * answered together. Repairs, in the view only (stored messages are never touched): results split
 * over several user messages are joined into the one user message right after the calls, results
 * first; a call whose result never came gets a placeholder result (status "error"); a result that
 * answers no pending call is left out; messages that slipped between calls and their results move
 * after them; an id Bedrock would refuse (reused in the request, or outside `[a-zA-Z0-9_-]`, or
 * longer than 64) is shown renamed, in the call and its result alike; blank text blocks go.
 * Reasoning blocks are never edited: a message keeps them exactly where they came.
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
} from '../../messages/atom-kit.js';
import type { BedrockToolResult, BedrockToolUse } from '../../messages/bedrock-types.js';
import { freezeDeep } from '../../messages/freeze.js';
import type { HistoryEntry, Message } from '../../messages/types.js';
import { blocksOf, isBlankText, isRecord, memberOf, toolResultsOf, toolUsesOf } from './blocks.js';

type Rec = Record<string, unknown>;
type Msg = { role: string; content: readonly Rec[] };

const TOOL_ID = /^[a-zA-Z0-9_-]{1,64}$/;

function msg(entry: HistoryEntry): Msg {
  return entry.message as unknown as Msg;
}

/** The id a toolUse carries in views: the stored one unless Bedrock would refuse it. */
function viewToolId(id: string, seq: number, seen: SeenIds): string {
  let out = TOOL_ID.test(id) ? id : id.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 48) || 'tool';
  if (seen.has(out)) out = `${out.slice(0, 48)}_s${seq}`;
  for (let n = 2; seen.has(out); n++) out = `${out.slice(0, 44)}_${n}`;
  seen.add(out);
  return out;
}

/** The message without blank text blocks; the same object when it has none, undefined when empty. */
export function withoutBlankText(message: Message): Message | undefined {
  const blocks = blocksOf(message);
  if (!blocks.some(isBlankText)) return blocks.length > 0 ? message : undefined;
  const kept = blocks.filter((b) => !isBlankText(b));
  if (kept.length === 0) return undefined;
  return freezeDeep({ ...(message as unknown as Rec), content: kept }) as unknown as Message;
}

function hasUserContent(message: Message): boolean {
  return message.role === 'user' && blocksOf(message).some((b) => memberOf(b) !== 'toolResult');
}

function single(entry: HistoryEntry, message: Message): Atom {
  return singleAtom(entry, message, [], hasUserContent(message));
}

function pushSingle(atoms: Atom[], repairs: Repair[], entry: HistoryEntry): void {
  const cleaned = withoutBlankText(entry.message as Message);
  if (!cleaned) {
    repairs.push({
      kind: 'empty_text',
      seq: entry.seq,
      detail: 'message with no non-blank content left out',
    });
    return;
  }
  if (cleaned !== entry.message)
    repairs.push({ kind: 'empty_text', seq: entry.seq, detail: 'blank text blocks left out' });
  atoms.push(single(entry, cleaned));
}

/** A result block with the view's id, blank text left out, and content where status is error. */
function cleanResult(result: BedrockToolResult, id: string): BedrockToolResult {
  const content = Array.isArray(result.content) ? result.content : [];
  const kept = content.filter(
    (c) => !(typeof (c as Rec).text === 'string' && String((c as Rec).text).trim() === ''),
  );
  if (
    kept.length === content.length &&
    id === result.toolUseId &&
    (kept.length > 0 || result.status !== 'error')
  )
    return result;
  const out: BedrockToolResult = { ...result, toolUseId: id, content: kept };
  if (kept.length === 0 && result.status === 'error')
    out.content = [{ text: '[the tool reported an error with no output]' }];
  return out;
}

/** Groups Bedrock messages from `from` on (see the module note). */
export function buildBedrock(entries: readonly HistoryEntry[], from: number, seen: SeenIds): BuildResult {
  return groupEntries(entries, from, (i, grouping) => {
    const { atoms, repairs } = grouping;
    const entry = entries[i]!;
    const message = msg(entry);
    const uses = toolUsesOf(message);
    if (uses.length === 0) {
      if (toolResultsOf(message).length > 0) {
        const rest = message.content.filter((b) => memberOf(b) !== 'toolResult' && !isBlankText(b));
        repairs.push({
          kind: 'orphan_result',
          seq: entry.seq,
          detail: 'toolResult blocks with no toolUse before them; left out',
        });
        if (rest.length > 0)
          atoms.push(single(entry, freezeDeep({ role: 'user', content: rest }) as unknown as Message));
      } else pushSingle(atoms, repairs, entry);
      return i + 1;
    }
    const viewIds = uses.map((use) => viewToolId(use.toolUseId, entry.seq, seen));
    const exchange = new BlockExchange<BedrockToolUse, BedrockToolResult, Rec>(entry, uses, viewIds);
    const scan = new ResultScan();
    let j = i + 1;
    while (j < entries.length && exchange.pending.length > 0) {
      const next = entries[j]!;
      const nextMessage = msg(next);
      if (toolResultsOf(nextMessage).length === 0) {
        const byModel = nextMessage.role === 'assistant';
        // A system message ends the wait as new calls do: it stands where it was stored.
        const calls = nextMessage.role === 'system' || (byModel && toolUsesOf(nextMessage).length > 0);
        if (!scan.pass(next, j, byModel || nextMessage.role === 'system', calls, nextMessage.role === 'user'))
          break;
        j++;
        continue;
      }
      scan.lastAnswer = j;
      if (j !== i + 1) exchange.clean = false;
      exchange.take(nextMessage.content, next.seq, repairs, {
        resultOf: (block) =>
          isRecord(block.toolResult) ? (block.toolResult as unknown as BedrockToolResult) : undefined,
        answers: (use, result) => use.toolUseId === result.toolUseId,
        isBlank: isBlankText,
        orphanDetail: (result) => `toolResult for ${result.toolUseId} answers no pending toolUse; left out`,
      });
      j++;
    }
    const { stop, open } = exchange.settle(scan, grouping, i, j);
    const answered = exchange.results(repairs, {
      found: (hit, viewId) => {
        const result = cleanResult(hit.result, viewId);
        return { block: { toolResult: result } as Rec, changed: result !== hit.result };
      },
      missing: (use, viewId): Rec => ({
        toolResult: {
          toolUseId: viewId,
          content: [{ text: missingResultText(use.name) }],
          status: 'error',
        },
      }),
      missingDetail: (use) =>
        `toolUse ${use.toolUseId} (${use.name}) has no result; a placeholder answers it`,
    });
    let callMessage = withoutBlankText(entry.message as Message) ?? (entry.message as Message);
    const renamed = viewIds.some((id, n) => id !== uses[n]!.toolUseId);
    if (renamed) {
      let n = 0;
      const blocks = blocksOf(callMessage).map((b) =>
        isRecord(b.toolUse)
          ? { toolUse: { ...(b.toolUse as unknown as BedrockToolUse), toolUseId: viewIds[n++]! } }
          : b,
      );
      callMessage = freezeDeep({ role: 'assistant', content: blocks }) as unknown as Message;
      repairs.push({
        kind: 'renamed_id',
        seq: entry.seq,
        detail: `toolUse ids ${uses.map((u) => u.toolUseId).join(', ')} shown as ${viewIds.join(', ')} (Bedrock wants unique ids of [a-zA-Z0-9_-], 64 at most)`,
      });
    }
    atoms.push(
      exchange.atom({
        callMessage,
        answer: entries[i + 1]?.message,
        resultBlocks: answered.blocks,
        slots: answered.slots,
        open,
      }),
    );
    scan.placeMoved(repairs, `toolUse ${entry.seq}`, (moved) => pushSingle(atoms, repairs, moved));
    return stop;
  });
}
