/**
 * The facts block: how kept facts travel inside a prompt, as a marked markdown list the model
 * reads easily and contextkit can read back (a system prompt written by an earlier process, a
 * view saved to a file). Two forms, both with contextkit's markers and each fact's source message:
 * the seed's wire format, one fact a line (`- key [category]: value (msg 12)`), and the compact
 * form views carry, one line per source message led by its number (`12 user_id: mia_li_3668;
 * reservation_id: ZFA04Y | 8JX2P1`), about six tokens a fact, so a small budget still holds dozens
 * of them. A fact of no known source gets a line `- key: value`.
 */

import type { Message } from '../messages/types.js';
import { isToolResultMessage, messageText } from '../wire/content.js';
import { type ExtractedFact, FACT_CATEGORIES, type FactCategory } from './types.js';

/** Opens the block. */
export const FACTS_OPEN = '<!-- contextkit:facts -->';
/** Closes the block. */
export const FACTS_CLOSE = '<!-- /contextkit:facts -->';
/** The heading line inside the block. */
export const FACTS_HEADING = '## Key facts (preserved across compaction)';

const CATEGORIES = new Set<string>(FACT_CATEGORIES);

/**
 * Backslashes and line breaks are escaped so that every fact stays on one line whatever its
 * value; in keys `[` is escaped too, since ` [category]:` ends the key. `<!--` is written `<\!--`, so that
 * no value (a tool result's text) can open or close a block (`FACTS_OPEN`, `FACTS_CLOSE`).
 */
function escapeValue(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/<!--/g, '<\\!--');
}

function escapeKey(text: string): string {
  return escapeValue(text).replace(/\[/g, '\\[');
}

function unescapeText(text: string): string {
  return text.replace(/\\([\\nr[!])/g, (_, c: string) => (c === 'n' ? '\n' : c === 'r' ? '\r' : c));
}

/**
 * The block for `facts`: the open marker, the heading, one line `- key [category]: value (msg 12)`
 * per fact in the given order, the close marker. No facts give the empty string (no block at all,
 * rather than an empty one that reads as "nothing is known"). Spans are not rendered.
 */
export function renderFactsBlock(facts: readonly ExtractedFact[]): string {
  if (facts.length === 0) return '';
  const lines = [FACTS_OPEN, FACTS_HEADING];
  for (const fact of facts) {
    lines.push(`- ${escapeKey(fact.key)} [${fact.category}]: ${escapeValue(fact.value)} (msg ${fact.seq})`);
  }
  lines.push(FACTS_CLOSE);
  return lines.join('\n');
}

const LINE = /^- ((?:[^\\[]|\\.)*?) \[([a-z]+)\]: (.*?)(?: \(msg (-?\d+)\))?$/;

/** The compact form's heading line. */
export const COMPACT_FACTS_HEADING = 'Facts from messages no longer shown, by source message number:';

/** A key that needs no quoting in the compact form: nothing that could end it or the item. */
const BARE_KEY = /^[A-Za-z0-9_.@/-]+$/;

/**
 * A JSON string with `[` escaped, so no quoted key or value can pass for the seed format's
 * ` [category]: ` and a compact line is never read as a seed line, and `<` escaped, so none can
 * open or close a block.
 */
function quote(text: string): string {
  return JSON.stringify(text).replace(/\[/g, '\\u005b').replace(/</g, '\\u003c');
}

/** A value printed bare unless it could end its item or line, or be taken for a quoted one. */
function compactValue(value: string): string {
  return value === '' ||
    (value + ' ').includes('; ') ||
    (' ' + value + ' ').includes(' | ') ||
    /[\n\r]/.test(value) ||
    value.startsWith('"') ||
    value !== value.trim() ||
    / \[[a-z]+\]: /.test(value) ||
    value.includes('<!--')
    ? quote(value)
    : value;
}

/**
 * The key as the compact form shows it. A key that is only a category numbered to keep keys apart
 * (`identifier_2`, `date_3`) shows as the category: the source message already tells two such
 * facts apart, and the number would only cost tokens and split one line's values.
 */
export function compactKey(key: string): string {
  const numbered = /^([a-z]+)_\d+$/.exec(key);
  const shown = numbered && CATEGORIES.has(numbered[1]!) ? numbered[1]! : key;
  return BARE_KEY.test(shown) ? shown : quote(shown);
}

/**
 * What a fact adds to the compact block: a new line for the first fact of its source, an item
 * `; key: value` for a new key of a source already there, ` | value` for another value of a key
 * its source already holds.
 */
export function compactFactPiece(fact: ExtractedFact, seen: 'source' | 'key' | 'none'): string {
  const value = compactValue(fact.value);
  if (seen === 'key') return ` | ${value}`;
  const item = `${compactKey(fact.key)}: ${value}`;
  if (seen === 'source') return `; ${item}`;
  return fact.seq >= 0 ? `\n${fact.seq} ${item}` : `\n- ${item}`;
}

/**
 * The compact block views carry: one line per source message, in message order, its facts in the
 * given order. `parseFactsBlock` reads it back (categories inferred: the compact form does not
 * spend tokens on them).
 */
export function renderCompactFacts(facts: readonly ExtractedFact[]): string {
  const bySource = new Map<number, ExtractedFact[]>();
  for (const f of facts) {
    const seq = f.seq >= 0 ? f.seq : -1;
    const list = bySource.get(seq);
    if (list) list.push(f);
    else bySource.set(seq, [f]);
  }
  const lines = [...bySource.keys()]
    .sort((a, b) => a - b)
    .map((seq) => {
      const byKey = new Map<string, string[]>();
      for (const f of bySource.get(seq)!) {
        const key = compactKey(f.key);
        const values = byKey.get(key);
        if (values) values.push(compactValue(f.value));
        else byKey.set(key, [compactValue(f.value)]);
      }
      const items = [...byKey].map(([key, values]) => `${key}: ${values.join(' | ')}`).join('; ');
      return seq >= 0 ? `${seq} ${items}` : `- ${items}`;
    });
  return `${FACTS_OPEN}\n${COMPACT_FACTS_HEADING}\n${lines.join('\n')}\n${FACTS_CLOSE}`;
}

/** Reads a JSON string starting at `at`; resolves with its value and the index after it. */
function jsonStringAt(text: string, at: number): { value: string; end: number } | undefined {
  for (let i = at + 1; i < text.length; i++) {
    if (text[i] === '\\') {
      i++;
      continue;
    }
    if (text[i] === '"') {
      try {
        return { value: JSON.parse(text.slice(at, i + 1)) as string, end: i + 1 };
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * Reads a key or value at `at`: a JSON string where one starts, else the bare text up to the
 * earliest of `ends` (or the end of the line). Undefined for a broken quoted string.
 */
function pieceAt(
  line: string,
  at: number,
  ends: readonly string[],
): { text: string; end: number } | undefined {
  if (line[at] === '"') {
    const q = jsonStringAt(line, at);
    return q && { text: q.value, end: q.end };
  }
  let end = line.length;
  for (const e of ends) {
    const found = line.indexOf(e, at);
    if (found >= 0 && found < end) end = found;
  }
  return { text: line.slice(at, end), end };
}

/** The facts of one compact line (`12 key: value | value; key: "quoted; value"`), or undefined. */
function parseCompactLine(line: string): ExtractedFact[] | undefined {
  const head = /^(?:(\d+) |- )/.exec(line);
  if (!head || line.length === head[0].length) return undefined;
  const seq = head[1] === undefined ? -1 : Number(head[1]);
  const facts: ExtractedFact[] = [];
  let i = head[0].length;
  while (i < line.length) {
    const key = pieceAt(line, i, [': ']);
    if (!key || (line[i] !== '"' && !BARE_KEY.test(key.text)) || !line.startsWith(': ', key.end))
      return undefined;
    i = key.end + 2;
    for (;;) {
      const value = pieceAt(line, i, ['; ', ' | ']);
      if (!value) return undefined;
      facts.push({ key: key.text, value: value.text, category: categoryOf(value.text), seq });
      i = value.end;
      if (!line.startsWith(' | ', i)) break;
      i += 3;
    }
    if (i < line.length) {
      if (!line.startsWith('; ', i)) return undefined;
      i += 2;
    }
  }
  return facts;
}

/**
 * The category a value most likely has, for facts read back from the compact form: urls, emails,
 * paths, dates, times, amounts, numbers and identifiers by their shape; names and the rest `other`.
 */
export function categoryOf(value: string): FactCategory {
  const v = value.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\/\S+$/i.test(v)) return 'url';
  if (/^[^\s@]+@[^\s@]+\.[a-z]{2,}$/i.test(v)) return 'email';
  if (
    /^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?)?$/.test(v) ||
    /\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}\b|\b\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)/i.test(
      v,
    )
  ) {
    return 'date';
  }
  if (/^\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]m)?$/i.test(v)) return 'time';
  if (/^[$€£¥]\s?-?[\d,.]+|^-?[\d,.]+\s?(?:USD|EUR|GBP|JPY|CAD|AUD|CHF|INR)$/.test(v)) return 'amount';
  if (/^-?[\d,]*\.?\d+%?$/.test(v)) return 'number';
  if (/^(?:~|\.{1,2})?\/[^\s]*$|^[A-Za-z]:\\|^[\w.-]+\/[\w./-]+$|^[\w-]+\.[a-z0-9]{1,5}$/.test(v))
    return 'path';
  if (/^(?=.*\d)(?=.*[A-Za-z_])[\w-]{3,}$/.test(v)) return 'identifier';
  return 'other';
}

/**
 * The facts in every block found in `text` (anything outside the markers is ignored), in order.
 * Reverses `renderFactsBlock` exactly, except for `span`, which is not rendered. Lines of the seed's
 * format without `(msg N)` are read with `seq` -1; an unknown category is read as `other`. Reads
 * the compact blocks views carry (`renderCompactFacts`) too, with their categories inferred.
 */
export function parseFactsBlock(text: string): ExtractedFact[] {
  const facts: ExtractedFact[] = [];
  let from = 0;
  for (;;) {
    const open = text.indexOf(FACTS_OPEN, from);
    if (open === -1) break;
    const bodyStart = open + FACTS_OPEN.length;
    const close = text.indexOf(FACTS_CLOSE, bodyStart);
    const body = text.slice(bodyStart, close === -1 ? text.length : close);
    for (const line of body.split('\n')) {
      const match = LINE.exec(line.replace(/\r$/, ''));
      if (!match) {
        const compact = parseCompactLine(line.replace(/\r$/, ''));
        if (compact) facts.push(...compact);
        continue;
      }
      const category = match[2] as string;
      facts.push({
        key: unescapeText(match[1] as string),
        value: unescapeText(match[3] as string),
        category: CATEGORIES.has(category) ? (category as FactCategory) : 'other',
        seq: match[4] === undefined ? -1 : Number(match[4]),
      });
    }
    if (close === -1) break;
    from = close + FACTS_CLOSE.length;
  }
  return facts;
}

/**
 * The facts of a view's facts block, read only where contextkit puts it: a leading system message
 * or the first message after them that opens with `FACTS_OPEN` (the block `factsMessage` makes).
 * A block anywhere else (inside a tool result, a fetched page, a later message) is text, never
 * facts: `parseFactsBlock` reads any text it is given, so a tool result forging
 * `<!-- contextkit:facts -->` would be read by it; this reads only the block contextkit wrote.
 */
export function viewFacts(messages: readonly Message[]): ExtractedFact[] {
  const facts: ExtractedFact[] = [];
  for (const message of messages) {
    const system = message.role === 'system' || message.role === 'developer';
    // A message carrying tool results (a Chat Completions `tool` message, an Anthropic user turn
    // of `tool_result` blocks, a Responses output item, a Gemini `functionResponse`) is never it.
    if (isToolResultMessage(message) || (message.role !== 'user' && !system)) break;
    const text = messageText(message);
    if (text.startsWith(FACTS_OPEN)) facts.push(...parseFactsBlock(text));
    if (!system) break;
  }
  return facts;
}
