/**
 * The 200 real tau-bench airline runs (gpt-4o with function calling) from `shared/data/`, in
 * both formats, with the facts each run had to act on. Tests and benchmarks use them to check
 * that views stay valid and keep facts on conversations no generator wrote.
 *
 * The Anthropic form comes from a converter written here, independent of the library's, so a
 * bug in the library's conversion cannot also hide in the test data.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type {
  AnthropicContentBlock,
  AnthropicMessage,
  AnthropicToolResultBlock,
  OpenAIMessage,
  OpenAIToolCall,
} from '../../src/messages/types.js';

/** Where the data lives: `shared/` beside the repository, as in every checkout and in CI. */
export const TAU_BENCH_PATH: string = fileURLToPath(
  new URL('../../../shared/data/tau-bench/airline-gpt4o.json', import.meta.url),
);

/** One run in both formats. */
export interface TauBenchRun {
  /** The task (0–49); each task was run several times, so it is not unique. */
  taskId: number;
  /** Which attempt at the task this run is. */
  trial: number;
  /** 1 when the agent solved the task. */
  reward: number;
  /** The trajectory as recorded: system, user, assistant (with tool_calls) and tool messages. */
  openai: OpenAIMessage[];
  /** The same conversation converted to Anthropic Messages (system kept as a `role: "system"` message). */
  anthropic: AnthropicMessage[];
  /** Argument values of the ground-truth actions; see `actionFacts` for what is left out. */
  facts: string[];
  /**
   * The facts that occur verbatim in the trajectory (about 80%: a failed run may never reach the
   * values it had to act on). These are the ones a compacted view can be asked to keep.
   */
  presentFacts: string[];
}

/** Lets tests skip with a message on a machine without `shared/`, instead of failing. */
export function hasTauBench(path: string = TAU_BENCH_PATH): boolean {
  return existsSync(path);
}

const cached = new Map<string, TauBenchRun[]>();

/**
 * Reads, checks and converts the runs once per process (the file is 4 MB; every test file that
 * needs it would otherwise parse it again). Returns the same array on every call: do not mutate it.
 */
export function loadTauBench(path: string = TAU_BENCH_PATH): TauBenchRun[] {
  let runs = cached.get(path);
  if (runs === undefined) {
    const raw: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (!Array.isArray(raw)) throw new Error(`${path}: expected a JSON array of runs`);
    runs = raw.map((run, i) => readRun(run, `runs[${i}]`));
    cached.set(path, runs);
  }
  return runs;
}

// ---------------------------------------------------------------- reading the file

type Loose = Record<string, unknown>;

function record(value: unknown, at: string): Loose {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`${TAU_BENCH_PATH}: ${at}: expected an object`);
  }
  return value as Loose;
}

function array(value: unknown, at: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`${TAU_BENCH_PATH}: ${at}: expected an array`);
  return value;
}

function string(value: unknown, at: string): string {
  if (typeof value !== 'string') throw new Error(`${TAU_BENCH_PATH}: ${at}: expected a string`);
  return value;
}

function readRun(value: unknown, at: string): TauBenchRun {
  const run = record(value, at);
  const taskId = run.task_id;
  if (typeof taskId !== 'number') throw new Error(`${TAU_BENCH_PATH}: ${at}.task_id: expected a number`);
  const openai = array(run.traj, `${at}.traj`).map((m, i) => readOpenAIMessage(m, `${at}.traj[${i}]`));
  const task = record(record(run.info, `${at}.info`).task, `${at}.info.task`);
  const actions = array(task.actions, `${at}.info.task.actions`).map((a, i) =>
    record(record(a, `${at}.info.task.actions[${i}]`).kwargs, `${at}.info.task.actions[${i}].kwargs`),
  );
  const facts = actionFacts(actions);
  const text = JSON.stringify(openai);
  return {
    taskId,
    trial: typeof run.trial === 'number' ? run.trial : 0,
    reward: typeof run.reward === 'number' ? run.reward : 0,
    openai,
    anthropic: toAnthropic(openai),
    facts,
    presentFacts: facts.filter((fact) => text.includes(fact)),
  };
}

function readOpenAIMessage(value: unknown, at: string): OpenAIMessage {
  const m = record(value, at);
  switch (m.role) {
    case 'system':
      return { role: 'system', content: string(m.content, `${at}.content`) };
    case 'user':
      return { role: 'user', content: string(m.content, `${at}.content`) };
    case 'assistant': {
      const content =
        m.content === null || m.content === undefined ? null : string(m.content, `${at}.content`);
      if (m.tool_calls === undefined || m.tool_calls === null) return { role: 'assistant', content };
      const toolCalls = array(m.tool_calls, `${at}.tool_calls`).map((c, i): OpenAIToolCall => {
        const call = record(c, `${at}.tool_calls[${i}]`);
        const fn = record(call.function, `${at}.tool_calls[${i}].function`);
        return {
          id: string(call.id, `${at}.tool_calls[${i}].id`),
          type: 'function',
          function: {
            name: string(fn.name, `${at}.tool_calls[${i}].function.name`),
            arguments: string(fn.arguments, `${at}.tool_calls[${i}].function.arguments`),
          },
        };
      });
      return { role: 'assistant', content, tool_calls: toolCalls };
    }
    case 'tool': {
      const message: OpenAIMessage = {
        role: 'tool',
        tool_call_id: string(m.tool_call_id, `${at}.tool_call_id`),
        content: string(m.content, `${at}.content`),
      };
      if (typeof m.name === 'string') message.name = m.name;
      return message;
    }
    default:
      throw new Error(`${TAU_BENCH_PATH}: ${at}.role: unexpected ${String(m.role)}`);
  }
}

// ---------------------------------------------------------------- OpenAI → Anthropic

/**
 * The data README's conversion: tool calls become `tool_use` blocks (input = the parsed
 * arguments), after any text the assistant wrote; each run of consecutive `tool` messages becomes
 * one user message of `tool_result` blocks in the same order. A tool result with empty content
 * (the `think` tool returns "") gets no `content` field, which is how Anthropic spells an empty
 * result. Ids are kept as they are, reused ones included. Converts the shapes tau-bench has
 * (strings and text parts); other parts throw.
 */
export function toAnthropic(messages: readonly OpenAIMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  let results: AnthropicToolResultBlock[] | null = null;
  for (const message of messages) {
    if (message.role === 'tool') {
      const text =
        typeof message.content === 'string' ? message.content : message.content.map((p) => p.text).join('');
      const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: message.tool_call_id };
      if (text !== '') block.content = text;
      if (results === null) {
        results = [];
        out.push({ role: 'user', content: results });
      }
      results.push(block);
      continue;
    }
    results = null;
    if (message.role === 'system' || message.role === 'developer') {
      const text =
        typeof message.content === 'string' ? message.content : message.content.map((p) => p.text).join('');
      out.push({ role: 'system', content: text });
    } else if (message.role === 'user') {
      if (typeof message.content === 'string') {
        out.push({ role: 'user', content: message.content });
        continue;
      }
      const blocks = message.content.map((part): AnthropicContentBlock => {
        if (part.type !== 'text') throw new Error(`toAnthropic: ${part.type} parts are not converted`);
        return { type: 'text', text: part.text };
      });
      out.push({ role: 'user', content: blocks });
    } else if (message.role === 'assistant') {
      const text = typeof message.content === 'string' ? message.content : '';
      const calls = message.tool_calls ?? [];
      if (calls.length === 0) {
        out.push({ role: 'assistant', content: text });
        continue;
      }
      const blocks: AnthropicContentBlock[] = text.trim() === '' ? [] : [{ type: 'text', text }];
      for (const call of calls) {
        blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input: parseArguments(call) });
      }
      out.push({ role: 'assistant', content: blocks });
    }
  }
  return out;
}

function parseArguments(call: OpenAIToolCall): unknown {
  try {
    return JSON.parse(call.function.arguments);
  } catch {
    throw new Error(`tool call ${call.id}: arguments are not JSON: ${call.function.arguments.slice(0, 80)}`);
  }
}

// ---------------------------------------------------------------- facts

/**
 * Fields whose values are enums of common words ('economy', 'one_way', 'no'): finding them in a
 * view proves nothing about memory, so they are not facts.
 */
const ENUM_FIELDS = new Set(['cabin', 'flight_type', 'insurance']);

/**
 * Fields written by the agent itself for a tool (a hand-off summary, a calculator expression):
 * free text the conversation does not have to contain verbatim, so not a fact to look for.
 */
const FREE_TEXT_FIELDS = new Set(['summary', 'expression']);

/**
 * The values a run had to act on, as strings, first occurrence first: user and reservation ids,
 * flight numbers, dates, payment ids, amounts, names, airport codes. Walks nested objects and
 * arrays. Left out: booleans and null; single-digit numbers (bag counts 0–3 match any text);
 * strings shorter than 3 characters (a last name like "Li"); enum fields and agent-written free
 * text (see `ENUM_FIELDS`, `FREE_TEXT_FIELDS`).
 */
export function actionFacts(kwargsList: readonly Record<string, unknown>[]): string[] {
  const facts = new Set<string>();
  const visit = (value: unknown, field: string): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item, field);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) visit(inner, key);
    } else if (ENUM_FIELDS.has(field) || FREE_TEXT_FIELDS.has(field)) {
      return;
    } else if (typeof value === 'number') {
      if (Math.abs(value) >= 10) facts.add(String(value));
    } else if (typeof value === 'string') {
      if (value.trim().length >= 3) facts.add(value.trim());
    }
  };
  for (const kwargs of kwargsList) visit(kwargs, '');
  return [...facts];
}
