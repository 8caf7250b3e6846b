/** Items a chunk of a `ChunkedList` holds, as a power of two (65,536: 256 KiB of 32-bit numbers). */
const CHUNK_BITS = 16;
export const CHUNK = 1 << CHUNK_BITS;
const MASK = CHUNK - 1;

/** What a chunk is: items by index (a JS array, a typed array). */
export interface Chunk<T> {
  [i: number]: T;
  readonly length: number;
}

/** How a `ChunkedList` makes its chunks and joins them. */
export interface ChunkMaker<T, C extends Chunk<T>> {
  /** A new chunk that takes `CHUNK` items written in order (a JS array may start empty and grow). */
  chunk(): C;
  /** The `n` items of `parts` (each full but the last) in order, as one array: a copy. */
  join(parts: readonly C[], n: number): C;
}

/** Chunks that are JS arrays, for any items. */
export function arrayChunks<T>(): ChunkMaker<T, T[]> {
  return {
    chunk: () => [],
    join: (parts) => parts.flat() as T[],
  };
}

/** The typed arrays a `ChunkedList` of numbers may be made of. */
export type NumberArray = Int32Array<ArrayBuffer> | Uint32Array<ArrayBuffer>;

/** Chunks that are typed arrays made by `make(n)` (zeroed, `n` numbers). */
export function typedChunks<A extends NumberArray>(make: (n: number) => A): ChunkMaker<number, A> {
  return {
    chunk: () => make(CHUNK),
    join: (parts, n) => {
      const out = make(n);
      for (let p = 0, at = 0; at < n; at += parts[p++].length) out.set(parts[p].subarray(0, n - at), at);
      return out;
    },
  };
}

/**
 * A list that grows in chunks of `CHUNK` items, after an optional head of any length (an array
 * taken whole, e.g. from a persisted file): growing never copies what is held, and allocates one
 * chunk at a time. Issue 41 found both growths that this replaces in the vector index's adds at 1M:
 * a JS array grows by half when full and copies every element in that one call (with a write
 * barrier each), 35 ms of CPU in one turn at 869,461 ids; a typed array that doubles copies its
 * numbers into memory the process had never touched, where each new page costs a fault of
 * several µs on these virtual machines, and four of them doubling at 524,288 items took ~40 ms.
 */
export class ChunkedList<T, C extends Chunk<T>> {
  private readonly chunks: C[] = [];
  private readonly headLength: number;
  private count: number;

  /** `maker`: the chunks' kind; `head`: the first items, taken (not copied). */
  constructor(
    private readonly maker: ChunkMaker<T, C>,
    private readonly head: C = maker.join([], 0),
  ) {
    this.headLength = head.length;
    this.count = head.length;
  }

  /** Items held. */
  get length(): number {
    return this.count;
  }

  /** Appends `item`; its index. */
  push(item: T): number {
    const j = this.count - this.headLength;
    if ((j & MASK) === 0) this.chunks.push(this.maker.chunk());
    this.chunks[j >>> CHUNK_BITS][j & MASK] = item;
    return this.count++;
  }

  /** The item at `i` (0 ≤ i < length). */
  get(i: number): T {
    if (i < this.headLength) return this.head[i];
    const j = i - this.headLength;
    return this.chunks[j >>> CHUNK_BITS][j & MASK];
  }

  /** Replaces the item at `i` (0 ≤ i < length). */
  set(i: number, item: T): void {
    if (i < this.headLength) this.head[i] = item;
    else {
      const j = i - this.headLength;
      this.chunks[j >>> CHUNK_BITS][j & MASK] = item;
    }
  }

  /** The items as one array of the chunks' kind: a copy. */
  toArray(): C {
    return this.maker.join([this.head, ...this.chunks], this.count);
  }
}
