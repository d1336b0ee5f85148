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
/**
 * Characters a reader cannot see or that reorder what is shown: format characters (zero-width
 * space, joiners, LRM/RLM, the bidirectional embeddings, overrides and isolates, the BOM, soft
 * hyphen, tag characters), the rest of Unicode's default-ignorable set (variation selectors,
 * Hangul fillers, combining grapheme joiner) and every space but U+0020 (no-break, ideographic,
 * en/em spaces). `/memories/notes.md` and the same name with U+200B inside would otherwise be two
 * files that look alike to the model and to a person.
 */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}]|(?! )\p{Zs}/u;

/** Why a path was refused, for code: an invisible or bidirectional character, or another rule. */
export type MemoryPathCode = 'invisible_character' | 'not_nfc' | 'invalid_path';

/**
 * A path read from the model: its normal form, or why it is refused (`reason` for the model,
 * `code` for the application; `codePoint` names the invisible character, as `U+200B`).
 */
export type MemoryPath =
  | { ok: true; path: string; segments: string[] }
  | { ok: false; reason: string; code: MemoryPathCode; codePoint?: string };

/** `U+200B` for a code point. */
function codePointName(char: string): string {
  return `U+${(char.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * `raw` with every character a reader could not see or tell apart written as `\u{…}`, so an
 * error about a path shows the model and the person reading the log what is really there.
 */
export function visiblePath(raw: string): string {
  return raw.replace(new RegExp(`${INVISIBLE.source}|${FORBIDDEN.source}`, 'gu'), (char) => {
    return `\\u{${(char.codePointAt(0) as number).toString(16).toUpperCase()}}`;
  });
}

/**
 * Reads `raw` as a memory path. `/memories` itself (the directory) gives no segments. A trailing
 * `/` is dropped; everything else that is not already in normal form is refused, never guessed.
 */
export function readMemoryPath(raw: unknown): MemoryPath {
  if (typeof raw !== 'string') return refused('the path must be a string');
  if (raw.length > MAX_PATH_LENGTH) {
    return refused(`the path is longer than ${MAX_PATH_LENGTH} characters`);
  }
  if (FORBIDDEN.test(raw)) {
    return refused(
      'the path holds a character memory paths may not use (a control character, \\ % : * ? " < > |)',
    );
  }
  const invisible = INVISIBLE.exec(raw);
  if (invisible !== null) {
    const codePoint = codePointName(invisible[0]);
    return {
      ok: false,
      code: 'invisible_character',
      codePoint,
      reason: `the path holds ${codePoint} at character ${invisible.index + 1}, an invisible, bidirectional or non-standard space character, so it would look like another path; write the name without it`,
    };
  }
  const text = raw.length > 1 && raw.endsWith('/') ? raw.slice(0, -1) : raw;
  // One spelling per name: a decomposed é (e + U+0301) is refused rather than folded into the
  // composed one, so what is stored is exactly what the model wrote and two spellings never meet.
  if (text !== text.normalize('NFC')) {
    return {
      ok: false,
      code: 'not_nfc',
      reason:
        'the path is not in Unicode NFC form (write accented letters precomposed, as é and not e + U+0301)',
    };
  }
  if (text !== MEMORY_ROOT && !text.startsWith(`${MEMORY_ROOT}/`)) {
    return refused(`the path must be ${MEMORY_ROOT} or start with ${MEMORY_ROOT}/`);
  }
  const segments = text === MEMORY_ROOT ? [] : text.slice(MEMORY_ROOT.length + 1).split('/');
  if (segments.length > MAX_DEPTH) {
    return refused(`the path is more than ${MAX_DEPTH} levels below ${MEMORY_ROOT}`);
  }
  for (const segment of segments) {
    if (segment === '') return refused('the path has an empty segment (//)');
    if (segment.startsWith('.')) {
      return refused('a path segment may not start with "." (no ., .. or hidden names)');
    }
    if (segment.trim() !== segment) {
      return refused('a path segment may not start or end with white space');
    }
    if (segment.length > MAX_SEGMENT_LENGTH) {
      return refused(`a path segment is longer than ${MAX_SEGMENT_LENGTH} characters`);
    }
  }
  return { ok: true, path: text, segments };
}

function refused(reason: string): MemoryPath {
  return { ok: false, code: 'invalid_path', reason };
}

/** Whether `path` is `dir` or lies below it. */
export function isWithin(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir}/`);
}
