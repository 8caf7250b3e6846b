/**
 * A vocabulary in sorted order, for the prefix look-ups of short queries without walking a
 * radix tree of `Map`s: the terms under a prefix are one range, found by binary search (about a
 * fifth of the radix tree's instructions per look-up at 200,000 documents). Terms are
 * identified by their index in the `terms` array given.
 */
export class SortedTerms {
  /** Ids of the terms covered (those below `count`), in sorted order of their terms. */
  private readonly ids: Int32Array;

  /** Sorts terms `0 … count − 1` of `terms`, or merges the newer ones into `previous`. */
  constructor(
    private readonly terms: readonly string[],
    readonly count: number,
    previous?: SortedTerms,
  ) {
    const from = previous && previous.terms === terms ? previous.count : 0;
    const added = Array.from({ length: count - from }, (_v, i) => from + i).sort((a, b) => compare(terms[a], terms[b]));
    const old = from > 0 ? previous!.ids : new Int32Array(0);
    const ids = new Int32Array(count);
    let a = 0;
    let b = 0;
    for (let i = 0; i < count; i++) ids[i] = b >= added.length || (a < old.length && compare(terms[old[a]], terms[added[b]]) <= 0) ? old[a++] : added[b++];
    this.ids = ids;
  }

  /** Sorted positions `[lo, hi)` of the terms that start with `prefix` (`idAt` gives their ids). */
  prefixRange(prefix: string): [number, number] {
    const lo = this.lowerBound(prefix);
    let hi = lo;
    // The range ends at the first term no longer starting with `prefix`: gallop, then bisect.
    let step = 1;
    while (hi + step <= this.count && this.terms[this.ids[hi + step - 1]].startsWith(prefix)) {
      hi += step;
      step *= 2;
    }
    let end = Math.min(this.count, hi + step - 1);
    while (hi < end) {
      const mid = (hi + end) >>> 1;
      if (this.terms[this.ids[mid]].startsWith(prefix)) hi = mid + 1;
      else end = mid;
    }
    return [lo, hi];
  }

  /** Id of the term at sorted position `i`. */
  idAt(i: number): number {
    return this.ids[i];
  }

  /** First sorted position whose term is ≥ `key`. */
  private lowerBound(key: string): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compare(this.terms[this.ids[mid]], key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** Code-unit order (what `startsWith` ranges need; not the locale's). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
