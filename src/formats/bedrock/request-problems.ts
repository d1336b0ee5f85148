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

/** One problem, at message `index` (structurally `RequestProblem`). */
export interface BedrockRequestProblem {
  index: number;
  path: string;
  message: string;
}

const TOOL_ID = /^[a-zA-Z0-9_-]{1,64}$/;

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
  closeTurn();
}
