import type { Message } from '../messages/types.js';

/**
 * The facts whose value occurs verbatim somewhere in `messages`, in the order given. The whole
 * serialized request is searched (texts, tool-call arguments, tool inputs, the summary and the
 * facts block alike): a value the model can read anywhere in the request counts as held,
 * wherever the library chose to keep it.
 */
export function factsHeld(messages: readonly Message[], facts: readonly string[]): string[] {
  if (facts.length === 0) return [];
  const text = JSON.stringify(messages);
  return facts.filter((fact) => text.includes(fact));
}
