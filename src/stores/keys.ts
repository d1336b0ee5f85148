/**
 * Conversation ids (and persistence keys) as file names.
 *
 * The scheme is lowercase-only so that two ids never share a file on a case-insensitive file
 * system (macOS, Windows): `[a-z0-9_-]` stand for themselves, every other code point (uppercase
 * letters, `.`, `/`, `%`, NUL, anything beyond ASCII) is written as its UTF-8 bytes in `%xx`
 * with lowercase hex. A name therefore never contains `.` (so it cannot be `.`/`..`, hide, or
 * take an extension), never contains a path separator, and decodes back to exactly one id.
 * A name that would be a Windows device name (`con`, `nul`, `com1`, …) has its first letter
 * escaped too.
 *
 * Names longer than {@link MAX_NAME_BYTES} become a readable prefix, `~`, and the SHA-256 of
 * the id (`~` is never produced by the plain scheme, so the two kinds cannot collide). Such a
 * name cannot be decoded on its own: the file store keeps the full id in a `<name>.id` sidecar
 * and the file persistence keeps each key inside its file.
 */

import { createHash } from 'node:crypto';
import { StoreError } from '../errors.js';

/**
 * Longest encoded name kept as is. File systems allow 255 bytes; the rest is left for the
 * suffixes stores add (`.jsonl`, `.meta.json`, `.torn-<time>`, temp names).
 */
export const MAX_NAME_BYTES = 200;

const HASH_SEPARATOR = '~';
const SAFE = /^[a-z0-9_-]$/;
const LONE_SURROGATE = /\p{Cs}/u;
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/;

/**
 * Rejects what no store can keep under a name: a non-string, the empty string, and a string
 * with a lone UTF-16 surrogate (it has no UTF-8 form, so it would not survive a file, SQL or
 * Redis round trip). `what` names the argument in the message.
 */
export function validateConversationId(id: unknown, what = 'conversation id'): asserts id is string {
  if (typeof id !== 'string') {
    throw new StoreError(undefined, `${what} must be a string, got ${id === null ? 'null' : typeof id}`, {
      code: 'invalid_id',
    });
  }
  if (id.length === 0) {
    throw new StoreError(undefined, `${what} must not be empty`, { code: 'invalid_id' });
  }
  const lone = LONE_SURROGATE.exec(id);
  if (lone) {
    const unit = id.charCodeAt(lone.index).toString(16).toUpperCase();
    throw new StoreError(
      undefined,
      `${what} ${JSON.stringify(id.slice(0, 40))} has a lone surrogate U+${unit} at index ${lone.index}, which has no UTF-8 form; use well-formed Unicode`,
      { code: 'invalid_id' },
    );
  }
}

function escapeCodePoint(char: string): string {
  let out = '';
  for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).padStart(2, '0')}`;
  return out;
}

/**
 * Maps an id to a file name that is safe on every common file system, distinct for distinct
 * ids (also when the file system ignores case), and decodable by {@link decodeId} unless it
 * was too long and had to be hashed (see {@link isHashedName}).
 */
export function encodeId(id: string): string {
  validateConversationId(id);
  let name = '';
  for (const char of id) name += SAFE.test(char) ? char : escapeCodePoint(char);
  if (WINDOWS_DEVICE.test(name)) name = escapeCodePoint(name.charAt(0)) + name.slice(1);
  if (name.length <= MAX_NAME_BYTES) return name;
  const hash = createHash('sha256').update(id, 'utf8').digest('hex');
  let cut = MAX_NAME_BYTES - hash.length - HASH_SEPARATOR.length;
  // Do not split a `%xx` escape, so the prefix stays readable.
  const lastPercent = name.lastIndexOf('%', cut - 1);
  if (lastPercent >= 0 && lastPercent > cut - 3) cut = lastPercent;
  return name.slice(0, cut) + HASH_SEPARATOR + hash;
}

/** Whether `name` is the hashed form of a long id, whose id must be looked up elsewhere. */
export function isHashedName(name: string): boolean {
  return name.includes(HASH_SEPARATOR);
}

/**
 * Reverses {@link encodeId}. Throws a `StoreError` for a name that `encodeId` would never
 * produce (a stray file, a name with uppercase letters or a bad escape) and for a hashed name,
 * so a listing never reports an id that reading would not find.
 */
export function decodeId(name: string): string {
  if (isHashedName(name)) {
    throw new StoreError(
      undefined,
      `file name ${JSON.stringify(name)} is a hashed long id; its id is stored beside it`,
      {
        code: 'invalid_name',
      },
    );
  }
  const bytes: number[] = [];
  let i = 0;
  while (i < name.length) {
    const ch = name.charAt(i);
    if (ch === '%') {
      const hex = name.slice(i + 1, i + 3);
      if (!/^[0-9a-f]{2}$/.test(hex)) {
        throw new StoreError(undefined, `file name ${JSON.stringify(name)} has a bad escape at index ${i}`, {
          code: 'invalid_name',
        });
      }
      bytes.push(Number.parseInt(hex, 16));
      i += 3;
    } else {
      bytes.push(ch.charCodeAt(0));
      i += 1;
    }
  }
  let id: string;
  try {
    id = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
  } catch {
    throw new StoreError(undefined, `file name ${JSON.stringify(name)} does not decode to UTF-8`, {
      code: 'invalid_name',
    });
  }
  let canonical: string | undefined;
  try {
    canonical = encodeId(id);
  } catch {
    canonical = undefined;
  }
  if (canonical !== name) {
    throw new StoreError(undefined, `file name ${JSON.stringify(name)} is not one contextkit writes`, {
      code: 'invalid_name',
    });
  }
  return id;
}

function codePointRank(unit: number): number {
  // Surrogates (0xD800–0xDFFF) encode code points above 0xFFFF, so they must sort after
  // 0xE000–0xFFFF: shift them up and those down.
  if (unit >= 0xe000) return unit - 0x800;
  if (unit >= 0xd800) return unit + 0x2000;
  return unit;
}

/**
 * Orders ids by Unicode code point, which is also UTF-8 byte order: the order SQLite (BINARY),
 * Postgres (`COLLATE "C"`) and Redis sort in, so every driver lists in the same order.
 * (JavaScript's `<` compares UTF-16 units and differs above U+FFFF.)
 */
export function compareIds(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}
