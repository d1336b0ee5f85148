/**
 * The agent's reading on the two real data sets, where the bench cannot make the tools answer
 * (the runs are recorded), so the loop is closed as far as the record allows:
 *
 * - tau-bench (airline, gpt-4o runs): the run is replayed to each contender; before each recorded
 *   tool call, the view is asked for, and the agent needs every argument value of that call that
 *   an earlier tool result or user message said (ids, flight numbers, dates, amounts: the values
 *   `actionFacts` picks). A value out of the view is one the agent would have to look up again
 *   (a repeated read) or get wrong. Budget: 30% of each run's own size.
 * - locomo-dev chats: each chat replayed, then every question whose answer the chat states is put
 *   to the agent on the last view; it answers when the view holds the answer. Budget: 25% of each
 *   chat's size (the "answers of locomo-dev chats in view at 25%").
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Message, MessageFormat } from '../../src/messages/types.js';
import { LOCOMO_DIR, loadChats, normalizeAnswer } from '../../test/support/locomo.js';
import { actionFacts, loadTauBench, TAU_BENCH_PATH } from '../../test/support/tau-bench.js';
import { requestProblems } from '../independent-validator.js';
import { RequestCounter } from '../peers/o200k-count.js';
import type { Peer } from '../peers/peer.js';
import type { Report } from '../report.js';
import { contextkitAgent, contextkitDefault, fullHistory, langchainTrim, loadMastra } from './contenders.js';
import { privilegedText, readView, stringsIn } from './wire.js';

/**
 * Where a shared data set is: beside the repository as the tests look for it, else in the first
 * `shared/data` of a folder above (a worktree sits one level deeper than the main checkout).
 */
function sharedData(beside: string, relative: string): string | undefined {
  if (existsSync(beside)) return beside;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'shared', 'data', relative);
    if (existsSync(candidate)) return candidate;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

const TAU_BUDGET = 0.3;
const CHAT_BUDGET = 0.25;
/** Runs of tau-bench replayed (the first ones of the file), to keep the bench short. */
const TAU_RUNS = 40;

interface DataTally {
  views: number;
  usable: number;
  needed: number;
  inView: number;
  callsAll: number;
  calls: number;
  privilegedLeaks: number;
}

function fresh(): DataTally {
  return { views: 0, usable: 0, needed: 0, inView: 0, callsAll: 0, calls: 0, privilegedLeaks: 0 };
}

/** What a view shows as text, read as the agent reads it. */
function viewText(view: readonly Message[]): string {
  const parts: string[] = [];
  for (const t of readView(view)) {
    parts.push(...t.texts);
    for (const r of t.results) parts.push(r.text);
    for (const c of t.calls) parts.push(...stringsIn(c.args));
  }
  return parts.join('\n');
}

/** Every string a message says (its text, its results, its calls' arguments). */
function said(messages: readonly Message[]): string {
  return viewText(messages);
}

async function judge(
  peer: Peer,
  session: ReturnType<Peer['start']>,
  format: MessageFormat,
  budget: number,
  counter: RequestCounter,
  tally: DataTally,
): Promise<Message[] | undefined> {
  const view = await session.view();
  tally.views++;
  if (!view.ok) return undefined;
  const messages = view.messages();
  const fits = peer === fullHistory || counter.count(messages) <= budget;
  if (fits && requestProblems(messages, format).length === 0) tally.usable++;
  return messages;
}

async function tauBench(
  path: string,
  peers: readonly Peer[],
  format: 'openai' | 'anthropic',
): Promise<Map<string, DataTally>> {
  const runs = loadTauBench(path).slice(0, TAU_RUNS);
  const counter = new RequestCounter();
  const out = new Map<string, DataTally>();
  for (const peer of peers) {
    const tally = fresh();
    out.set(peer.name, tally);
    for (const run of runs) {
      const messages = run[format];
      const openai = run.openai;
      // An agent's budget holds at least its own prompt: where the system prompt is large beside a
      // short run, twice the system prompt (else every contender would decline every view).
      const system = counter.count(messages.filter((x) => x.role === 'system'));
      const budget = Math.max(Math.floor(counter.count(messages) * TAU_BUDGET), 2 * system);
      const session = peer.start(format, budget);
      // The OpenAI form gives each recorded call's arguments; the format's own messages are replayed.
      let added = 0;
      let o = 0;
      for (const m of openai) {
        o++;
        if (m.role !== 'assistant' || !m.tool_calls?.length) continue;
        // Replay the format's messages up to this call: the Anthropic form has one message per
        // assistant turn, so count assistant turns to find the same point.
        const assistantsBefore = openai.slice(0, o - 1).filter((x) => x.role === 'assistant').length;
        let seen = 0;
        while (added < messages.length) {
          const next = messages[added]!;
          if (next.role === 'assistant') {
            if (seen === assistantsBefore) break;
            seen++;
          }
          await session.add(next);
          added++;
        }
        const before = said(messages.slice(0, added));
        const needed = actionFacts(
          m.tool_calls.map((c) => {
            try {
              return JSON.parse(c.function.arguments) as Record<string, unknown>;
            } catch {
              return {};
            }
          }),
        ).filter((v) => before.includes(v));
        if (needed.length === 0) continue;
        const view = await judge(peer, session, format, budget, counter, tally);
        const text = view ? viewText(view) : '';
        if (view && privilegedText(view).length > 0) {
          const system = messages.filter((x) => x.role === 'system').flatMap((x) => stringsIn(x.content));
          if (privilegedText(view).some((t) => !system.includes(t))) tally.privilegedLeaks++;
        }
        const shown = needed.filter((v) => text.includes(v)).length;
        tally.needed += needed.length;
        tally.inView += shown;
        tally.calls++;
        if (shown === needed.length) tally.callsAll++;
      }
    }
  }
  return out;
}

async function chats(dir: string, peers: readonly Peer[]): Promise<Map<string, DataTally>> {
  const data = loadChats(dir) ?? [];
  const counter = new RequestCounter();
  const out = new Map<string, DataTally>();
  for (const peer of peers) {
    const tally = fresh();
    out.set(peer.name, tally);
    for (const chat of data) {
      const messages = chat.entries.map((e) => e.message);
      const budget = Math.floor(counter.count(messages) * CHAT_BUDGET);
      const session = peer.start('openai', budget);
      for (const m of messages) await session.add(m);
      const view = await judge(peer, session, 'openai', budget, counter, tally);
      const whole = normalizeAnswer(said(messages));
      const seen = view ? normalizeAnswer(viewText(view)) : '';
      for (const q of chat.questions) {
        if (q.answer.length === 0 || !whole.includes(q.answer)) continue;
        tally.needed++;
        if (seen.includes(q.answer)) tally.inView++;
      }
    }
  }
  return out;
}

function pct(part: number, whole: number): string {
  return whole === 0 ? '–' : `${((100 * part) / whole).toFixed(1)}%`;
}

/** The data sets' section of the agent report. */
export async function datasetSection(report: Report, progress: (line: string) => void): Promise<void> {
  const mastra = await loadMastra();
  const peers: Peer[] = [fullHistory, contextkitDefault, contextkitAgent, langchainTrim];
  if (typeof mastra !== 'string') peers.push(mastra);
  report.heading('On both data sets');
  report.note(
    `tau-bench (the first ${TAU_RUNS} airline runs, budget ${TAU_BUDGET * 100}% of each run, at least twice its system prompt): replayed to each contender; ` +
      "before each recorded tool call the agent needs the call's argument values that an earlier result or user " +
      'message said (ids, flight numbers, dates, amounts), and finds them in the view as it reads it; a value out ' +
      'of view is one it must look up again. locomo-dev (5 chats, budget 25% of each chat): the questions whose ' +
      'answer the chat states, answered from the last view. "System text not from the system prompt": views whose ' +
      "system or developer messages say anything the run's own system prompt did not (summaries, facts).",
  );
  const rows: string[][] = [];
  const tauPath = sharedData(TAU_BENCH_PATH, join('tau-bench', 'airline-gpt4o.json'));
  if (tauPath !== undefined) {
    for (const format of ['openai', 'anthropic'] as const) {
      const t0 = performance.now();
      const tallies = await tauBench(tauPath, peers, format);
      progress(`tau-bench ${format}: ${Math.round(performance.now() - t0)} ms`);
      for (const p of peers) {
        const t = tallies.get(p.name)!;
        rows.push([
          `tau-bench (${format}), ${p.name}`,
          `${pct(t.callsAll, t.calls)} of ${t.calls}`,
          `${pct(t.inView, t.needed)} of ${t.needed}`,
          `${t.privilegedLeaks} of ${t.views}`,
          p === fullHistory ? '(not trimmed)' : pct(t.usable, t.views),
        ]);
      }
    }
  } else {
    report.note('tau-bench data not found beside the repository: skipped.');
  }
  const chatDir = sharedData(LOCOMO_DIR, 'locomo-dev');
  if (chatDir === undefined) report.note('locomo-dev chats not found beside the repository: skipped.');
  const t0 = performance.now();
  const chatTallies = chatDir === undefined ? new Map<string, DataTally>() : await chats(chatDir, peers);
  progress(`locomo-dev: ${Math.round(performance.now() - t0)} ms`);
  for (const p of peers) {
    const t = chatTallies.get(p.name);
    if (t === undefined || t.views === 0) continue;
    rows.push([
      `locomo-dev chats, ${p.name}`,
      '–',
      `${pct(t.inView, t.needed)} of ${t.needed}`,
      '–',
      p === fullHistory ? '(not trimmed)' : pct(t.usable, t.views),
    ]);
  }
  report.table(
    [
      'data set, contender',
      'calls with every needed value in view',
      'needed values (answers) in view',
      'system text not from the system prompt',
      'usable views',
    ],
    rows,
  );
}
