/**
 * What an OpenAI `compaction` item costs when it is sent back. Its `encrypted_content` is
 * ciphertext: its length says nothing about the tokens the model reads from it. The usage the
 * API reported for the call that produced it does: the compaction was written as that call's
 * output, so those output tokens (less the rest of the output, counted) are what the item renders
 * as. `addOpenAIResponse` notes the figure here, keyed by the ciphertext, and every counter reads
 * it; an item never noted (added by hand) falls back to its size.
 */

/** Noted figures kept at most (the oldest is forgotten first); a conversation holds only a few. */
const MAX_NOTED = 4096;

const noted = new Map<string, number>();

/** Notes the tokens a compaction item's `encrypted_content` renders as. */
export function noteCompactionTokens(encryptedContent: string, tokens: number): void {
  if (!Number.isFinite(tokens) || tokens <= 0) return;
  noted.delete(encryptedContent);
  noted.set(encryptedContent, Math.round(tokens));
  if (noted.size > MAX_NOTED) noted.delete(noted.keys().next().value as string);
}

/** The noted tokens of a compaction item's `encrypted_content`, if any. */
export function compactionTokens(encryptedContent: string): number | undefined {
  return noted.get(encryptedContent);
}
