/**
 * Where each line of a file store's log starts, by seq: byte offsets kept in pages of typed
 * arrays, 4 bytes an entry while the log is under 4 GiB and 8 past it, where a plain array of
 * numbers takes 8 an entry and more as it grows. A store instance keeps one per conversation it
 * has read (issue 32: the heap a conversation holds is its view's, not its history's).
 *
 * Starts read from `NAME.idx` (file-index.ts) are loaded a page at a time, when a read needs
 * them (`load`): a worker serving the last rows of a long log reads the pages of the rows it
 * reads and the last one, not the whole index. Each page is checked as it is loaded (whole
 * numbers, rising, inside the log, and in order with the pages beside it already loaded).
 */

/** Past this offset, starts no longer fit in 32 bits: the page holding it switches to 64-bit floats. */
const MAX_U32 = 0xffff_ffff;
const PAGE_BITS = 12;
/** Starts a page holds. */
export const PAGE_STARTS = 1 << PAGE_BITS;
const PAGE_MASK = PAGE_STARTS - 1;

type Page = Uint32Array | Float64Array;

/** Reads `count` starts from the `from`th on, as doubles; undefined when they cannot be read. */
export type StartsSource = (from: number, count: number) => Promise<Float64Array | undefined>;

/** A page of starts from `NAME.idx` that could not be read or does not hold together. */
export class StartsUnreadable extends Error {
  constructor(page: number) {
    super(`the log index's page ${page} could not be read or does not hold together`);
    this.name = 'StartsUnreadable';
  }
}

export class LineStarts {
  /** Page k holds the starts of seqs k × PAGE_STARTS on; undefined: not loaded (see `load`). */
  #pages: Array<Page | undefined> = [];
  #length = 0;
  /** Where pages not loaded are read from, and the end of the log every start lies before. */
  #source: { read: StartsSource; end: number } | undefined;

  /** The starts given, in order. */
  static of(starts: Iterable<number>): LineStarts {
    const out = new LineStarts();
    for (const start of starts) out.push(start);
    return out;
  }

  /**
   * `count` starts of a log ending at `end`, read from `read` a page at a time as `load` asks
   * for them. The last page is loaded here (the last start and every append need it). Undefined
   * when it cannot be read or does not hold together.
   */
  static async paged(count: number, end: number, read: StartsSource): Promise<LineStarts | undefined> {
    const out = new LineStarts();
    out.#length = count;
    out.#pages = new Array<Page | undefined>(Math.ceil(count / PAGE_STARTS));
    out.#source = { read, end };
    try {
      if (count > 0) await out.load(count - 1, count - 1);
    } catch (error) {
      if (error instanceof StartsUnreadable) return undefined;
      throw error;
    }
    return out;
  }

  get length(): number {
    return this.#length;
  }

  /** Bytes of memory the starts loaded take, room for more included. */
  get byteLength(): number {
    let bytes = 0;
    for (const page of this.#pages) bytes += page?.byteLength ?? 0;
    return bytes;
  }

  /**
   * Loads the pages that hold the starts of seqs `from` to `to` (both included, clamped to the
   * starts there are) that are not loaded yet. Rejects with `StartsUnreadable` when one cannot
   * be read or does not hold together.
   */
  async load(from: number, to: number): Promise<void> {
    const last = Math.min(to, this.#length - 1);
    for (let p = Math.max(0, from) >> PAGE_BITS; p <= last >> PAGE_BITS; p++) {
      if (this.#pages[p] !== undefined) continue;
      const source = this.#source;
      const first = p * PAGE_STARTS;
      const doubles = source && (await source.read(first, Math.min(PAGE_STARTS, this.#length - first)));
      if (!doubles || !this.#fits(p, doubles, source.end)) throw new StartsUnreadable(p);
      this.#pages[p] = fitted(doubles);
    }
  }

  /** Whether every start of the seqs from `from` to `to` is loaded. */
  loaded(from: number, to: number): boolean {
    const last = Math.min(to, this.#length - 1);
    for (let p = Math.max(0, from) >> PAGE_BITS; p <= last >> PAGE_BITS; p++) {
      if (this.#pages[p] === undefined) return false;
    }
    return true;
  }

  /**
   * The start of entry `i`; undefined past the end (or before the start). Throws when its page
   * is not loaded: a caller loads what it reads first.
   */
  get(i: number): number | undefined {
    if (!(i >= 0 && i < this.#length)) return undefined;
    const page = this.#pages[i >> PAGE_BITS];
    if (page === undefined) throw new Error(`line start ${i} read before its page was loaded`);
    return page[i & PAGE_MASK] as number;
  }

  /** The last entry's start; undefined when there is none. */
  last(): number | undefined {
    return this.get(this.#length - 1);
  }

  push(start: number): void {
    const p = this.#length >> PAGE_BITS;
    const at = this.#length & PAGE_MASK;
    let page = this.#pages[p];
    if (page === undefined) {
      if (at !== 0) throw new Error(`line start ${this.#length} pushed onto a page not loaded`);
      // Past the first page the log is long: a new page is made whole at once.
      page = new Uint32Array(p === 0 ? 16 : PAGE_STARTS);
    }
    if (start > MAX_U32 && page instanceof Uint32Array) page = resized(page, page.length, true);
    if (at === page.length) page = resized(page, Math.min(PAGE_STARTS, Math.ceil(page.length * 1.5)));
    page[at] = start;
    this.#pages[p] = page;
    this.#length++;
  }

  /** Adds every start of `more` (loaded whole), after this one's. */
  append(more: LineStarts): void {
    for (let i = 0; i < more.#length; i++) this.push(more.get(i) as number);
  }

  /** Keeps the first `length` starts only. */
  truncate(length: number): void {
    this.#length = Math.min(this.#length, Math.max(0, length));
    this.#pages.length = Math.ceil(this.#length / PAGE_STARTS);
  }

  /** Lets go of the room past the last start (after an index of a whole log is made). */
  trim(): this {
    const p = this.#pages.length - 1;
    const page = this.#pages[p];
    const fill = this.#length - p * PAGE_STARTS;
    if (page !== undefined && page.length > fill) this.#pages[p] = resized(page, fill);
    return this;
  }

  /** Every start (all loaded). */
  toArray(): number[] {
    return Array.from({ length: this.#length }, (_, i) => this.get(i) as number);
  }

  /** Starts `from` and on (all loaded) as 8-byte little-endian doubles (the layout of `NAME.idx`). */
  doublesFrom(from: number): Buffer {
    const buf = Buffer.allocUnsafe(8 * Math.max(0, this.#length - from));
    for (let i = from; i < this.#length; i++) buf.writeDoubleLE(this.get(i) as number, 8 * (i - from));
    return buf;
  }

  /** Whether `doubles` may be page `p`: whole numbers rising inside the log, in order with the pages beside it. */
  #fits(p: number, doubles: Float64Array, end: number): boolean {
    const first = p * PAGE_STARTS;
    if (doubles.length !== Math.min(PAGE_STARTS, this.#length - first)) return false;
    const before = this.#pages[p - 1];
    let previous = p === 0 ? -1 : before === undefined ? -1 : (before[PAGE_MASK] as number);
    if (p === 0 && doubles[0] !== 0) return false;
    for (let i = 0; i < doubles.length; i++) {
      const start = doubles[i] as number;
      if (!(start > previous) || !Number.isSafeInteger(start) || start >= end) return false;
      previous = start;
    }
    const after = this.#pages[p + 1];
    return after === undefined || previous < (after[0] as number);
  }
}

/** Page `doubles` as kept: 32 bits a start where they all fit. */
function fitted(doubles: Float64Array): Page {
  for (let i = 0; i < doubles.length; i++) if ((doubles[i] as number) > MAX_U32) return doubles;
  return Uint32Array.from(doubles);
}

/** `page` copied into one of `capacity` starts (64-bit floats when `wide` or it already is). */
function resized(page: Page, capacity: number, wide = false): Page {
  const next = wide || page instanceof Float64Array ? new Float64Array(capacity) : new Uint32Array(capacity);
  next.set(page.subarray(0, Math.min(capacity, page.length)));
  return next;
}
