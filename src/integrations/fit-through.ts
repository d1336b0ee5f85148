import type { ContextManager, RequestOptions } from '../manager.js';
import type { HistoryEntry, Message, MessageFormat, OpenAIMessage } from '../messages/types.js';

/** One message of a fitted view, with the stored message it shows unchanged, if it is one. */
export interface FittedEntry<M extends Message = OpenAIMessage> {
  message: M;
  /**
   * Seq of the stored message this view message is, unchanged. Undefined for what the plan
   * rewrote (a cleared result, a cut text) or wrote itself (the summary, the facts block, a
   * placeholder for a result that never came).
   */
  seq: number | undefined;
}

/** A stable text key of a message, for telling whether a stored history is a prefix of another. */
export function messageKey(message: Message): string {
  return JSON.stringify(message);
}

/**
 * Brings `manager` up to `messages` (its history must be a prefix of them, compared by content:
 * the rest is added, those at the indexes in `pinned` as `pinned` messages) and returns its
 * entries; `undefined`, adding nothing, when it is not.
 */
export async function syncThrough(
  manager: ContextManager,
  messages: readonly Message[],
  keys: readonly string[] = messages.map(messageKey),
  pinned: ReadonlySet<number> = new Set(),
): Promise<HistoryEntry[] | undefined> {
  const entries = await manager.getEntries();
  if (entries.length > messages.length) return undefined;
  // Keys given as the same array as last time, grown only (a caller that keeps its messages, such
  // as the Agents session): the entries synced then are its first ones, unchanged, and are not
  // keyed again, so a call costs the new messages, not the prompt.
  const last = synced.get(manager);
  if (!(last && last.keys === keys && last.count === entries.length)) {
    for (const entry of entries) {
      if (messageKey(entry.message) !== keys[entry.seq]) return undefined;
    }
  }
  if (entries.length === messages.length) {
    synced.set(manager, { keys, count: entries.length });
    return entries;
  }
  for (let i = entries.length; i < messages.length; i++) {
    await manager.addMessage(messages[i], pinned.has(i) ? { pinned: true } : {});
  }
  const after = await manager.getEntries();
  synced.set(manager, { keys, count: after.length });
  return after;
}

/**
 * The keys array each manager was last synced to and how many entries it then held: while the
 * caller passes that array again (grown only) and the manager holds that many, the prefix holds.
 */
const synced = new WeakMap<ContextManager, { keys: readonly string[]; count: number }>();

/**
 * Brings `manager` up to `messages` and returns its request view with, per message, the seq of the
 * stored message it is. The integrations keep their framework's own objects beside the messages
 * they give the manager; the seq lets them hand back those objects, not a lossy conversion, for
 * every message the plan left alone.
 *
 * The manager's history must be a prefix of `messages` (compared by content): the rest is added.
 * The view is asked for in `format` (Chat Completions unless told); the messages at the indexes in
 * `pinned` are added pinned (kept verbatim by every compaction). Returns `undefined`, adding nothing, when it is not, so the caller can choose another manager.
 */
export async function fitThrough<M extends Message = OpenAIMessage>(
  manager: ContextManager,
  messages: readonly M[],
  request: RequestOptions,
  keys: readonly string[] = messages.map(messageKey),
  format: MessageFormat = 'openai',
  pinned?: ReadonlySet<number>,
): Promise<FittedEntry<M>[] | undefined> {
  const entries = await syncThrough(manager, messages, keys, pinned);
  if (entries === undefined) return undefined;
  const seqOf = new Map<object, number>();
  for (const entry of entries) seqOf.set(entry.message, entry.seq);
  const view = await manager.getMessagesForRequest({ ...request, provider: format });
  return view.map((message) => ({ message: message as M, seq: seqOf.get(message) }));
}
