/**
 * The known name one or two edits from a name that is not one (a typo'd option, a misspelt
 * model), for the "did you mean" of an error or warning.
 */

/** The known name nearest `name` within `maxDistance` edits (case ignored), or undefined. */
export function nearestName(name: string, known: Iterable<string>, maxDistance = 2): string | undefined {
  let best: string | undefined;
  let bestDistance = maxDistance + 1;
  for (const k of known) {
    const d = editDistance(name.toLowerCase(), k.toLowerCase(), maxDistance);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance, or `limit + 1` when the lengths alone put it past `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

/** `; did you mean X?` for a name one or two edits from a known one, else `; the options are …`. */
export function didYouMean(name: string, known: readonly string[]): string {
  const best = nearestName(name, known);
  return best ? `; did you mean ${best}?` : `; the options are ${known.join(', ')}`;
}
