/**
 * Dialogue memory: the offline summary of a conversation between people (or a person and an
 * assistant) rather than of an agent's tool traffic. Deterministic, no model.
 *
 * It keeps the statements that carry facts (people, places, dates, plans, preferences,
 * possessions, events, relations, numbers), each with who said it and when: the date a turn gives
 * in a leading `[1:56 pm on 8 May, 2023]`, else the day of its `metadata.timestamp`. Small talk
 * (greetings, thanks, praise, questions back) is left out, repeats are kept once, and what is kept
 * fits the room given, best statements first, shown in conversation order:
 *
 *     [8 May, 2023] Caroline: I went to a LGBTQ support group yesterday. | Melanie: …
 *
 * Recursive: the lines of a previous dialogue memory are read back into statements (with their
 * date and speaker) and compete with the new ones on the same terms (ahead of them on equal merit),
 * so an earlier statement stays for as long as it is among the most worth keeping.
 */

import type { HistoryEntry } from '../messages/types.js';
import { runSteps, runStepsInSlices, type Slices, type Steps, sortSteps } from '../slices.js';
import { entrySegmentSteps, entrySegments } from './entry-segments.js';
import { splitLong, splitSentences } from './sentences.js';

/** One statement: what was said, by whom, on which date (or `''`), and where it came from. */
export interface Statement {
  text: string;
  speaker: string;
  date: string;
  /** Order in the conversation: previous-summary statements come before every new one. */
  order: number;
  /** From the previous summary. */
  previous: boolean;
}

/** A leading `[time on date]`, `[date]` or `[date time]` stamp of a turn. */
const STAMP = /^\s*\[([^\]\n]{4,60})\]\s*/;
/** A leading speaker name (`Caroline: `, `Dr. Lee: `): one to four capitalized words. */
const SPEAKER = /^([A-Z][\p{L}'’.-]*(?: [A-Z][\p{L}'’.-]*){0,3}):\s+/u;
/** A date-looking stamp: it names a month or is written with digits and separators. */
const DATE_LIKE =
  /\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|\b\d{4}-\d{2}-\d{2}(?!\d)|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b|\bsession\b|\bday\b/i;

/** Words that carry no fact by themselves. */
const FILLER = new Set(
  (
    'a an the and or but so to of in on at for with from by as is am are was were be been being it its ' +
    "it's that this these those there here i i'm i've i'd i'll me my mine you you're your yours we our us " +
    'he she they them their his her him what which who whom how why when where do does did doing done ' +
    'have has had not no yes yeah yep just really very so too also such much many lot lots some any all ' +
    'can could would should will shall may might must get got gonna wanna kinda sorta like love loved ' +
    'thanks thank great awesome amazing cool nice wow oh hey hi hello glad happy sure totally definitely ' +
    'absolutely always never ever still even then than if about into over up out more most well good ' +
    'know think feel felt make made thing things stuff one way time something anything everything ' +
    "that's what's don't can't didn't isn't wasn't let let's sounds sound seems looks look"
  ).split(' '),
);

/** Small talk: greetings, thanks, praise and the like, when the sentence says little else. */
const SMALL_TALK =
  /^(?:hi|hey|hello|yo|bye|goodbye|see you|talk soon|take care|thanks|thank you|thx|cheers|congrats|congratulations|wow|whoa|cool|awesome|amazing|great|nice|lovely|sweet|perfect|exactly|agreed|same|ok|okay|sure|yeah|yes|yep|no problem|you're welcome|glad|so glad|so happy|i'm so happy|i'm glad|good luck|good to hear|sounds (?:great|good|fun|amazing|awesome|lovely)|that's (?:so |really )?(?:great|awesome|amazing|cool|wonderful|nice|sweet|lovely|fantastic|beautiful|true|good|fair|interesting|incredible|inspiring)|that sounds|i'm proud|so proud|proud of you|haha|lol|aw+|omg|me too|you too|definitely|totally|absolutely|of course)\b/i;
/** Discourse openers worth cutting from the front of a kept statement. */
const OPENER =
  /^(?:(?:yeah|yes|yep|yup|oh|ooh|wow|whoa|well|so|haha|lol|aw+|hey|ok|okay|sure|totally|definitely|absolutely|right|actually|honestly|btw|anyway)\b[,!.…]*\s+)+/i;

const NUMBER =
  /\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|hundred|thousand|dozen|first|second|third|once|twice|half)\b/i;
const TIME_WORDS =
  /\b(?:yesterday|today|tonight|tomorrow|last (?:week|weekend|month|year|night|summer|winter|spring|fall)|next (?:week|weekend|month|year|summer)|ago|since|years?|months?|weeks?|weekends?|birthday|anniversary|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|june|july|august|september|october|november|december|summer|winter|spring|autumn)\b/i;
const RELATION =
  /\b(?:mom|mum|dad|mother|father|parents?|sister|brother|siblings?|son|daughter|kids?|children|child|husband|wife|partner|spouse|friends?|buddy|grandma|grandpa|grandmother|grandfather|family|boyfriend|girlfriend|cousin|aunt|uncle|neighbou?r|boss|colleague|coworker|mentor|teacher|team|pet|dog|cat|puppy|kitten)\b/i;
const PREFERENCE =
  /\b(?:love|loved|loves|favou?rite|fave|prefer|enjoy|enjoyed|like|liked|hate|passion|passionate|hobby|into|fan of|dream|inspired|inspires|means|symboli[sz]e|reminds?)\b/i;
const PLAN =
  /\b(?:plan|plans|planning|going to|gonna|will|want to|wants to|hope to|hoping|thinking of|thinking about|looking forward|intend|decided|goal|aim|soon|upcoming|next)\b/i;
const EVENT =
  /\b(?:went|go to|visited|visit|attended|attend|joined|started|start|finished|made|make|painted|took|moved|graduated|married|born|won|lost|signed|met|read|wrote|learned|learning|traveled|travelled|trip|concert|workshop|class|course|race|camping|hike|hiking|game|festival|conference|party|wedding|trip|vacation|adopted|adopt|bought|buy|got|have|has|own|owns|received|gift|built|created|volunteer|volunteering|working|work|job|career|studying|study|school|college|university|career|research|researching|researched)\b/i;
const FIRST_PERSON = /\b(?:i|i'm|i've|i'd|i'll|my|mine|we|we're|we've|our|us|me)\b/i;
const QUOTED = /["“][^"”]{2,80}["”]/;
/** Signs of an exact value (an id, amount, path, email, a number of two digits or more). */
const IDENTIFYING = /\d{2,}|[@$€£/#]|\b[A-Za-z]+\d+[A-Za-z\d]*\b/;

/**
 * Whether these entries read as a dialogue: at least `minTurns` text turns (4 by default; 1 when
 * continuing a dialogue memory), hardly any tool traffic.
 */
export function isDialogue(entries: readonly HistoryEntry[], minTurns = 4): boolean {
  // What a long history's rest could still add: an answer often shows early (tool traffic), and
  // the segments (every text of every entry) are then never made for the rest.
  const textAtMost = new Array<number>(entries.length + 1);
  textAtMost[entries.length] = 0;
  for (let i = entries.length - 1; i >= 0; i--)
    textAtMost[i] = textAtMost[i + 1]! + textSegmentsAtMost(entries[i]!.message);
  let text = 0;
  let tools = 0;
  // One map across the batches: a result finds its call in an earlier batch (see `entrySegments`).
  const callNames = new Map<string, string>();
  for (let from = 0; from < entries.length; from += DIALOGUE_BATCH) {
    const to = Math.min(entries.length, from + DIALOGUE_BATCH);
    for (const s of entrySegments(entries.slice(from, to), callNames)) {
      if (s.role === 'system') continue;
      if (s.kind === 'text') text += 1;
      else tools += 1;
    }
    // Tool segments only add up: past ten times what the text can still reach, it is no dialogue.
    if (tools * 10 > text + textAtMost[to]!) return false;
  }
  return text >= minTurns && tools * 10 <= text;
}

/** `isDialogue` reads the entries this many at a time. */
const DIALOGUE_BATCH = 256;

/**
 * At least as many text segments as `entrySegments` makes of `message`: one text, or one per
 * part or block (Gemini parts, Anthropic blocks beside tool results).
 */
function textSegmentsAtMost(message: unknown): number {
  if (typeof message !== 'object' || message === null) return 1;
  const { parts, content } = message as { parts?: unknown; content?: unknown };
  return 1 + (Array.isArray(parts) ? parts.length : 0) + (Array.isArray(content) ? content.length : 0);
}

/** Whether a summary text is a dialogue memory (its lines start with a stamp and a speaker). */
export function isDialogueMemory(summary: string): boolean {
  const lines = summary.split('\n').filter((l) => l.trim() !== '');
  return lines.length > 0 && lines.every((l) => /^\[[^\]]*\] [^|]+?: /.test(l));
}

/** The day of an ISO timestamp (`2025-01-01`), or `''`. */
function dayOf(timestamp: unknown): string {
  return typeof timestamp === 'string' && /^\d{4}-\d{2}-\d{2}/.test(timestamp) ? timestamp.slice(0, 10) : '';
}

/** The date part of a stamp: what follows `on` in `1:56 pm on 8 May, 2023`, else the stamp. */
function stampDate(stamp: string): string {
  const on = /\bon\s+(.+)$/i.exec(stamp);
  if (on) return on[1]!.trim();
  const iso = /\b(\d{4}-\d{2}-\d{2})T\d/.exec(stamp);
  if (iso) return iso[1]!;
  // The time of day is not part of the date: `2023-05-08 13:56`, `8 May 2023, 1:56 pm`.
  const date = stamp
    .replace(/\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\.?)?/gi, '')
    .replace(/\s+at\s*$|^\s*at\s+/i, '')
    .replace(/^[\s,;–-]+|[\s,;–-]+$/g, '');
  return date === '' ? stamp.trim() : date;
}

/** The statements of new entries, in order, with speaker and date. */
export function entryStatements(entries: readonly HistoryEntry[], firstOrder = 0): Statement[] {
  return runSteps(entryStatementSteps(entries, firstOrder));
}

function* entryStatementSteps(entries: readonly HistoryEntry[], firstOrder: number): Steps<Statement[]> {
  const out: Statement[] = [];
  const dates = new Map<number, string>();
  for (const e of entries) {
    dates.set(e.seq, dayOf(e.metadata?.timestamp));
    yield;
  }
  let order = firstOrder;
  const segments = yield* entrySegmentSteps(entries, (s) => s.role !== 'system' && s.kind === 'text');
  // A leading `Name:` is a speaker when turns of the batch use it more than once (not a `Note:`).
  const prefixes = new Map<string, number>();
  for (const s of segments) {
    const name = SPEAKER.exec(s.text.replace(STAMP, ''))?.[1];
    if (name !== undefined) prefixes.set(name, (prefixes.get(name) ?? 0) + 1);
    yield;
  }
  for (const segment of segments) {
    yield;
    let text = segment.text;
    let date = dates.get(segment.seq) ?? '';
    const stamp = STAMP.exec(text);
    if (stamp && DATE_LIKE.test(stamp[1]!)) {
      date = stampDate(stamp[1]!);
      text = text.slice(stamp[0].length);
    }
    let speaker: string = segment.role;
    const named = SPEAKER.exec(text);
    if (named && (prefixes.get(named[1]!) ?? 0) > 1) {
      speaker = named[1]!;
      text = text.slice(named[0].length);
    }
    for (const line of text.split('\n')) {
      for (const sentence of splitSentences(line)) {
        for (const piece of splitLong(sentence)) {
          out.push({ text: piece, speaker, date, order: order++, previous: false });
        }
      }
    }
  }
  return out;
}

/** The statements of a previous dialogue memory, in its order, before `firstOrder`. */
export function memoryStatements(summary: string): Statement[] {
  const out: Statement[] = [];
  let order = -1_000_000_000;
  for (const line of summary.split('\n')) {
    const head = /^\[([^\]]*)\] (.*)$/.exec(line);
    if (!head) continue;
    const date = head[1]!;
    for (const part of head[2]!.split(' | ')) {
      const named = SPEAKER.exec(part) ?? /^([^:]{1,40}):\s+/.exec(part);
      if (!named) continue;
      for (const sentence of splitSentences(part.slice(named[0].length))) {
        // A gap marker (` … `) is rendering, not part of what was said: it is kept as a gap in the
        // order, so the statements render as they were.
        const text = sentence.replace(/^(?:…\s*)+|(?:\s*…)+$/g, '').trim();
        if (sentence.startsWith('…')) order++;
        if (text !== '') out.push({ text, speaker: named[1]!, date, order: order++, previous: true });
      }
    }
  }
  return out;
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}'’]+/gu) ?? [];
}

/** The words of a statement that carry content (for merging repeats and judging small talk). */
export function contentWords(text: string): string[] {
  return words(text).filter((w) => w.length > 1 && !FILLER.has(w.replace(/’/g, "'")));
}

/** The statement without leading discourse words (`Yeah, so I …` → `I …`), a verbatim slice. */
export function trimStatement(text: string): string {
  const cut = text.replace(OPENER, '');
  return cut.length > 0 ? cut : text;
}

/**
 * How much a statement is worth keeping; 0 or less means never. Questions and small talk score
 * nothing; every kind of fact it carries adds.
 */
export function statementScore(text: string, speakers: ReadonlySet<string>): number {
  const content = contentWords(text);
  const trimmed = text.trim();
  // An id, an amount, a path, an email or a number of two digits or more is kept whatever else.
  const exact = IDENTIFYING.test(trimmed);
  if (!exact) {
    if (content.length < 2) return 0;
    if (trimmed.endsWith('?')) return 0;
    if (SMALL_TALK.test(trimmed) && content.length < 4) return 0;
  }
  let score = exact ? 1.5 : 0.5;
  if (trimmed.endsWith('?')) score -= 1;
  // Names and titles: capitalized words past the start that are not the speakers addressed.
  const tokens = trimmed.split(/\s+/);
  let names = 0;
  for (let i = 1; i < tokens.length; i++) {
    const t = tokens[i]!.replace(/^["“(']+|[^\p{L}\p{N}]+$/gu, '');
    if (!/^\p{Lu}[\p{L}\p{N}'’-]+$/u.test(t) || t === 'I' || /^I['’]/.test(t)) continue;
    if (speakers.has(t.toLowerCase())) continue;
    names++;
  }
  score += 1.5 * Math.min(3, names);
  if (NUMBER.test(trimmed)) score += 1.5;
  if (TIME_WORDS.test(trimmed)) score += 1;
  if (RELATION.test(trimmed)) score += 1;
  if (PREFERENCE.test(trimmed)) score += 1;
  if (PLAN.test(trimmed)) score += 1;
  if (EVENT.test(trimmed)) score += 1;
  if (FIRST_PERSON.test(trimmed)) score += 1;
  if (QUOTED.test(trimmed)) score += 1.5;
  score += Math.min(2, content.length / 6);
  if (SMALL_TALK.test(trimmed)) score -= 2;
  if (trimmed.endsWith('!') && names === 0 && !NUMBER.test(trimmed)) score -= 1;
  return exact ? Math.max(score, 0.5) : score;
}

/** Options of `dialogueMemory`. */
export interface DialogueMemoryOptions {
  maxTokens: number;
  countText: (text: string) => number;
  previousSummary?: string;
}

/**
 * Jaccard overlap of content words above which a statement repeats one already kept (when it
 * carries no number the kept one lacks).
 */
const REPEAT_OVERLAP = 0.7;

/** Characters that make a token an exact fact (a path, an email, an amount, an id, a file name). */
const EXACT_TOKEN = /\d|[@$€£/#\\_]|\p{L}\.\p{L}/u;

/**
 * The words a repeat is judged on: the content words, and each whole token that states something
 * exactly (`2019-01-10`, `src/v2.ts`, `#4411`, `a@b.io`, `parse.tsx`) marked with `#`. Content words
 * cut a date into `2019`, `01`, `10` and a path into `src`, `parse`, `ts`, so two statements about
 * different dates or files could share nearly every piece; whole tokens tell them apart.
 */
function repeatWords(text: string): string[] {
  const exact: string[] = [];
  for (const raw of text.split(/[\s,;()"“”]+/)) {
    const token = raw.replace(/[.?!:']+$/, '').toLowerCase();
    if (token !== '' && EXACT_TOKEN.test(token)) exact.push(`#${token}`);
  }
  return [...contentWords(text), ...exact];
}

function isRepeat(
  words: readonly string[],
  kept: ReadonlyArray<ReadonlySet<string>>,
  index: Map<string, number[]>,
): boolean {
  if (words.length === 0) return false;
  const set = new Set(words);
  const exact = [...set].filter((w) => w.startsWith('#'));
  const checked = new Set<number>();
  for (const w of set) {
    for (const k of index.get(w) ?? []) {
      if (checked.has(k)) continue;
      checked.add(k);
      const other = kept[k]!;
      // A number, path or id the other lacks makes it a different statement, however alike the rest.
      if (exact.some((d) => !other.has(d))) continue;
      let shared = 0;
      for (const x of set) if (other.has(x)) shared++;
      if (shared / (set.size + other.size - shared) >= REPEAT_OVERLAP) return true;
    }
  }
  return false;
}

/**
 * Renders statements in order: one line per date, speakers' runs separated by ` | `, statements of
 * one run joined by a space when they follow each other and by ` … ` when something between them
 * was left out.
 */
export function renderStatements(statements: readonly Statement[]): string {
  const lines: string[] = [];
  let date: string | undefined;
  let speaker: string | undefined;
  let line = '';
  let last = Number.NaN;
  for (const s of statements) {
    const gap = s.order !== last + 1;
    last = s.order;
    if (s.date !== date) {
      if (line !== '') lines.push(line);
      line = `[${s.date}] ${s.speaker}: ${s.text}`;
      date = s.date;
      speaker = s.speaker;
    } else if (s.speaker !== speaker) {
      line += ` | ${s.speaker}: ${s.text}`;
      speaker = s.speaker;
    } else {
      line += `${gap ? ' … ' : ' '}${s.text}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines.join('\n');
}

/**
 * The dialogue memory of `entries` (who said what, as statements) within `maxTokens`. Statements are
 * taken best first by score per token (so a long statement must carry more to earn its room),
 * repeats of a taken one skipped; the result is measured whole and trimmed until it fits.
 */
export function dialogueMemory(entries: readonly HistoryEntry[], options: DialogueMemoryOptions): string {
  return runSteps(dialogueMemorySteps(entries, options));
}

/**
 * {@link dialogueMemory} in slices that yield (the same text): over a long chat (100,000 messages
 * leaving a cold first view) scoring and counting every statement took seconds in one stretch.
 */
export function dialogueMemoryInSlices(
  entries: readonly HistoryEntry[],
  options: DialogueMemoryOptions,
  slices?: Slices,
): Promise<string> {
  return runStepsInSlices(dialogueMemorySteps(entries, options), slices);
}

interface Candidate extends Statement {
  score: number;
  cost: number;
  /** What it is ranked by: its score per square root of its tokens. */
  rank: number;
}

function* dialogueMemorySteps(
  entries: readonly HistoryEntry[],
  options: DialogueMemoryOptions,
): Steps<string> {
  const budget = Math.floor(options.maxTokens);
  if (!(budget > 0)) return '';
  const previous = options.previousSummary ? memoryStatements(options.previousSummary) : [];
  const fresh = yield* entryStatementSteps(entries, 0);
  yield;
  const statements = [...previous, ...fresh];
  const speakers = new Set<string>();
  for (const s of statements) {
    for (const w of s.speaker.toLowerCase().split(' ')) if (w.length > 1) speakers.add(w);
    yield;
  }
  const candidates: Candidate[] = [];
  for (const s of statements) {
    const text = s.previous ? s.text : trimStatement(s.text);
    const score = statementScore(text, speakers);
    if (score > 0) {
      const cost = options.countText(text) + 1;
      candidates.push({ ...s, text, score, cost, rank: score / Math.sqrt(cost) });
    }
    yield;
  }
  yield* sortSteps(candidates, (a, b) => b.rank - a.rank || a.order - b.order);
  yield;
  const kept: Candidate[] = [];
  const keptWords: Array<Set<string>> = [];
  const index = new Map<string, number[]>();
  // A new statement that repeats one the earlier memory holds is merged into it (left out).
  const earlierWords: Array<Set<string>> = [];
  const earlierIndex = new Map<string, number[]>();
  for (const c of candidates) {
    yield;
    if (!c.previous) continue;
    const words = new Set(repeatWords(c.text));
    for (const w of words) earlierIndex.set(w, [...(earlierIndex.get(w) ?? []), earlierWords.length]);
    earlierWords.push(words);
  }
  const notRepeats: Candidate[] = [];
  for (const c of candidates) {
    if (c.previous || !isRepeat(repeatWords(c.text), earlierWords, earlierIndex)) notRepeats.push(c);
    yield;
  }
  let used = 0;
  const header = (s: Statement) => options.countText(`[${s.date}] ${s.speaker}: `);
  const dates = new Set<string>();
  const take = (c: Candidate, limit: number): void => {
    if (used >= limit) return;
    const cw = repeatWords(c.text);
    // The earlier memory holds no repeats, and new statements repeating it were left out.
    if (!c.previous && isRepeat(cw, keptWords, index)) return;
    // A new date costs its stamp; a speaker's run its name (counted once per date, roughly).
    const extra = dates.has(c.date) ? Math.ceil(options.countText(c.speaker) / 2) + 1 : header(c);
    if (used + c.cost + extra > limit) return;
    used += c.cost + extra;
    dates.add(c.date);
    kept.push(c);
    const k = keptWords.length;
    keptWords.push(new Set(cw));
    for (const w of new Set(cw)) {
      const list = index.get(w);
      if (list) list.push(k);
      else index.set(w, [k]);
    }
  };
  // The earlier memory's statements compete with the new ones on the same terms (a new statement
  // that repeats one of them was left out above): the memory holds the statements worth most over
  // the whole history, whenever they left the view, and one compaction after another keeps what
  // one compaction of everything would.
  for (const c of notRepeats) {
    take(c, budget);
    yield;
  }
  const ranked = kept.slice();
  const inOrder = () => ranked.slice().sort((a, b) => a.order - b.order);
  let text = renderStatements(inOrder());
  // The estimate can be off by a few tokens: leave out the least worth, measure again.
  while (ranked.length > 0 && options.countText(text) > budget) {
    ranked.pop();
    text = renderStatements(inOrder());
    yield;
  }
  return text;
}
