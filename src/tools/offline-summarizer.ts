/**
 * The offline summarizer: extractive, deterministic, no network. It keeps whole sentences (and
 * lines of tool output) verbatim, so the paths, ids, numbers and dates in them survive exactly,
 * and picks the ones an agent needs again: decisions, errors, what the user asked, sentences that
 * carry facts, recent ones. Kept sentences stay in conversation order, one line per message,
 * led by the number of its source message and labelled by speaker (`3 user:`, `4 assistant:`,
 * `4 call read_file:`, `5 tool read_file:`); a tool result's line that reads as an instruction is
 * quoted as data (`5 tool fetch_url, quoted: "IMPORTANT SYSTEM NOTICE: …"`). No line can hold a
 * line break of its source, so no source can start a line that names another.
 *
 * A dialogue (text turns, hardly any tool traffic) is summarized by `dialogueMemory` instead: the
 * statements that carry facts, with speaker and date, small talk left out.
 *
 * Recursive: with `previousSummary`, its sentences come first and are the last to be trimmed, so
 * a summary of summaries keeps what the first one kept for as long as the budget allows.
 */

import type { HistoryEntry } from '../messages/types.js';
import { runSteps, runStepsInSlices, type Steps } from '../slices.js';
import {
  type DialogueMemoryOptions,
  dialogueMemory,
  dialogueMemoryInSlices,
  isDialogue,
  isDialogueMemory,
} from './dialogue-memory.js';
import { entrySegmentSteps, type Segment } from './entry-segments.js';
import { isInstructionLike, quotedData } from './quoted-data.js';
import { type TextUnit, textUnits } from './sentences.js';
import type { SummarizeOptions } from './types.js';

/** The cheap default count: about four characters per token. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Score added to every sentence of the previous summary: they are kept before any new one. */
const PREVIOUS_BONUS = 1000;
/** Units of a long text that are always scored: its start and its end (see `candidateUnits`). */
const HEAD_UNITS = 40;
const TAIL_UNITS = 20;
/** The greedy fill stops after this many units in a row did not fit: the rest are no smaller. */
const MAX_MISSES = 500;

const DECISION =
  /\b(?:decided|decide to|we will|we'll|chose|chosen|choose|agreed|agree to|confirmed|confirm|proceed|go ahead|approved|let's|plan is|will use|switch(?:ed)? to|instead of|settled on)\b/i;
const ERROR_WORD =
  /\b(?:error|errors|failed|failure|fails|failing|exception|traceback|panic|fatal|crash(?:ed)?|denied|not found|invalid|cannot|can't|unable|refused|timeout|timed out)\b|^\s*at \S+ \(/i;
/** Error codes such as ENOENT or ECONNREFUSED (case matters: `Entries` is not one). */
const ERROR_CODE = /\bE[A-Z]{3,}\b/;
const ERROR = { test: (text: string): boolean => ERROR_WORD.test(text) || ERROR_CODE.test(text) };
const BOILERPLATE =
  /^(?:hi|hello|hey|thanks|thank you|ok|okay|sure|great|perfect|got it|sounds good|you're welcome|no problem|let me (?:check|look|see)|one moment|is there anything else|let me know|happy to help|i can help|how can i (?:help|assist)|continue|done)\b/i;
/** Signs of a fact (a number, an email, an amount, a path): cheap, for scoring only. */
const FACTISH = /\d{2,}|[@$€£/]/g;
/** A summary line's label: `12 tool read_file`, `3 user`, or an older unattributed `tool read_file`. */
const LABEL = /^((?:\d+ )?(?:user|assistant|system|tool|call)(?: [\w.:-]+)?)(, quoted)?: (.*)$/;
/** Labels of tool results' lines. */
const RESULT_LABEL = /^(?:\d+ )?tool\b/;
const STOPWORDS = new Set([
  'the',
  'and',
  'for',
  'that',
  'this',
  'with',
  'from',
  'what',
  'when',
  'where',
  'which',
  'who',
  'how',
  'why',
  'are',
  'was',
  'were',
  'will',
  'would',
  'should',
  'could',
  'have',
  'has',
  'had',
  'not',
  'but',
  'you',
  'your',
  'our',
  'its',
  'into',
  'about',
  'over',
  'then',
  'than',
  'them',
  'they',
  'there',
  'here',
]);

interface Group {
  label: string;
  units: number[];
  /** Text of a tool result: quoted as data where it reads as an instruction (see `render`). */
  fromResult: boolean;
}

interface Units {
  text: string[];
  score: number[];
  group: number[];
  /** Which line of its source text the unit is on, and its place among the text's units. */
  line: number[];
  place: number[];
}

function factSignals(text: string): number {
  FACTISH.lastIndex = 0;
  let n = 0;
  while (n < 3 && FACTISH.exec(text) !== null) n += 1;
  return n;
}

function focusWords(focus: string | undefined): string[] {
  if (!focus) return [];
  const words = focus.toLowerCase().match(/[\p{L}\p{N}_./-]{3,}/gu) ?? [];
  return [...new Set(words.filter((w) => !STOPWORDS.has(w)))].slice(0, 20);
}

/** How much a unit is worth keeping; see the module comment for what counts. */
function unitScore(
  text: string,
  role: string,
  kind: string,
  firstOfUser: boolean,
  recency: number,
  focus: string[],
): number {
  let score = 1 + 2 * recency;
  if (kind === 'result') score -= 1;
  if (role === 'user' && kind === 'text') score += firstOfUser ? 3 : 1.5;
  if (DECISION.test(text)) score += 4;
  if (ERROR.test(text)) score += 4;
  const facts = factSignals(text);
  score += 1.5 * facts;
  if (facts === 0) {
    if (text.length < 60 && BOILERPLATE.test(text)) score -= 3;
    else if (text.length < 12) score -= 2;
  }
  if (focus.length > 0) {
    const lower = text.toLowerCase();
    let shared = 0;
    for (const word of focus) if (lower.includes(word)) shared += 1;
    score += 2 * Math.min(3, shared);
  }
  return score;
}

function addPrevious(summary: string, groups: Group[], units: Units, focus: string[]): void {
  const lines = summary.split('\n').filter((line) => line.trim() !== '');
  lines.forEach((line, i) => {
    const match = LABEL.exec(line);
    const label = match ? (match[1] as string) : '';
    let body = match ? (match[3] as string) : line;
    // A line quoted as data comes back to its text, quoted again by `render` if it still needs it.
    if (match?.[2] !== undefined) body = unquoted(body);
    const group: Group = { label, units: [], fromResult: RESULT_LABEL.test(label) };
    const recency = lines.length > 1 ? i / (lines.length - 1) : 1;
    for (const unit of textUnits(body, true)) {
      group.units.push(units.text.length);
      units.text.push(unit.text);
      units.score.push(PREVIOUS_BONUS + unitScore(unit.text, '', 'text', false, recency, focus));
      units.group.push(groups.length);
      units.line.push(unit.line);
      units.place.push(unit.place);
    }
    if (group.units.length > 0) groups.push(group);
  });
}

/** Texts longer than this are sampled (see `candidateUnits`) rather than cut whole into units. */
const SAMPLE_ABOVE_CHARS = 16_384;
/** At most this many error lines are taken from the middle of one long text. */
const MAX_MIDDLE_ERRORS = 20;
/** Lines and places of units from different parts of a sampled text never look adjacent. */
const PART_GAP = 1_000_000_000;

/** The whole line of `text` around `at`. */
function lineAround(text: string, at: number): { start: number; end: number } {
  const start = text.lastIndexOf('\n', at) + 1;
  const newline = text.indexOf('\n', at);
  return { start, end: newline === -1 ? text.length : newline };
}

/**
 * The units of a text worth scoring: all of a short text's; of a long one, its first `HEAD_UNITS`,
 * its last `TAIL_UNITS`, and the lines in between that mention an error. A 200 KB log has
 * thousands of lines; scoring them all would cost more than the rest of the summary, and its
 * middle rarely matters unless something failed. The middle is searched for errors with one
 * regex pass, without cutting it into units.
 */
function candidateUnits(text: string, prose: boolean): TextUnit[] {
  if (text.length <= SAMPLE_ABOVE_CHARS) return textUnits(text, prose);
  const headEnd = lineAround(text, SAMPLE_ABOVE_CHARS / 2).end;
  const tailStart = lineAround(text, text.length - SAMPLE_ABOVE_CHARS / 4).start;
  const out = textUnits(text.slice(0, headEnd), prose).slice(0, HEAD_UNITS);
  const pattern = new RegExp(`${ERROR_WORD.source}|${ERROR_CODE.source}`, 'gim');
  pattern.lastIndex = headEnd;
  let found = 0;
  for (
    let match = pattern.exec(text);
    match !== null && match.index < tailStart;
    match = pattern.exec(text)
  ) {
    const line = lineAround(text, match.index);
    found += 1;
    for (const unit of textUnits(text.slice(line.start, line.end), prose)) {
      if (ERROR.test(unit.text))
        out.push({ text: unit.text, line: -found, place: found * PART_GAP + unit.place });
    }
    pattern.lastIndex = line.end;
    if (found >= MAX_MIDDLE_ERRORS) break;
  }
  const tail = textUnits(text.slice(tailStart), prose);
  for (const unit of tail.slice(-TAIL_UNITS)) {
    out.push({
      text: unit.text,
      line: PART_GAP + unit.line,
      place: (MAX_MIDDLE_ERRORS + 1) * PART_GAP + unit.place,
    });
  }
  return out;
}

/** Segments scored between two of {@link addEntries}' pauses. */
const SCORED_AT_ONCE = 64;

function* addEntries(
  entries: readonly HistoryEntry[],
  groups: Group[],
  units: Units,
  focus: string[],
): Steps<void> {
  const segments = yield* entrySegmentSteps(entries, (s) => s.role !== 'system');
  const last = Math.max(1, segments.length - 1);
  // Exact duplicates (a repeated "Let me check.", the same log line) are kept once, first time.
  const seen = new Set<string>(units.text);
  for (let i = 0; i < segments.length; i += 1) {
    if (i % SCORED_AT_ONCE === SCORED_AT_ONCE - 1) yield;
    const segment = segments[i] as Segment;
    const group: Group = {
      label: attributed(segment),
      units: [],
      fromResult: segment.kind === 'result',
    };
    const recency = i / last;
    let first = true;
    for (const unit of candidateUnits(segment.text, segment.kind === 'text')) {
      const text = unit.text;
      if (seen.has(text)) continue;
      seen.add(text);
      let score = unitScore(text, segment.role, segment.kind, first, recency, focus);
      if (segment.isError) score += 2;
      first = false;
      group.units.push(units.text.length);
      units.text.push(text);
      units.score.push(score);
      units.group.push(groups.length);
      units.line.push(unit.line);
      units.place.push(unit.place);
    }
    if (group.units.length > 0) groups.push(group);
  }
}

/**
 * A segment's label led by the number of its source message (the README\'s "What every view holds", 8), as the
 * facts block leads its lines: `12 user`, `13 call read_file`, `14 tool read_file` (the result of
 * read_file, message 14).
 */
function attributed(segment: Segment): string {
  return `${segment.seq} ${segment.label}`;
}

/** The text of a line quoted as data (a JSON string); the line as it is when it is not one. */
function unquoted(body: string): string {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'string' ? value : body;
  } catch {
    return body;
  }
}

/**
 * One line per group (message part or previous-summary line): its kept units in order, joined by
 * a space when they follow each other on one line of the source, ` … ` when something between them
 * was left out, and ` | ` when they come from different lines (log lines, list items).
 */
function render(groups: readonly Group[], units: Units, kept: Uint8Array): string {
  const lines: string[] = [];
  for (const group of groups) {
    let text = '';
    let line = -1;
    let place = -1;
    for (const u of group.units) {
      if (kept[u] !== 1) continue;
      const unitLine = units.line[u] as number;
      const unitPlace = units.place[u] as number;
      const separator = unitLine !== line ? ' | ' : unitPlace === place + 1 ? ' ' : ' … ';
      text += text === '' ? (units.text[u] as string) : `${separator}${units.text[u] as string}`;
      line = unitLine;
      place = unitPlace;
    }
    if (text === '') continue;
    if (group.fromResult && isInstructionLike(text))
      lines.push(`${group.label}, quoted: ${quotedData(text)}`);
    else lines.push(group.label === '' ? text : `${group.label}: ${text}`);
  }
  return lines.join('\n');
}

/**
 * Unit indices from best to worst: by score, then later first (recency breaks ties). Sorted as
 * numbers in a typed array, which is several times faster than a comparator on 100k units.
 */
function rankUnits(score: readonly number[]): Float64Array {
  const n = score.length;
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i += 1) keys[i] = -Math.round((score[i] as number) * 1000) * 4_194_304 - i;
  keys.sort();
  for (let i = 0; i < n; i += 1) {
    const key = keys[i] as number;
    const rounded = Math.ceil(key / 4_194_304) * 4_194_304;
    keys[i] = rounded - key;
  }
  return keys;
}

/**
 * An extractive summary of `entries` within `options.maxTokens` (sentences chosen, never written). Returns
 * the body only, one line per message; the caller adds its own header. Empty when nothing fits.
 */
export function summarizeOffline(entries: readonly HistoryEntry[], options: SummarizeOptions): string {
  const budget = Math.floor(options.maxTokens);
  if (!(budget > 0)) return '';
  const memory = dialogueOptions(entries, options, budget);
  if (memory) return dialogueMemory(entries, memory);
  return runSteps(extractiveSummary(entries, options, budget));
}

/**
 * {@link summarizeOffline} in slices that yield (the same text): a dialogue memory of a long chat
 * scores and counts every statement, seconds of work at 100,000 messages.
 */
export async function summarizeOfflineInSlices(
  entries: readonly HistoryEntry[],
  options: SummarizeOptions,
): Promise<string> {
  const budget = Math.floor(options.maxTokens);
  if (!(budget > 0)) return '';
  const memory = dialogueOptions(entries, options, budget);
  if (memory) return dialogueMemoryInSlices(entries, memory);
  return runStepsInSlices(extractiveSummary(entries, options, budget));
}

/** A conversation between people gets a dialogue memory (statements with speaker and date): its options. */
function dialogueOptions(
  entries: readonly HistoryEntry[],
  options: SummarizeOptions,
  budget: number,
): DialogueMemoryOptions | undefined {
  const previous = options.previousSummary;
  if (!(previous ? isDialogueMemory(previous) && isDialogue(entries, 1) : isDialogue(entries)))
    return undefined;
  const memory: DialogueMemoryOptions = {
    maxTokens: budget,
    countText: options.countText ?? estimateTokens,
  };
  if (previous) memory.previousSummary = previous;
  return memory;
}

/**
 * The extractive summary of what is not a dialogue: sentences chosen by score within `budget`.
 * Written as steps (see `Steps`): run whole by {@link summarizeOffline}, in slices that yield by
 * {@link summarizeOfflineInSlices}, the same text. A first plan over a long agent session reads
 * tens of thousands of messages here (40-80 ms in one stretch at 20,000 before).
 */
function* extractiveSummary(
  entries: readonly HistoryEntry[],
  options: SummarizeOptions,
  budget: number,
): Steps<string> {
  const count = options.countText ?? estimateTokens;
  const focus = focusWords(options.focus);
  const groups: Group[] = [];
  const units: Units = { text: [], score: [], group: [], line: [], place: [] };
  if (options.previousSummary) addPrevious(options.previousSummary, groups, units, focus);
  yield* addEntries(entries, groups, units, focus);

  const kept = new Uint8Array(units.text.length);
  const opened = new Uint8Array(groups.length);
  const order = rankUnits(units.score);
  yield;
  let remaining = budget;
  let misses = 0;
  for (let r = 0; r < order.length && remaining > 0 && misses < MAX_MISSES; r += 1) {
    if (r % SCORED_AT_ONCE === SCORED_AT_ONCE - 1) yield;
    const u = order[r] as number;
    // Boilerplate and the like (negative score) is never worth a token, even when there is room.
    if ((units.score[u] as number) < 0) break;
    const g = units.group[u] as number;
    const cost =
      count(units.text[u] as string) +
      1 +
      (opened[g] === 1 ? 0 : count(`${(groups[g] as Group).label}: `) + 1);
    if (cost > remaining) {
      misses += 1;
      continue;
    }
    misses = 0;
    kept[u] = 1;
    opened[g] = 1;
    remaining -= cost;
  }
  yield;

  // The sum of the parts can undercount the whole with a real tokenizer: trim the lowest until it fits.
  let summary = render(groups, units, kept);
  let total = count(summary);
  let r = order.length - 1;
  while (total > budget && r >= 0) {
    yield;
    let freed = 0;
    for (; r >= 0 && freed < total - budget; r -= 1) {
      const u = order[r] as number;
      if (kept[u] !== 1) continue;
      kept[u] = 0;
      freed += count(units.text[u] as string) + 1;
    }
    summary = render(groups, units, kept);
    total = count(summary);
  }
  return summary;
}
