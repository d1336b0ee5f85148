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

describe('invisible and bidirectional characters in memory paths', () => {
  // Each would make a name that looks like /memories/notes.md (issue 31, item 9).
  const INVISIBLES: Array<[string, string]> = [
    ['zero-width space', '\u200B'],
    ['zero-width non-joiner', '\u200C'],
    ['zero-width joiner', '\u200D'],
    ['left-to-right mark', '\u200E'],
    ['right-to-left mark', '\u200F'],
    ['right-to-left override', '\u202E'],
    ['left-to-right embedding', '\u202A'],
    ['first strong isolate', '\u2068'],
    ['pop directional isolate', '\u2069'],
    ['Arabic letter mark', '\u061C'],
    ['byte order mark mid-name', '\uFEFF'],
    ['soft hyphen', '\u00AD'],
    ['word joiner', '\u2060'],
    ['tag letter a', '\u{E0061}'],
    ['cancel tag', '\u{E007F}'],
    ['variation selector 16', '\uFE0F'],
    ['combining grapheme joiner', '\u034F'],
    ['Hangul filler', '\u3164'],
    ['no-break space', '\u00A0'],
    ['ideographic space', '\u3000'],
    ['Mongolian vowel separator', '\u180E'],
  ];

  it.each(INVISIBLES)('refuses a %s inside a name, naming the code point', (_, char) => {
    const read = readMemoryPath(`/memories/no${char}tes.md`);
    const hex = (char.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0');
    expect(read).toMatchObject({ ok: false, code: 'invisible_character', codePoint: `U+${hex}` });
    expect(!read.ok && read.reason).toContain(`U+${hex} at character 13`);
  });

  it('refuses any of them anywhere in any accepted path, whatever the command', () => {
    const accepted = fc
      .array(fc.constantFrom('notes', 'a', 'plan v2.md', 'café', 'x-1', '東京'), {
        minLength: 1,
        maxLength: 4,
      })
      .map((parts) => `${MEMORY_ROOT}/${parts.join('/')}`);
    const files = { '/memories/notes.md': 'keep me\n' };
    fc.assert(
      fc.property(
        accepted,
        fc.constantFrom(...INVISIBLES.map(([, char]) => char)),
        fc.nat(),
        fc.constantFrom('view', 'create', 'str_replace', 'insert', 'rename'),
        (path, char, at, command) => {
          expect(readMemoryPath(path).ok).toBe(true);
          const cut = MEMORY_ROOT.length + 1 + (at % (path.length - MEMORY_ROOT.length));
          const raw = path.slice(0, cut) + char + path.slice(cut);
          const read = readMemoryPath(raw);
          expect(read.ok).toBe(false);
          expect(!read.ok && read.code).toBe('invisible_character');
          const input = {
            command,
            path: raw,
            old_path: '/memories/notes.md',
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
          // The answer shows the character escaped, so the model can see what was wrong.
          expect(outcome.text).toContain(
            `\\u{${(char.codePointAt(0) as number).toString(16).toUpperCase()}}`,
          );
          expect(outcome.text).not.toContain(char);
        },
      ),
      { numRuns: Math.min(RUNS, 500) },
    );
  });

  it('refuses a decomposed name (NFD) with its own code, so notes-é in two spellings are never two files', () => {
    const composed = '/memories/caf\u00e9.md';
    const decomposed = '/memories/cafe\u0301.md';
    expect(readMemoryPath(composed).ok).toBe(true);
    expect(readMemoryPath(decomposed)).toMatchObject({ ok: false, code: 'not_nfc' });
  });

  it('lets a name stored before the rule be seen escaped, renamed and deleted, never stranded', () => {
    const hidden = '/memories/no\u200Btes.md';
    const files = { [hidden]: 'old\n', '/memories/notes.md': 'new\n' };
    const listing = runMemoryCommand(files, { command: 'view', path: '/memories' }, LIMITS);
    expect(listing.text).toContain('/memories/no\\u{200B}tes.md');
    const renamed = runMemoryCommand(
      files,
      { command: 'rename', old_path: hidden, new_path: '/memories/notes-old.md' },
      LIMITS,
    );
    expect(renamed.files).toEqual({ '/memories/notes-old.md': 'old\n', '/memories/notes.md': 'new\n' });
    const deleted = runMemoryCommand(files, { command: 'delete', path: hidden }, LIMITS);
    expect(deleted.files).toEqual({ '/memories/notes.md': 'new\n' });
    // Still no new file under such a name.
    const created = runMemoryCommand(
      files,
      { command: 'create', path: '/memories/x\u200B.md', file_text: 'x' },
      LIMITS,
    );
    expect(created.isError).toBe(true);
  });
});
