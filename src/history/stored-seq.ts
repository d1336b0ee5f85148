/**
 * Which stored message an object is. A view shows a message the plan left alone as the very object
 * the history holds for it (`View.build`: "clean atoms reuse the stored objects"), so an
 * integration that keeps its framework's own objects beside the messages it stored can tell, from
 * a view message alone, which of them to give back, with no map of the whole history: a worker
 * serving a view from its stored record (src/manager-stored-view.ts) never held one.
 *
 * The seq is a property of the message object itself, under a symbol and not enumerable (JSON,
 * spreads, copies and equality checks never see it), set before the message is frozen. A table of
 * every stored message (a `WeakMap`) grew with the history and, growing, rehashed in one step: a
 * resume of 100,000 messages stalled for 100–200 ms inside a single `set`. Only a message frozen
 * before it was marked goes to such a table.
 */

import type { Message } from '../messages/types.js';

const SEQ = Symbol('contextkit.storedSeq');

/** Messages frozen before they were marked, and messages marked again with another seq. */
const late = new WeakMap<object, number>();

/** Records that `message` is the stored message at `seq` (it is frozen after, so it stays that message). */
export function markStoredSeq(message: Message, seq: number): void {
  const own = Object.getOwnPropertyDescriptor(message, SEQ);
  if (own?.value === seq) return;
  if (own === undefined && Object.isExtensible(message)) {
    Object.defineProperty(message, SEQ, { value: seq, writable: true, enumerable: false });
    return;
  }
  late.set(message, seq);
}

/**
 * The seq of the stored message `message` is, when it is one as stored (a view message the plan
 * left alone); undefined for what a plan edited or made (a cleared result, a summary) and for any
 * other object.
 */
export function storedSeqOf(message: Message): number | undefined {
  const marked = late.get(message);
  if (marked !== undefined) return marked;
  const own = Object.getOwnPropertyDescriptor(message, SEQ)?.value;
  return typeof own === 'number' ? own : undefined;
}
