/** Numbers a chunk of `ChunkedNumbers` holds, as a power of two (65,536: 256 KiB of 32-bit numbers). */
const CHUNK_BITS = 16;
const CHUNK = 1 << CHUNK_BITS;
const MASK = CHUNK - 1;

/** The typed arrays `ChunkedNumbers` is made of. */
export type NumberArray = Int32Array<ArrayBuffer> | Uint32Array<ArrayBuffer>;

/**
 * A typed array that grows in chunks of `CHUNK` numbers, after an optional head of any length
 * (an array taken whole, e.g. from a persisted file): growing never copies what is held, and
 * allocates one chunk at a time. A typed array that doubles copied its numbers into memory the
 * process had never touched, and on these virtual machines each new page costs a fault of several
 * µs: four arrays of the vector index doubling at 524,288 items took ~40 ms of CPU in one turn of
 * the event loop (issue 41; the rows themselves are in blocks, row-blocks.ts).
 */
export class ChunkedNumbers<A extends NumberArray> {
  private readonly chunks: A[] = [];
  private readonly headLength: number;

  /** `make(n)`: a zeroed array of `n` numbers of the kind held; `head`: the first numbers, taken (not copied). */
  constructor(
    private readonly make: (n: number) => A,
    private readonly head: A = make(0),
  ) {
    this.headLength = head.length;
  }

  /** Numbers that can be read and written now (`reserve` makes more). */
  get capacity(): number {
    return this.headLength + this.chunks.length * CHUNK;
  }

  /** Makes indexes below `n` usable (new ones read 0), a chunk at a time. */
  reserve(n: number): void {
    while (this.capacity < n) this.chunks.push(this.make(CHUNK));
  }

  /** The number at `i` (0 ≤ i < capacity). */
  get(i: number): number {
    if (i < this.headLength) return this.head[i];
    const j = i - this.headLength;
    return this.chunks[j >>> CHUNK_BITS][j & MASK];
  }

  /** Writes `value` at `i` (0 ≤ i < capacity). */
  set(i: number, value: number): void {
    if (i < this.headLength) this.head[i] = value;
    else {
      const j = i - this.headLength;
      this.chunks[j >>> CHUNK_BITS][j & MASK] = value;
    }
  }

  /** The first `n` numbers (n ≤ capacity) as one array, a copy. */
  slice(n: number): A {
    const out = this.make(n);
    out.set(this.head.subarray(0, Math.min(n, this.headLength)));
    for (let c = 0, at = this.headLength; at < n; c++, at += CHUNK)
      out.set(this.chunks[c].subarray(0, Math.min(CHUNK, n - at)), at);
    return out;
  }
}
