import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicRequestProblems } from '../../test/support/fake-anthropic-server.js';
import { missingData, skipFor } from '../../test/support/requirements.js';
import { type CliRun, expectOneLineError, REPO_ROOT, runCli } from '../../test/support/run-cli.js';
import type { Message, MessageFormat } from '../messages/types.js';
import { getModelInfo } from '../tokens/catalog.js';
import { createTokenCounter } from '../tokens/counter.js';
import type { ModelInfo } from '../tokens/types.js';
import { validateRequest } from '../wire/validate-request.js';

const FIXTURES = join(REPO_ROOT, 'test/fixtures/cli');
const TAU = resolve(REPO_ROOT, '../shared/data/tau-bench/airline-gpt4o.json');

type Run = CliRun;

const cli = (args: string[], options: { input?: string; cwd?: string } = {}): Promise<Run> =>
  runCli(args, options);

const fixture = (name: string) => join(FIXTURES, name);

/** The view a request body carries: Anthropic's top-level `system` as its first message. */
function viewOf(body: Message[] | { system?: unknown; messages: Message[] }): Message[] {
  if (Array.isArray(body)) return body;
  return body.system === undefined
    ? body.messages
    : [{ role: 'system', content: body.system } as Message, ...body.messages];
}

function tokensOf(messages: Message[], format: MessageFormat, model: string): number {
  const counter = createTokenCounter(getModelInfo(model) as ModelInfo);
  return messages.reduce((n, m) => n + counter.countMessage(m, format), counter.requestOverhead);
}

describe.concurrent('contextkit count', () => {
  it('counts a JSON array exactly for an OpenAI conversation', async () => {
    const run = await cli(['count', fixture('openai-session.json')]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/13 messages, openai/);
    expect(run.stdout).toMatch(/tokens: [\d,]+, exact \(o200k_base\) for gpt-4o/);
    expect(run.stdout).toMatch(/^\s+tool\s+[\d,]+\s+5 messages$/m);
  });

  it('labels Claude counts as estimates, and gives the same figures for JSONL, stdin and a nested path', async () => {
    const [anthropic, array, jsonl, stdin, nested] = await Promise.all([
      cli(['count', fixture('anthropic-session.json'), '--json']),
      cli(['count', fixture('openai-session.json'), '--json']),
      cli(['count', fixture('openai-session.jsonl'), '--json']),
      cli(['count', '-', '--json'], { input: await readFile(fixture('openai-session.jsonl'), 'utf8') }),
      cli(['count', fixture('nested-runs.json'), '--messages-path', 'runs.0.traj', '--json']),
    ]);
    const a = JSON.parse(anthropic.stdout);
    expect(a).toMatchObject({
      format: 'anthropic',
      model: 'claude-sonnet-4-5',
      counter: { exact: false },
      messages: 8,
    });
    expect(a.counter.label).toMatch(/^estimate \(cl100k_base × /);
    const figures = [array, jsonl, stdin, nested].map((r) => {
      expect(r.code).toBe(0);
      const { source: _source, ...rest } = JSON.parse(r.stdout);
      return rest;
    });
    expect(figures[1]).toEqual(figures[0]);
    expect(figures[2]).toEqual(figures[0]);
    expect(figures[3]).toEqual(figures[0]);
    expect(JSON.parse(stdin.stdout).source).toBe('stdin');
    const messages = JSON.parse(await readFile(fixture('openai-session.json'), 'utf8')) as Message[];
    expect(figures[0].tokens).toBe(tokensOf(messages, 'openai', 'gpt-4o'));
  });

  it('warns, and counts with the default, for a model not in the catalog', async () => {
    const run = await cli(['count', fixture('openai-session.json'), '--model', 'my-local-llm']);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^contextkit: warning: model "my-local-llm" is not in the catalog/);
  });
});

describe.concurrent('contextkit compact', () => {
  it('prints a valid view within the budget, in the input format, and reports on stderr', async () => {
    const [openai, anthropic] = await Promise.all([
      cli(['compact', fixture('openai-session.json'), '--max-tokens', '4000']),
      cli(['compact', fixture('anthropic-session.json'), '--max-tokens', '4k']),
    ]);
    for (const [run, format, model] of [
      [openai, 'openai', 'gpt-4o'],
      [anthropic, 'anthropic', 'claude-sonnet-4-5'],
    ] as const) {
      expect(run.code).toBe(0);
      const view = viewOf(JSON.parse(run.stdout));
      expect(validateRequest(view, format).problems).toEqual([]);
      expect(tokensOf(view, format, model)).toBeLessThanOrEqual(4000);
      expect(run.stderr).toMatch(/^compact: \d+ messages, [\d,]+ tokens → \d+ messages/);
      expect(run.stderr).toMatch(/^compacted \((over_budget|threshold)\)/m);
      // The huge reads are an older turn's: cleared first, and every message stays (was: the
      // older turns summarized whole, the huge results with them).
      expect(run.stderr).toMatch(
        /((dropped|summarized) \d+ messages?: #\d|cleared \d+ tool results?: \w+ #\d)/,
      );
    }
    const last = (JSON.parse(openai.stdout) as Message[]).at(-1);
    expect(last).toEqual({ role: 'user', content: 'Thanks. Which files did you change for BILL-4821?' });
  });

  it('converts the view with --format and gives messages, receipt and usage with --json', async () => {
    const [converted, json, roomy] = await Promise.all([
      cli(['compact', fixture('anthropic-session.json'), '--max-tokens', '6000', '--format', 'openai']),
      cli(['compact', fixture('openai-session.jsonl'), '--max-tokens', '8000', '--json']),
      cli(['compact', fixture('openai-session.json'), '--max-tokens', '100000', '--json']),
    ]);
    expect(converted.code).toBe(0);
    expect(validateRequest(JSON.parse(converted.stdout), 'openai').problems).toEqual([]);
    expect(converted.stderr).toMatch(/converted to openai/);

    expect(json.code).toBe(0);
    expect(json.stderr).toBe('');
    const out = JSON.parse(json.stdout);
    expect(validateRequest(out.messages, 'openai').problems).toEqual([]);
    expect(out.usage.budget).toBe(8000);
    expect(out.usage.tokens).toBeLessThanOrEqual(8000);
    expect(out.receipt.tokensAfter).toBe(out.usage.tokens);
    expect(out.receipt.tokensBefore).toBeGreaterThan(8000);

    const fits = JSON.parse(roomy.stdout);
    expect(fits.receipt).toBeNull();
    expect(fits.messages).toHaveLength(13);
  });

  it('exits 1 with one line when what must be kept cannot fit', async () => {
    expectOneLineError(
      await cli(['compact', fixture('openai-session.json'), '--max-tokens', '10']),
      1,
      /need \d+ tokens but the budget is 10/,
    );
  });

  describe('on a real tau-bench run', skipFor(missingData(TAU)), () => {
    it('compacts 0.traj to a valid view', async () => {
      const run = await cli(['compact', TAU, '--messages-path', '0.traj', '--max-tokens', '3000']);
      expect(run.code).toBe(0);
      const view = JSON.parse(run.stdout) as Message[];
      expect(validateRequest(view, 'openai').problems).toEqual([]);
      expect(tokensOf(view, 'openai', 'gpt-4o')).toBeLessThanOrEqual(3000);
    });
  });
});

describe.concurrent('contextkit validate', () => {
  it('says valid and exits 0 for a valid request', async () => {
    const [openai, anthropic] = await Promise.all([
      cli(['validate', fixture('openai-session.json'), '--provider', 'openai']),
      cli(['validate', fixture('anthropic-session.json')]),
    ]);
    expect(openai.code).toBe(0);
    expect(openai.stdout).toBe('valid (13 messages, OpenAI)\n');
    expect(anthropic.code).toBe(0);
    expect(anthropic.stdout).toBe('valid (8 messages, Anthropic)\n');
  });

  it('lists every problem with its index and path, and exits 1', async () => {
    const run = await cli(['validate', fixture('invalid-request.json'), '--provider', 'openai']);
    expectOneLineError(run, 1, /invalid-request.json is not a valid OpenAI request \(2 problems\)/);
    expect(run.stdout).toMatch(/^invalid for OpenAI: 2 problems in 6 messages$/m);
    expect(run.stdout).toMatch(
      /^ {2}\[2\] messages\[2\]\.tool_calls\[1\]\.id: tool call "call_x2" is never answered/m,
    );
    expect(run.stdout).toMatch(/^ {2}\[5\] messages\[5\]\.tool_call_id: no tool call "call_zz"/m);
    const json = await cli(['validate', fixture('invalid-request.json'), '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: false, provider: 'openai', messages: 6 });
  });

  it("points at the format when the conversation is the other provider's", async () => {
    const run = await cli(['validate', fixture('anthropic-session.json'), '--provider', 'openai']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/note: the conversation is in Anthropic format; try --provider anthropic/);
  });
});

describe.concurrent('contextkit inspect', () => {
  it('shows tokens by role, by tool, the largest messages and images', async () => {
    const run = await cli(['inspect', fixture('openai-session.json'), '--top', '3']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^By role$/m);
    expect(run.stdout).toMatch(/^ {2}read_file\s+2\s+[\d,]+\s+2\s+[\d,]+/m);
    expect(run.stdout).toMatch(/^Largest messages \(top 3\)$/m);
    expect(run.stdout).toMatch(/^\s+#3\s+tool\s+[\d,]+\s+\[read_file\] 1 src\/invoices\/total\.ts/m);
    expect(run.stdout).toMatch(/^Images: 0 {3}Documents: 0$/m);
  });

  it('gives the same breakdown as JSON for an Anthropic conversation', async () => {
    const run = await cli(['inspect', fixture('anthropic-session.json'), '--json']);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.byTool.map((t: { tool: string }) => t.tool).sort()).toEqual([
      'grep',
      'read_file',
      'run_tests',
    ]);
    expect(out.largest[0]).toMatchObject({ seq: 3, role: 'user' });
    expect(out.largest).toHaveLength(8);
  });
});

describe.concurrent('usage and input errors', () => {
  it('answers --help for the program and every command, and --version', async () => {
    const runs = await Promise.all([
      cli(['--help']),
      ...['count', 'compact', 'validate', 'inspect', 'demo'].map((c) => cli([c, '--help'])),
      cli(['--version']),
      cli(['help', 'compact']),
    ]);
    for (const run of runs) expect(run.code).toBe(0);
    expect(runs[0]?.stdout).toMatch(/Commands:[\s\S]*count[\s\S]*demo/);
    expect(runs[2]?.stdout).toMatch(/--max-tokens <n>/);
    expect(runs[5]?.stdout).toMatch(/--reset/);
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(runs[6]?.stdout.trim()).toBe(pkg.version);
    expect(runs[7]?.stdout).toMatch(/Usage: contextkit compact/);
  });

  it('exits 2 on usage errors, each on one line', async () => {
    const [
      unknownOption,
      missingArgument,
      badNumber,
      missingBudget,
      badChoice,
      unknownCommand,
      none,
      renamed,
    ] = await Promise.all([
      cli(['count', fixture('openai-session.json'), '--bogus']),
      cli(['count']),
      cli(['compact', fixture('openai-session.json'), '--max-tokens', 'lots']),
      cli(['compact', fixture('openai-session.json')]),
      cli(['validate', fixture('openai-session.json'), '--provider', 'mistral']),
      cli(['cuont', 'x']),
      cli([]),
      // The name the CLI took before it used the seed contract's (issue 34): refused, naming the new one.
      cli(['compact', fixture('openai-session.json'), '--budget', '8000']),
    ]);
    expectOneLineError(unknownOption, 2, /unknown option '--bogus' \(see contextkit count --help\)/);
    expectOneLineError(missingArgument, 2, /missing required argument 'file'/);
    expectOneLineError(badNumber, 2, /argument 'lots' is invalid\. expected a positive whole number/);
    expectOneLineError(missingBudget, 2, /required option '--max-tokens <n>' not specified/);
    expectOneLineError(renamed, 2, /--budget was renamed: use --max-tokens N/);
    expectOneLineError(badChoice, 2, /Allowed choices are openai, anthropic/);
    expectOneLineError(unknownCommand, 2, /unknown command 'cuont'/);
    // No command at all: the help, on stderr.
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^Usage: contextkit /);
  });

  it('exits 1 on input it cannot use, naming the file, line and field', async () => {
    const [missing, broken, mixed, badMessage, nested, badPath] = await Promise.all([
      cli(['count', fixture('no-such-file.json')]),
      cli(['count', fixture('broken-json.txt')]),
      cli(['compact', fixture('mixed-formats.json'), '--max-tokens', '1000']),
      cli(['inspect', fixture('bad-message.jsonl')]),
      cli(['count', fixture('nested-runs.json')]),
      cli(['count', fixture('nested-runs.json'), '--messages-path', 'runs.0.trajectory']),
    ]);
    expectOneLineError(missing, 1, /no-such-file\.json: no such file$/);
    expectOneLineError(
      broken,
      1,
      /broken-json\.txt:3:44: invalid JSON: unexpected "}", expected a property name in quotes$/,
    );
    expectOneLineError(
      mixed,
      1,
      /mixed-formats\.json: messages\[4\]\.content\[0\]\.type: this conversation is in OpenAI format/,
    );
    expectOneLineError(
      badMessage,
      1,
      /bad-message\.jsonl:2: messages\[1\]\.tool_calls\[0\]\.function\.arguments: expected a string$/,
    );
    expectOneLineError(nested, 1, /try --messages-path runs\.0\.traj$/);
    expectOneLineError(badPath, 1, /no "trajectory" in runs\.0/);
  });
});

describe('contextkit demo', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'contextkit-demo-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('replays a session into ./.contextkit, then resumes it on the next run, and starts over with --reset', async () => {
    const first = await cli(['demo', '--messages', '150', '--max-tokens', '8000'], { cwd: dir });
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^demo: new session in \.contextkit/m);
    expect(first.stdout).toMatch(/^ {2}compaction 1 at turn \d+: [\d,]+ → [\d,]+ tokens: /m);
    expect(first.stdout).toMatch(/^ {2}prompt cache +[\d.]+% of turns/m);
    // Not a terminal: plain progress lines, no bar.
    expect(first.stderr).toMatch(/^demo: \d+\/\d+ msgs \(100%\)$/m);
    expect(first.stderr).not.toMatch(/\r/);
    const stored = Number(/^ {2}stored +(\d+) messages/m.exec(first.stdout)?.[1]);
    expect(stored).toBeGreaterThanOrEqual(150);
    // It says up front the number it adds, and adds that many.
    const announced = Number(/adding (\d+) messages/.exec(first.stdout)?.[1]);
    expect(Number(/^demo: added (\d+) messages/m.exec(first.stdout)?.[1])).toBe(announced);
    expect(announced).toBe(stored);
    if (announced !== 150) expect(first.stdout).toContain('(150 asked for, rounded up to a whole turn)');
    // Compacting brings the view under the warning line each cycle; the warning is printed once.
    const compactions = first.stdout.match(/^ {2}compaction \d+ at turn/gm)?.length ?? 0;
    expect(compactions).toBeGreaterThan(2);
    expect(first.stderr.match(/^contextkit: warning: the view is at \d+% of/gm)).toHaveLength(1);
    const crossings =
      /^ {2}usage warning +printed once; the view climbed past 80% of the budget (\d+) times on its way to the compaction trigger$/m.exec(
        first.stdout,
      )?.[1];
    expect(Number(crossings)).toBeGreaterThan(1);
    const log = join(dir, '.contextkit', 'demo.jsonl');
    const sizeAfterFirst = (await stat(log)).size;

    const second = await cli(['demo', '--messages', '60', '--max-tokens', '8000'], { cwd: dir });
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(
      new RegExp(`^demo: resumed ${stored} messages of conversation "demo"`, 'm'),
    );
    const storedNow = Number(/^ {2}stored +([\d,]+) messages/m.exec(second.stdout)?.[1]?.replace(/,/g, ''));
    expect(storedNow).toBeGreaterThanOrEqual(stored + 60);
    expect(storedNow).toBe(stored + Number(/adding (\d+) more/.exec(second.stdout)?.[1]));
    expect((await stat(log)).size).toBeGreaterThan(sizeAfterFirst);

    const reset = await cli(['demo', '--messages', '20', '--reset', '--format', 'anthropic'], { cwd: dir });
    expect(reset.code).toBe(0);
    expect(reset.stdout).toMatch(/^demo: new session in \.contextkit \(conversation "demo", anthropic\)/m);
    expect(reset.stdout).toMatch(/claude-sonnet-4-5, estimate/);
  });
});

describe.concurrent('request bodies (issue 23, item 12)', () => {
  const compactTo = (format: MessageFormat) =>
    cli(['compact', fixture('openai-session.json'), '--max-tokens', '4000', '--format', format]);

  it('compact --format anthropic writes { system, messages }, which the API takes', async () => {
    const run = await compactTo('anthropic');
    expect(run.code).toBe(0);
    const body = JSON.parse(run.stdout) as { system: unknown; messages: Array<{ role: string }> };
    expect(body.system).toBeDefined();
    expect(body.messages.some((m) => m.role === 'system')).toBe(false);
    expect(anthropicRequestProblems(body as never, { signatures: false })).toEqual([]);
  });

  it('compact --format gemini writes { systemInstruction, contents }', async () => {
    const run = await compactTo('gemini');
    expect(run.code).toBe(0);
    const body = JSON.parse(run.stdout) as {
      systemInstruction: { parts: unknown[] };
      contents: Array<{ role: string }>;
    };
    expect(body.systemInstruction.parts.length).toBeGreaterThan(0);
    expect(body.contents.every((c) => c.role === 'user' || c.role === 'model')).toBe(true);
  });

  it('validate --provider anthropic refuses a system message among the messages, and takes the body', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ck-body-'));
    try {
      const list = join(dir, 'list.json');
      await writeFile(
        list,
        JSON.stringify([
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ]),
      );
      const body = join(dir, 'body.json');
      await writeFile(
        body,
        JSON.stringify({ system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }] }),
      );
      const [refused, taken, gemini] = await Promise.all([
        cli(['validate', list, '--provider', 'anthropic']),
        cli(['validate', body, '--provider', 'anthropic']),
        cli(['validate', list, '--provider', 'gemini']),
      ]);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toMatch(
        /\[0\] messages\[0\]\.role: Anthropic takes no "system" role among the messages: the system prompt goes in the request's top-level "system"/,
      );
      expect(taken.code).toBe(0);
      expect(taken.stdout).toMatch(/^valid \(2 messages, Anthropic\)/);
      expect(gemini.code).toBe(1);
      expect(gemini.stdout).toMatch(/top-level "systemInstruction"/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
