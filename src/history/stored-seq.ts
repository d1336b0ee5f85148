/**
 * Which stored message an object is. A view shows a message the plan left alone as the very object
 * the history holds for it (`View.build`: "clean atoms reuse the stored objects"), so an
 * integration that keeps its framework's own objects beside the messages it stored can tell, from
 * a view message alone, which of them to give back, with no map of the whole history: a worker
 * serving a view from its stored record (src/manager-stored-view.ts) never held one.
 */

import type { Message } from '../messages/types.js';

/** The seq each stored message object was taken in at (a history entry's, or a row a served view read). */
const seqs = new WeakMap<object, number>();

/** Records that `message` is the stored message at `seq` (it is frozen, so it stays that message). */
export function markStoredSeq(message: Message, seq: number): void {
  seqs.set(message, seq);
}

/**
 * The seq of the stored message `message` is, when it is one as stored (a view message the plan
 * left alone); undefined for what a plan edited or made (a cleared result, a summary) and for any
 * other object.
 */
export function storedSeqOf(message: Message): number | undefined {
  return seqs.get(message);
}
