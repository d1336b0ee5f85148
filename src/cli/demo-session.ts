/**
 * The long coding-agent session `contextkit demo` replays: a developer asks for fixes in a
 * billing service and an agent answers with tool calls (read_file, grep, run_tests, edit_file,
 * often several in parallel), tool results of every size (a one-line edit receipt, a 2,000-line
 * file dump, a verbose test log) and answers that cite paths, ticket ids and numbers.
 *
 * It is generated, not recorded, so the demo needs no data file and is the same on every machine:
 * the same seed gives the same messages, turn by turn, forever. A file read twice reads the same
 * unless an edit_file changed it in between (then its version moves on), as in a real session.
 */

import { isFormatName } from '../formats/registry.js';
import type { Message, MessageFormat, OpenAIMessage, OpenAIToolCall } from '../messages/types.js';
import { convertMessages } from '../wire/convert.js';

/** A small, fast, seedable generator (mulberry32): the session must not depend on Math.random. */
class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** The whole state: a generator made with it as seed continues this one's sequence. */
  get current(): number {
    return this.state;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

const MODULES = [
  'invoices/total',
  'invoices/tax',
  'invoices/discounts',
  'date/parse',
  'date/format',
  'api/routes/orders',
  'api/routes/customers',
  'api/middleware/auth',
  'db/pool',
  'db/queries/orders',
  'queue/worker',
  'queue/retry',
  'config/load',
  'cache/lru',
  'payments/stripe',
  'payments/refunds',
  'reports/monthly',
  'money/round',
] as const;

const VERBS = [
  'compute',
  'parse',
  'format',
  'apply',
  'resolve',
  'load',
  'validate',
  'build',
  'merge',
  'normalize',
];
const NOUNS = [
  'Total',
  'LineItems',
  'TaxRate',
  'Discount',
  'InvoiceDate',
  'Currency',
  'Order',
  'Customer',
  'Retry',
  'Refund',
];
const TYPES = ['Money', 'Invoice', 'LineItem', 'Order', 'Customer', 'Currency', 'TaxRule', 'Refund'];

/** Names a module's functions and its test are known by: stable, from the module's name alone. */
function moduleFunctions(module: string): string[] {
  const r = new Random(hash(module));
  const names = new Set<string>();
  while (names.size < 4) names.add(r.pick(VERBS) + r.pick(NOUNS));
  return [...names];
}

const src = (module: string) => `src/${module}.ts`;
const testOf = (module: string) => `test/${module}.test.ts`;

/** A plausible TypeScript source file of about `lines` lines, the same for the same path and version. */
function sourceFile(path: string, version: number, lines: number): string[] {
  const r = new Random(hash(path) ^ (version * 7919));
  const module = path.replace(/^(src|test)\//, '').replace(/(\.test)?\.ts$/, '');
  const fns = moduleFunctions(module);
  const out: string[] = [
    `import type { ${r.pick(TYPES)}, ${r.pick(TYPES)} } from '../types.js';`,
    `import { logger } from '../log.js';`,
    '',
  ];
  const isTest = path.startsWith('test/');
  if (isTest) out.splice(0, 0, `import { describe, expect, it } from 'vitest';`);
  let block = 0;
  while (out.length < lines) {
    const fn = fns[block % fns.length] as string;
    const type = r.pick(TYPES);
    const limit = r.int(2, 50) * 100;
    if (isTest) {
      out.push(
        `describe('${fn}', () => {`,
        `  it('handles ${r.int(1, 28)} ${r.pick(['items', 'invoices', 'refunds', 'retries'])} (case ${block})', () => {`,
        `    const input = fixture('${module.replace(/\//g, '-')}-${r.int(100, 999)}.json');`,
        `    expect(${fn}(input).amount).toBe(${r.int(1, 99_999) / 100});`,
        '  });',
        `  it('rejects amounts above ${limit}', () => {`,
        `    expect(() => ${fn}({ amount: ${limit + 1} })).toThrow(/limit ${limit}/);`,
        '  });',
        '});',
        '',
      );
    } else {
      out.push(
        `/** ${fn}: see BILL-${r.int(1000, 9999)} for why ${r.pick(['rounding', 'the timezone', 'the cap', 'the retry'])} is handled here. */`,
        `export function ${fn}(input: ${type}, options: { limit?: number } = {}): ${r.pick(TYPES)} {`,
        `  const limit = options.limit ?? ${limit};`,
        `  let acc = ${r.int(0, 9)};`,
        `  for (const item of input.items ?? []) {`,
        `    if (item.amount > limit) throw new RangeError(\`amount \${item.amount} above limit ${limit}\`);`,
        `    acc += Math.round(item.amount * ${r.pick(['100', '1.19', '0.07', '12', '1000'])}) / ${r.pick(['100', '1', '10'])};`,
        '  }',
        `  logger.debug({ fn: '${fn}', acc, count: input.items?.length ?? 0 });`,
        `  return { ...input, amount: acc, currency: input.currency ?? '${r.pick(['EUR', 'USD', 'GBP', 'SEK'])}' };`,
        '}',
        '',
      );
    }
    block++;
  }
  return out.slice(0, lines);
}

interface Call {
  name: 'read_file' | 'grep' | 'run_tests' | 'edit_file';
  args: Record<string, unknown>;
  result: string;
}

/** What a task is about: the module, the function and the facts the user and agent mention. */
export interface DemoTask {
  module: string;
  fn: string;
  ticket: string;
  run: number;
  customer: string;
  invoice: string;
  expected: string;
  actual: string;
  text: string;
}

/** A session's state between two runs of the demo (kept in the store's metadata). */
export interface DemoCheckpoint {
  format: MessageFormat;
  random: number;
  turns: number;
  versions: Array<[string, number]>;
  lastTask: DemoTask | null;
}

const TASK_STRINGS = ['module', 'fn', 'ticket', 'customer', 'invoice', 'expected', 'actual', 'text'] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isTask(value: unknown): value is DemoTask {
  return (
    isRecord(value) &&
    typeof value.run === 'number' &&
    TASK_STRINGS.every((k) => typeof value[k] === 'string')
  );
}

function isCheckpoint(value: unknown): value is DemoCheckpoint {
  if (!isRecord(value)) return false;
  const { format, random, turns, versions, lastTask } = value;
  return (
    isFormatName(format) &&
    Number.isInteger(random) &&
    Number.isInteger(turns) &&
    Array.isArray(versions) &&
    versions.every((v) => Array.isArray(v) && typeof v[0] === 'string' && Number.isInteger(v[1])) &&
    (lastTask === null || isTask(lastTask))
  );
}

/**
 * Turns of a long agent session, one model call's worth of work per user request: each call of
 * `nextTurn` returns the user's message, the agent's tool rounds and its answer.
 */
export class DemoSession {
  private readonly random: Random;
  private readonly versions = new Map<string, number>();
  private turns = 0;
  private lastTask: DemoTask | undefined;

  constructor(
    readonly format: MessageFormat = 'openai',
    seed = 42,
  ) {
    this.random = new Random(seed);
  }

  /** Everything needed to carry on later exactly where the session is now. */
  snapshot(): DemoCheckpoint {
    return {
      format: this.format,
      random: this.random.current,
      turns: this.turns,
      versions: [...this.versions],
      lastTask: this.lastTask ?? null,
    };
  }

  /** A session that continues from a snapshot, or undefined when `value` is not one (a stale or foreign record). */
  static restore(value: unknown): DemoSession | undefined {
    if (!isCheckpoint(value)) return undefined;
    const session = new DemoSession(value.format, value.random);
    session.turns = value.turns;
    for (const [path, version] of value.versions) session.versions.set(path, version);
    session.lastTask = value.lastTask ?? undefined;
    return session;
  }

  /** The messages of the next turn (the first turn starts with the system prompt). */
  nextTurn(): Message[] {
    const turn = this.openaiTurn();
    return convertMessages(turn, this.format);
  }

  private openaiTurn(): OpenAIMessage[] {
    const out: OpenAIMessage[] = [];
    if (this.turns === 0) {
      out.push({
        role: 'system',
        content:
          'You are a careful coding agent working in the acme-billing repository (TypeScript, Node 20, vitest). ' +
          'Use the tools to read code before changing it, keep edits minimal, run the tests after every change, ' +
          'and cite file paths, ticket ids and numbers exactly in your answers.',
      });
    }
    this.turns++;
    const r = this.random;
    if (this.lastTask && r.chance(0.15)) {
      // A follow-up question answered from what is already in the conversation.
      const t = this.lastTask;
      out.push({ role: 'user', content: r.pick(FOLLOW_UPS)(t) });
      out.push({ role: 'assistant', content: r.pick(FOLLOW_UP_ANSWERS)(t) });
      return out;
    }
    const task = this.task();
    this.lastTask = task;
    out.push({ role: 'user', content: task.text });
    const rounds = r.int(1, 4);
    for (let round = 0; round < rounds; round++) {
      const parallel = r.chance(0.5) ? r.int(2, 4) : 1;
      const calls: Call[] = [];
      for (let k = 0; k < parallel; k++) calls.push(this.call(task, round, rounds));
      const toolCalls: OpenAIToolCall[] = calls.map((c) => ({
        id: this.callId(),
        type: 'function',
        function: { name: c.name, arguments: JSON.stringify(c.args) },
      }));
      const preface = r.chance(0.35) ? r.pick(PREFACES)(task) : null;
      out.push({ role: 'assistant', content: preface, tool_calls: toolCalls });
      calls.forEach((c, k) => {
        out.push({ role: 'tool', tool_call_id: (toolCalls[k] as OpenAIToolCall).id, content: c.result });
      });
    }
    out.push({ role: 'assistant', content: r.pick(ANSWERS)(task, r.int(80, 240), r.int(1, 9)) });
    return out;
  }

  private callId(): string {
    let suffix = '';
    for (let i = 0; i < 20; i++)
      suffix += 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'[this.random.int(0, 61)];
    return `call_${suffix}`;
  }

  private task(): DemoTask {
    const r = this.random;
    const module = r.pick(MODULES);
    const fn = r.pick(moduleFunctions(module));
    const task: DemoTask = {
      module,
      fn,
      ticket: `BILL-${r.int(1000, 9999)}`,
      run: r.int(40_000, 99_999),
      customer: `cus_${r.int(100_000, 999_999)}`,
      invoice: `INV-2024-${String(r.int(1, 99_999)).padStart(5, '0')}`,
      expected: (r.int(100, 500_000) / 100).toFixed(2),
      actual: (r.int(100, 500_000) / 100).toFixed(2),
      text: '',
    };
    task.text = r.pick(REQUESTS)(task);
    return task;
  }

  private call(task: DemoTask, round: number, rounds: number): Call {
    const r = this.random;
    const late = round === rounds - 1 && rounds > 1;
    const name = late ? r.pick(['run_tests', 'edit_file', 'run_tests'] as const) : r.pick(TOOL_MIX);
    const module = r.chance(0.7) ? task.module : r.pick(MODULES);
    switch (name) {
      case 'read_file': {
        const path = r.chance(0.75) ? src(module) : testOf(module);
        const big = r.chance(0.06);
        const lines = big ? r.int(600, 1_400) : r.int(20, 140);
        const version = this.versions.get(path) ?? 0;
        const body = sourceFile(path, version, lines)
          .map((line, i) => `${String(i + 1).padStart(5)}\t${line}`)
          .join('\n');
        return { name, args: { path }, result: body };
      }
      case 'grep': {
        const pattern = r.chance(0.5)
          ? task.fn
          : r.pick(['limit', 'currency', 'TODO', 'logger.debug', task.ticket]);
        const hits = r.int(0, 30);
        const lines: string[] = [];
        for (let i = 0; i < hits; i++) {
          const m = r.pick(MODULES);
          const file = r.chance(0.8) ? src(m) : testOf(m);
          const n = r.int(4, 60);
          const text = sourceFile(file, this.versions.get(file) ?? 0, n)[n - 1] ?? '';
          lines.push(`${file}:${n}:${text}`);
        }
        return {
          name,
          args: { pattern, path: 'src/' },
          result: lines.length > 0 ? lines.join('\n') : 'No matches found.',
        };
      }
      case 'run_tests':
        return { name, args: { filter: testOf(module) }, result: testLog(r, task, module, r.chance(0.07)) };
      case 'edit_file': {
        const path = src(module);
        const version = (this.versions.get(path) ?? 0) + 1;
        this.versions.set(path, version);
        const line = r.int(3, 180);
        return {
          name,
          args: {
            path,
            old_string: `const limit = options.limit ?? ${r.int(2, 50) * 100};`,
            new_string: `const limit = options.limit ?? ${r.int(2, 50) * 100}; // ${task.ticket}`,
          },
          result: `Updated ${path}: 1 replacement at line ${line} (+${r.int(1, 12)} −${r.int(0, 6)}); file is now version ${version}.`,
        };
      }
    }
  }
}

const TOOL_MIX = ['read_file', 'read_file', 'read_file', 'grep', 'grep', 'run_tests', 'edit_file'] as const;

/** A vitest-style run of one test file: mostly short, now and then a long verbose log. */
function testLog(r: Random, task: DemoTask, module: string, verbose: boolean): string {
  const file = testOf(module);
  const tests = r.int(6, 40);
  const failed = r.chance(0.45) ? r.int(1, 3) : 0;
  const lines = [` RUN  v1.6.0 /home/dev/acme-billing`, ''];
  const cases = verbose ? r.int(200, 600) : tests;
  for (let i = 0; i < cases; i++) {
    const fn = r.pick(moduleFunctions(module));
    if (verbose && r.chance(0.4)) {
      lines.push(
        `stdout | ${file} > ${fn} > case ${i}`,
        `{"level":"debug","fn":"${fn}","acc":${r.int(0, 99_999)},"ms":${r.int(0, 40)}}`,
      );
    }
    lines.push(`   ✓ ${fn} > handles case ${i} ${r.int(1, 60)}ms`);
  }
  for (let i = 0; i < failed; i++) {
    lines.push(
      '',
      ` FAIL  ${file} > ${task.fn} > ${task.invoice} for ${task.customer}`,
      `AssertionError: expected '${task.actual}' to be '${task.expected}' // Object.is equality`,
      ` ❯ ${file}:${r.int(10, 300)}:${r.int(5, 40)}`,
      ` ❯ ${src(module)}:${r.int(10, 300)}:${r.int(5, 40)}`,
    );
  }
  lines.push(
    '',
    ` Test Files  ${failed > 0 ? '1 failed' : '1 passed'} (1)`,
    `      Tests  ${failed > 0 ? `${failed} failed | ` : ''}${tests - failed} passed (${tests})`,
    `   Duration  ${(r.int(40, 900) / 100).toFixed(2)}s`,
  );
  return lines.join('\n');
}

const REQUESTS: Array<(t: DemoTask) => string> = [
  (t) =>
    `CI run #${t.run} fails in ${testOf(t.module)}: \`${t.fn}\` returns ${t.actual} for ${t.invoice} but ${t.expected} is expected. Can you fix it? (${t.ticket})`,
  (t) =>
    `Customer ${t.customer} says invoice ${t.invoice} shows ${t.actual} EUR instead of ${t.expected} EUR. Please investigate ${src(t.module)} and fix it. Ticket ${t.ticket}.`,
  (t) =>
    `Add input validation to \`${t.fn}\` in ${src(t.module)}: amounts above ${t.expected} must be rejected. Cover it with tests.`,
  (t) =>
    `Refactor \`${t.fn}\` in ${src(t.module)} so it no longer logs the customer id (${t.customer}); GDPR review ${t.ticket} flagged it.`,
  (t) =>
    `The nightly report for ${t.invoice} took ${t.run % 600} s yesterday. Find out whether \`${t.fn}\` is the slow part.`,
  (t) =>
    `Please bump the retry limit used by ${src(t.module)} and make sure the tests in ${testOf(t.module)} still pass (see ${t.ticket}).`,
];

const PREFACES: Array<(t: DemoTask) => string> = [
  (t) => `Let me look at \`${t.fn}\` and its tests first.`,
  (t) => `I'll check ${src(t.module)} and search for other callers.`,
  () => 'Running the tests to see the current state.',
  (t) => `Checking how ${t.invoice} flows through the code.`,
];

const ANSWERS: Array<(t: DemoTask, lines: number, n: number) => string> = [
  (t, lines, n) =>
    `Fixed. \`${t.fn}\` in ${src(t.module)} rounded each line item before summing, so ${t.invoice} came to ${t.actual} instead of ${t.expected}. ` +
    `It now sums first and rounds once (half-even, 2 decimals). I added ${n} test(s) to ${testOf(t.module)}; all pass. Changed ${lines % 40} lines. ${t.ticket} can be closed.`,
  (t, lines, n) =>
    `Done: \`${t.fn}\` now rejects amounts above ${t.expected} with a RangeError naming the limit. ${n} new test(s) in ${testOf(t.module)} cover the edge cases; the file has ${lines} lines now.`,
  (t, lines) =>
    `The slow part is \`${t.fn}\`: it re-reads the tax rules for every line item (${lines} reads for ${t.invoice}). I cached them per invoice; the run drops from ${t.run % 600} s to about ${Math.max(1, (t.run % 600) >> 4)} s.`,
  (t, _lines, n) =>
    `I removed the customer id (${t.customer}) from the debug log in ${src(t.module)} and kept the invoice id. ${n} log call(s) changed; tests pass. Noted under ${t.ticket}.`,
  (t, lines) =>
    `The retry limit in ${src(t.module)} is now read from config (default ${(lines % 9) + 3}). The tests in ${testOf(t.module)} pass; CI run #${t.run + 1} should be green.`,
];

const FOLLOW_UPS: Array<(t: DemoTask) => string> = [
  (t) => `Thanks. What exactly was wrong in \`${t.fn}\` again?`,
  (t) => `Which files did you change for ${t.ticket}?`,
  (t) => `Is ${t.invoice} for ${t.customer} correct now?`,
];

const FOLLOW_UP_ANSWERS: Array<(t: DemoTask) => string> = [
  (t) =>
    `\`${t.fn}\` in ${src(t.module)} produced ${t.actual} where ${t.expected} was expected; the fix is in that file and covered by ${testOf(t.module)}.`,
  (t) => `For ${t.ticket} I changed ${src(t.module)} and ${testOf(t.module)}; nothing else.`,
  (t) =>
    `Yes: ${t.invoice} for ${t.customer} now totals ${t.expected}, as the test added to ${testOf(t.module)} checks.`,
];

/**
 * The session's messages from `start` on, as turns: the first item is the rest of the turn that
 * holds message `start` (all of it when a turn starts there), then whole turns until at least
 * `count` messages are given. Resuming a stored session continues exactly where it stopped.
 */
export function* demoTurns(
  format: MessageFormat,
  start: number,
  count: number,
  seed = 42,
): Generator<Message[]> {
  const session = new DemoSession(format, seed);
  let index = 0;
  let given = 0;
  while (given < count) {
    const turn = session.nextTurn();
    const from = Math.max(0, start - index);
    index += turn.length;
    if (from >= turn.length) continue;
    const part = from === 0 ? turn : turn.slice(from);
    given += part.length;
    yield part;
  }
}

/** The first `count` messages of the session (for tests and for checking a stored prefix). */
export function demoMessages(format: MessageFormat, count: number, seed = 42): Message[] {
  const out: Message[] = [];
  for (const turn of demoTurns(format, 0, count, seed)) out.push(...turn);
  return out.slice(0, count);
}
