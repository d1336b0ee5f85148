/**
 * Entries as a plain-text transcript for an LLM: one block per message part, each tagged with its
 * sequence number and speaker (`[#12 user]`, `[#13 call get_user]`, `[#14 tool get_user]`), so
 * the model can say where a fact came from. Tool results and long texts are cut in the middle,
 * and the whole transcript is kept under a size a model's window can take.
 */
import type { HistoryEntry } from '../messages/types.js';
import { entrySegments, type Segment } from './entry-segments.js';

/** Options of `renderTranscript`. */
export interface TranscriptOptions {
  /** A tool result (or call's arguments) longer than this keeps its start and end. Default 2,000. */
  maxResultChars?: number;
  /** The same for user and assistant text. Default 8,000. */
  maxTextChars?: number;
  /**
   * The whole transcript stays under this (default 200,000 characters, about 50k tokens): the
   * per-part limits are halved until it fits (down to 200 characters), and if it still does not,
   * the middle messages are left out with a note saying how many.
   */
  maxChars?: number;
}

const MIN_PART_CHARS = 200;

/** `text` cut to `max` characters: its first 70% and last 30%, with a note of what was left out. */
export function cutMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.floor(max * 0.7);
  const tail = max - head;
  return `${text.slice(0, head)}\n[… ${text.length - head - tail} characters omitted …]\n${text.slice(text.length - tail)}`;
}

function renderSegment(segment: Segment, maxResult: number, maxText: number): string {
  const limit = segment.kind === 'text' ? maxText : maxResult;
  const error = segment.isError ? ' (error)' : '';
  return `[#${segment.seq} ${segment.label}${error}] ${cutMiddle(segment.text.trim(), limit)}`;
}

/**
 * The transcript of `entries` (system messages left out: they stay in every request anyway).
 * Deterministic, so the same entries give the same prompt.
 */
export function renderTranscript(entries: readonly HistoryEntry[], options: TranscriptOptions = {}): string {
  const segments = entrySegments(entries).filter((s) => s.role !== 'system');
  const maxChars = options.maxChars ?? 200_000;
  let maxResult = options.maxResultChars ?? 2_000;
  let maxText = options.maxTextChars ?? 8_000;
  for (;;) {
    const parts = segments.map((s) => renderSegment(s, maxResult, maxText));
    const size = parts.reduce((sum, part) => sum + part.length + 1, 0);
    if (size <= maxChars) return parts.join('\n');
    if (maxResult > MIN_PART_CHARS || maxText > MIN_PART_CHARS) {
      maxResult = Math.max(MIN_PART_CHARS, Math.floor(maxResult / 2));
      maxText = Math.max(MIN_PART_CHARS, Math.floor(maxText / 2));
      continue;
    }
    return dropMiddle(parts, maxChars);
  }
}

/** The first and last parts that fit in `maxChars` (a third from the start, the rest from the end). */
function dropMiddle(parts: readonly string[], maxChars: number): string {
  const headBudget = Math.floor(maxChars / 3);
  const head: string[] = [];
  let used = 0;
  for (const part of parts) {
    if (used + part.length + 1 > headBudget) break;
    head.push(part);
    used += part.length + 1;
  }
  const tail: string[] = [];
  for (let i = parts.length - 1; i >= head.length; i -= 1) {
    const part = parts[i] as string;
    if (used + part.length + 1 > maxChars - 60) break;
    tail.unshift(part);
    used += part.length + 1;
  }
  const omitted = parts.length - head.length - tail.length;
  return [...head, `[… ${omitted} message parts omitted …]`, ...tail].join('\n');
}
