/**
 * Ranked groups to hit texts within a token budget. The relevant turns of every group come
 * first, then their neighbours one turn away, then two: five answers with a little context are
 * worth more than two answers with a lot. A turn too long for its share (a huge tool result)
 * shows the part that matches.
 *
 * A hit reads as a short transcript: `#25 Caroline: Researching adoption agencies …`, one line
 * per turn (and per tool call or result), a stamp such as `[1:14 pm on 25 May, 2023]` on its own
 * line only where it changes, and `…` where turns were skipped.
 */
import type { RankedGroup } from './rank.js';
import { snippet } from './snippet.js';
import type { TurnText } from './turn-text.js';

/** Input of {@link fitHits}. */
export interface FitHitsInput {
  groups: readonly RankedGroup[];
  /** Entries in the history: seqs run from 0 to `count - 1`. */
  count: number;
  turn: (seq: number) => TurnText;
  countText: (text: string) => number;
  maxTokens: number;
  /** The query's stemmed terms, to find the matching part of a long turn. */
  terms: ReadonlySet<string>;
  /** Farthest neighbour shown on each side of a relevant turn (default 2). */
  radius?: number;
}

/** One fitted hit: its group, the turns it shows and its text. */
export interface FittedHit {
  group: RankedGroup;
  seqs: number[];
  text: string;
}

interface Shown {
  seq: number;
  body: string;
  stamp: string | undefined;
  cost: number;
  stampCost: number;
  /** Order in which it was taken: the last taken goes first when the exact count is over. */
  order: number;
}

const GAP = '…';

/** A neighbour is cut to its matching part only when at least this much of it can be shown. */
const MIN_CUT_TOKENS = 40;

function renderTurn(seq: number, turn: TurnText): string {
  return turn.lines.map((line) => `#${seq} ${line.label}: ${line.text}`).join('\n');
}

/** The group's turns, in order, with stamps where they change and gaps marked. */
function renderGroup(shown: readonly Shown[]): string {
  const out: string[] = [];
  let stamp: string | undefined;
  let previous: number | undefined;
  for (const s of shown) {
    if (previous !== undefined && s.seq !== previous + 1) out.push(GAP);
    if (s.stamp !== undefined && s.stamp !== stamp) out.push(s.stamp);
    stamp = s.stamp;
    out.push(s.body);
    previous = s.seq;
  }
  return out.join('\n');
}

/** Tokens of a rendered group, from the turns' own counts: exact up to how newlines merge. */
function groupCost(shown: readonly Shown[], gapCost: number): number {
  let cost = 0;
  let stamp: string | undefined;
  let previous: number | undefined;
  for (const s of shown) {
    if (previous !== undefined && s.seq !== previous + 1) cost += gapCost;
    if (s.stamp !== undefined && s.stamp !== stamp) cost += s.stampCost;
    stamp = s.stamp;
    cost += s.cost;
    previous = s.seq;
  }
  return cost;
}

function insertSorted(list: Shown[], item: Shown): Shown[] {
  const out = list.slice();
  let i = out.length;
  while (i > 0 && (out[i - 1] as Shown).seq > item.seq) i--;
  out.splice(i, 0, item);
  return out;
}

/**
 * The hits' texts, in the groups' order, together within `maxTokens` (each text counted with
 * `countText`); a group none of whose turns fit is left out. No turn is shown twice.
 */
export function fitHits(input: FitHitsInput): FittedHit[] {
  const { groups, count, turn, countText, maxTokens, terms } = input;
  const radius = input.radius ?? 2;
  if (groups.length === 0 || maxTokens <= 0) return [];
  const gapCost = countText(GAP) + 1;
  const shown: Shown[][] = groups.map(() => []);
  const taken = new Set<number>();
  const share = Math.floor(maxTokens / groups.length);
  let used = 0;
  let order = 0;

  /** Takes `seq` into group `g` within `limit` tokens of the group's own (cut to its matching part if needed). */
  const tryTake = (g: number, seq: number, kind: 'center' | 'shared' | 'rest'): void => {
    if (seq < 0 || seq >= count || taken.has(seq)) return;
    const t = turn(seq);
    const full = renderTurn(seq, t);
    const list = shown[g] as Shown[];
    const before = groupCost(list, gapCost);
    const stampCost = t.stamp === undefined ? 0 : countText(t.stamp) + 1;
    const room = maxTokens - used;
    // A relevant turn may use its group's share; a neighbour what is left of it, then of the whole.
    const limit = Math.min(room, kind === 'center' ? share : kind === 'shared' ? share - before : room);
    let body = full;
    // A text many times longer than the limit cannot fit: it is cut without counting it whole.
    let cost = full.length > limit * 8 ? Number.POSITIVE_INFINITY : countText(full) + 1;
    if (cost + stampCost > limit) {
      if (kind !== 'center' && limit < MIN_CUT_TOKENS) return;
      const header = `#${seq} ${t.lines[0]?.label ?? ''}: `;
      const cut = snippet(
        full.slice(header.length),
        terms,
        limit - countText(header) - stampCost - 2,
        countText,
      );
      if (cut === '') return;
      body = header + cut;
      cost = countText(body) + 1;
    }
    const item: Shown = { seq, body, stamp: t.stamp, cost, stampCost, order: order++ };
    const next = insertSorted(list, item);
    const added = groupCost(next, gapCost) - before;
    if (used + added > maxTokens) return;
    shown[g] = next;
    used += added;
    taken.add(seq);
  };

  for (const [g, group] of groups.entries()) for (const c of group.centers) tryTake(g, c, 'center');
  for (const kind of ['shared', 'rest'] as const) {
    for (let d = 1; d <= radius; d++) {
      for (const [g, group] of groups.entries()) {
        for (const c of group.centers) {
          tryTake(g, c - d, kind);
          tryTake(g, c + d, kind);
        }
      }
    }
  }

  // The sum of the turns' counts can be off by how newlines merge: count the texts themselves
  // and give back the turns taken last until they fit.
  let texts = shown.map(renderGroup);
  let total = texts.reduce((sum, text) => sum + (text === '' ? 0 : countText(text)), 0);
  while (total > maxTokens) {
    let last: { g: number; i: number; order: number } | undefined;
    for (const [g, list] of shown.entries()) {
      for (const [i, s] of list.entries()) if (!last || s.order > last.order) last = { g, i, order: s.order };
    }
    if (!last) break;
    (shown[last.g] as Shown[]).splice(last.i, 1);
    texts = shown.map(renderGroup);
    total = texts.reduce((sum, text) => sum + (text === '' ? 0 : countText(text)), 0);
  }
  const out: FittedHit[] = [];
  for (const [g, group] of groups.entries()) {
    const list = shown[g] as Shown[];
    if (list.length === 0) continue;
    out.push({ group, seqs: list.map((s) => s.seq), text: texts[g] as string });
  }
  return out;
}
