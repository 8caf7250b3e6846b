/** The typed arrays a pool can hold. */
type PooledArray = Int32Array | Uint16Array | Float64Array;

/**
 * Typed arrays of one kind lent and taken back, so that memory a query's term postings used at
 * one index version serves the next version's instead of fresh memory. While writes come in
 * (a `delete_where` of 100,000 at 1M documents: a new version after every slice), every query
 * made its terms' live postings and values again, ~6 MB of new typed arrays a query at 1M; V8
 * counts their bytes as external memory and starts a full garbage collection of the whole
 * heap every 64 MB of it ("external memory pressure": ~30 mark-compacts of a ~0.8 GB heap
 * during one such delete), whose pauses were the longest turns of the event loop (issue 39).
 * Fresh memory also costs its page faults (~20 µs a page on the machines measured).
 *
 * `take(n)` lends a view of `n` elements (contents unspecified) over the smallest free array of
 * at least `n` and at most twice that, else a new array of `n`; `give` takes back what `take`
 * lent (anything else, or an array given twice, is ignored), up to `budget` bytes of free arrays.
 * The caller gives an array back only once nothing reads it any more.
 */
export class ArrayPool<A extends PooledArray> {
  // Free arrays (each a view of its whole buffer), by length ascending.
  private readonly free: A[] = [];
  private freeBytes = 0;
  // The buffers lent and not given back: weakly, so that one never given back is collected.
  private readonly lent = new WeakSet<ArrayBufferLike>();

  /**
   * @param make a new array of `n` elements
   * @param budget bytes of free arrays kept (may be changed later: arrays already free stay
   *   until the next `give`)
   */
  constructor(
    private readonly make: (n: number) => A,
    public budget: number,
  ) {}

  /** Bytes of free arrays held. */
  get bytes(): number {
    return this.freeBytes;
  }

  /** An array of `n` elements, its contents unspecified. */
  take(n: number): A {
    const { free } = this;
    // The first free array of at least `n` (binary search), if it is at most twice as long.
    let lo = 0;
    let hi = free.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (free[mid].length < n) lo = mid + 1;
      else hi = mid;
    }
    let whole: A;
    if (lo < free.length && free[lo].length <= 2 * n) {
      whole = free[lo];
      free.splice(lo, 1);
      this.freeBytes -= whole.byteLength;
    } else whole = this.make(n);
    this.lent.add(whole.buffer);
    return (whole.length === n ? whole : whole.subarray(0, n)) as A;
  }

  /** Takes back an array `take` lent (ignored otherwise); kept while the free arrays fit the budget, the smallest dropped first. */
  give(a: A | null | undefined): void {
    if (!a || !this.lent.has(a.buffer)) return;
    this.lent.delete(a.buffer);
    const whole = (a.byteOffset === 0 && a.byteLength === a.buffer.byteLength ? a : wholeOf(a)) as A;
    const { free } = this;
    while (this.freeBytes + whole.byteLength > this.budget && free.length && free[0].length < whole.length) {
      this.freeBytes -= free[0].byteLength;
      free.shift();
    }
    if (this.freeBytes + whole.byteLength > this.budget) return;
    let at = 0;
    while (at < free.length && free[at].length < whole.length) at++;
    free.splice(at, 0, whole);
    this.freeBytes += whole.byteLength;
  }

  /** Drops every free array. */
  clear(): void {
    this.free.length = 0;
    this.freeBytes = 0;
  }
}

/**
 * A view of the whole of `a`'s buffer, of `a`'s kind, of a fixed length (over a growable buffer a
 * view without one tracks the buffer's length).
 */
function wholeOf<A extends PooledArray>(a: A): A {
  const make = a.constructor as new (b: ArrayBufferLike, at: number, n: number) => A;
  return new make(a.buffer, 0, a.buffer.byteLength / a.BYTES_PER_ELEMENT);
}
