/**
 * The messages contextkit writes into a Bedrock conversation (the view's system prompt, facts,
 * summaries and notices, the recall and memory tools' results), detection evidence, and what a
 * view shows for a stored message.
 */
import type { Message } from '../../messages/types.js';
import { blocksOf, isRecord, memberOf } from './blocks.js';
import type { BedrockConversationMessage, BedrockMessage } from './types.js';

/** A text message: the system prompt (`{ role: 'system', content: [{ text }] }`) or a user turn. */
export function bedrockTextMessage(role: 'system' | 'user' | 'assistant', text: string): BedrockMessage {
  return { role, content: [{ text }] } as BedrockMessage;
}

/** The user turn answering the call `id` with `text` (status `error` when the tool failed). */
export function bedrockToolResultMessage(
  id: string,
  text: string,
  isError: boolean,
): BedrockConversationMessage {
  return {
    role: 'user',
    content: [{ toolResult: { toolUseId: id, content: [{ text }], status: isError ? 'error' : 'success' } }],
  };
}

/**
 * The field that shows a message is Converse's: a content block keyed by its member, with no
 * `type` (Anthropic's and OpenAI's blocks all have one; Gemini has `parts`).
 */
export function bedrockEvidence(
  message: Readonly<Record<string, unknown>>,
): { field: string; found: string } | undefined {
  if (!Array.isArray(message.content)) return undefined;
  const blocks = message.content as unknown[];
  for (let k = 0; k < blocks.length; k++) {
    const b = blocks[k];
    if (!isRecord(b) || 'type' in b) continue;
    const member = memberOf(b);
    if (member !== undefined)
      return { field: `content[${k}].${member}`, found: `a Converse "${member}" block (no type)` };
  }
  return undefined;
}

/**
 * What a view shows for a stored message: plain text (`content: "…"`, which fits every format)
 * as a Converse text block, an empty one left out; a Converse message as it is.
 */
export function bedrockShown(message: Message): Message | undefined {
  const content = (message as { content?: unknown }).content;
  if (typeof content === 'string') {
    if (content.trim().length === 0) return undefined;
    const role = message.role === 'developer' ? 'system' : message.role;
    return bedrockTextMessage(role as 'system' | 'user' | 'assistant', content) as unknown as Message;
  }
  return blocksOf(message).length > 0 || message.role === 'system' ? message : undefined;
}
