/**
 * The replay report in a real browser: headless Chromium (Debian's `chromium` package, which
 * .ci/run installs when it is missing) opens the page from a file, runs its script, and dumps
 * the DOM; the test checks that the chart, its markers and the compaction list were drawn, that
 * the script hit no error and no policy violation, and that a hostile message stayed text.
 * Skips, saying so, when there is no Chromium.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src/messages/types.js';
import { renderReportHtml } from '../../src/report/html.js';
import { type ReplayReport, replayConversation } from '../../src/report/replay.js';
import { longSessionMessages } from '../support/arbitraries.js';
import { CHROMIUM, missing, skipFor } from '../support/requirements.js';

const HOSTILE =
  `Please check </script><script>document.title='PWNED'</script> and ` +
  `<img src=x onerror="document.title='PWNED'"> in /srv/app/</script><script>alert(1)</script>.ts`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function chromium(args: string[], profile: string): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(
      CHROMIUM,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--hide-scrollbars',
        '--enable-logging=stderr',
        '--v=0',
        `--user-data-dir=${profile}`,
        ...args,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/** The page's console errors: uncaught exceptions and Content-Security-Policy refusals. */
function pageErrors(stderr: string): string[] {
  return stderr.split('\n').filter((line) => /CONSOLE/.test(line) && /Uncaught|Refused|Error/.test(line));
}

function attribute(dom: string, name: string): string | undefined {
  const body = /<body([^>]*)>/.exec(dom)?.[1] ?? '';
  return new RegExp(`\\s${name}="([^"]*)"`).exec(body)?.[1];
}

function count(dom: string, pattern: RegExp): number {
  return dom.match(pattern)?.length ?? 0;
}

describe('the replay report in headless Chromium', skipFor(missing.chromium), () => {
  let dir: string;
  let page: string;
  let report: ReplayReport;
  let dom: string;
  let run: Run;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'contextkit-report-'));
    const messages: Message[] = longSessionMessages(800, 'openai', 7);
    messages.splice(4, 0, { role: 'user', content: HOSTILE });
    report = await replayConversation(messages, { maxTokens: 16_000, source: `long session ${HOSTILE}` });
    page = join(dir, 'report.html');
    await writeFile(page, renderReportHtml(report));
    // Opened on a compaction's anchor: the script selects it as a click on its marker would.
    run = await chromium(
      ['--dump-dom', `${pathToFileURL(page).href}#compaction-2`],
      join(dir, 'profile-dom'),
    );
    dom = run.stdout;
  }, 60_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('forces several compactions (the data the page draws)', () => {
    expect(report.compactions.length).toBeGreaterThanOrEqual(5);
    expect(report.turns.length).toBeGreaterThan(300);
  });

  it('runs the script to the end with no error and no policy violation', () => {
    expect(run.code).toBe(0);
    expect(pageErrors(run.stderr)).toEqual([]);
    expect(attribute(dom, 'data-rendered')).toBe('true');
    expect(attribute(dom, 'data-turns')).toBe(String(report.turns.length));
  });

  it('draws the chart: stored and sent lines, the budget, trigger and target, and one marker per compaction', () => {
    expect(dom).toMatch(/<svg[^>]*role="img"/);
    for (const cls of [
      'line-stored',
      'line-sent',
      'area-sent',
      'line-budget',
      'line-trigger',
      'line-target',
    ]) {
      const d = new RegExp(`<path class="${cls}" d="(M[^"]+)"`).exec(dom)?.[1] ?? '';
      expect(d.length, cls).toBeGreaterThan(20);
    }
    // The sent line has a point per call (one path, no failed requests to break it).
    const sent = /<path class="line-sent" d="([^"]+)"/.exec(dom)?.[1] ?? '';
    expect(count(sent, /[ML]/g)).toBe(report.turns.length);
    expect(count(dom, /<g class="marker[^"]*"[^>]*data-number="\d+"/g)).toBe(report.compactions.length);
    expect(attribute(dom, 'data-markers')).toBe(String(report.compactions.length));
    expect(count(dom, /<circle class="badge"/g)).toBe(report.compactions.length);
    expect(dom).toContain('Model call (turn)');
  });

  it('draws the prompt-cache strip: kept runs broken by the compactions', () => {
    const runs = Number(attribute(dom, 'data-strip-runs'));
    expect(count(dom, /<rect class="(kept|compacted|broken|none)"/g)).toBe(runs);
    expect(count(dom, /<rect class="compacted"/g)).toBe(report.compactions.length);
    expect(count(dom, /<rect class="broken"/g)).toBe(0);
  });

  it('lists every compaction, and opens the one the address names with its marker selected', () => {
    expect(attribute(dom, 'data-list-items')).toBe(String(report.compactions.length));
    expect(count(dom, /<details class="compaction[^"]*" id="compaction-\d+"/g)).toBe(
      report.compactions.length,
    );
    expect(attribute(dom, 'data-selected')).toBe('2');
    expect(dom).toMatch(/<details class="compaction selected" id="compaction-2"[^>]*open=""/);
    expect(dom).toMatch(/<g class="marker selected"[^>]*data-number="2"/);
    expect(count(dom, /<g class="marker selected"/g)).toBe(1);
  });

  it('keeps a hostile message as text: no script ran, no element was added', () => {
    expect(/<title>([^<]*)<\/title>/.exec(dom)?.[1]).toContain('contextkit replay');
    expect(dom).not.toMatch(/<title>PWNED/);
    expect(dom).not.toMatch(/<img\b/i);
    expect(count(dom, /<script\b/g)).toBe(2);
    expect(dom).toContain('<h1>long session Please check &lt;/script&gt;&lt;script&gt;document.title=');
  });

  it('renders a screenshot of the page', async () => {
    const png = join(dir, 'report.png');
    const shot = await chromium(
      ['--window-size=1280,1400', `--screenshot=${png}`, pathToFileURL(page).href],
      join(dir, 'profile-shot'),
    );
    expect(shot.code).toBe(0);
    const bytes = await readFile(png);
    expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(bytes.readUInt32BE(16)).toBe(1280);
    expect(bytes.readUInt32BE(20)).toBe(1400);
    // A blank page compresses to a few KB; the chart, cards and list do not.
    expect(bytes.length).toBeGreaterThan(40_000);
  }, 30_000);
});
