/**
 * What a policy's views kept, to stand beside what they were billed: a view can look cheap by
 * forgetting. Per call: whether the provider would take the view (valid and within the budget),
 * whether the task (the first user turn) and the latest user turn are in it; at the last call:
 * how many of the key values (ids, numbers, dates, paths, emails) of the part the view left out
 * it still shows. Read the same way for every policy, independently of how each one kept them.
 */

import type { Message, MessageFormat } from '../messages/types.js';
import { isToolResultMessage, messageText } from '../wire/content.js';
import { validateRequest } from '../wire/validate-request.js';

/** A share below this of accepted views, or of views holding the task, marks a policy unusable. */
export const USABLE_SHARE = 0.95;

/** What a policy's views kept, summed over a replay. */
export interface KeptTotals {
  /** Model calls. */
  requests: number;
  /** Views the provider would take: valid by its rules and within the budget. */
  accepted: number;
  /** Accepted views holding the task (the first user turn's text), and the latest user turn's. */
  taskInView: number;
  latestUserInView: number;
  /** Key values of the messages the last view left out, and how many of them it still shows. */
  factsLeftOut: number;
  factsKept: number;
}

/**
 * Whether a policy may be ranked by its price: `null` when it may, or why not (the provider
 * refuses its views, or they drop the task or the latest user turn).
 */
export function unusableReason(kept: KeptTotals): string | null {
  const { requests, accepted } = kept;
  if (requests === 0) return null;
  const reasons: string[] = [];
  if (accepted < USABLE_SHARE * requests)
    reasons.push(`the provider would refuse ${requests - accepted} of ${requests} views`);
  if (kept.taskInView < USABLE_SHARE * accepted)
    reasons.push(`drops the task from ${accepted - kept.taskInView} of ${accepted} views`);
  if (kept.latestUserInView < USABLE_SHARE * accepted)
    reasons.push(`drops the latest user turn from ${accepted - kept.latestUserInView} of ${accepted} views`);
  return reasons.length === 0 ? null : reasons.join('; ');
}

/** A user message with words of its own (not one that only returns tool results). */
export function isUserTurn(m: Message): boolean {
  return m.role === 'user' && !isToolResultMessage(m);
}

/**
 * Ids, numbers, dates, paths, emails and URLs: words holding a digit, a slash or an `@`, four
 * characters or more, stripped of the punctuation that ends a sentence. They are what a model
 * cannot guess back from a summary, so they are what a kept view must still show.
 */
const KEY_VALUE = /[\w.@/:+-]*[\d/@][\w.@/:+-]*/g;

/** The key values of a text, each once. */
export function keyValues(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(KEY_VALUE)) {
    const value = match[0].replace(/^[.:/+-]+|[.:/+-]+$/g, '');
    if (value.length >= 4 && /[\w]/.test(value)) found.add(value);
  }
  return [...found];
}

/** Tool-call arguments in either format (OpenAI `tool_calls`, Anthropic `tool_use` inputs). */
function callsText(m: Message): string {
  const calls = 'tool_calls' in m && Array.isArray(m.tool_calls) ? m.tool_calls : [];
  const uses = Array.isArray(m.content)
    ? (m.content as Array<{ type?: unknown }>).filter((b) => b?.type === 'tool_use')
    : [];
  return calls.length + uses.length === 0 ? '' : `\n${JSON.stringify(calls)}\n${JSON.stringify(uses)}`;
}

/**
 * The key values of what the user and the agent said in a message, tool-call arguments included
 * (tool results are data the agent can fetch again, not what was said).
 */
const said = new WeakMap<Message, readonly string[]>();
function saidValues(m: Message): readonly string[] {
  let values = said.get(m);
  if (values === undefined) {
    const stated = m.role === 'assistant' || m.role === 'model' || isUserTurn(m);
    values = stated ? keyValues(messageText(m) + callsText(m)) : [];
    said.set(m, values);
  }
  return values;
}

/** The key values a view message shows the model: all its text and tool-call arguments. */
const shown = new WeakMap<Message, readonly string[]>();
function shownValues(m: Message): readonly string[] {
  let values = shown.get(m);
  if (values === undefined) {
    values = keyValues(messageText(m) + callsText(m));
    shown.set(m, values);
  }
  return values;
}

const jsons = new WeakMap<Message, string>();
function jsonOf(m: Message): string {
  let json = jsons.get(m);
  if (json === undefined) {
    json = JSON.stringify(m);
    jsons.set(m, json);
  }
  return json;
}

/**
 * The key values said in the stored messages a view left out (not in it byte for byte), and how
 * many of them the view still shows anywhere (a summary, the facts block, a later message).
 * Each message is read once however many views are judged, so judging every view of a long
 * session stays linear in what it holds.
 */
export function factsOfLeftOut(
  stored: readonly Message[],
  view: readonly Message[],
): { leftOut: number; kept: number } {
  const inView = new Set(view.map(jsonOf));
  const values = new Set<string>();
  for (const m of stored) {
    const own = saidValues(m);
    if (own.length === 0 || inView.has(jsonOf(m))) continue;
    for (const value of own) values.add(value);
  }
  const visible = new Set<string>();
  for (const m of view) for (const value of shownValues(m)) visible.add(value);
  let kept = 0;
  for (const value of values) if (visible.has(value)) kept++;
  return { leftOut: values.size, kept };
}

/** Whether `view` shows `message`'s words (a user turn's) in some message, verbatim. */
export function shows(view: readonly Message[], message: Message): boolean {
  const wanted = messageText(message).trim();
  if (wanted.length === 0) return true;
  return view.some((m) => messageText(m).includes(wanted));
}

/** Tallies what one policy's views kept, call by call. */
export class KeptTally {
  readonly totals: KeptTotals = {
    requests: 0,
    accepted: 0,
    taskInView: 0,
    latestUserInView: 0,
    factsLeftOut: 0,
    factsKept: 0,
  };
  private task: Message | undefined;
  private latest: Message | undefined;
  private seen = 0;

  constructor(private readonly format: () => MessageFormat) {}

  /**
   * One call: `stored` the history so far (only its new messages are read), `view` what the
   * policy sent (null when it sent nothing), `tokens` the view's count against `budget`.
   */
  call(stored: readonly Message[], view: readonly Message[] | null, tokens: number, budget: number): void {
    for (; this.seen < stored.length; this.seen++) {
      const m = stored[this.seen]!;
      if (!isUserTurn(m)) continue;
      this.task ??= m;
      this.latest = m;
    }
    this.totals.requests++;
    if (view === null || tokens > budget || !validateRequest(view, this.format()).valid) return;
    this.totals.accepted++;
    if (this.task === undefined || shows(view, this.task)) this.totals.taskInView++;
    if (this.latest === undefined || shows(view, this.latest)) this.totals.latestUserInView++;
  }

  /** The facts of what the last view left out (read once, at the end: it reads the whole history). */
  finish(stored: readonly Message[], lastView: readonly Message[] | null): void {
    const facts = factsOfLeftOut(stored, lastView ?? []);
    this.totals.factsLeftOut = facts.leftOut;
    this.totals.factsKept = lastView === null ? 0 : facts.kept;
  }
}
