/**
 * Path confinement, fuzzed: no path the model can send reaches outside `/memories`, whatever
 * traversal it tries (`..`, encoded dots, backslashes, absolute paths, NUL, Unicode look-alikes),
 * and a path that is accepted is already in its one normal form.
 */
import { posix } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runMemoryCommand } from './memory-commands.js';
import { MEMORY_ROOT, readMemoryPath } from './memory-path.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 2000);
const LIMITS = { maxFileBytes: 1000, maxTotalBytes: 10_000, maxFiles: 100 };

/** Pieces attackers put in paths (from path traversal payload lists: plain, encoded, doubled, Windows). */
const PIECES = [
  '..',
  '.',
  '...',
  '%2e%2e',
  '%252e%252e',
  '..%2f',
  '%2f',
  '..\\',
  '\\',
  '\u0000',
  '/',
  '//',
  '~',
  'C:',
  '\u2025',
  '\uff0e\uff0e',
  '.hidden',
  'etc',
  'passwd',
  'memories',
  '/memories',
  'notes.md',
  ' ',
  '\n',
  'a',
];

const pathArb = fc
  .tuple(
    fc.constantFrom(
      '',
      '/',
      '/memories',
      '/memories/',
      'memories/',
      '\\memories\\',
      '/Memories/',
      '/memories/../',
    ),
    fc.array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ maxLength: 4 })), { maxLength: 8 }),
    fc.constantFrom('/', '', '\\'),
  )
  .map(([head, parts, separator]) => head + parts.join(separator));

describe('readMemoryPath', () => {
  it('accepts only paths whose resolution stays in /memories and that are already normal', () => {
    fc.assert(
      fc.property(pathArb, (raw) => {
        const read = readMemoryPath(raw);
        if (!read.ok) return;
        // What a file system would make of it: still inside /memories, and the same spelling.
        const resolved = posix.resolve('/', read.path);
        expect(resolved === MEMORY_ROOT || resolved.startsWith(`${MEMORY_ROOT}/`)).toBe(true);
        expect(resolved).toBe(read.path);
        expect(read.path).not.toMatch(/(^|\/)\.|\\|%|\u0000/);
        expect(decodeURIComponent(read.path)).toBe(read.path);
      }),
      { numRuns: RUNS },
    );
  });

  it('refuses every traversal through every command, changing nothing', () => {
    const files = { '/memories/notes.md': 'keep me\n' };
    const traversal = pathArb.filter((raw) => {
      const resolved = posix.resolve('/', raw.replaceAll('\\', '/'));
      return raw.includes('..') && !resolved.startsWith(`${MEMORY_ROOT}/`);
    });
    fc.assert(
      fc.property(
        traversal,
        fc.constantFrom('view', 'create', 'str_replace', 'insert', 'delete', 'rename'),
        (raw, command) => {
          const input = {
            command,
            path: raw,
            old_path: raw,
            new_path: raw,
            file_text: 'x',
            old_str: 'keep',
            new_str: 'x',
            insert_line: 0,
            insert_text: 'x',
          };
          const outcome = runMemoryCommand(files, input, LIMITS);
          expect(outcome.isError).toBe(true);
          expect(outcome.files).toBeUndefined();
        },
      ),
      { numRuns: RUNS },
    );
  });

  it.each([
    ['/memories/../etc/passwd'],
    ['/memories/..'],
    ['/memories/./notes.md'],
    ['/memories/a/../../x'],
    ['/memories/%2e%2e/x'],
    ['/memories/..\\x'],
    ['/memories\\..\\x'],
    ['/etc/passwd'],
    ['memories/notes.md'],
    ['../memories/notes.md'],
    ['/memories//notes.md'],
    ['/memories/notes.md\u0000.txt'],
    ['/memories/.env'],
    ['/memoriesX/notes.md'],
    ['/memories/cafe\u0301.md'],
    ['C:\\memories\\notes.md'],
  ])('refuses %j', (raw) => {
    expect(readMemoryPath(raw).ok).toBe(false);
  });

  it.each([
    ['/memories', '/memories'],
    ['/memories/', '/memories'],
    ['/memories/notes.md', '/memories/notes.md'],
    ['/memories/project/plan v2.md', '/memories/project/plan v2.md'],
    ['/memories/café.md', '/memories/café.md'],
  ])('accepts %j as %j', (raw, path) => {
    const read = readMemoryPath(raw);
    expect(read.ok && read.path).toBe(path);
  });
});
