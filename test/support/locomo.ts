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
import { transcriptPrefix } from '../../src/recall/transcript-prefix.js';

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

/**
 * The chat with each entry's timestamp set to when its turn was said (the day its session's stamp
 * names, a second per turn after midnight UTC, so order is kept within a day), as an application
 * storing the chat as it happened would have them. Turns without a stamp keep the previous
 * turn's day.
 */
export function withSaidTimestamps(chat: Chat): Chat {
  let day = 0;
  const entries = chat.entries.map((entry, seq) => {
    const text = typeof entry.message.content === 'string' ? entry.message.content : '';
    day = transcriptPrefix(text).day?.first ?? day;
    const timestamp = new Date(day * 86_400_000 + (seq % 86_400) * 1_000).toISOString();
    return { ...entry, metadata: { ...entry.metadata, timestamp } };
  });
  return { ...chat, entries };
}

/** A question with the filters that narrow it to the turn holding its answer. */
export interface FilteredQuestion extends ChatQuestion {
  /** The role of the evidence turn that states the answer. */
  role: 'user' | 'assistant';
  /** First and last day (`YYYY-MM-DD`) of the month that turn was said in. */
  startDate: string;
  endDate: string;
}

/**
 * The questions of a chat (with said timestamps) whose answer one of their evidence turns states,
 * each with that turn's speaker (its role: the set's first speaker is `user`) and month.
 * Questions whose evidence turns do not hold the answer as written are left out.
 */
export function filteredQuestions(chat: Chat): FilteredQuestion[] {
  const out: FilteredQuestion[] = [];
  for (const q of chat.questions) {
    const seq = q.evidence.find((e) => {
      const content = chat.entries[e]?.message.content;
      return typeof content === 'string' && normalizeAnswer(content).includes(q.answer);
    });
    if (seq === undefined) continue;
    const entry = chat.entries[seq] as HistoryEntry;
    const said = new Date(entry.metadata.timestamp);
    const first = new Date(Date.UTC(said.getUTCFullYear(), said.getUTCMonth(), 1));
    const last = new Date(Date.UTC(said.getUTCFullYear(), said.getUTCMonth() + 1, 0));
    out.push({
      ...q,
      role: entry.message.role === 'assistant' ? 'assistant' : 'user',
      startDate: first.toISOString().slice(0, 10),
      endDate: last.toISOString().slice(0, 10),
    });
  }
  return out;
}

/** A recall function that takes filters: the hits' texts for a question under options. */
export type FilteredRecallFunction = (
  question: string,
  filters?: { role: 'user' | 'assistant'; startDate: string; endDate: string },
) => Promise<string[]>;

/** Answers reached by the same questions asked unfiltered and restricted to their speaker and month. */
export interface FilteredReach {
  total: number;
  unfiltered: number;
  filtered: number;
}

/**
 * Asks each question of `filteredQuestions` twice through the recall function made for its chat
 * (which must hold the chat with said timestamps): as it is, and restricted to the role and month
 * of the turn holding its answer; counts the answers in the hits' texts each way.
 */
export async function filteredReach(
  chats: readonly Chat[],
  recallFor: (chat: Chat) => Promise<FilteredRecallFunction>,
): Promise<FilteredReach> {
  const out: FilteredReach = { total: 0, unfiltered: 0, filtered: 0 };
  for (const chat of chats) {
    const said = withSaidTimestamps(chat);
    const recall = await recallFor(said);
    for (const q of filteredQuestions(said)) {
      out.total++;
      const has = (texts: string[]) => normalizeAnswer(texts.join('\n')).includes(q.answer);
      if (has(await recall(q.question))) out.unfiltered++;
      const { role, startDate, endDate } = q;
      if (has(await recall(q.question, { role, startDate, endDate }))) out.filtered++;
    }
  }
  return out;
}
