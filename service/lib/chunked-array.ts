/** Items a chunk of a `ChunkedArray` holds. */
const CHUNK = 65_536;

/**
 * A list in chunks of `CHUNK` items: `push` never copies more than a chunk. A JS array grows by
 * half when full and copies every element in that one call (with a write barrier each): at
 * 869,461 ids 35 ms of CPU in one turn of the event loop, the longest of the vector index's adds
 * at 1M once its rows no longer went to the graph's worker as copies (issue 41).
 */
export class ChunkedArray<T> {
  private readonly chunks: T[][] = [];
  private count = 0;

  /** `chunk`: items a chunk holds (tests use small ones). */
  constructor(private readonly chunk = CHUNK) {}

  /** Items held. */
  get length(): number {
    return this.count;
  }

  /** Appends `item`; its index. */
  push(item: T): number {
    if (this.count % this.chunk === 0) this.chunks.push([]);
    this.chunks[this.chunks.length - 1].push(item);
    return this.count++;
  }

  /** The item at `i` (0 ≤ i < length). */
  get(i: number): T {
    return this.chunks[Math.floor(i / this.chunk)][i % this.chunk];
  }

  /** Replaces the item at `i` (0 ≤ i < length). */
  set(i: number, item: T): void {
    this.chunks[Math.floor(i / this.chunk)][i % this.chunk] = item;
  }

  /** The items as one array (a copy). */
  toArray(): T[] {
    return this.chunks.flat();
  }

  /** A list of `items`, in order. */
  static from<T>(items: Iterable<T>): ChunkedArray<T> {
    const out = new ChunkedArray<T>();
    for (const item of items) out.push(item);
    return out;
  }
}
