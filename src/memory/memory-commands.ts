/**
 * The memory tool's six commands as a pure function of the directory's files: from the files and
 * the model's arguments to the text the model reads and, when the command changed something, the
 * new files. The result and error strings are the ones the memory tool's documentation gives
 * (https://platform.claude.com/docs/en/agents-and-tools/tool-use/memory-tool), so the model reads
 * what it was trained on; storing, sharing and retrying are memory-tool.ts's business.
 */
import { isWithin, MEMORY_ROOT, readMemoryPath, visiblePath } from './memory-path.js';

/** A memory directory's files: normal path (`/memories/…`) → text. Directories are implied. */
export type MemoryFiles = Readonly<Record<string, string>>;

/** One command of `memory_20250818`, as the model sends it. */
export type MemoryCommand =
  | { command: 'view'; path: string; view_range?: [number, number] }
  | { command: 'create'; path: string; file_text: string }
  | { command: 'str_replace'; path: string; old_str: string; new_str: string }
  | { command: 'insert'; path: string; insert_line: number; insert_text: string }
  | { command: 'delete'; path: string }
  | { command: 'rename'; old_path: string; new_path: string };

/** How much a memory directory may hold. */
export interface MemoryLimits {
  /** Largest file, in UTF-8 bytes. */
  maxFileBytes: number;
  /** All files together, in UTF-8 bytes. */
  maxTotalBytes: number;
  /** Most files. */
  maxFiles: number;
}

/** What a command did: the text for the model, whether it is an error, and the new files if any. */
export interface MemoryOutcome {
  text: string;
  isError: boolean;
  /** The directory after the command; absent when nothing changed. */
  files?: MemoryFiles;
}

type Rec = Record<string, unknown>;

function fail(text: string): MemoryOutcome {
  return { text: text.startsWith('Error') ? text : `Error: ${text}`, isError: true };
}

function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * The path argument `key` in normal form, or the outcome refusing it. With `stored`, a name
 * holding an invisible character that is already in the directory (written before such names
 * were refused) is accepted as it is, so it can still be deleted or renamed, never stranded.
 */
function pathArg(input: Rec, key: string, stored?: MemoryFiles): string | MemoryOutcome {
  const raw = input[key];
  const read = readMemoryPath(raw);
  if (read.ok) return read.path;
  if (stored !== undefined && read.code === 'invisible_character' && typeof raw === 'string') {
    const bare = raw.length > 1 && raw.endsWith('/') ? raw.slice(0, -1) : raw;
    if (Object.hasOwn(stored, bare) || isDirectory(stored, bare)) return bare;
  }
  // Escaped, so the model sees the character it cannot see (JSON keeps U+200B as it is).
  const shown = typeof raw === 'string' ? JSON.stringify(visiblePath(raw.slice(0, 200))) : key;
  return fail(`The path ${shown} is not allowed: ${read.reason}.`);
}

function stringArg(input: Rec, key: string, command: string): string | MemoryOutcome {
  const value = input[key];
  return typeof value === 'string' ? value : fail(`${command} needs a string "${key}".`);
}

function isDirectory(files: MemoryFiles, path: string): boolean {
  if (path === MEMORY_ROOT) return true;
  const prefix = `${path}/`;
  return Object.keys(files).some((p) => p.startsWith(prefix));
}

function exists(files: MemoryFiles, path: string): boolean {
  return Object.hasOwn(files, path) || isDirectory(files, path);
}

function missing(path: string): MemoryOutcome {
  return fail(`The path ${path} does not exist. Please provide a valid path.`);
}

/** A file on the way to `path` (a parent that is a file), which makes `path` impossible. */
function fileAbove(files: MemoryFiles, path: string): string | undefined {
  for (let at = path.lastIndexOf('/'); at > MEMORY_ROOT.length; at = path.lastIndexOf('/', at - 1)) {
    const parent = path.slice(0, at);
    if (Object.hasOwn(files, parent)) return parent;
  }
  return undefined;
}

/** The lines of a text, and whether it ended with a newline (kept through edits). */
function linesOf(text: string): { lines: string[]; trailing: boolean } {
  if (text === '') return { lines: [], trailing: false };
  const trailing = text.endsWith('\n');
  return { lines: (trailing ? text.slice(0, -1) : text).split('\n'), trailing };
}

function numbered(lines: readonly string[], first: number): string {
  let text = '';
  for (let i = 0; i < lines.length; i++) {
    const n = String(first + i);
    text += `${i === 0 ? '' : '\n'}${n.length < 6 ? '      '.slice(n.length) : ''}${n}\t${lines[i]}`;
  }
  return text;
}

function sizeText(n: number): string {
  if (n < 1024) return `${n}B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)}K`;
  return `${(n / (1024 * 1024)).toFixed(1)}M`;
}

/** The checks every write passes: the file's size, the directory's total and its file count. */
function within(limits: MemoryLimits, files: MemoryFiles, path: string, text: string): MemoryOutcome | null {
  const size = bytes(text);
  if (size > limits.maxFileBytes) {
    return fail(
      `${path} would hold ${size} bytes, over the limit of ${limits.maxFileBytes} bytes per memory file; nothing was written. Keep memory files short.`,
    );
  }
  let total = size;
  for (const [p, content] of Object.entries(files)) if (p !== path) total += bytes(content);
  if (total > limits.maxTotalBytes) {
    return fail(
      `the memory directory would hold ${total} bytes, over its limit of ${limits.maxTotalBytes}; nothing was written. Delete or shorten files you no longer need.`,
    );
  }
  const count = Object.keys(files).length + (Object.hasOwn(files, path) ? 0 : 1);
  if (count > limits.maxFiles) {
    return fail(
      `the memory directory would hold ${count} files, over its limit of ${limits.maxFiles}; nothing was written. Delete or merge files you no longer need.`,
    );
  }
  return null;
}

function listing(files: MemoryFiles, dir: string): string {
  const depthOf = (p: string) => p.slice(dir.length).split('/').length - 1;
  const sizes = new Map<string, number>([[dir, 0]]);
  for (const [path, content] of Object.entries(files)) {
    if (!isWithin(path, dir)) continue;
    const size = bytes(content);
    sizes.set(dir, (sizes.get(dir) ?? 0) + size);
    // The file and each directory between it and `dir`, up to two levels below `dir`.
    for (let at = path.indexOf('/', dir.length + 1); ; at = path.indexOf('/', at + 1)) {
      const entry = at === -1 ? path : path.slice(0, at);
      if (depthOf(entry) <= 2) sizes.set(entry, (sizes.get(entry) ?? 0) + size);
      if (at === -1) break;
    }
  }
  const rows = [...sizes.keys()].sort().map((p) => `${sizeText(sizes.get(p) ?? 0)}\t${visiblePath(p)}`);
  return `Here're the files and directories up to 2 levels deep in ${dir}, excluding hidden items and node_modules:\n${rows.join('\n')}`;
}

/** The most lines one view shows; a longer file or range is read with `view_range`. */
const VIEW_LINES = 2000;

function view(files: MemoryFiles, input: Rec): MemoryOutcome {
  const path = pathArg(input, 'path');
  if (typeof path !== 'string') return path;
  if (!Object.hasOwn(files, path))
    return isDirectory(files, path) ? { text: listing(files, path), isError: false } : missing(path);
  const { lines } = linesOf(files[path] as string);
  let first = 1;
  let last = lines.length;
  const range = input.view_range;
  if (range !== undefined && range !== null) {
    const ok =
      Array.isArray(range) &&
      range.length === 2 &&
      range.every(Number.isInteger) &&
      range[0] >= 1 &&
      range[0] <= Math.max(1, lines.length) &&
      (range[1] === -1 || (range[1] >= range[0] && range[1] <= lines.length));
    if (!ok) {
      return fail(
        `Invalid \`view_range\` parameter: ${JSON.stringify(range)}. It should be [start, end] with 1 <= start <= end <= ${lines.length} (the file's lines), or end = -1 for the rest of the file.`,
      );
    }
    first = range[0];
    last = range[1] === -1 ? lines.length : range[1];
  }
  // A file of many short lines answers with more line numbers than text; past VIEW_LINES the
  // answer says where it stopped and how to read on, so one view stays small and quick.
  const shown = Math.min(last, first + VIEW_LINES - 1);
  const rest =
    shown < last
      ? `\n(lines ${first}-${shown} of ${lines.length} shown; view with "view_range": [${shown + 1}, ${Math.min(last, shown + VIEW_LINES)}] to read on)`
      : '';
  return {
    text: `Here's the content of ${path} with line numbers:\n${numbered(lines.slice(first - 1, shown), first)}${rest}`,
    isError: false,
  };
}

function create(files: MemoryFiles, input: Rec, limits: MemoryLimits): MemoryOutcome {
  const path = pathArg(input, 'path');
  if (typeof path !== 'string') return path;
  const text = stringArg(input, 'file_text', 'create');
  if (typeof text !== 'string') return text;
  if (path === MEMORY_ROOT || isDirectory(files, path)) return fail(`${path} is a directory, not a file.`);
  if (Object.hasOwn(files, path)) return fail(`File ${path} already exists`);
  const above = fileAbove(files, path);
  if (above !== undefined) return fail(`${above} is a file, so ${path} cannot be created under it.`);
  const refused = within(limits, files, path, text);
  if (refused) return refused;
  return { text: `File created successfully at: ${path}`, isError: false, files: { ...files, [path]: text } };
}

/** How many occurrences' line numbers an ambiguous `str_replace` lists; the rest are counted. */
const LISTED_LINES = 10;
/** How much of the model's own `old_str` an error quotes back (it already holds the whole). */
const QUOTED_CHARS = 200;

/** Where `needle` occurs (non-overlapping), up to `most` offsets, and how often in all. */
function occurrences(text: string, needle: string, most: number): { first: number[]; count: number } {
  const first: number[] = [];
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
    if (count < most) first.push(at);
    count++;
  }
  return { first, count };
}

/** The 1-based line of each offset in `sorted` (ascending), in one pass over the text. */
function linesAt(text: string, sorted: readonly number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let from = 0;
  for (const index of sorted) {
    for (let nl = text.indexOf('\n', from); nl !== -1 && nl < index; nl = text.indexOf('\n', nl + 1)) {
      line++;
      from = nl + 1;
    }
    lines.push(line);
  }
  return lines;
}

function lineAt(text: string, index: number): number {
  return linesAt(text, [index])[0] as number;
}

function quoted(text: string): string {
  return text.length <= QUOTED_CHARS ? text : `${text.slice(0, QUOTED_CHARS)}… (${text.length} characters)`;
}

function strReplace(files: MemoryFiles, input: Rec, limits: MemoryLimits): MemoryOutcome {
  const path = pathArg(input, 'path');
  if (typeof path !== 'string') return path;
  const oldStr = stringArg(input, 'old_str', 'str_replace');
  if (typeof oldStr !== 'string') return oldStr;
  const newStr = stringArg(input, 'new_str', 'str_replace');
  if (typeof newStr !== 'string') return newStr;
  const content = files[path];
  if (content === undefined || !Object.hasOwn(files, path)) return missing(path);
  if (oldStr === '') return fail('str_replace needs a non-empty "old_str" that appears once in the file.');
  const found = occurrences(content, oldStr, LISTED_LINES);
  if (found.count === 0) {
    return fail(
      `No replacement was performed, old_str \`${quoted(oldStr)}\` did not appear verbatim in ${path}.`,
    );
  }
  if (found.count > 1) {
    // The documented answer lists the lines; a string found thousands of times would fill the
    // conversation with numbers, so the first few are listed and the rest counted.
    const lines = linesAt(content, found.first).join(', ');
    const more =
      found.count > LISTED_LINES ? ` and ${found.count - LISTED_LINES} more (${found.count} in all)` : '';
    return fail(
      `No replacement was performed. Multiple occurrences of old_str \`${quoted(oldStr)}\` in lines: ${lines}${more}. Please ensure it is unique`,
    );
  }
  const at = found.first[0] as number;
  const next = content.slice(0, at) + newStr + content.slice(at + oldStr.length);
  const refused = within(limits, files, path, next);
  if (refused) return refused;
  // A snippet around the edit, so the model sees the result without another view.
  const { lines } = linesOf(next);
  const start = Math.max(1, lineAt(next, at) - 4);
  const end = Math.min(lines.length, lineAt(next, at + newStr.length) + 4);
  return {
    text: `The memory file has been edited. Here's a snippet of ${path} around the edit:\n${numbered(lines.slice(start - 1, end), start)}`,
    isError: false,
    files: { ...files, [path]: next },
  };
}

function insert(files: MemoryFiles, input: Rec, limits: MemoryLimits): MemoryOutcome {
  const path = pathArg(input, 'path');
  if (typeof path !== 'string') return path;
  const text = stringArg(input, 'insert_text', 'insert');
  if (typeof text !== 'string') return text;
  const content = files[path];
  if (content === undefined || !Object.hasOwn(files, path)) return missing(path);
  const { lines, trailing } = linesOf(content);
  const line = input.insert_line;
  if (typeof line !== 'number' || !Number.isInteger(line) || line < 0 || line > lines.length) {
    return fail(
      `Invalid \`insert_line\` parameter: ${JSON.stringify(line)}. It should be within the range of lines of the file: [0, ${lines.length}]`,
    );
  }
  const added = linesOf(text === '' ? '\n' : text.endsWith('\n') ? text : `${text}\n`).lines;
  const merged = [...lines.slice(0, line), ...added, ...lines.slice(line)];
  const next = merged.join('\n') + (trailing || lines.length === 0 ? '\n' : '');
  const refused = within(limits, files, path, next);
  if (refused) return refused;
  return { text: `The file ${path} has been edited.`, isError: false, files: { ...files, [path]: next } };
}

function remove(files: MemoryFiles, input: Rec): MemoryOutcome {
  const path = pathArg(input, 'path', files);
  if (typeof path !== 'string') return path;
  if (path === MEMORY_ROOT) return fail(`${MEMORY_ROOT} itself cannot be deleted; delete the files in it.`);
  if (!exists(files, path)) return missing(path);
  const kept = Object.fromEntries(Object.entries(files).filter(([p]) => !isWithin(p, path)));
  return { text: `Successfully deleted ${path}`, isError: false, files: kept };
}

function rename(files: MemoryFiles, input: Rec): MemoryOutcome {
  const from = pathArg(input, 'old_path', files);
  if (typeof from !== 'string') return from;
  const to = pathArg(input, 'new_path');
  if (typeof to !== 'string') return to;
  if (from === MEMORY_ROOT || to === MEMORY_ROOT) return fail(`${MEMORY_ROOT} itself cannot be renamed.`);
  if (!exists(files, from)) return missing(from);
  if (exists(files, to)) return fail(`The destination ${to} already exists`);
  if (isWithin(to, from)) return fail(`${from} cannot be moved into itself (${to}).`);
  const above = fileAbove(files, to);
  if (above !== undefined) return fail(`${above} is a file, so ${to} cannot be created under it.`);
  const moved: Record<string, string> = {};
  for (const [p, content] of Object.entries(files))
    moved[isWithin(p, from) ? to + p.slice(from.length) : p] = content;
  return { text: `Successfully renamed ${from} to ${to}`, isError: false, files: moved };
}

/** Runs one command on `files`. Arguments that cannot be used give an error text, not an exception. */
export function runMemoryCommand(files: MemoryFiles, input: unknown, limits: MemoryLimits): MemoryOutcome {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return fail(
      'the arguments must be an object with a "command", such as {"command": "view", "path": "/memories"}.',
    );
  }
  const args = input as Rec;
  switch (args.command) {
    case 'view':
      return view(files, args);
    case 'create':
      return create(files, args, limits);
    case 'str_replace':
      return strReplace(files, args, limits);
    case 'insert':
      return insert(files, args, limits);
    case 'delete':
      return remove(files, args);
    case 'rename':
      return rename(files, args);
    default:
      return fail(
        `unknown command ${JSON.stringify(args.command)}; use view, create, str_replace, insert, delete or rename.`,
      );
  }
}
