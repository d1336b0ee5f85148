/**
 * Reading a chat set for `contextkit eval`: one conversation per `NN.json` file, each
 * `{ messages, qa }` where `messages` is the conversation in OpenAI Chat Completions format and
 * `qa` the questions about it, `{ question, answer, evidence? }`, whose answer is stated verbatim
 * (once normalized) somewhere in the conversation. LoCoMo's dev set comes in this shape.
 */

import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ContextkitError, InvalidMessageError } from '../errors.js';
import type { OpenAIMessage } from '../messages/types.js';
import { validateMessage } from '../wire/validate-message.js';

/** One question about a chat, its answer normalized (`normalizeAnswer`). */
export interface ChatQuestion {
  question: string;
  answer: string;
  /** Indexes of the messages that state the answer, when the file gives them. */
  evidence: number[];
}

/** One conversation of a chat set. */
export interface ChatConversation {
  /** The file's name without `.json`. */
  name: string;
  messages: OpenAIMessage[];
  questions: ChatQuestion[];
}

/** A chat file or folder that is not in the expected shape; the message says where. */
export class ChatFileError extends ContextkitError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_chat_file', message, options);
  }
}

/** Lowercase, punctuation removed, spaces collapsed: how answers are compared with a text. */
export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether parsed JSON looks like one chat (`{ messages, qa }`) rather than tau-bench runs. */
export function isChatShape(root: unknown): boolean {
  return isRecord(root) && Array.isArray(root.messages) && Array.isArray(root.qa);
}

/** One chat from its parsed JSON; `source` names it in errors. */
export function parseChat(root: unknown, source: string): ChatConversation {
  const fail = (at: string, expected: string): never => {
    throw new ChatFileError(`${source}: ${at}: expected ${expected}`);
  };
  if (!isRecord(root) || !Array.isArray(root.qa)) {
    fail('the top level', `a chat { "messages", "qa" } (${EVAL_READS})`);
  }
  const top = root as Record<string, unknown>;
  if (!Array.isArray(top.messages)) fail('messages', 'an array');
  if (!Array.isArray(top.qa)) fail('qa', 'an array');
  const messages = (top.messages as unknown[]).map((m, i) => {
    try {
      return validateMessage(m, `messages[${i}]`, 'openai') as OpenAIMessage;
    } catch (error) {
      if (error instanceof InvalidMessageError) {
        throw new ChatFileError(`${source}: ${error.message}`, { cause: error });
      }
      throw error;
    }
  });
  if (messages.length === 0) fail('messages', 'at least one message');
  const questions = (top.qa as unknown[]).map((q, i): ChatQuestion => {
    const at = `qa[${i}]`;
    if (!isRecord(q)) return fail(at, 'an object');
    if (typeof q.question !== 'string') fail(`${at}.question`, 'a string');
    if (typeof q.answer !== 'string' && typeof q.answer !== 'number') fail(`${at}.answer`, 'a string');
    const answer = normalizeAnswer(String(q.answer));
    if (answer === '') fail(`${at}.answer`, 'a non-empty answer');
    const evidence = Array.isArray(q.evidence) ? q.evidence.filter((n) => typeof n === 'number') : [];
    return { question: q.question as string, answer, evidence: evidence as number[] };
  });
  return { name: basename(source).replace(/\.json$/i, ''), messages, questions };
}

/** What an eval input is: chats with questions, a tau-bench file, one conversation, or a folder of runs. */
export type EvalInput =
  | { kind: 'chats'; chats: ChatConversation[] }
  | { kind: 'tau-bench'; text: string }
  /** Any other conversation: a list of messages, JSONL, or `{ messages }` (one run). */
  | { kind: 'run'; text: string }
  /** A folder of tau-bench files and conversations, each file read as it would be alone. */
  | { kind: 'runs'; files: Array<{ path: string; kind: 'tau-bench' | 'run'; text: string }> };

/** What `contextkit eval` reads, for the errors about what it was given instead. */
export const EVAL_READS =
  'eval reads tau-bench runs (a JSON array of { task_id, traj, info }), a chat with questions ({ messages, qa }), ' +
  'or any conversation (a JSON array of messages, JSONL, or { messages }: agent runs, SWE-agent trajectories, transcripts) for the facts-kept measure; ' +
  'a folder holds chats, or runs and conversations';

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = isRecord(error) ? error.code : undefined;
    const why = code === 'ENOENT' ? 'no such file' : `cannot read: ${(error as Error).message}`;
    throw new ChatFileError(`${path}: ${why}`, { cause: error });
  }
}

/** How one file reads: a chat with questions, a conversation, or tau-bench runs. */
function fileInput(text: string, path: string): EvalInput {
  let root: unknown;
  try {
    root = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    // Not one JSON document: JSONL, one message a line, or broken (the reader says where).
    return { kind: 'run', text };
  }
  if (isChatShape(root)) return { kind: 'chats', chats: [parseChat(root, path)] };
  const first = Array.isArray(root) ? root[0] : undefined;
  const conversation =
    (isRecord(root) && Array.isArray(root.messages)) || (isRecord(first) && typeof first.role === 'string');
  return conversation ? { kind: 'run', text } : { kind: 'tau-bench', text };
}

/**
 * Reads what `contextkit eval` was given and tells its shape: a file holding `{ messages, qa }` is
 * one chat; a list of messages, JSONL or `{ messages }` one run; anything else is left to the
 * tau-bench reader. A folder's `*.json` and `*.jsonl` files (in name order) are read the same way
 * and must be all chats or all runs (agent runs and transcripts: tau-bench files, SWE-agent
 * trajectories as messages, any conversation).
 */
export async function readEvalInput(path: string): Promise<EvalInput> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isDirectory()) return fileInput(await readText(path), path);
  const names = (await readdir(path)).filter((f) => /\.jsonl?$/i.test(f)).sort();
  if (names.length === 0)
    throw new ChatFileError(`${path}: no .json or .jsonl files in this folder; ${EVAL_READS}`);
  const chats: ChatConversation[] = [];
  let firstChat = '';
  const files: Array<{ path: string; kind: 'tau-bench' | 'run'; text: string }> = [];
  for (const name of names) {
    const source = join(path, name);
    const input = fileInput(await readText(source), source);
    if (input.kind === 'chats') {
      firstChat ||= source;
      chats.push(...input.chats);
    } else if (input.kind === 'run' || input.kind === 'tau-bench') files.push({ path: source, ...input });
    if (chats.length > 0 && files.length > 0) {
      throw new ChatFileError(
        `${path}: a folder given to eval holds chats or runs, not both (${firstChat} is a chat, ${files[0]!.path} a run); ${EVAL_READS}`,
      );
    }
  }
  return chats.length > 0 ? { kind: 'chats', chats } : { kind: 'runs', files };
}
