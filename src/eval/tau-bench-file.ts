/**
 * Reading a tau-bench trajectory file (sierra-research/tau-bench's `historical_trajectories`):
 * a JSON array of runs `{ task_id, trial, reward, traj, info: { task: { actions } } }`, where
 * `traj` is the conversation in OpenAI Chat Completions format and `actions` the ground-truth tool
 * calls with their arguments.
 */

import { readFile } from 'node:fs/promises';
import { ContextkitError, InvalidMessageError } from '../errors.js';
import type { OpenAIMessage } from '../messages/types.js';
import { validateMessage } from '../wire/validate-message.js';
import { actionFacts } from './action-facts.js';
import { factsHeld } from './facts-held.js';

/** One run of the file, ready to evaluate. */
export interface TauBenchRun {
  /** The task (several runs may share one). */
  taskId: number;
  /** Which attempt at the task (0 when the file does not say). */
  trial: number;
  /** 1 when the agent solved the task (0 when the file does not say). */
  reward: number;
  /** The trajectory as recorded, checked message by message. */
  messages: OpenAIMessage[];
  /** Argument values of the ground-truth actions (`actionFacts`). */
  facts: string[];
  /**
   * The facts that occur verbatim in the trajectory: a failed run may never reach a value it had
   * to act on, and a view cannot be asked to keep what the run never said.
   */
  presentFacts: string[];
}

/** A tau-bench file that is not in the expected shape; the message says where. */
export class TauBenchFileError extends ContextkitError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_tau_bench_file', message, options);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The reader's view of a file: checks that name the source and the path inside it. */
class Reader {
  constructor(private readonly source: string) {}

  fail(at: string, expected: string): never {
    throw new TauBenchFileError(`${this.source}: ${at}: expected ${expected}`);
  }

  record(value: unknown, at: string): Record<string, unknown> {
    return isRecord(value) ? value : this.fail(at, 'an object');
  }

  array(value: unknown, at: string): unknown[] {
    return Array.isArray(value) ? value : this.fail(at, 'an array');
  }

  run(value: unknown, at: string): TauBenchRun {
    const run = this.record(value, at);
    if (typeof run.task_id !== 'number') this.fail(`${at}.task_id`, 'a number');
    const messages = this.array(run.traj, `${at}.traj`).map((m, i) => this.message(m, `${at}.traj[${i}]`));
    if (messages.length === 0) this.fail(`${at}.traj`, 'at least one message');
    const task = this.record(this.record(run.info, `${at}.info`).task, `${at}.info.task`);
    const kwargs = this.array(task.actions, `${at}.info.task.actions`).map((action, i) => {
      const where = `${at}.info.task.actions[${i}]`;
      return this.record(this.record(action, where).kwargs, `${where}.kwargs`);
    });
    const facts = actionFacts(kwargs);
    return {
      taskId: run.task_id,
      trial: typeof run.trial === 'number' ? run.trial : 0,
      reward: typeof run.reward === 'number' ? run.reward : 0,
      messages,
      facts,
      presentFacts: factsHeld(messages, facts),
    };
  }

  message(value: unknown, at: string): OpenAIMessage {
    try {
      return validateMessage(value, at, 'openai') as OpenAIMessage;
    } catch (error) {
      if (error instanceof InvalidMessageError) {
        throw new TauBenchFileError(`${this.source}: ${error.message}`, { cause: error });
      }
      throw error;
    }
  }
}

/**
 * The runs in the text of a tau-bench file. Every message is checked as an OpenAI message; a
 * malformed run fails the whole file with an error naming `source` and the path
 * (`runs.json: [3].traj[5].tool_calls[0].id: …`), since an evaluation that silently skipped runs
 * would report on a different set than the one asked for.
 */
export function parseTauBench(text: string, source: string): TauBenchRun[] {
  let root: unknown;
  try {
    root = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    throw new TauBenchFileError(`${source}: invalid JSON: ${(error as Error).message}`, { cause: error });
  }
  const reader = new Reader(source);
  const runs = reader.array(root, 'the top level');
  return runs.map((run, i) => reader.run(run, `[${i}]`));
}

/** Reads and parses a tau-bench file; a missing file is a `TauBenchFileError` that names it. */
export async function readTauBenchFile(path: string): Promise<TauBenchRun[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = isRecord(error) ? error.code : undefined;
    const why = code === 'ENOENT' ? 'no such file' : `cannot read: ${(error as Error).message}`;
    throw new TauBenchFileError(`${path}: ${why}`, { cause: error });
  }
  return parseTauBench(text, path);
}
