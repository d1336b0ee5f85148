/**
 * What Converse refuses in a whole conversation beyond each message's own shape (the rules the
 * fake server checks, from the Converse reference and Bedrock's own error texts): the first turn
 * is the user's; system messages stand before the conversation (they go to `system`); every
 * `toolUse` is answered in the next turn, a user turn, by a `toolResult` with its id, and every
 * `toolResult` answers a `toolUse` of the turn just before, once; tool ids are unique and match
 * `[a-zA-Z0-9_-]{1,64}`; no blank text, no empty message. Consecutive messages of one role are
 * one turn (`toBedrockRequest` joins them), so they are no problem.
 */
import { blocksOf, isBlankText, isRecord, memberOf } from './blocks.js';
import { MAX_DOCUMENTS, MAX_IMAGES, TOOL_NAME } from './validate.js';

/** One problem, at message `index` (structurally `RequestProblem`). */
export interface BedrockRequestProblem {
  index: number;
  path: string;
  message: string;
}

const TOOL_ID = /^[a-zA-Z0-9_-]{1,64}$/;
/** DocumentBlock.name (API_runtime_DocumentBlock.html): alphanumerics, single whitespace, hyphens, parentheses, brackets. */
const DOCUMENT_NAME = /^(?:[a-zA-Z0-9\-()[\]]|\s(?!\s))+$/;

/**
 * What one Converse message (a turn: consecutive messages of one role joined) holds, for the
 * Message reference's rules (API_runtime_Message.html): at most 20 images and five documents, a
 * text block beside documents, images and documents only from the user.
 */
interface TurnMedia {
  first: number;
  images: number;
  documents: number;
  text: boolean;
}

/** Adds Converse's order and pairing problems of `messages` to `problems`. */
export function bedrockProblems(messages: readonly unknown[], problems: BedrockRequestProblem[]): void {
  let started = false;
  let role: unknown;
  // Calls of the current assistant turn waiting for the next user turn; results of the current user turn.
  let asked = new Map<string, number>();
  let pending = new Map<string, number>();
  let answered = new Set<string>();
  const ids = new Set<string>();
  const closeTurn = () => {
    for (const [id, at] of pending)
      problems.push({
        index: at,
        path: `messages[${at}]`,
        message: `toolUse ${id} is not answered by a toolResult in the next turn (Expected toolResult blocks … for the following Ids)`,
      });
    pending = new Map();
  };
  let turn: TurnMedia | null = null;
  const closeMedia = () => {
    if (turn === null) return;
    const at = `messages[${turn.first}].content`;
    if (turn.documents > MAX_DOCUMENTS)
      problems.push({
        index: turn.first,
        path: at,
        message: `a turn holds ${turn.documents} documents (Converse takes at most ${MAX_DOCUMENTS})`,
      });
    if (turn.images > MAX_IMAGES)
      problems.push({
        index: turn.first,
        path: at,
        message: `a turn holds ${turn.images} images (Converse takes at most ${MAX_IMAGES})`,
      });
    if (turn.documents > 0 && !turn.text)
      problems.push({
        index: turn.first,
        path: at,
        message: 'A text block must be included when using documents.',
      });
    turn = null;
  };
  messages.forEach((message, i) => {
    if (!isRecord(message)) return;
    const at = `messages[${i}]`;
    if (message.role === 'system') {
      if (started)
        problems.push({
          index: i,
          path: `${at}.role`,
          message: 'the system prompt goes before the conversation',
        });
      return;
    }
    if (!started && message.role !== 'user')
      problems.push({
        index: i,
        path: `${at}.role`,
        message: 'A conversation must start with a user message',
      });
    started = true;
    const blocks = blocksOf(message);
    if (blocks.length === 0)
      problems.push({ index: i, path: `${at}.content`, message: 'the content field is empty' });
    if (message.role !== role) {
      closeMedia();
      turn = { first: i, images: 0, documents: 0, text: false };
      // A new turn: the calls of an assistant turn must be answered in this one.
      if (message.role === 'user') {
        pending = asked;
        answered = new Set();
      } else closeTurn();
      asked = new Map();
      role = message.role;
    }
    blocks.forEach((b, k) => {
      const where = `${at}.content[${k}]`;
      if (isBlankText(b))
        problems.push({ index: i, path: `${where}.text`, message: 'the text field is blank' });
      const member = memberOf(b);
      const media = turn as TurnMedia | null;
      if (member === 'text' && !isBlankText(b) && media) media.text = true;
      if ((member === 'image' || member === 'document') && media) {
        if (member === 'image') media.images++;
        else media.documents++;
        if (message.role !== 'user')
          problems.push({
            index: i,
            path: `${where}.${member}`,
            message: `Converse takes an ${member} only in a user message`,
          });
      }
      if (member === 'document' && isRecord(b.document)) {
        const name = b.document.name;
        if (typeof name !== 'string' || name.length > 200 || !DOCUMENT_NAME.test(name))
          problems.push({
            index: i,
            path: `${where}.document.name`,
            message:
              'expected 1 to 200 of alphanumerics, single whitespace, hyphens, parentheses and square brackets',
          });
      }
      if (member === 'toolUse' && isRecord(b.toolUse) && !TOOL_NAME.test(String(b.toolUse.name)))
        problems.push({
          index: i,
          path: `${where}.toolUse.name`,
          message: 'expected 1 to 64 of [a-zA-Z0-9_-]',
        });
      if (member === 'toolUse' && isRecord(b.toolUse)) {
        const id = String(b.toolUse.toolUseId);
        if (!TOOL_ID.test(id))
          problems.push({
            index: i,
            path: `${where}.toolUse.toolUseId`,
            message: 'expected 1 to 64 of [a-zA-Z0-9_-]',
          });
        if (ids.has(id))
          problems.push({
            index: i,
            path: `${where}.toolUse.toolUseId`,
            message: `tool id ${id} is used twice`,
          });
        ids.add(id);
        asked.set(id, i);
      } else if (member === 'toolResult' && isRecord(b.toolResult)) {
        const id = String(b.toolResult.toolUseId);
        if (!pending.has(id) || answered.has(id))
          problems.push({
            index: i,
            path: `${where}.toolResult.toolUseId`,
            message: `toolResult ${id} answers no toolUse of the turn before`,
          });
        answered.add(id);
        pending.delete(id);
      }
    });
  });
  closeMedia();
  closeTurn();
}

/**
 * Where a view must break a run of user messages with a turn of the model's so that Converse
 * takes it: joined into one turn (`toBedrockRequest`), messages side by side (a view leaves out
 * what stood between them) may hold more than five documents or twenty images together, which
 * each of them alone does not. The indexes of the messages to put a break before, ascending: a
 * user message past those limits with what precedes it in its run, unless it answers tool calls
 * (its results must follow the turn that asked, with nothing between).
 */
export function bedrockTurnBreaks(messages: readonly unknown[]): number[] {
  const breaks: number[] = [];
  let role: unknown;
  let documents = 0;
  let images = 0;
  messages.forEach((message, i) => {
    if (!isRecord(message) || message.role === 'system') return;
    let ownDocuments = 0;
    let ownImages = 0;
    let answers = false;
    for (const block of blocksOf(message)) {
      const member = memberOf(block);
      if (member === 'document') ownDocuments++;
      else if (member === 'image') ownImages++;
      else if (member === 'toolResult') answers = true;
    }
    if (message.role === 'user' && role === 'user' && !answers) {
      if (documents + ownDocuments > MAX_DOCUMENTS || images + ownImages > MAX_IMAGES) {
        breaks.push(i);
        documents = 0;
        images = 0;
      }
    } else if (message.role !== role) {
      documents = 0;
      images = 0;
    }
    documents += ownDocuments;
    images += ownImages;
    role = message.role;
  });
  return breaks;
}
