/**
 * Paths of the memory tool, confined to `/memories`. The memory tool's documentation
 * (https://platform.claude.com/docs/en/agents-and-tools/tool-use/memory-tool) asks the
 * application to keep every operation inside `/memories` and to refuse traversal (`../`,
 * `..\\`, URL-encoded forms). The files live in a store, not on a disk, but a path is still read
 * strictly, so a directory written here can be copied to a disk later without surprises: one
 * spelling per file (NFC, no empty, `.` or `..` segments, no hidden names, no backslash, `%`,
 * control character or lone surrogate).
 */

/** The memory directory every path lives in. */
export const MEMORY_ROOT = '/memories';

/** The deepest a path may go below `/memories`. */
const MAX_DEPTH = 16;
/** The longest path, in UTF-16 units, and the longest segment. */
const MAX_PATH_LENGTH = 1024;
const MAX_SEGMENT_LENGTH = 255;
// Control characters (C0, DEL, C1), the separators and quoting characters a shell or file system
// reads specially, and lone surrogates (no UTF-8 form).
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\\%:*?"<>|\u2028\u2029]|\p{Cs}/u;

/** A path read from the model: its normal form, or why it is refused. */
export type MemoryPath = { ok: true; path: string; segments: string[] } | { ok: false; reason: string };

/**
 * Reads `raw` as a memory path. `/memories` itself (the directory) gives no segments. A trailing
 * `/` is dropped; everything else that is not already in normal form is refused, never guessed.
 */
export function readMemoryPath(raw: unknown): MemoryPath {
  if (typeof raw !== 'string') return { ok: false, reason: 'the path must be a string' };
  if (raw.length > MAX_PATH_LENGTH) {
    return { ok: false, reason: `the path is longer than ${MAX_PATH_LENGTH} characters` };
  }
  if (FORBIDDEN.test(raw)) {
    return {
      ok: false,
      reason: 'the path holds a character memory paths may not use (a control character, \\ % : * ? " < > |)',
    };
  }
  const text = raw.length > 1 && raw.endsWith('/') ? raw.slice(0, -1) : raw;
  if (text !== text.normalize('NFC')) return { ok: false, reason: 'the path is not in Unicode NFC form' };
  if (text !== MEMORY_ROOT && !text.startsWith(`${MEMORY_ROOT}/`)) {
    return { ok: false, reason: `the path must be ${MEMORY_ROOT} or start with ${MEMORY_ROOT}/` };
  }
  const segments = text === MEMORY_ROOT ? [] : text.slice(MEMORY_ROOT.length + 1).split('/');
  if (segments.length > MAX_DEPTH) {
    return { ok: false, reason: `the path is more than ${MAX_DEPTH} levels below ${MEMORY_ROOT}` };
  }
  for (const segment of segments) {
    if (segment === '') return { ok: false, reason: 'the path has an empty segment (//)' };
    if (segment.startsWith('.')) {
      return { ok: false, reason: 'a path segment may not start with "." (no ., .. or hidden names)' };
    }
    if (segment.trim() !== segment) {
      return { ok: false, reason: 'a path segment may not start or end with white space' };
    }
    if (segment.length > MAX_SEGMENT_LENGTH) {
      return { ok: false, reason: `a path segment is longer than ${MAX_SEGMENT_LENGTH} characters` };
    }
  }
  return { ok: true, path: text, segments };
}

/** Whether `path` is `dir` or lies below it. */
export function isWithin(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir}/`);
}
