/**
 * The id range a `list` page covers, for drivers that page inside the database (SQLite,
 * Postgres, Redis) in code point order, which is UTF-8 byte order and the order of
 * `compareIds`.
 */

import { compareIds } from './keys.js';

const MAX_CODE_POINT = 0x10ffff;
const SURROGATE_START = 0xd800;
const SURROGATE_END = 0xdfff;

/**
 * The least string greater than every string that starts with `prefix`, in code point order;
 * `undefined` when there is none (an empty prefix, or one made only of U+10FFFF). With it a
 * prefix becomes a range `[prefix, bound)` that an index (or a sorted set) can seek, where a
 * `LIKE`/`GLOB` pattern would need escaping and may not use the index.
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const points = Array.from(prefix, (char) => char.codePointAt(0) as number);
  while (points.length > 0 && points[points.length - 1] === MAX_CODE_POINT) points.pop();
  const last = points.pop();
  if (last === undefined) return undefined;
  // No stored id holds a lone surrogate (keys.ts rejects them), so the range may jump them.
  const next = last + 1 === SURROGATE_START ? SURROGATE_END + 1 : last + 1;
  return String.fromCodePoint(...points, next);
}

/** Where a `list` page starts: after the cursor when it lies inside the prefix range. */
export interface PageStart {
  /** The first id that may be listed. */
  from: string;
  /** Whether `from` itself is excluded (it is the previous page's last id). */
  exclusive: boolean;
}

/** The lower end of a page: the later of the prefix (inclusive) and the cursor (exclusive). */
export function pageStart(prefix: string, cursor: string | undefined): PageStart {
  if (cursor !== undefined && compareIds(cursor, prefix) >= 0) return { from: cursor, exclusive: true };
  return { from: prefix, exclusive: false };
}
