import { f64, i32, u16, u8 } from '../../lib/untracked-arrays';
import type { ScoreCursor } from '../index/cursor';

/** The k best values offered with their documents, in a min-heap by value (a scratch reused). */
export class TopPairs {
  size = 0;
  private k = 0;
  vals = f64(0);
  docs = i32(0);

  reset(k: number): this {
    if (this.vals.length < k) {
      this.vals = f64(k);
      this.docs = i32(k);
    }
    this.k = k;
    this.size = 0;
    return this;
  }

  /** Offers `v` at `doc`; returns the least value kept once k are (below it, offers change nothing), else −∞. */
  add(v: number, doc: number): number {
    const { vals: h, docs: d, k } = this;
    if (this.size < k) {
      let at = this.size++;
      while (at > 0) {
        const parent = (at - 1) >> 1;
        if (h[parent] <= v) break;
        h[at] = h[parent];
        d[at] = d[parent];
        at = parent;
      }
      h[at] = v;
      d[at] = doc;
    } else if (v > h[0]) {
      let at = 0;
      for (;;) {
        const l = 2 * at + 1;
        if (l >= k) break;
        const r = l + 1;
        const c = r < k && h[r] < h[l] ? r : l;
        if (h[c] >= v) break;
        h[at] = h[c];
        d[at] = d[c];
        at = c;
      }
      h[at] = v;
      d[at] = doc;
    }
    return this.size < k ? -Infinity : h[0];
  }

  /** The k-th best value (−∞ with fewer), lowered by a relative 1e-9 (see `knownFloor`). */
  kth(): number {
    return this.size < this.k ? -Infinity : this.vals[0] * (1 - 1e-9);
  }
}

/**
 * The accumulator scorers' reusable arrays (`accumulatedTopK`, `boundedTopK`), grown as needed
 * and all zero between calls: owned by whoever runs queries (an `EmbeddedIndex` keeps one), not
 * by the scorers' modules. One query uses it at a time.
 */
export class TopKScratch {
  /** Per document, its summed score so far. */
  score = f64(0);
  /** Per document, the distinct terms it met (coordination). */
  distinct = u16(0);
  /** Per document, met already (`accumulatedTopK`) or its candidate state (`boundedTopK`). */
  seen = u8(0);
  /** Documents met (`accumulatedTopK`) or the candidates (`boundedTopK`). */
  docs = i32(0);
  /** `boundedTopK`'s best partial sums. */
  readonly top = new TopPairs();
  private aliveWords = i32(0);
  // The scorers' small arrays (per cursor, per candidate left), by name, each over a buffer kept.
  private readonly doubles = new Map<string, Float64Array>();
  private readonly ints = new Map<string, Int32Array>();
  private readonly bytes = new Map<string, Uint8Array>();

  /** Grows the accumulators to the cursors' documents and postings. */
  grow(cursors: readonly ScoreCursor[]): void {
    let size = 0;
    let postings = 0;
    for (const { docs } of cursors) {
      if (docs.length > 0) size = Math.max(size, docs[docs.length - 1] + 1);
      postings += docs.length;
    }
    this.reserve(size);
    if (this.docs.length < postings) {
      this.docs = i32(Math.max(postings, this.docs.length * 2));
    }
  }

  /**
   * Grows the per-document accumulators to at least `docs` documents (an index's id limit, ahead
   * of a query), an eighth more than they were when they must grow. Grown to each call's last
   * document only, a cold query's windows (which go through the documents in increasing ranges)
   * made a new set per window, and each query whose terms reached a little further one more: in
   * a 1M profile the first queries after a build spent 8,984 samples (14.6 s of wall time at load
   * 10-13) making these 11 MB arrays (issue 40, BENCHMARKS.md rm3speed); an index that grows by a
   * write at a time would make them again at every query without the eighth.
   */
  reserve(docs: number): void {
    if (this.score.length >= docs) return;
    const size = Math.max(docs, this.score.length + (this.score.length >> 3));
    this.score = f64(size);
    this.distinct = u16(size);
    this.seen = u8(size);
  }

  /**
   * A zeroed `Float64Array` of `n` elements named `name` (a scorer's array per cursor, or per
   * candidate left), a view of a buffer kept under that name and grown as needed: valid until
   * `name` is asked for again. Fresh arrays were ~40 backing stores a full query at 1M documents
   * (one set a window), each freed by a collection.
   */
  f64(name: string, n: number): Float64Array {
    return kept(this.doubles, f64, name, n);
  }

  /**
   * `f64`'s array, not zeroed: for one whose every element the caller writes before reading it
   * (`boundedTopK`'s rows of region bounds, ~150k elements a full query at 1M).
   */
  f64Unzeroed(name: string, n: number): Float64Array {
    return kept(this.doubles, f64, name, n, false);
  }

  /** `f64`'s `Int32Array`. */
  i32(name: string, n: number): Int32Array {
    return kept(this.ints, i32, name, n);
  }

  /** `f64`'s `Uint8Array`. */
  u8(name: string, n: number): Uint8Array {
    return kept(this.bytes, u8, name, n);
  }

  /** The candidates' bitmap of `boundedTopK`, all zero, for documents up to `hi`. */
  aliveBits(hi: number): Int32Array {
    const words = (hi >>> 5) + 1;
    if (this.aliveWords.length < words) this.aliveWords = i32(Math.max(words, this.aliveWords.length * 2));
    return this.aliveWords;
  }
}

/** The least length of `TopKScratch`'s small arrays (an expanded query has ~45 cursors). */
const SMALL = 64;

/**
 * The first `n` elements, set to 0 unless `zeroed` is false, of the array kept in `arrays` under
 * `name`: made (`make`) or replaced by one of at least twice its length when shorter than `n`,
 * never shorter than `SMALL`.
 */
function kept<A extends Float64Array | Int32Array | Uint8Array>(
  arrays: Map<string, A>,
  make: (n: number) => A,
  name: string,
  n: number,
  zeroed = true,
): A {
  let a = arrays.get(name);
  if (!a || a.length < n) arrays.set(name, (a = make(Math.max(n, 2 * (a?.length ?? 0), SMALL))));
  const v = (a.length === n ? a : a.subarray(0, n)) as A;
  if (zeroed) v.fill(0);
  return v;
}
