/**
 * Request rules of Gemini's `generateContent` over a view in the `'gemini'` format, as its
 * function-calling guide and the errors it returns state them:
 * - the system instruction (system messages) comes before the contents; the first content is
 *   the user's;
 * - a model content with function calls comes right after a user content (a user turn or a
 *   function response turn) and is answered by the next content: a user content with one
 *   `functionResponse` per call, matched by id where given, else by name, in order;
 * - a user content with function responses comes right after the model content whose calls
 *   it answers.
 * Also `toGeminiRequest`, which splits a view into `systemInstruction` and `contents`.
 */

import { InvalidMessageError } from '../../errors.js';
import type { GeminiContent, GeminiMessage } from '../../messages/gemini-types.js';
import type { RequestProblem } from '../../messages/request-kit.js';
import { geminiCalls, geminiResponses, pairGemini } from './parts.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Adds Gemini's order and pairing problems of `messages` to `problems`. */
export function geminiProblems(messages: readonly unknown[], problems: RequestProblem[]): void {
  let seenContent = false;
  let previous: Record<string, unknown> | undefined;
  messages.forEach((message, i) => {
    if (!isRecord(message)) return;
    const at = `messages[${i}]`;
    if (message.role === 'system') {
      if (seenContent)
        problems.push({
          index: i,
          path: `${at}.role`,
          message: 'the system instruction goes before the contents (systemInstruction), not between them',
        });
      return;
    }
    if (!seenContent && message.role !== 'user')
      problems.push({ index: i, path: `${at}.role`, message: 'the first content must be a user content' });
    seenContent = true;
    const parts = Array.isArray(message.parts) ? message.parts : [];
    parts.forEach((part, k) => {
      if (isRecord(part) && part.text === '' && part.thoughtSignature === undefined)
        problems.push({
          index: i,
          path: `${at}.parts[${k}].text`,
          message: 'the API refuses an empty text part',
        });
    });
    const calls = geminiCalls(message);
    const responses = geminiResponses(message);
    if (calls.length > 0 && previous !== undefined && previous.role !== 'user')
      problems.push({
        index: i,
        path: `${at}.parts`,
        message: 'a function call turn must come right after a user turn or a function response turn',
      });
    if (responses.length > 0) {
      const asked = previous === undefined ? [] : geminiCalls(previous);
      if (asked.length === 0)
        problems.push({
          index: i,
          path: `${at}.parts[${responses[0]!.index}].functionResponse`,
          message: 'a function response turn must come right after a function call turn',
        });
      else if (asked.length !== responses.length)
        problems.push({
          index: i,
          path: `${at}.parts`,
          message: `the number of function response parts (${responses.length}) must equal the number of function call parts (${asked.length}) of the turn before`,
        });
      else {
        const pairing = pairGemini(asked, responses);
        pairing.forEach((k, n) => {
          if (k >= 0) return;
          const call = asked[n]!;
          problems.push({
            index: i,
            path: `${at}.parts`,
            message: `no functionResponse for the call ${call.name}${call.id ? ` (id ${call.id})` : ''} of the turn before`,
          });
        });
      }
    }
    if (previous !== undefined && geminiCalls(previous).length > 0 && responses.length === 0)
      problems.push({
        index: i - 1,
        path: `messages[${i - 1}].parts`,
        message: 'the function calls of this turn are not answered by function responses in the next content',
      });
    previous = message;
  });
  if (previous !== undefined && geminiCalls(previous).length > 0) {
    const last = messages.length - 1;
    problems.push({
      index: last,
      path: `messages[${last}].parts`,
      message: 'the request ends with function calls that have no function responses',
    });
  }
}

/** A Gemini request's `systemInstruction` and `contents`. */
export interface GeminiRequest {
  /** Omitted when the view has no system message. */
  systemInstruction?: { parts: Array<{ text: string }> };
  contents: GeminiContent[];
}

/**
 * Splits a view in the `'gemini'` format into the request's `systemInstruction` (the system
 * messages' parts, in order) and `contents` (everything else, as it is). Throws
 * `InvalidMessageError` naming each message that is not a Gemini content (`messages[2].parts`):
 * ask the manager for `provider: 'gemini'` to have a view converted.
 */
export function toGeminiRequest(view: readonly GeminiMessage[]): GeminiRequest {
  const issues = view.flatMap((message, i) =>
    isRecord(message) && Array.isArray(message.parts)
      ? []
      : [
          {
            path: `messages[${i}].parts`,
            message:
              'expected a Gemini content ({ role, parts }); convert the view with convertMessages(view, "gemini")',
          },
        ],
  );
  if (issues.length > 0) throw new InvalidMessageError(issues);
  const system: Array<{ text: string }> = [];
  const contents: GeminiContent[] = [];
  for (const message of view) {
    if (message.role === 'system') system.push(...message.parts);
    else contents.push(message);
  }
  return system.length > 0 ? { systemInstruction: { parts: system }, contents } : { contents };
}
