/**
 * Any recorded conversation as a run `contextkit eval` can measure, not only tau-bench's: the
 * facts it is asked to keep are the ones the offline extractor finds in it (ids, paths, amounts,
 * dates, names), so the report's "kept of what truncation lost" is the facts of the dropped part
 * found in the view.
 */

import type { HistoryEntry, Message, MessageFormat, OpenAIMessage } from '../messages/types.js';
import { extractFactsOffline } from '../tools/offline-facts.js';
import { convertMessages } from '../wire/convert.js';
import { factsHeld } from './facts-held.js';
import type { TauBenchRun } from './tau-bench-file.js';

/** `messages` (in `format`, or plain text) as one run whose facts are the extractor's. */
export function plainRun(messages: readonly Message[], format: MessageFormat | undefined): TauBenchRun {
  // The facts extractor reads Chat Completions messages (plain ones are read as they are).
  const openai = (format === undefined ? messages : convertMessages(messages, 'openai')) as OpenAIMessage[];
  const entries: HistoryEntry[] = messages.map((message, seq) => ({
    seq,
    message,
    metadata: { timestamp: '' },
  }));
  const facts = [...new Set(extractFactsOffline(entries).map((fact) => fact.value))];
  return { taskId: 0, trial: 0, reward: 0, messages: openai, facts, presentFacts: factsHeld(openai, facts) };
}
