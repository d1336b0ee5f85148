import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { longSessionMessages } from '../../../test/support/arbitraries.js';
import { type CliRun, runCli } from '../../../test/support/run-cli.js';
import type { ReplayReport } from '../../report/replay.js';

type Run = CliRun;

const cli = (args: string[], input = ''): Promise<Run> => runCli(args, { input });

function reportData(html: string): ReplayReport {
  const match = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html);
  return JSON.parse(match?.[1] ?? 'null') as ReplayReport;
}

let dir: string;
let conversation: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'contextkit-replay-'));
  conversation = join(dir, 'session.json');
  await writeFile(conversation, JSON.stringify(longSessionMessages(240, 'anthropic', 4)));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('contextkit replay', () => {
  it('writes the HTML report and the same data as JSON, with progress and a summary', async () => {
    const html = join(dir, 'out.html');
    const json = join(dir, 'out.json');
    const run = await cli(['replay', conversation, '--max-tokens', '5k', '--report', html, '--json', json]);
    expect(run.stderr).not.toMatch(/contextkit: (?!warning)/);
    expect(run.code).toBe(0);
    // Not a terminal: the bar prints a line per tenth.
    expect(run.stderr).toMatch(/^replay: \d+\/240 msgs \(10%\)$/m);
    expect(run.stderr).toMatch(/^replay: 240\/240 msgs \(100%\)$/m);
    const data = JSON.parse(await readFile(json, 'utf8')) as ReplayReport;
    expect(data.version).toBe(1);
    expect(data.source).toBe(conversation);
    expect(data.model).toBe('claude-sonnet-4-5');
    expect(data.budget).toEqual({ tokens: 5_000, source: 'option' });
    expect(data.compactions.length).toBeGreaterThan(0);
    expect(reportData(await readFile(html, 'utf8'))).toEqual(data);
    const t = data.totals;
    expect(run.stdout).toContain(
      `replay: ${t.turns} model calls over 240 messages, ${t.compactions} compaction${t.compactions === 1 ? '' : 's'}, budget 5,000`,
    );
    expect(run.stdout).toMatch(/cache prefix kept on \d+ of \d+ calls/);
    expect(run.stdout).toMatch(/wrote .*out\.html \(\d+ KB\), .*out\.json \(\d+ KB\)/);
  });

  it('writes JSON to standard output with -, the summary then going to standard error', async () => {
    const run = await cli(
      ['replay', '-', '--json', '-', '--model', 'gpt-4o', '--strategy', 'truncate', '--no-previews'],
      JSON.stringify(longSessionMessages(60, 'openai', 2)),
    );
    expect(run.code).toBe(0);
    const data = JSON.parse(run.stdout) as ReplayReport;
    expect(data).toMatchObject({ source: 'stdin', model: 'gpt-4o', strategy: 'truncate' });
    expect(data.messages.every((m) => m.text === '')).toBe(true);
    expect(run.stderr).toMatch(/^replay: \d+ model calls over 60 messages/m);
  });

  it('asks for an output when given none (usage error, exit 2)', async () => {
    const run = await cli(['replay', conversation]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(
      'contextkit: nothing to write: give --report out.html, --json out.json, or both',
    );
  });

  it('names the strategies it knows', async () => {
    const run = await cli(['replay', conversation, '--json', '-', '--strategy', 'shrink']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^contextkit: .*'shrink' is invalid\. Allowed choices are summarize, truncate, smart, layered/,
    );
    expect(run.stdout).toBe('');
  });

  it('says which output it cannot write, in one line (exit 1)', async () => {
    const run = await cli(['replay', conversation, '--report', join(dir, 'missing', 'r.html')]);
    expect(run.code).toBe(1);
    const lines = run.stderr
      .trimEnd()
      .split('\n')
      .filter((l) => l.startsWith('contextkit:'));
    expect(lines).toEqual([
      `contextkit: ${join(dir, 'missing', 'r.html')}: cannot write: its directory does not exist`,
    ]);
  });

  it('reports a file that is not a conversation as the other commands do', async () => {
    const run = await cli(['replay', join(dir, 'nope.json'), '--json', '-']);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(`contextkit: ${join(dir, 'nope.json')}: no such file`);
  });
});
