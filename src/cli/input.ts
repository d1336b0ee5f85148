/**
 * Reading a conversation file for the commands: a JSON array of messages, JSONL (one message a
 * line), an object with a `messages` field, or any other shape with `--messages-path`; the file
 * store's own logs (`{seq, metadata, message}` lines) are read too. Every failure is a
 * `CliError` that names the file and, for JSON, the line and column.
 */

import { readFile } from 'node:fs/promises';
import { InvalidMessageError, type MessageIssue } from '../errors.js';
import type { Message, MessageFormat } from '../messages/types.js';
import { detectConversationFormat } from '../wire/detect.js';
import { messageProblems } from '../wire/validate-message.js';
import { CliError } from './cli-error.js';
import { findJsonSyntaxError } from './json-syntax-error.js';

/** Messages as found in the input, not yet checked. */
export interface RawConversation {
  messages: unknown[];
  /** The file name, or `stdin`: the prefix of every error about this input. */
  source: string;
  /** For JSONL input, the 1-based line of each message. */
  lines?: number[];
  /**
   * Set when the input was a provider's request body rather than a list of messages: Anthropic's
   * `{ system, messages }` or Gemini's `{ systemInstruction, contents }`. Its system prompt is
   * then the first message, as in a view.
   */
  body?: 'anthropic' | 'gemini';
}

/** A conversation whose messages are well-formed and all in one format. */
export interface Conversation {
  messages: Message[];
  /** Undefined when every message fits either format (plain text only). */
  format: MessageFormat | undefined;
  source: string;
}

/** How to find the messages in the input. */
export interface InputOptions {
  /** Dot-separated keys and indexes leading to the array, e.g. `0.traj`. */
  messagesPath?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The messages of an object that holds them: `{ messages }` (with an Anthropic request body's
 * top-level `system` as the first message) or a Gemini body `{ systemInstruction, contents }`
 * (its instruction first); undefined for any other value.
 */
export function messagesOfBody(
  root: unknown,
): { messages: unknown[]; body?: 'anthropic' | 'gemini' } | undefined {
  if (isRecord(root) && Array.isArray(root.messages)) {
    if (root.system === undefined) return { messages: root.messages };
    return { messages: [{ role: 'system', content: root.system }, ...root.messages], body: 'anthropic' };
  }
  if (isRecord(root) && Array.isArray(root.contents)) {
    const instruction = root.systemInstruction;
    const system = isRecord(instruction) ? [{ role: 'system', parts: instruction.parts }] : [];
    return { messages: [...system, ...root.contents], body: 'gemini' };
  }
  return undefined;
}

function looksLikeMessage(value: unknown): boolean {
  return isRecord(value) && typeof value.role === 'string';
}

function looksLikeStoredEntry(value: unknown): value is { message: unknown } {
  return isRecord(value) && typeof value.seq === 'number' && isRecord(value.message) && !('role' in value);
}

function describeValue(value: unknown): string {
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (isRecord(value)) {
    const keys = Object.keys(value);
    const shown = keys.slice(0, 8).join(', ');
    return keys.length === 0
      ? 'an empty object'
      : `an object with keys ${shown}${keys.length > 8 ? ', …' : ''}`;
  }
  return value === null ? 'null' : `a ${typeof value}`;
}

/**
 * Reads FILE, or standard input for `-`. A missing or unreadable file is an input error (exit 1)
 * that names it.
 */
export async function readInput(file: string, stdin: NodeJS.ReadableStream = process.stdin): Promise<string> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    return Buffer.concat(chunks).toString('utf8');
  }
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = isRecord(error) ? error.code : undefined;
    if (code === 'ENOENT') throw new CliError(`${file}: no such file`, 1);
    if (code === 'EISDIR') throw new CliError(`${file}: is a directory, expected a conversation file`, 1);
    throw new CliError(`${file}: cannot read: ${error instanceof Error ? error.message : String(error)}`, 1);
  }
}

/**
 * The error for text that is not JSON: `source:line:column: invalid JSON: reason`. `lineOffset`
 * is the line `text` starts on, less one; with `lineKnown`, a text whose fault cannot be placed
 * still names its line (a JSONL line).
 */
export function syntaxError(source: string, text: string, lineOffset = 0, lineKnown = false): CliError {
  const found = findJsonSyntaxError(text);
  if (!found) return new CliError(`${source}${lineKnown ? `:${lineOffset + 1}` : ''}: invalid JSON`, 1);
  return new CliError(
    `${source}:${found.line + lineOffset}:${found.column}: invalid JSON: ${found.reason}`,
    1,
  );
}

/** Parses JSONL: one JSON value a non-blank line, with each value's line number and length. */
export function parseLines(
  text: string,
  source: string,
): { values: unknown[]; lines: number[]; sizes: number[] } {
  const values: unknown[] = [];
  const lines: number[] = [];
  const sizes: number[] = [];
  const all = text.split('\n');
  for (let i = 0; i < all.length; i++) {
    const line = (all[i] as string).replace(/\r$/, '');
    if (line.trim() === '') continue;
    try {
      values.push(JSON.parse(line));
    } catch {
      throw syntaxError(source, line, i, true);
    }
    lines.push(i + 1);
    sizes.push(line.length);
  }
  return { values, lines, sizes };
}

function parsesAlone(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

/** Follows `a.b.0.c` from the root; says where the path stopped matching when it does. */
function followPath(root: unknown, path: string, source: string): unknown {
  const keys = path.split('.').filter((k) => k !== '');
  if (keys.length === 0)
    throw new CliError(`--messages-path ${JSON.stringify(path)}: expected keys separated by dots`, 2);
  let current = root;
  const walked: string[] = [];
  for (const key of keys) {
    const here = walked.length === 0 ? 'the top level' : walked.join('.');
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(key)) {
        throw new CliError(
          `${source}: --messages-path ${path}: ${here} is an array, expected an index, got ${JSON.stringify(key)}`,
          1,
        );
      }
      const index = Number(key);
      if (index >= current.length) {
        throw new CliError(
          `${source}: --messages-path ${path}: ${here} has ${current.length} elements, no index ${index}`,
          1,
        );
      }
      current = current[index];
    } else if (isRecord(current)) {
      if (!Object.hasOwn(current, key)) {
        throw new CliError(
          `${source}: --messages-path ${path}: no ${JSON.stringify(key)} in ${here} (${describeValue(current)})`,
          1,
        );
      }
      current = current[key];
    } else {
      throw new CliError(
        `${source}: --messages-path ${path}: ${here} is ${describeValue(current)}, not an object or array`,
        1,
      );
    }
    walked.push(key);
  }
  return current;
}

/**
 * The path to the first array of messages inside a value (breadth first, first element of
 * arrays only, a few levels deep), to suggest a `--messages-path` when the top level is not one.
 */
export function suggestMessagesPath(root: unknown): string | undefined {
  let level: Array<{ value: unknown; path: string[] }> = [{ value: root, path: [] }];
  for (let depth = 0; depth < 6 && level.length > 0; depth++) {
    const next: typeof level = [];
    for (const { value, path } of level) {
      if (path.length > 0 && Array.isArray(value) && value.length > 0 && looksLikeMessage(value[0])) {
        return path.join('.');
      }
      if (Array.isArray(value)) {
        if (value.length > 0) next.push({ value: value[0], path: [...path, '0'] });
      } else if (isRecord(value)) {
        for (const [key, child] of Object.entries(value)) {
          if (typeof child === 'object' && child !== null) next.push({ value: child, path: [...path, key] });
        }
      }
    }
    level = next;
  }
  return undefined;
}

function notMessages(source: string, found: unknown, root: unknown, what: string): CliError {
  const hint = suggestMessagesPath(root);
  const advice = hint
    ? `; messages found at ${hint}: try --messages-path ${hint}`
    : '; use --messages-path to pick the array of messages';
  return new CliError(`${source}: ${what} ${describeValue(found)}${advice}`, 1);
}

/**
 * Finds the messages in the text of a conversation file. Does not check the messages themselves
 * (see `checkConversation`), so `validate` can list every problem they have.
 */
export function parseInput(text: string, source: string, options: InputOptions = {}): RawConversation {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === '') {
    throw new CliError(
      `${source}: empty input, expected a JSON array of messages, JSONL, or an object with "messages"`,
      1,
    );
  }
  let root: unknown;
  let lines: number[] | undefined;
  let jsonl = false;
  try {
    root = JSON.parse(body);
  } catch {
    const nonBlank = body.split('\n').filter((l) => l.trim() !== '');
    if (nonBlank.length > 1 && parsesAlone(nonBlank[0] as string)) {
      const parsed = parseLines(body, source);
      root = parsed.values;
      lines = parsed.lines;
      jsonl = true;
    } else {
      throw syntaxError(source, body);
    }
  }

  let found: unknown;
  if (options.messagesPath !== undefined) {
    found = followPath(root, options.messagesPath, source);
    if (isRecord(found) && Array.isArray(found.messages)) found = found.messages;
    if (!Array.isArray(found))
      throw notMessages(source, found, root, `--messages-path ${options.messagesPath} leads to`);
    lines = undefined;
  } else if (Array.isArray(root)) {
    found = root;
  } else if (messagesOfBody(root) !== undefined) {
    const { messages, body } = messagesOfBody(root)!;
    if (body === undefined) found = messages;
    else return { messages, source, body };
  } else if (looksLikeMessage(root)) {
    found = [root];
    lines = [1];
  } else {
    throw notMessages(
      source,
      root,
      root,
      'expected an array of messages or an object with "messages", found',
    );
  }

  let messages = found as unknown[];
  if (messages.length > 0 && looksLikeStoredEntry(messages[0])) {
    messages = messages.map((m) => (looksLikeStoredEntry(m) ? m.message : m));
  }
  const first = messages[0];
  if (first !== undefined && !looksLikeMessage(first) && suggestMessagesPath(found) !== undefined) {
    throw notMessages(source, first, root, `${jsonl ? 'line 1' : 'the first element'} is not a message but`);
  }
  return lines ? { messages, source, lines } : { messages, source };
}

function withLine(raw: RawConversation, issue: MessageIssue): string {
  const match = /^messages\[(\d+)\]/.exec(issue.path);
  const line = match && raw.lines ? raw.lines[Number(match[1])] : undefined;
  return line === undefined ? raw.source : `${raw.source}:${line}`;
}

/**
 * Checks every message and that the conversation keeps to one format; an error names the file,
 * the line for JSONL, and the field (`run.jsonl:13: messages[12].tool_calls[0].id: …`).
 */
export function checkConversation(raw: RawConversation): Conversation {
  let format: MessageFormat | undefined;
  try {
    format = detectConversationFormat(raw.messages);
  } catch (error) {
    if (error instanceof InvalidMessageError && error.issues[0]) {
      throw new CliError(`${withLine(raw, error.issues[0])}: ${error.message}`, 1, { cause: error });
    }
    throw error;
  }
  const issues: MessageIssue[] = [];
  raw.messages.forEach((m, i) => {
    issues.push(...messageProblems(m, `messages[${i}]`, format));
  });
  const first = issues[0];
  if (first) {
    const error = new InvalidMessageError(issues);
    throw new CliError(`${withLine(raw, first)}: ${error.message}`, 1, { cause: error });
  }
  return { messages: raw.messages as Message[], format, source: raw.source };
}

/** Reads, parses and checks a conversation file (or stdin for `-`). */
export async function loadConversation(
  file: string,
  options: InputOptions = {},
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<Conversation> {
  const source = file === '-' ? 'stdin' : file;
  return checkConversation(parseInput(await readInput(file, stdin), source, options));
}
