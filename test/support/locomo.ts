/**
 * The LoCoMo chats in `../shared/data/locomo-dev/` as recall questions: each conversation's turns
 * as stored entries, and its questions with the answer normalized the way the set's README says
 * (lowercase, punctuation removed). Read from the shared folder at run time, never copied.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { normalizeAnswer } from '../../src/eval/chat-file.js';
import type { HistoryEntry, Message } from '../../src/messages/types.js';

export { normalizeAnswer };

/** Where the chat set lives, beside the repository. */
export const LOCOMO_DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'shared',
  'data',
  'locomo-dev',
);

/** One question about a chat, with its normalized answer and the turns that hold it. */
export interface ChatQuestion {
  question: string;
  answer: string;
  evidence: number[];
}

/** One chat of the set. */
export interface Chat {
  name: string;
  entries: HistoryEntry[];
  questions: ChatQuestion[];
}

/** The chats, or `undefined` when the set is not beside the repository. */
export function loadChats(dir: string = LOCOMO_DIR): Chat[] | undefined {
  if (!existsSync(dir)) return undefined;
  const files = readdirSync(dir)
    .filter((f) => /^\d+\.json$/.test(f))
    .sort();
  return files.map((file) => {
    const data = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
      messages: Message[];
      qa: Array<{ question: string; answer: string; evidence: number[] }>;
    };
    const start = Date.UTC(2025, 0, 1);
    return {
      name: file.replace(/\.json$/, ''),
      entries: data.messages.map((message, seq) => ({
        seq,
        message,
        metadata: { timestamp: new Date(start + seq * 1_000).toISOString() },
      })),
      questions: data.qa.map((q) => ({
        question: q.question,
        answer: normalizeAnswer(q.answer),
        evidence: q.evidence,
      })),
    };
  });
}

/** A recall function under test: the hits' texts for a question about one chat. */
export type RecallFunction = (question: string) => Promise<string[]> | string[];

/** How many answers the hits hold, over every question of every chat. */
export interface Reachability {
  found: number;
  total: number;
  /** Mean tokens of the hits' texts per question, as the recall function's counter counts them. */
  meanTokens: number;
}

/**
 * Asks every question through the recall function made for its chat and counts the answers
 * present in the hits' texts together (normalized).
 */
export async function answersReachable(
  chats: readonly Chat[],
  recallFor: (chat: Chat) => RecallFunction,
  countText: (text: string) => number,
): Promise<Reachability> {
  let found = 0;
  let total = 0;
  let tokens = 0;
  for (const chat of chats) {
    const recall = recallFor(chat);
    for (const q of chat.questions) {
      const texts = await recall(q.question);
      total++;
      tokens += texts.reduce((sum, t) => sum + countText(t), 0);
      if (normalizeAnswer(texts.join('\n')).includes(q.answer)) found++;
    }
  }
  return { found, total, meanTokens: total === 0 ? 0 : tokens / total };
}
