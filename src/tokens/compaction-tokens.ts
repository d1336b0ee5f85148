/**
 * What an OpenAI `compaction` item costs when it is sent back. Its `encrypted_content` is
 * ciphertext: its length says nothing about the tokens the model reads from it. The usage the
 * API reported for the call that produced it does: the compaction was written as that call's
 * output, so those output tokens (less the rest of the output, counted) are what the item renders
 * as. `addOpenAIResponse` and the `/responses/compact` compactor note the figure in the manager's
 * own notes, keyed by the ciphertext, and the manager's counters read it; an item never noted
 * there (added by hand, or by another manager) falls back to its size. The notes are per manager:
 * a figure one conversation was told never prices another conversation's item (issue 31).
 */

/** Noted figures kept at most (the oldest is forgotten first); a conversation holds only a few. */
const MAX_NOTED = 4096;

/** One manager's noted compaction costs: ciphertext → tokens. */
export class CompactionNotes {
  readonly #noted = new Map<string, number>();

  /** Notes the tokens a compaction item's `encrypted_content` renders as (a positive finite figure). */
  note(encryptedContent: string, tokens: number): void {
    if (!Number.isFinite(tokens) || tokens <= 0) return;
    this.#noted.delete(encryptedContent);
    this.#noted.set(encryptedContent, Math.round(tokens));
    if (this.#noted.size > MAX_NOTED) this.#noted.delete(this.#noted.keys().next().value as string);
  }

  /** The noted tokens of a compaction item's `encrypted_content`, if any. */
  get(encryptedContent: string): number | undefined {
    return this.#noted.get(encryptedContent);
  }
}
