import { CONVERSATION_START_TEXT, OMITTED_START_TEXT } from '../compaction/placeholders.js';
import type { CompactionReceipt } from '../events.js';
import { textMessageAsGemini } from '../formats/gemini/parts.js';
import { freezeDeep } from '../messages/freeze.js';
import type { Message, MessageFormat } from '../messages/types.js';

const OMITTED_NOTICE: Message = freezeDeep({ role: 'user', content: OMITTED_START_TEXT });
const START_NOTICE: Message = freezeDeep({ role: 'user', content: CONVERSATION_START_TEXT });
const GEMINI_OMITTED: Message = freezeDeep(
  textMessageAsGemini({ role: 'user', content: OMITTED_START_TEXT }),
);
const GEMINI_START: Message = freezeDeep(
  textMessageAsGemini({ role: 'user', content: CONVERSATION_START_TEXT }),
);

/**
 * An Anthropic view must open with a user message: where it opens with the assistant, the notice to
 * put first (saying that earlier messages were left out, when they were) and where it goes.
 */
export function startNotice(
  messages: readonly Message[],
  omitted: boolean,
): { at: number; message: Message } | undefined {
  const first = messages.findIndex((m) => m.role !== 'system');
  if (first < 0) return undefined;
  const role = messages[first]!.role;
  if (role === 'model') return { at: first, message: omitted ? GEMINI_OMITTED : GEMINI_START };
  if (role !== 'assistant') return undefined;
  return { at: first, message: omitted ? OMITTED_NOTICE : START_NOTICE };
}

/** The note that tells the model what the last compaction took out of its view. */
export function compactionNote(receipt: CompactionReceipt, format: MessageFormat): Message {
  const parts: string[] = [];
  if (receipt.summarized.length > 0)
    parts.push(`${receipt.summarized.length} older messages were summarized`);
  if (receipt.dropped.length > 0) parts.push(`${receipt.dropped.length} older messages were left out`);
  if (receipt.cleared.length > 0) parts.push(`${receipt.cleared.length} old tool results were cleared`);
  if (receipt.truncated.length > 0) parts.push(`${receipt.truncated.length} long texts were shortened`);
  const what = parts.length > 0 ? parts.join(', ') : 'the conversation was compacted';
  const facts = receipt.facts.kept > 0 ? ' Key facts from them are listed near the top.' : '';
  const content = `[contextkit: to fit the context window, ${what}.${facts} The full history is kept; ask if you need something that is no longer shown.]`;
  if (format === 'gemini') return freezeDeep(textMessageAsGemini({ role: 'user', content }));
  return freezeDeep(format === 'anthropic' ? { role: 'user', content } : { role: 'system', content });
}
