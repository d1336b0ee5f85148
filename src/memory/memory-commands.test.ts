/**
 * The memory commands stay quick and short whatever the model sends, within the default limits:
 * a command is one synchronous stretch on the process that serves every other conversation, and
 * its answer sits in the conversation, so neither may grow with how often a string occurs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { leastCpuTime } from '../../test/support/cpu-time.js';
import { type MemoryFiles, runMemoryCommand } from './memory-commands.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 60);
/** The memory tool's defaults (memory-tool.ts). */
const LIMITS = { maxFileBytes: 64 * 1024, maxTotalBytes: 512 * 1024, maxFiles: 1000 };
/** The longest synchronous stretch one call may take (issue 31's goal), in CPU milliseconds. */
const MAX_CPU_MS = 50;

/** A file of `LIMITS.maxFileBytes` bytes made of `line` repeated. */
function fullFile(line: string): string {
  return `${line}\n`.repeat(Math.floor(LIMITS.maxFileBytes / (line.length + 1)));
}

describe('str_replace with an old_str found many times', () => {
  it('answers a 64 KiB file of 32,768 matching lines in one pass, listing a few lines and the count', () => {
    const files: MemoryFiles = { '/memories/notes.md': fullFile('a') };
    const input = { command: 'str_replace', path: '/memories/notes.md', old_str: 'a', new_str: 'b' };
    runMemoryCommand(files, input, LIMITS); // warm up the code path
    const { result, cpuMs } = leastCpuTime(() => runMemoryCommand(files, input, LIMITS));
    expect(result.isError).toBe(true);
    expect(result.files).toBeUndefined();
    expect(result.text).toContain('in lines: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 32758 more (32768 in all)');
    expect(result.text.length).toBeLessThan(400);
    expect(cpuMs).toBeLessThan(MAX_CPU_MS);
  });

  it('lists every line when there are few, as the documentation shows', () => {
    const files: MemoryFiles = { '/memories/notes.md': 'x = 1\ny = 2\nx = 3\n' };
    const outcome = runMemoryCommand(
      files,
      { command: 'str_replace', path: '/memories/notes.md', old_str: 'x =', new_str: 'z =' },
      LIMITS,
    );
    expect(outcome.text).toBe(
      'Error: No replacement was performed. Multiple occurrences of old_str `x =` in lines: 1, 3. Please ensure it is unique',
    );
  });

  it('quotes at most 200 characters of a long old_str back', () => {
    const files: MemoryFiles = { '/memories/notes.md': 'short\n' };
    const oldStr = 'q'.repeat(100_000);
    const outcome = runMemoryCommand(
      files,
      { command: 'str_replace', path: '/memories/notes.md', old_str: oldStr, new_str: '' },
      LIMITS,
    );
    expect(outcome.isError).toBe(true);
    expect(outcome.text).toContain('(100000 characters)');
    expect(outcome.text.length).toBeLessThan(400);
  });
});

describe('view of a file of many short lines', () => {
  it('shows 2,000 lines and says how to read on', () => {
    const files: MemoryFiles = { '/memories/notes.md': fullFile('') };
    const outcome = runMemoryCommand(files, { command: 'view', path: '/memories/notes.md' }, LIMITS);
    expect(outcome.isError).toBe(false);
    expect(outcome.text).toContain(
      '\n  2000\t\n(lines 1-2000 of 65536 shown; view with "view_range": [2001, 4000] to read on)',
    );
    expect(outcome.text).not.toContain('  2001\t');
    const next = runMemoryCommand(
      files,
      { command: 'view', path: '/memories/notes.md', view_range: [65000, -1] },
      LIMITS,
    );
    expect(next.text).toMatch(/ 65536\t$/);
  });

  it('shows a short file whole, as before', () => {
    const files: MemoryFiles = { '/memories/notes.md': 'one\ntwo\n' };
    const outcome = runMemoryCommand(files, { command: 'view', path: '/memories/notes.md' }, LIMITS);
    expect(outcome.text).toBe(
      "Here's the content of /memories/notes.md with line numbers:\n     1\tone\n     2\ttwo",
    );
  });
});

describe('every memory command over a full directory', () => {
  // Hostile shapes: a file of one-character lines, of empty lines, of one long line; needles that
  // match everywhere, overlap, or span lines; ranges and insert lines at the ends.
  const FILES: Record<string, string> = {
    'one-character lines': fullFile('a'),
    'empty lines': fullFile(''),
    'one long line': 'a'.repeat(LIMITS.maxFileBytes - 1),
    'two-character lines': fullFile('ab'),
    'two-byte lines': fullFile('é'),
  };
  // The file's name, not its text, so a failure prints a line and not 64 KiB.
  const fileArb = fc.constantFrom(...Object.keys(FILES));
  const commandArb = fc.oneof(
    fc.record({
      command: fc.constant('str_replace'),
      path: fc.constant('/memories/big.md'),
      old_str: fc.constantFrom('a', '\n', 'a\n', 'aa', 'ab\nab', 'é', '\n\n', 'zzz'),
      new_str: fc.constantFrom('', 'b', 'x'.repeat(1000)),
    }),
    fc.record({
      command: fc.constant('view'),
      path: fc.constantFrom('/memories', '/memories/big.md', '/memories/dir'),
      view_range: fc.option(
        fc.tuple(fc.integer({ min: 1, max: 70_000 }), fc.constantFrom(-1, 1, 32_768, 70_000)),
        { nil: undefined },
      ),
    }),
    fc.record({
      command: fc.constant('insert'),
      path: fc.constant('/memories/big.md'),
      insert_line: fc.integer({ min: 0, max: 70_000 }),
      insert_text: fc.constantFrom('', 'x', '\n'.repeat(100)),
    }),
    fc.record({
      command: fc.constant('rename'),
      old_path: fc.constantFrom('/memories/dir', '/memories/big.md'),
      new_path: fc.constantFrom('/memories/moved', '/memories/dir/x/y'),
    }),
    fc.record({ command: fc.constant('delete'), path: fc.constantFrom('/memories/dir', '/memories/big.md') }),
    fc.record({
      command: fc.constant('create'),
      path: fc.constantFrom('/memories/new.md', '/memories/dir/f0/new.md'),
      file_text: fc.constantFrom('', fullFile('a')),
    }),
  );

  it(`runs each in under ${MAX_CPU_MS} ms of CPU and answers in under 8 KB unless it shows the file`, () => {
    fc.assert(
      fc.property(fileArb, commandArb, (shape, input) => {
        // The directory at its limits: one full file and many small ones in nested directories.
        const files: Record<string, string> = { '/memories/big.md': FILES[shape] as string };
        for (let i = 0; i < 900; i++) files[`/memories/dir/f${i % 30}/n${i}.md`] = 'note\n';
        const { result, cpuMs } = leastCpuTime(() => runMemoryCommand(files, input, LIMITS));
        expect(cpuMs).toBeLessThan(MAX_CPU_MS);
        expect(result.text.length).toBeLessThan(
          input.command === 'view' ? LIMITS.maxFileBytes + 16 * 1024 : 8 * 1024,
        );
      }),
      { numRuns: RUNS },
    );
  });
});
