/**
 * recall's own in-process index: an inverted index in typed arrays, BM25 top-k search.
 *
 * Why not a library: `npm run bench -- recall-libraries` measured MiniSearch, FlexSearch and
 * Orama on an agent session, whose messages carry many one-off words (ids, hashes, paths).
 * Each keeps a JavaScript object or Map entry per posting, 3–7 KB per message, four to twelve
 * times the history itself, and MiniSearch and Orama score every matching entry of every query
 * (tens to hundreds of milliseconds at 10k messages); FlexSearch is fast but gives no score, and
 * recall finds fewer answers with its order. Here a posting is 4 bytes and a term 28, and a
 * query reads only the postings of its terms.
 *
 * - Terms are known by a 53-bit hash (two 32-bit FNV-1a variants), in an open-addressing table:
 *   no term string is kept (a kept substring could hold a 100k-character text alive), and two
 *   different terms sharing a hash (about one chance in 10^5 at a million terms) only merge
 *   their postings.
 * - A term's postings are a chain of blocks in one pool, each block twice the size of the one
 *   before (up to 256): `[next, posting…]`, a posting being `seq × 256 + min(tf, 255)`. Seqs
 *   arrive in order, so each chain is sorted.
 * - A query scores its terms rarest first and stops adding terms once it has read
 *   `MAX_POSTINGS_PER_QUERY` postings: a word in most messages would add little (BM25 gives it
 *   an idf near zero) and cost the most.
 */
import type { ScoredSeq } from './rank.js';
import { searchTerms } from './terms.js';
import type { TextIndex } from './text-index.js';

const K1 = 1.2;
const B = 0.75;
/** Postings a query reads at most once it has one term (see the module comment). */
export const MAX_POSTINGS_PER_QUERY = 60_000;
const FIRST_BLOCK = 2;
const LAST_BLOCK = 256;
const MAX_SEQ = 2 ** 24 - 1;

/** Two FNV-1a hashes of the UTF-16 code units (different offset bases), mixed. */
function hashes(term: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < term.length; i++) {
    const c = term.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 13);
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  return [a >>> 0, b >>> 0];
}

/** The table slot of a key, from the key alone (so a rehash finds the same one). */
function slotOf(key: number, mask: number): number {
  return (Math.floor(key / 2 ** 32) ^ Math.imul(key >>> 0, 0x9e3779b1)) & mask;
}

/** Grows a typed array by half until it holds `need` items (less slack than doubling, still amortized). */
function grow<T extends Int32Array | Uint32Array | Float64Array>(array: T, need: number): T {
  if (need <= array.length) return array;
  let size = Math.ceil(array.length * 1.5);
  while (size < need) size = Math.ceil(size * 1.5);
  const next = new (array.constructor as new (n: number) => T)(size);
  next.set(array);
  return next;
}

/** A {@link TextIndex} in typed arrays (see the module comment). */
export class PostingsIndex implements TextIndex {
  // term table: key (53-bit hash + 1, 0 = empty slot) → term id
  #keys = new Float64Array(1 << 12);
  #ids = new Int32Array(1 << 12);
  #terms = 0;
  // per term id
  #df = new Int32Array(1 << 10);
  #head = new Int32Array(1 << 10);
  #tail = new Int32Array(1 << 10);
  #fill = new Int32Array(1 << 10);
  #capacity = new Int32Array(1 << 10);
  // the block pool; offset 0 is never a block, so 0 means "no next block"
  #pool = new Uint32Array(1 << 14);
  #poolUsed = 1;
  // per document
  #lengths = new Uint32Array(1 << 10);
  #docs = 0;
  #totalLength = 0;
  #scores = new Float64Array(0);

  get size(): number {
    return this.#docs;
  }

  /** Bytes held by the typed arrays: the whole index but a few object headers. */
  get bytes(): number {
    return (
      this.#keys.byteLength +
      this.#ids.byteLength +
      this.#df.byteLength * 5 +
      this.#pool.byteLength +
      this.#lengths.byteLength +
      this.#scores.byteLength
    );
  }

  /** The id of `term`, or -1; with `create`, a new id when absent. */
  #termId(term: string, create: boolean): number {
    const [h1, h2] = hashes(term);
    // 21 bits of one hash and 32 of the other, + 1 so that no key is 0 (the empty slot).
    const key = (h1 & 0x1fffff) * 2 ** 32 + h2 + 1;
    let mask = this.#keys.length - 1;
    let slot = slotOf(key, mask);
    for (;;) {
      const found = this.#keys[slot] as number;
      if (found === key) return this.#ids[slot] as number;
      if (found === 0) break;
      slot = (slot + 1) & mask;
    }
    if (!create) return -1;
    if ((this.#terms + 1) * 2 > this.#keys.length) {
      this.#rehash();
      mask = this.#keys.length - 1;
      slot = slotOf(key, mask);
      while (this.#keys[slot] !== 0) slot = (slot + 1) & mask;
    }
    const id = this.#terms++;
    this.#keys[slot] = key;
    this.#ids[slot] = id;
    if (id >= this.#df.length) {
      this.#df = grow(this.#df, id + 1);
      this.#head = grow(this.#head, id + 1);
      this.#tail = grow(this.#tail, id + 1);
      this.#fill = grow(this.#fill, id + 1);
      this.#capacity = grow(this.#capacity, id + 1);
    }
    return id;
  }

  #rehash(): void {
    const keys = this.#keys;
    const ids = this.#ids;
    this.#keys = new Float64Array(keys.length * 2);
    this.#ids = new Int32Array(keys.length * 2);
    const mask = this.#keys.length - 1;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as number;
      if (key === 0) continue;
      let slot = slotOf(key, mask);
      while (this.#keys[slot] !== 0) slot = (slot + 1) & mask;
      this.#keys[slot] = key;
      this.#ids[slot] = ids[i] as number;
    }
  }

  /** A new block of `capacity` postings; returns its offset. */
  #block(capacity: number): number {
    const at = this.#poolUsed;
    this.#pool = grow(this.#pool, at + capacity + 1);
    this.#pool[at] = 0;
    this.#poolUsed = at + capacity + 1;
    return at;
  }

  add(seq: number, text: string): void {
    if (!Number.isInteger(seq) || seq < 0 || seq > MAX_SEQ) throw new RangeError(`seq ${seq} out of range`);
    const counts = new Map<number, number>();
    const terms = searchTerms(text);
    for (const term of terms) {
      const id = this.#termId(term, true);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    for (const [id, tf] of counts) this.#append(id, seq * 256 + Math.min(tf, 255));
    this.#lengths = grow(this.#lengths, seq + 1);
    this.#lengths[seq] = terms.length;
    this.#totalLength += terms.length;
    this.#docs++;
  }

  #append(id: number, posting: number): void {
    let tail = this.#tail[id] as number;
    let fill = this.#fill[id] as number;
    const capacity = this.#capacity[id] as number;
    if (tail === 0 || fill === capacity) {
      // Block sizes 2, 4, 8, … 256, 256, …: search walks them in the same sequence.
      const next = tail === 0 ? FIRST_BLOCK : Math.min(LAST_BLOCK, capacity * 2);
      const block = this.#block(next);
      if (tail === 0) this.#head[id] = block;
      else this.#pool[tail] = block;
      tail = block;
      fill = 0;
      this.#tail[id] = tail;
      this.#capacity[id] = next;
    }
    this.#pool[tail + 1 + fill] = posting;
    this.#fill[id] = fill + 1;
    this.#df[id] = (this.#df[id] as number) + 1;
  }

  search(terms: readonly string[], limit: number, accept?: (seq: number) => boolean): ScoredSeq[] {
    if (limit <= 0 || this.#docs === 0) return [];
    const ids = [...new Set(terms.map((t) => this.#termId(t, false)).filter((id) => id >= 0))];
    if (ids.length === 0) return [];
    ids.sort((a, b) => (this.#df[a] as number) - (this.#df[b] as number));
    const n = this.#docs;
    const avg = this.#totalLength / n || 1;
    if (this.#scores.length < this.#lengths.length) this.#scores = new Float64Array(this.#lengths.length);
    const scores = this.#scores;
    const touched: number[] = [];
    let read = 0;
    for (const id of ids) {
      const df = this.#df[id] as number;
      if (read > 0 && read + df > MAX_POSTINGS_PER_QUERY) break;
      read += df;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      let block = this.#head[id] as number;
      let left = df;
      let capacity = FIRST_BLOCK;
      while (block !== 0 && left > 0) {
        const count = Math.min(capacity, left);
        for (let i = 0; i < count; i++) {
          const posting = this.#pool[block + 1 + i] as number;
          const seq = Math.floor(posting / 256);
          const tf = posting % 256;
          const norm = K1 * (1 - B + (B * (this.#lengths[seq] as number)) / avg);
          const gain = (idf * tf * (K1 + 1)) / (tf + norm);
          if (scores[seq] === 0) touched.push(seq);
          scores[seq] = (scores[seq] as number) + gain;
        }
        left -= count;
        block = this.#pool[block] as number;
        capacity = Math.min(LAST_BLOCK, capacity * 2);
      }
    }
    const out = topK(accept ? touched.filter(accept) : touched, scores, limit);
    for (const seq of touched) scores[seq] = 0;
    return out;
  }
}

/** The `k` best of `seqs` by score, best first (ties: the later seq first). */
function topK(seqs: readonly number[], scores: Float64Array, k: number): ScoredSeq[] {
  const better = (a: number, b: number) =>
    (scores[a] as number) > (scores[b] as number) || (scores[a] === scores[b] && a > b);
  if (seqs.length <= k) {
    return seqs
      .slice()
      .sort((a, b) => (better(a, b) ? -1 : 1))
      .map((seq) => ({ seq, score: scores[seq] as number }));
  }
  // A min-heap of the best k seen so far: its root is the worst of them.
  const heap: number[] = [];
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < heap.length && better(heap[worst] as number, heap[l] as number)) worst = l;
      if (r < heap.length && better(heap[worst] as number, heap[r] as number)) worst = r;
      if (worst === i) return;
      [heap[i], heap[worst]] = [heap[worst] as number, heap[i] as number];
      i = worst;
    }
  };
  for (const seq of seqs) {
    if (heap.length < k) {
      heap.push(seq);
      let i = heap.length - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!better(heap[p] as number, heap[i] as number)) break;
        [heap[i], heap[p]] = [heap[p] as number, heap[i] as number];
        i = p;
      }
    } else if (better(seq, heap[0] as number)) {
      heap[0] = seq;
      down(0);
    }
  }
  return heap.sort((a, b) => (better(a, b) ? -1 : 1)).map((seq) => ({ seq, score: scores[seq] as number }));
}
