/**
 * The messages contextkit writes into a Bedrock conversation (the view's system prompt, facts,
 * summaries and notices, the recall and memory tools' results), detection evidence, and what a
 * view shows for a stored message.
 */

import type { BedrockConversationMessage, BedrockMessage } from '../../messages/bedrock-types.js';
import { freezeDeep } from '../../messages/freeze.js';
import type { Message } from '../../messages/types.js';
import { blocksOf, isRecord, memberOf } from './blocks.js';
import { bedrockDocumentName } from './convert.js';

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
  const blocks = blocksOf(message);
  if (blocks.length === 0) return message.role === 'system' ? message : undefined;
  return message.role === 'user' ? withConverseDocuments(message, blocks) : message;
}

/**
 * DocumentBlock.name "can only contain alphanumeric characters, whitespace characters (no more
 * than one in a row), hyphens, parentheses, square brackets", 1 to 200 of them
 * (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_DocumentBlock.html): `report.pdf`,
 * the common case, is refused. The view shows such a name as conversion writes one
 * (`bedrockDocumentName`: each other character a space, runs of whitespace one space, cut to
 * 200; `report pdf`), or `document` when nothing is left.
 */
const DOCUMENT_NAME = /^(?:[a-zA-Z0-9\-()[\]]|\s(?!\s))+$/;

function isConverseName(name: unknown): boolean {
  return typeof name === 'string' && name.length <= 200 && DOCUMENT_NAME.test(name) && name.trim() === name;
}

function shapedDocument(block: Record<string, unknown>): Record<string, unknown> {
  const doc = block.document as Record<string, unknown>;
  if (isConverseName(doc.name)) return block;
  return {
    ...block,
    document: {
      ...doc,
      name: bedrockDocumentName(typeof doc.name === 'string' ? doc.name : undefined, 'document'),
    },
  };
}

/**
 * A user message as Converse takes its documents: their names shaped (`bedrockDocumentName`,
 * in tool results too), and, where it has documents but no text, a text block naming them
 * ("If you include a ContentBlock with a document field in the array, you must also include a
 * ContentBlock with a text field": API_runtime_Message.html). The stored message stays as it came.
 */
function withConverseDocuments(message: Message, blocks: readonly Record<string, unknown>[]): Message {
  let changed = false;
  let documents: string[] = [];
  let texts = false;
  const shaped = blocks.map((b) => {
    if (isRecord(b.document)) {
      const out = shapedDocument(b);
      documents.push(String((out.document as Record<string, unknown>).name));
      if (out !== b) changed = true;
      return out;
    }
    if (typeof b.text === 'string' && b.text.trim().length > 0) texts = true;
    const result = b.toolResult;
    if (isRecord(result) && Array.isArray(result.content)) {
      const content = result.content.map((c: unknown) =>
        isRecord(c) && isRecord(c.document) ? shapedDocument(c) : c,
      );
      if (content.some((c, k) => c !== (result.content as unknown[])[k])) {
        changed = true;
        return { ...b, toolResult: { ...result, content } };
      }
    }
    return b;
  });
  if (texts) documents = [];
  if (!changed && documents.length === 0) return message;
  if (documents.length > 0)
    shaped.push({ text: `[${documents.length === 1 ? 'document' : 'documents'}: ${documents.join(', ')}]` });
  return freezeDeep({ ...message, content: shaped }) as unknown as Message;
}
