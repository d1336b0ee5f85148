/**
 * The baseline recall the goals are stated against: plain BM25 (k1 1.2, b 0.75) over single
 * messages as written (lowercased words, no stemming, no stopwords, the transcript prefix
 * included), each of the top hits shown with one neighbour on each side, in rank order, until
 * the token budget is spent (the last one cut to fit).
 */

import type { HistoryEntry } from '../../src/messages/types.js';
import { messageText } from '../../src/wire/content.js';

const WORD = /[\p{L}\p{N}]+/gu;

function words(text: string): string[] {
  return Array.from(text.toLowerCase().matchAll(WORD), (m) => m[0]);
}

/** Plain BM25 over one conversation's messages. */
export class PlainBm25 {
  readonly #texts: string[];
  readonly #tf: Array<Map<string, number>>;
  readonly #lengths: number[];
  readonly #df = new Map<string, number>();
  readonly #avg: number;

  constructor(entries: readonly HistoryEntry[]) {
    this.#texts = entries.map((e) => messageText(e.message));
    this.#tf = this.#texts.map((text) => {
      const tf = new Map<string, number>();
      for (const w of words(text)) tf.set(w, (tf.get(w) ?? 0) + 1);
      for (const w of tf.keys()) this.#df.set(w, (this.#df.get(w) ?? 0) + 1);
      return tf;
    });
    this.#lengths = this.#tf.map((tf) => [...tf.values()].reduce((a, b) => a + b, 0));
    this.#avg = this.#lengths.reduce((a, b) => a + b, 0) / Math.max(1, this.#lengths.length);
  }

  /** The top `limit` messages' texts, each with one neighbour on each side, within `maxTokens`. */
  recall(query: string, countText: (text: string) => number, limit = 5, maxTokens = 1_000): string[] {
    const n = this.#texts.length;
    const terms = [...new Set(words(query))];
    const scored: Array<[number, number]> = [];
    for (let i = 0; i < n; i++) {
      const tf = this.#tf[i] as Map<string, number>;
      let score = 0;
      for (const t of terms) {
        const f = tf.get(t);
        if (!f) continue;
        const df = this.#df.get(t) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * (this.#lengths[i] as number)) / this.#avg));
      }
      if (score > 0) scored.push([score, i]);
    }
    scored.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
    const out: string[] = [];
    let left = maxTokens;
    for (const [, i] of scored.slice(0, limit)) {
      const text = [i - 1, i, i + 1]
        .filter((j) => j >= 0 && j < n)
        .map((j) => this.#texts[j])
        .join('\n');
      const tokens = countText(text);
      if (tokens <= left) {
        out.push(text);
        left -= tokens;
        continue;
      }
      // Cut the last one to what is left, by the share of its characters.
      const cut = text.slice(0, Math.floor((text.length * left) / tokens));
      if (cut !== '') out.push(cut);
      break;
    }
    return out;
  }
}
