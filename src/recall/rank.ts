/**
 * From the index's scores to ranked groups of turns: the ranking rules recall adds on top of
 * BM25, the same whichever index (in process, SQLite FTS5, Postgres) scored the words.
 *
 * - Speakers: a turn by a person the query names counts more ("what did Caroline research" is
 *   answered by Caroline).
 * - Dates: a turn said on or shortly after a date the query names counts more, and such turns are
 *   candidates even when no word matches ("where was John between August 11 and 15" may be
 *   answered by "I was in Chicago").
 * - Neighbours: a turn next to a relevant turn gains part of its score, since a question is often
 *   answered across two turns ("What did you research?" / "Adoption agencies").
 * - No duplicates: candidates close to each other form one group, shown once with its context.
 */
import type { DaySpan } from './day-spans.js';
import type { RecallQuery } from './query.js';

/** One entry the index found, with its score (any scale, higher is better). */
export interface ScoredSeq {
  seq: number;
  score: number;
}

/** What the ranking reads of a turn. */
export interface TurnFacts {
  /** The speaker's name, lowercased. */
  speaker?: string;
  /** The day it was said. */
  day?: number;
}

/** A group of nearby relevant turns: one hit. */
export interface RankedGroup {
  /** The relevant turns of the group, best first. */
  centers: number[];
  score: number;
}

/** The weights of the ranking rules; the defaults are general, not fitted to one data set. */
export interface RankWeights {
  /** Share of the better neighbour's score a turn gains. */
  neighbour: number;
  /** Extra share for a turn by a person the query names. */
  speaker: number;
  /** Extra share for a turn said on the day the query names (fading with distance). */
  date: number;
  /** Score a turn said on the named day has even when no word matches (on a 0–1 scale). */
  dateAlone: number;
  /** Days over which the date rules fade to a third. */
  dateFade: number;
  /** Turns within this distance of a group's turn join that group. */
  mergeDistance: number;
  /** Most relevant turns one group holds. */
  groupCenters: number;
  /** How many of the best turns are considered, per hit asked for. */
  candidatesPerHit: number;
}

/** The weights recall uses. */
export const DEFAULT_WEIGHTS: RankWeights = {
  neighbour: 0.5,
  speaker: 0.3,
  date: 1,
  dateAlone: 0.15,
  dateFade: 5,
  mergeDistance: 2,
  groupCenters: 3,
  candidatesPerHit: 3,
};

/**
 * Days from `day` to the nearest span: 0 inside, and a turn before the span counts double, since
 * what is said of a day is mostly said on it or after it ("yesterday", "last week").
 */
function daysAway(day: number, spans: readonly DaySpan[]): number {
  let best = Number.POSITIVE_INFINITY;
  for (const span of spans) {
    const d = day < span.first ? 2 * (span.first - day) : day > span.last ? day - span.last : 0;
    if (d < best) best = d;
  }
  return best;
}

/** Input of {@link rankGroups}. */
export interface RankInput {
  /** What the index found. */
  scored: readonly ScoredSeq[];
  /** Entries in the history: seqs run from 0 to `count - 1`. */
  count: number;
  query: RecallQuery;
  /** The speaker and day of a turn. */
  facts: (seq: number) => TurnFacts;
  /** Seqs of the turns said within `[first, last]` (days), when the query names a date. */
  seqsBetween?: (first: number, last: number) => Iterable<number>;
  /** How many groups to return. */
  limit: number;
  weights?: Partial<RankWeights>;
}

/** The best groups of turns for a query, best first: by the query's terms and facts they hold, weighted. */
export function rankGroups(input: RankInput): RankedGroup[] {
  const w = { ...DEFAULT_WEIGHTS, ...input.weights };
  const { query, facts, count } = input;
  let max = 0;
  for (const s of input.scored) if (s.score > max) max = s.score;
  const rel = new Map<number, number>();
  const named = (seq: number): boolean => {
    const speaker = facts(seq).speaker;
    if (speaker === undefined || query.names.size === 0) return false;
    if (query.names.has(speaker)) return true;
    const first = speaker.split(' ')[0] as string;
    return first !== speaker && query.names.has(first);
  };
  const nearness = (seq: number): number => {
    if (query.days.length === 0) return 0;
    const day = facts(seq).day;
    return day === undefined ? 0 : Math.exp(-daysAway(day, query.days) / w.dateFade);
  };
  const relevance = (seq: number, base: number): number => {
    const speakerFactor = named(seq) ? 1 + w.speaker : 1;
    const near = nearness(seq);
    return (base * (1 + w.date * near) + w.dateAlone * near) * speakerFactor;
  };
  if (max > 0) {
    for (const s of input.scored) {
      if (s.seq < 0 || s.seq >= count || s.score <= 0) continue;
      rel.set(s.seq, relevance(s.seq, s.score / max));
    }
  }
  if (query.days.length > 0 && input.seqsBetween) {
    // Turns said near the date are candidates on their own; three fades away is about 5%.
    const reach = 3 * w.dateFade;
    for (const span of query.days) {
      for (const seq of input.seqsBetween(span.first - Math.ceil(reach / 2), span.last + Math.ceil(reach))) {
        if (seq >= 0 && seq < count && !rel.has(seq)) rel.set(seq, relevance(seq, 0));
      }
    }
  }
  if (rel.size === 0) return [];
  const windows: Array<ScoredSeq & { own: number }> = [];
  const seen = new Set<number>();
  const consider = (seq: number) => {
    if (seq < 0 || seq >= count || seen.has(seq)) return;
    seen.add(seq);
    const own = rel.get(seq) ?? 0;
    const neighbours = Math.max(rel.get(seq - 1) ?? 0, rel.get(seq + 1) ?? 0);
    const score = own + w.neighbour * neighbours;
    if (score > 0) windows.push({ seq, score, own });
  };
  for (const seq of rel.keys()) {
    consider(seq);
    consider(seq - 1);
    consider(seq + 1);
  }
  windows.sort((a, b) => b.score - a.score || b.seq - a.seq);
  const groups: RankedGroup[] = [];
  const considered = Math.min(windows.length, input.limit * w.candidatesPerHit * 2);
  for (let i = 0, taken = 0; i < considered && taken < input.limit * w.candidatesPerHit; i++) {
    const { seq, score, own } = windows[i] as ScoredSeq & { own: number };
    const near = groups.find((g) => g.centers.some((c) => Math.abs(c - seq) <= w.mergeDistance));
    if (near) {
      if (near.centers.length < w.groupCenters) {
        near.centers.push(seq);
        taken++;
      }
      continue;
    }
    // A turn relevant only through its neighbour joins that neighbour's group, never starts one.
    if (own > 0 && groups.length < input.limit) {
      groups.push({ centers: [seq], score });
      taken++;
    }
  }
  return groups;
}
