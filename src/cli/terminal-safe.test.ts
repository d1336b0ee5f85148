import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../test/support/run-cli.js';
import type { Message } from '../messages/types.js';
import { FileStore } from '../stores/file.js';
import { escapeField, terminalSafe } from './terminal-safe.js';
import { textTable } from './text-table.js';

/** Clear screen, set the window title, CSI by its C1 form, right-to-left override, a bare CR. */
const HOSTILE = '\x1b[2J\x1b]0;pwned\x07\u009b31m\u202eevil\u2066\rspoof\u2028';
/** Anything a terminal acts on, apart from the newlines that end lines. */
const RAW_CONTROL =
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('terminal-safe text', () => {
  it('escapes controls, C1, bidirectional marks and separators, keeping what is printable', () => {
    const out = escapeField(`id ${HOSTILE}\nnext 日本語 🚀`);
    expect(out).not.toMatch(RAW_CONTROL);
    expect(out).not.toContain('\n');
    expect(out).toContain('\\u001b[2J');
    expect(out).toContain('\\u202e');
    expect(out).toContain('\\u009b');
    expect(out).toContain('日本語 🚀');
    expect(terminalSafe('a\nb\x1b')).toBe('a\nb\\u001b');
    expect(escapeField('lone \ud800 end')).toBe('lone \\ud800 end');
  });

  it('keeps JSON output JSON, with the same values', () => {
    const value = { id: HOSTILE, text: `x${HOSTILE}`, lone: 'a\udc00b' };
    const safe = terminalSafe(JSON.stringify(value, null, 2));
    expect(safe).not.toMatch(RAW_CONTROL);
    expect(JSON.parse(safe)).toEqual(value);
  });

  it('makes every table cell one line', () => {
    const lines = textTable(
      [
        ['id', 'preview'],
        [`a\nb`, HOSTILE],
      ],
      ['left', 'left'],
    );
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).not.toMatch(RAW_CONTROL);
  });
});

describe('the CLI prints data terminal-safe', () => {
  let dir: string;
  let file: string;
  const id = `conv${HOSTILE}`;
  const messages: Message[] = [
    { role: 'user', content: `hello ${HOSTILE}` },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: `tool${HOSTILE}`, arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: `result ${HOSTILE}` },
  ];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ck-hostile-tty-'));
    const store = new FileStore(join(dir, 'store'));
    await store.append(
      id,
      messages.map((message) => ({ message, metadata: { timestamp: '2024-05-15T15:00:00.000Z' } })),
    );
    await store.close();
    file = join(dir, 'conversation.json');
    await writeFile(file, JSON.stringify(messages));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const env = { ...process.env, CONTEXTKIT_DEBUG: '', NO_COLOR: '1', CONTEXTKIT_STORE: '' };

  it('list, show, inspect and their JSON forms escape what the data holds', async () => {
    const store = `file:${join(dir, 'store')}`;
    const runs = await Promise.all([
      runCli(['conversations', 'list', '--store', store], { env }),
      runCli(['conversations', 'list', '--store', store, '--json'], { env }),
      runCli(['conversations', 'show', id, '--store', store], { env }),
      runCli(['conversations', 'show', id, '--store', store, '--json'], { env }),
      runCli(['inspect', file], { env }),
      runCli(['conversations', 'show', `missing${HOSTILE}`, '--store', store], { env }),
    ]);
    for (const run of runs) {
      expect(run.stdout).not.toMatch(RAW_CONTROL);
      expect(run.stderr).not.toMatch(RAW_CONTROL);
    }
    expect(runs[0]!.code).toBe(0);
    expect(runs[0]!.stdout).toContain('\\u001b[2J');
    expect(runs[2]!.stdout).toContain('\\u202eevil');
    expect(runs[4]!.stdout).toContain('tool\\u001b');
    expect(JSON.stringify(JSON.parse(runs[3]!.stdout))).toContain('evil');
    expect(runs[5]!.code).not.toBe(0);
  }, 240_000);
});
