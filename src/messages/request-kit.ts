/**
 * What the request validators of every format share: the problem type and small helpers.
 */

/** One rule a request breaks. `index` is the message's position, or -1 for the request as a whole. */
export interface RequestProblem {
  index: number;
  path: string;
  message: string;
}

/** One call waiting for its result, located for error messages. */
export interface PendingCall {
  id: string;
  path: string;
  answered: boolean;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether `text` is a string of only whitespace (or empty). */
export function isBlank(text: unknown): boolean {
  return typeof text === 'string' && text.trim().length === 0;
}

/** The path of `messages[index]`. */
export function at(index: number): string {
  return `messages[${index}]`;
}

/**
 * For APIs whose system prompt is apart from the turns (Anthropic, Gemini): a request of system
 * messages alone has no turn to answer.
 */
export function userTurnProblem(messages: readonly unknown[], problems: RequestProblem[]): void {
  if (messages.length > 0 && !messages.some((m) => isRecord(m) && m.role !== 'system')) {
    problems.push({
      index: -1,
      path: 'messages',
      message: 'expected at least one user message besides the system prompt',
    });
  }
}
