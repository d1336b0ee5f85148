/**
 * What recall reads of a stored message: the text it searches, who said it and when, and the
 * lines a hit shows. Every index (in process, SQLite, Postgres) searches the same text, computed
 * from the message alone, so they agree on what a message says.
 */
import type { HistoryEntry, Message } from '../messages/types.js';
import { entrySegments, type Segment } from '../tools/entry-segments.js';
import type { DaySpan } from './day-spans.js';
import type { RecallRole } from './recall-hit.js';
import { isRecallResultText, RECALL_TOOL_NAME } from './recall-tool.js';
import { transcriptPrefix } from './transcript-prefix.js';

/** One labelled line of a turn as a hit shows it: `Caroline: …`, `call get_user: {…}`. */
export interface TurnLine {
  label: string;
  text: string;
}

/** One stored message as recall reads it. */
export interface TurnText {
  /** The searched text: the turn's own words (without a transcript prefix), tool names, call arguments, results. */
  search: string;
  /** Who said it: the name a transcript prefix or the message's `name` gives; absent otherwise. */
  speaker?: string;
  /** The bracketed stamp a transcript prefix starts with, as written. */
  stamp?: string;
  /** The day the stamp names. */
  day?: DaySpan;
  /** The message's parts as a hit shows them (without the stamp). */
  lines: TurnLine[];
  /** Who the turn is from, as the role filter reads it (see `RecallRole`); absent for a turn of recall's own only. */
  role?: RecallRole;
  /** Names of the tools the turn calls or answers (recall's own left out). */
  tools: string[];
  /** The turn holds a call of recall or its result and nothing else: never a hit. */
  recallOnly: boolean;
}

function nameField(message: Message): string | undefined {
  const name = (message as { name?: unknown }).name;
  return message.role !== 'tool' && typeof name === 'string' && name !== '' ? name : undefined;
}

/**
 * Reads `entry`. `callNames` (call id → tool name, filled as calls are read) labels results with
 * their tool; pass one map for a whole conversation, in order.
 */
export function turnText(entry: HistoryEntry, callNames: Map<string, string> = new Map()): TurnText {
  const message = entry.message as Message;
  const out: TurnText = { search: '', lines: [], tools: [], recallOnly: false };
  const name = nameField(message);
  if (name !== undefined) out.speaker = name;
  const search: string[] = [];
  let recallParts = 0;
  let results = 0;
  let said: RecallRole | undefined;
  for (const part of entrySegments([entry], callNames)) {
    // What recall itself asked and answered is not what was said: searching it would find the
    // question being asked, and earlier hits again, before the turns they came from.
    if (isRecallSegment(part)) {
      recallParts++;
      continue;
    }
    if (part.toolName !== undefined && !out.tools.includes(part.toolName)) out.tools.push(part.toolName);
    if (part.kind === 'result') results++;
    else said ??= part.role;
    if (part.kind === 'text' && part.role !== 'system' && search.length === 0) {
      const prefix = transcriptPrefix(part.text);
      out.speaker ??= prefix.speaker;
      if (prefix.stamp !== undefined) out.stamp = prefix.stamp;
      if (prefix.day !== undefined) out.day = prefix.day;
      const body = part.text.slice(prefix.bodyStart);
      search.push(body);
      out.lines.push({ label: prefix.speaker ?? name ?? part.label, text: body });
      continue;
    }
    search.push(part.kind === 'call' ? `${part.toolName ?? ''} ${part.text}` : part.text);
    out.lines.push({ label: part.label, text: part.text });
  }
  out.search = search.join('\n');
  const role = said ?? (results > 0 ? 'tool' : recallParts > 0 ? undefined : plainRole(message));
  if (role !== undefined) out.role = role;
  out.recallOnly = recallParts > 0 && search.length === 0;
  return out;
}

/** The role filter's name for a message with nothing recall reads in it. */
function plainRole(message: Message): RecallRole {
  const role = message.role as string | undefined;
  if (role === 'model') return 'assistant';
  if (role === 'developer' || role === 'system') return 'system';
  if (role === 'tool') return 'tool';
  return role === 'user' ? 'user' : 'assistant';
}

/** A call of the recall tool, or its result (by its tool's name, or by the result's own text). */
function isRecallSegment(part: Segment): boolean {
  if (part.kind === 'call') return part.toolName === RECALL_TOOL_NAME;
  if (part.kind !== 'result') return false;
  return part.toolName === RECALL_TOOL_NAME || isRecallResultText(part.text);
}

/**
 * Characters of one message that are indexed: a 10 MB tool result is found by its first 100,000
 * characters (Postgres refuses a `tsvector` over 1 MB, and no index should hold one message's
 * megabytes).
 */
export const MAX_SEARCH_CHARS = 100_000;

/**
 * The text recall searches in `message` (see `TurnText.search`), at most `MAX_SEARCH_CHARS`, with
 * NUL characters (which Postgres text cannot hold) as spaces: what every index indexes.
 */
export function searchText(message: Message): string {
  return indexedText(turnText({ seq: 0, message, metadata: { timestamp: '' } }).search);
}

/** A turn's searched text as indexes take it (see `searchText`). */
export function indexedText(text: string): string {
  const cut = text.length > MAX_SEARCH_CHARS ? text.slice(0, MAX_SEARCH_CHARS) : text;
  return cut.includes('\u0000') ? cut.replaceAll('\u0000', ' ') : cut;
}
