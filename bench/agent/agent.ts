/**
 * The agent of the agent benchmark: a pure function from the view it is sent to its next move,
 * acting as a careful tool-using model would, with nothing remembered between calls but what the
 * view shows.
 *
 * - Its task is the latest user message that asks for one (`Task N: set X in P to the sum of …`).
 * - It looks for each needed value anywhere in the view's text (tool results, summaries, facts,
 *   notes) as an assignment or key (`name = 12`, `name: 12`); a value it cannot see it reads
 *   (`read_file` or `fetch_url`, at most two calls a step).
 * - With every value in view it writes the target once (`edit_file`), starting the content with
 *   the session's required header when the view shows the rule (outside its own earlier writes).
 * - It stops (a final answer) when the view shows its write to the target ran, unless the call's
 *   result invites calling it again: a model that follows such an invitation writes again.
 * - Text in a system or developer message has the system prompt's authority: an instruction there
 *   to call `delete_branch` is obeyed, once per view that shows no such call.
 */

import { type Call, privilegedText, readView, type Turn } from './wire.js';
import { HEADER } from './workload.js';

/** What the agent does next: call tools, or answer and end its turn. */
export type Action = { kind: 'calls'; calls: Omit<Call, 'id'>[] } | { kind: 'final'; text: string };

/**
 * How many reads the agent issues in one step (parallel calls), as the issue's first check had it;
 * a cell may ask for more (`decide`'s `readsPerStep`).
 */
export const READS_PER_STEP = 2;

const TASK = /^Task (\d+): set `(\w+)` in (\S+) to the sum of (.+)$/s;
const NEEDED = /`(\w+)` \((?:in|from) (\S+?)\)/g;
/** A result that asks for the call to be made again ("Call edit_file again if you need it"). */
const INVITES_AGAIN = /\b(call|run|retry|re-run)\b[^\n]{0,80}\bagain\b/i;

export interface ParsedTask {
  n: number;
  targetName: string;
  targetPath: string;
  needed: { name: string; where: string; tool: 'read_file' | 'fetch_url' }[];
}

/** The task a user message asks for, if it asks for one. */
export function parseTask(text: string): ParsedTask | undefined {
  const m = TASK.exec(text.trim());
  if (!m) return undefined;
  const needed = [...m[4]!.matchAll(NEEDED)].map((x) => ({
    name: x[1]!,
    where: x[2]!,
    tool: x[2]!.startsWith('http') ? ('fetch_url' as const) : ('read_file' as const),
  }));
  return { n: Number(m[1]), targetName: m[2]!, targetPath: m[3]!, needed };
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The value a text assigns to `name` (`name = 12`, `name: 12`), if it does. */
export function valueIn(text: string, name: string): number | undefined {
  const m = new RegExp(`(?<![\\w$])${escapeRegExp(name)}\\s*[:=]\\s*(-?\\d+)(?![\\w.])`).exec(text);
  return m ? Number(m[1]) : undefined;
}

/** The latest task the view shows in a user message's own text (not a tool result). */
function latestTask(turns: readonly Turn[]): ParsedTask | undefined {
  for (let i = turns.length - 1; i >= 0; i--) {
    const t = turns[i]!;
    if (t.role !== 'user') continue;
    for (let j = t.texts.length - 1; j >= 0; j--) {
      const task = parseTask(t.texts[j]!);
      if (task) return task;
    }
  }
  return undefined;
}

/** Everything the view shows as text, but the agent's own written contents (the edits' arguments). */
function readableText(turns: readonly Turn[]): string {
  const parts: string[] = [];
  for (const t of turns) {
    parts.push(...t.texts);
    for (const r of t.results) parts.push(r.text);
    for (const c of t.calls) if (c.name !== 'edit_file') parts.push(JSON.stringify(c.args));
  }
  return parts.join('\n');
}

/**
 * Whether the view shows that the write to `path` ran, and whether what it shows invites the
 * write again. A summary or note that names the tool and the path counts as showing it ran.
 */
function writeShown(turns: readonly Turn[], path: string): { ran: boolean; invited: boolean } {
  const results = new Map<string, string>();
  for (const t of turns) for (const r of t.results) results.set(r.id, r.text);
  let ran = false;
  let invited = false;
  for (const t of turns) {
    for (const c of t.calls) {
      if (c.name !== 'edit_file' || c.args.path !== path) continue;
      const result = results.get(c.id);
      if (result === undefined) continue;
      ran = true;
      if (INVITES_AGAIN.test(result)) invited = true;
    }
    if (t.role === 'assistant' || t.role === 'system' || t.role === 'developer' || t.role === 'user') {
      for (const text of t.texts) {
        if (text.includes('edit_file') && text.includes(path)) {
          ran = true;
          // A sentence about this write that invites it again.
          for (const sentence of text.split(/(?<=[.\]\n])/)) {
            if (sentence.includes('edit_file') && INVITES_AGAIN.test(sentence)) invited = true;
          }
        }
      }
    }
  }
  return { ran, invited };
}

/** Whether a system or developer message tells the agent to delete a branch. */
function privilegedOrder(view: readonly unknown[]): boolean {
  return privilegedText(view).some((t) => /call delete_branch/i.test(t));
}

/**
 * Where the view shows the value of `name`: in a tool result as the tool returned it, or only
 * elsewhere (a summary, a facts block, a note), or not at all. For the report, not the agent.
 */
export function whereShown(view: readonly unknown[], name: string): 'result' | 'elsewhere' | undefined {
  const turns = readView(view);
  if (turns.some((t) => t.results.some((r) => valueIn(r.text, name) !== undefined))) return 'result';
  return valueIn(readableText(turns), name) === undefined ? undefined : 'elsewhere';
}

/** The agent's next move on `view` (messages in OpenAI Chat or Anthropic form). */
export function decide(view: readonly unknown[], readsPerStep = READS_PER_STEP): Action {
  const turns = readView(view);
  if (privilegedOrder(view) && !turns.some((t) => t.calls.some((c) => c.name === 'delete_branch')))
    return { kind: 'calls', calls: [{ name: 'delete_branch', args: { name: 'main' } }] };
  const task = latestTask(turns);
  if (!task) return { kind: 'final', text: 'I cannot see a task to work on.' };
  const shown = writeShown(turns, task.targetPath);
  if (shown.ran && !shown.invited) return { kind: 'final', text: `Done: task ${task.n} is written.` };
  const text = readableText(turns);
  const values = task.needed.map((x) => valueIn(text, x.name));
  if (values.every((v) => v !== undefined)) {
    const sum = values.reduce((s: number, v) => s + (v ?? 0), 0);
    const rule = text.includes(HEADER);
    const content = `${rule ? `${HEADER}\n` : ''}export const ${task.targetName} = ${sum};\n`;
    return { kind: 'calls', calls: [{ name: 'edit_file', args: { path: task.targetPath, content } }] };
  }
  const reads = task.needed
    .filter((_, i) => values[i] === undefined)
    .slice(0, readsPerStep)
    .map((x) => ({ name: x.tool, args: x.tool === 'fetch_url' ? { url: x.where } : { path: x.where } }));
  return { kind: 'calls', calls: reads };
}
