import type { WireFormat } from '../formats/wire-format.js';
import { freezeDeep } from '../messages/freeze.js';
import { type ToolEffect, toolEffectByName } from '../messages/tool-effect.js';
import type { AnthropicContentBlock, Message, OpenAIMessage } from '../messages/types.js';
import type { Atom, ToolResultSlot } from '../wire/atoms.js';
import { messageText } from '../wire/content.js';
import { clearedResultText, resultOutcome, truncationMarker } from './placeholders.js';

/** What a plan does to the atoms it keeps: results cleared and texts cut, by stable key. */
export interface AtomEdits {
  /** Result slot keys (`callSeq:callIndex`) whose results are replaced by a placeholder. */
  cleared: ReadonlyMap<string, number>;
  /** Text part keys (see `textParts`) to the characters kept at the head and the tail. */
  truncated: ReadonlyMap<string, { head: number; tail: number }>;
  /** Cleared results whose calls' inputs are cleared too (context editing's `clear_tool_inputs`). */
  clearInputs?: boolean;
  /**
   * Whether a tool only reads (its placeholder may suggest calling again) or changes something;
   * default `toolEffectByName`.
   */
  effectOf?: (toolName: string) => ToolEffect;
}

export const NO_EDITS: AtomEdits = { cleared: new Map(), truncated: new Map() };

const NO_SLOTS: readonly ToolResultSlot[] = [];

/** A piece of text in an atom that truncation may cut, located by a key stable across requests. */
export interface TextPart {
  key: string;
  text: string;
  /** The result slot this text belongs to, when it is (part of) a tool result. */
  slotKey?: string;
}

/** Cuts the middle out of `text`, keeping `head` and `tail` characters around a marker. */
export function cutMiddle(text: string, head: number, tail: number): string {
  if (head + tail >= text.length) return text;
  // Never split a surrogate pair: the JSON would carry a lone surrogate the providers reject.
  let h = head;
  if (h > 0 && isHighSurrogate(text.charCodeAt(h - 1))) h--;
  let t = text.length - tail;
  if (t < text.length && isLowSurrogate(text.charCodeAt(t))) t++;
  return text.slice(0, h) + truncationMarker(t - h) + text.slice(t);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * The cleared form of an OpenAI tool message, the same object every time it is asked for, so its
 * token count is taken once (while planning) and found again when the view is built.
 */
const clearedMessages = new WeakMap<object, Map<string, Message>>();

function clearedToolMessage(message: Message, text: string): Message {
  let byText = clearedMessages.get(message);
  if (!byText) {
    byText = new Map();
    clearedMessages.set(message, byText);
  }
  let cleared = byText.get(text);
  if (!cleared) {
    // A Responses API output carries its text in `output`; a Chat Completions tool message in `content`.
    const item = message as unknown as Record<string, unknown>;
    cleared = freezeDeep(
      (item.role === undefined && 'output' in item
        ? { ...item, output: text }
        : { ...(message as OpenAIMessage), content: text }) as Message,
    );
    byText.set(text, cleared);
  }
  return cleared;
}

/**
 * Lists the texts of an atom that truncation may cut (never thinking blocks or tool inputs).
 * `wire` is the format of the conversation the atom is of.
 */
export function textParts(atom: Atom, wire: WireFormat<Message>): TextPart[] {
  const parts: TextPart[] = [];
  const slotAt = new Map<string, string>();
  for (const slot of atom.results) slotAt.set(`${slot.messageIndex}.${slot.blockIndex}`, slot.key);
  const edits = wire.edits;
  atom.messages.forEach((message, mi) => {
    const output = toolOutputOf(message);
    if (output !== undefined) {
      // A Responses API tool output: its text, or the text parts of its list; the item is the result.
      const slotKey = slotAt.get(`${mi}.-1`);
      if (typeof output === 'string') {
        if (output.length > 0) parts.push({ key: `${atom.id}@${mi}.-1.-1`, text: output, slotKey });
        return;
      }
      output.forEach((part, bi) => {
        const text = outputText(part);
        if (text !== undefined) parts.push({ key: `${atom.id}@${mi}.${bi}.-1`, text, slotKey });
      });
      return;
    }
    if (edits?.owns(message)) {
      for (const p of edits.textParts(message))
        parts.push({
          key: `${atom.id}@${mi}.${p.block}.${p.inner}`,
          text: p.text,
          slotKey: slotAt.get(`${mi}.${p.slotBlock}`),
        });
      return;
    }
    if (message.role === 'assistant' && hasThinking(message)) return;
    const content = message.content;
    const slotKey = slotAt.get(`${mi}.-1`);
    if (typeof content === 'string') {
      if (content.length > 0) parts.push({ key: `${atom.id}@${mi}.-1.-1`, text: content, slotKey });
      return;
    }
    if (!Array.isArray(content)) return;
    content.forEach((block, bi) => {
      const b = block as { type: string; text?: string; content?: unknown };
      if (isTextType(b.type) && typeof b.text === 'string' && b.text.length > 0) {
        parts.push({ key: `${atom.id}@${mi}.${bi}.-1`, text: b.text, slotKey });
      } else if (b.type === 'tool_result') {
        const resultSlot = slotAt.get(`${mi}.${bi}`);
        if (typeof b.content === 'string' && b.content.length > 0) {
          parts.push({ key: `${atom.id}@${mi}.${bi}.-1`, text: b.content, slotKey: resultSlot });
        } else if (Array.isArray(b.content)) {
          b.content.forEach((inner: { type: string; text?: string }, ii: number) => {
            if (inner.type === 'text' && typeof inner.text === 'string' && inner.text.length > 0) {
              parts.push({ key: `${atom.id}@${mi}.${bi}.${ii}`, text: inner.text, slotKey: resultSlot });
            }
          });
        }
      }
    });
  });
  return parts;
}

/**
 * The `output` of a Responses API tool output item (`function_call_output`,
 * `custom_tool_call_output`): a string, or a list of `input_text`, `input_image` and `input_file`
 * parts (https://platform.openai.com/docs/api-reference/responses/create, input item "Function tool
 * call output"). Undefined for any other message.
 */
function toolOutputOf(message: Message): string | readonly unknown[] | undefined {
  const item = message as unknown as Record<string, unknown>;
  if (item.role !== undefined) return undefined;
  if (item.type !== 'function_call_output' && item.type !== 'custom_tool_call_output') return undefined;
  const output = item.output;
  return typeof output === 'string' || Array.isArray(output) ? output : undefined;
}

/** The text of an `input_text` part of a tool output's list, when it has any. */
function outputText(part: unknown): string | undefined {
  if (typeof part !== 'object' || part === null) return undefined;
  const p = part as { type?: unknown; text?: unknown };
  return p.type === 'input_text' && typeof p.text === 'string' && p.text.length > 0 ? p.text : undefined;
}

/** Text parts and blocks: Chat Completions and Anthropic `text`, Responses `input_text` / `output_text`. */
function isTextType(type: unknown): boolean {
  return type === 'text' || type === 'input_text' || type === 'output_text';
}

function hasThinking(message: Message): boolean {
  return (
    Array.isArray(message.content) &&
    (message.content as Array<{ type: string }>).some(
      (b) => b.type === 'thinking' || b.type === 'redacted_thinking',
    )
  );
}

/** Outcome lines of stored results, by message and block: a result is read once, not per render. */
const outcomes = new WeakMap<Message, Map<number, string>>();

/**
 * The outcome line (`resultOutcome`) of the result at `blockIndex` of `message` (-1: the whole
 * message is the result), read the shared way through a message holding that block alone.
 */
function slotOutcome(message: Message, blockIndex: number): string {
  let byBlock = outcomes.get(message);
  if (!byBlock) {
    byBlock = new Map();
    outcomes.set(message, byBlock);
  }
  let outcome = byBlock.get(blockIndex);
  if (outcome === undefined) {
    outcome = readOutcome(message, blockIndex);
    byBlock.set(blockIndex, outcome);
  }
  return outcome;
}

function readOutcome(message: Message, blockIndex: number): string {
  if (blockIndex < 0) return resultOutcome(messageText(message));
  const m = message as unknown as { content?: unknown; parts?: unknown };
  const inContent = Array.isArray(m.content);
  const list = (inContent ? m.content : m.parts) as unknown[] | undefined;
  const block = Array.isArray(list) ? (list[blockIndex] as Record<string, unknown> | undefined) : undefined;
  if (typeof block !== 'object' || block === null) return '';
  const alone = (inContent ? { ...message, content: [block] } : { ...message, parts: [block] }) as Message;
  const converse = block.toolResult as { status?: unknown } | undefined;
  const response = (block.functionResponse as { response?: unknown } | undefined)?.response;
  const isError =
    block.is_error === true ||
    converse?.status === 'error' ||
    (typeof response === 'object' && response !== null && 'error' in response && !('output' in response));
  return resultOutcome(messageText(alone), isError);
}

/**
 * Renders an atom under a plan's edits, in the shape of `wire`, the format of the conversation the
 * atom is of. Returns the atom's own message objects where nothing applies, so unedited messages
 * keep their identity (and their memoized token counts).
 */
export function renderAtom(atom: Atom, edits: AtomEdits, wire: WireFormat<Message>): readonly Message[] {
  if (edits.cleared.size === 0 && edits.truncated.size === 0) return atom.messages;
  let out: Message[] | undefined;
  const replace = (mi: number, message: Message) => {
    out ??= atom.messages.slice();
    out[mi] = message;
  };
  // Clearing first: a cleared result has nothing left to truncate.
  const clearedHere =
    atom.results.length === 0 || edits.cleared.size === 0
      ? NO_SLOTS
      : atom.results.filter((slot) => edits.cleared.has(slot.key));
  if (clearedHere.length === 0 && edits.truncated.size === 0) return atom.messages;
  const clearedPositions = new Set(clearedHere.map((s) => `${s.messageIndex}.${s.blockIndex}`));
  for (const slot of clearedHere) {
    const current = (out ?? atom.messages)[slot.messageIndex]!;
    const outcome = slotOutcome(atom.messages[slot.messageIndex]!, slot.blockIndex);
    const effect = (edits.effectOf ?? toolEffectByName)(slot.toolName);
    const text = clearedResultText(slot.toolName, edits.cleared.get(slot.key)!, effect, outcome);
    if (slot.blockIndex < 0) {
      replace(slot.messageIndex, clearedToolMessage(current, text));
    } else {
      // A result that is a block or part of its message: cleared in the format's own shape.
      const cleared = wire.clearResult?.(current, slot.blockIndex, text);
      if (cleared) replace(slot.messageIndex, cleared);
    }
  }
  if (edits.clearInputs && clearedHere.length > 0) {
    const call = (out ?? atom.messages)[0]!;
    const indices = new Set(clearedHere.map((slot) => Number(slot.key.split(':')[1])));
    replace(0, withInputsCleared(call, indices, wire));
  }
  const prefix = `${atom.id}@`;
  for (const [key, keep] of edits.truncated) {
    if (!key.startsWith(prefix)) continue;
    const [mi, bi, ii] = key.slice(prefix.length).split('.').map(Number) as [number, number, number];
    if (clearedPositions.has(`${mi}.${bi}`)) continue;
    const current = (out ?? atom.messages)[mi];
    if (!current) continue;
    const rewritten = truncatePart(current, bi, ii, keep.head, keep.tail, wire);
    if (rewritten) replace(mi, rewritten);
  }
  return out ?? atom.messages;
}

/** The call message with the inputs of the given calls replaced by an empty object. */
function withInputsCleared(
  message: Message,
  indices: ReadonlySet<number>,
  wire: WireFormat<Message>,
): Message {
  // A model turn of another role (Gemini's `model`) is never edited: its calls may be signed.
  if (message.role !== 'assistant') return message;
  if (wire.edits?.owns(message)) return wire.edits.inputsCleared(message, indices);
  if ('tool_calls' in message && message.tool_calls) {
    const calls = message.tool_calls.map((c, i) =>
      indices.has(i) ? { ...c, function: { ...c.function, arguments: '{}' } } : c,
    );
    return freezeDeep({ ...message, tool_calls: calls } as Message);
  }
  if (!Array.isArray(message.content)) return message;
  let n = -1;
  const blocks = (message.content as AnthropicContentBlock[]).map((b) => {
    if (b.type !== 'tool_use') return b;
    n++;
    return indices.has(n) ? { ...b, input: {} } : b;
  });
  return freezeDeep({ ...message, content: blocks } as unknown as Message);
}

function truncatePart(
  message: Message,
  bi: number,
  ii: number,
  head: number,
  tail: number,
  wire: WireFormat<Message>,
): Message | undefined {
  const output = toolOutputOf(message);
  if (output !== undefined) {
    if (ii >= 0) return undefined;
    if (bi < 0) {
      if (typeof output !== 'string') return undefined;
      return freezeDeep({ ...message, output: cutMiddle(output, head, tail) } as unknown as Message);
    }
    if (typeof output === 'string') return undefined;
    const part = output[bi];
    const text = outputText(part);
    if (text === undefined) return undefined;
    const next = output.slice();
    next[bi] = { ...(part as Record<string, unknown>), text: cutMiddle(text, head, tail) };
    return freezeDeep({ ...message, output: next } as unknown as Message);
  }
  if (wire.edits?.owns(message))
    return wire.edits.truncated(message, bi, ii, (text) => cutMiddle(text, head, tail));
  const content = message.content;
  if (bi < 0) {
    if (typeof content !== 'string') return undefined;
    return freezeDeep({ ...message, content: cutMiddle(content, head, tail) } as Message);
  }
  if (!Array.isArray(content)) return undefined;
  const blocks = content as unknown as Array<Record<string, unknown>>;
  const block = blocks[bi];
  if (!block) return undefined;
  let nextBlock: Record<string, unknown>;
  if (ii < 0) {
    if (isTextType(block.type) && typeof block.text === 'string') {
      nextBlock = { ...block, text: cutMiddle(block.text, head, tail) };
    } else if (block.type === 'tool_result' && typeof block.content === 'string') {
      nextBlock = { ...block, content: cutMiddle(block.content, head, tail) };
    } else return undefined;
  } else {
    const inner = block.content;
    if (!Array.isArray(inner)) return undefined;
    const innerBlock = inner[ii] as Record<string, unknown> | undefined;
    if (!innerBlock || typeof innerBlock.text !== 'string') return undefined;
    const nextInner = inner.slice();
    nextInner[ii] = { ...innerBlock, text: cutMiddle(innerBlock.text, head, tail) };
    nextBlock = { ...block, content: nextInner };
  }
  const nextBlocks = blocks.slice();
  nextBlocks[bi] = nextBlock;
  return freezeDeep({ ...message, content: nextBlocks } as unknown as Message);
}
