/**
 * One contender through one session: the agent asks for a view before every move, acts on it,
 * and the tools answer; the bench counts what the agent did (the world's record, not the agent's)
 * and judges every view it was sent.
 */
import type { Message } from '../../src/messages/types.js';
import { validateRequest } from '../../src/wire/validate-request.js';
import { requestProblems } from '../independent-validator.js';
import type { RequestCounter } from '../peers/o200k-count.js';
import type { PeerSession } from '../peers/peer.js';
import { decide, whereShown } from './agent.js';
import { privilegedText, type Writer } from './wire.js';
import { HEADER, INJECTION_MARKERS, READ_TOOLS, RULES, SYSTEM, type World } from './workload.js';

/** The moves one task may take before the agent is stopped. */
export const STEP_CAP = 8;

/** What one contender's agent did over one session, and what its views were. */
export class Tally {
  tasks = 0;
  finished = 0;
  reads = 0;
  repeatedReads = 0;
  /** Writes to a task's target, and those after the first in the same task (repeated side effects). */
  edits = 0;
  repeatedEdits = 0;
  /** Tasks whose write lacked the required header although the rule was given. */
  constraintLost = 0;
  /** Tasks that wrote a wrong value. */
  wrongValue = 0;
  /** `delete_branch` calls: the injected instruction obeyed. */
  injectionObeyed = 0;
  /** Values the writes used, and those the view showed only outside tool results (summaries, facts). */
  valuesUsed = 0;
  valuesFromMemory = 0;
  /** Tasks stopped at the step cap. */
  capped = 0;
  /** Moves made on a view that showed no task. */
  taskMissing = 0;
  views = 0;
  declined = 0;
  invalid = 0;
  overBudget = 0;
  /** Views holding injected text in a system or developer message. */
  injectedPrivileged = 0;
  /**
   * Views whose system or developer messages say more than the session's system prompt (a summary
   * or facts block made of what users, the assistant and tools said: DESIGN.md's invariant 8).
   */
  otherPrivileged = 0;
  /** Views a provider would take: valid, and within the budget where fit is asked. */
  usable = 0;
  /** Input tokens of every view sent (o200k, the same counter for every contender). */
  billed = 0;
  /** Views after the first of a task … of the session: those that extend the previous view byte for byte. */
  turns = 0;
  stable = 0;
  /** The largest current turn (the task's message and all its work) in tokens. */
  largestTurn = 0;
  firstProblem: string | undefined;
  firstDecline: string | undefined;
}

function extendsPrevious(previous: readonly string[] | undefined, current: readonly string[]): boolean {
  if (previous === undefined || previous.length > current.length) return false;
  for (let i = 0; i < previous.length; i++) if (previous[i] !== current[i]) return false;
  return true;
}

/**
 * A message's JSON, remembered by the message object: the views of a session share most of their
 * messages (the full history all of them), and are otherwise stringified whole on every move.
 */
const jsonOf = new WeakMap<object, string>();
function json(message: unknown): string {
  if (typeof message !== 'object' || message === null) return JSON.stringify(message);
  let s = jsonOf.get(message);
  if (s === undefined) {
    s = JSON.stringify(message);
    jsonOf.set(message, s);
  }
  return s;
}

/** Runs the whole session of `world` through `session` at `budget` tokens a view. */
export async function runEpisode(
  world: World,
  session: PeerSession,
  writer: Writer,
  budget: number,
  counter: RequestCounter,
  judgeFit: boolean,
  /** Reads the agent issues at most in one step (parallel calls). */
  readsPerStep?: number,
): Promise<Tally> {
  const tally = new Tally();
  const format = writer.format;
  const add = async (messages: readonly Message[]) => {
    for (const m of messages) await session.add(m);
  };
  await add(writer.system(SYSTEM));
  await add(writer.user(RULES));
  await add(writer.assistantText('Understood. I will follow that rule for every file I write.'));
  let previous: string[] | undefined;
  for (const task of world.tasks) {
    tally.tasks++;
    const turn: Message[] = writer.user(task.text);
    await add(turn);
    const read = new Set<string>();
    let edits = 0;
    let lastContent: string | undefined;
    let lost = false;
    let done = false;
    for (let step = 0; step < STEP_CAP && !done; step++) {
      const view = await session.view();
      tally.views++;
      if (!view.ok) {
        tally.declined++;
        tally.firstDecline ??= view.error.slice(0, 200);
        previous = undefined;
        break;
      }
      const messages = view.messages();
      // OpenAI Chat and Anthropic by the bench's own validator; the other formats by the library's.
      const problems =
        format === 'openai' || format === 'anthropic'
          ? requestProblems(messages, format)
          : validateRequest(messages, format).problems.map((p) => `${p.index}: ${p.path}: ${p.message}`);
      if (problems.length > 0) {
        tally.invalid++;
        tally.firstProblem ??= problems[0];
      }
      const serialized = messages.map(json);
      // The o200k count knows OpenAI Chat and Anthropic shapes; a view in another format is counted
      // as the OpenAI Chat messages it converts to, so every contender is measured alike.
      const readable = writer.readable(messages);
      const measured = readable === messages ? serialized : readable.map(json);
      const tokens = measured.reduce((n, key, i) => n + counter.countOne(readable[i], key), 3);
      tally.billed += tokens;
      if (judgeFit && tokens > budget) tally.overBudget++;
      if (problems.length === 0 && !(judgeFit && tokens > budget)) tally.usable++;
      const privileged = privilegedText(messages);
      if (privileged.some((t) => INJECTION_MARKERS.some((re) => re.test(t)))) tally.injectedPrivileged++;
      if (privileged.some((t) => t !== SYSTEM)) tally.otherPrivileged++;
      if (previous !== undefined) {
        tally.turns++;
        if (extendsPrevious(previous, serialized)) tally.stable++;
      }
      previous = serialized;

      const action = decide(readable, readsPerStep);
      if (action.kind === 'final') {
        if (action.text.startsWith('I cannot see')) tally.taskMissing++;
        const m = writer.assistantText(action.text);
        turn.push(...m);
        await add(m);
        done = true;
        break;
      }
      if (action.calls.some((c) => c.name === 'edit_file')) {
        for (const s of task.sources) {
          tally.valuesUsed++;
          if (whereShown(readable, s.name) === 'elsewhere') tally.valuesFromMemory++;
        }
      }
      const calls = action.calls.map((c, i) => ({ ...c, id: writer.callId(task.n, step, i) }));
      const results = calls.map((c) => {
        if (READ_TOOLS.has(c.name)) {
          const where = String(c.name === 'fetch_url' ? c.args.url : c.args.path);
          tally.reads++;
          if (read.has(where)) tally.repeatedReads++;
          read.add(where);
          return { id: c.id, text: world.read(c.name, where) };
        }
        if (c.name === 'edit_file') {
          const content = String(c.args.content ?? '');
          if (c.args.path === task.targetPath) {
            tally.edits++;
            if (edits > 0) tally.repeatedEdits++;
            edits++;
            lastContent = content;
            if (!content.startsWith(HEADER)) lost = true;
          }
          return {
            id: c.id,
            text: `ok: wrote ${content.split('\n').length - 1} lines to ${String(c.args.path)}`,
          };
        }
        if (c.name === 'delete_branch') {
          tally.injectionObeyed++;
          return { id: c.id, text: `deleted branch ${String(c.args.name)}` };
        }
        return { id: c.id, text: `error: no tool named ${c.name}` };
      });
      const exchange = writer.exchange(calls, results);
      turn.push(...exchange);
      await add(exchange);
    }
    if (!done) {
      tally.capped++;
      const m = writer.assistantText(`I stopped task ${task.n}: step limit reached.`);
      turn.push(...m);
      await add(m);
    }
    tally.largestTurn = Math.max(tally.largestTurn, counter.count(writer.readable(turn)));
    if (lost) tally.constraintLost++;
    const correct = lastContent?.includes(`${task.targetName} = ${task.answer};`) === true;
    if (lastContent !== undefined && !correct) tally.wrongValue++;
    if (done && correct) tally.finished++;
  }
  return tally;
}
