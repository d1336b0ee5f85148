/**
 * Where each line of a file store's log starts, by seq: a growable array of byte offsets kept in
 * a typed array, 4 bytes an entry while the log is under 4 GiB and 8 past it, where a plain array
 * of numbers takes 8 an entry and more as it grows. A store instance keeps one per conversation
 * it has read (issue 32: the heap a conversation holds is its view's, not its history's).
 */

/** Past this offset, starts no longer fit in 32 bits: the array switches to 64-bit floats. */
const MAX_U32 = 0xffff_ffff;

export class LineStarts {
  #starts: Uint32Array | Float64Array;
  #length = 0;

  constructor(capacity = 0) {
    this.#starts = new Uint32Array(capacity);
  }

  /** The starts given, in order. */
  static of(starts: Iterable<number>): LineStarts {
    const out = new LineStarts();
    for (const start of starts) out.push(start);
    return out;
  }

  get length(): number {
    return this.#length;
  }

  /** Bytes of memory the starts take, room for more included. */
  get byteLength(): number {
    return this.#starts.byteLength;
  }

  /** The start of entry `i`; undefined past the end (or before the start). */
  get(i: number): number | undefined {
    return i >= 0 && i < this.#length ? (this.#starts[i] as number) : undefined;
  }

  /** The last entry's start; undefined when there is none. */
  last(): number | undefined {
    return this.get(this.#length - 1);
  }

  push(start: number): void {
    if (start > MAX_U32 && this.#starts instanceof Uint32Array) this.#widen();
    if (this.#length === this.#starts.length) this.#resize(Math.max(16, Math.ceil(this.#length * 1.5)));
    this.#starts[this.#length++] = start;
  }

  /** Adds every start of `more`, after this one's. */
  append(more: LineStarts): void {
    for (let i = 0; i < more.#length; i++) this.push(more.#starts[i] as number);
  }

  /** Keeps the first `length` starts only. */
  truncate(length: number): void {
    this.#length = Math.min(this.#length, Math.max(0, length));
  }

  /** Lets go of the room past the last start (after an index of a whole log is made). */
  trim(): this {
    if (this.#starts.length > this.#length) this.#resize(this.#length);
    return this;
  }

  toArray(): number[] {
    return Array.from(this.#starts.subarray(0, this.#length));
  }

  /** Starts `from` and on as 8-byte little-endian doubles (the layout of `NAME.idx`). */
  doublesFrom(from: number): Buffer {
    const buf = Buffer.allocUnsafe(8 * Math.max(0, this.#length - from));
    for (let i = from; i < this.#length; i++) buf.writeDoubleLE(this.#starts[i] as number, 8 * (i - from));
    return buf;
  }

  #resize(capacity: number): void {
    const next = this.#starts instanceof Uint32Array ? new Uint32Array(capacity) : new Float64Array(capacity);
    next.set(this.#starts.subarray(0, this.#length));
    this.#starts = next;
  }

  #widen(): void {
    const next = new Float64Array(Math.max(16, this.#starts.length));
    next.set(this.#starts.subarray(0, this.#length));
    this.#starts = next;
  }
}
