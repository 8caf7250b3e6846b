import { atOnce } from '../../lib/yield-to-loop';

/**
 * A vocabulary in sorted order, for the prefix look-ups of short queries without walking a
 * radix tree of `Map`s: the terms under a prefix are one range, found by binary search (about a
 * fifth of MiniSearch's radix tree's instructions per look-up at 200,000 documents). Terms are
 * identified by their index in the `terms` array given. It is built (and newer terms merged in)
 * a step at a time (`build`), so a background build never holds the event loop for a whole sort.
 */
export class SortedTerms {
  private constructor(
    private readonly terms: readonly string[],
    /** Terms `0 … count − 1` are covered. */
    readonly count: number,
    /** Ids of the terms covered, in sorted order of their terms. */
    private readonly ids: Int32Array,
  ) {}

  /**
   * Terms `0 … count − 1` of `terms` sorted, or the newer ones sorted and merged into
   * `previous`, a step of at most `SORT_STEP` terms at a time (a background build yields between
   * steps; no step is a whole sort of the vocabulary).
   */
  static *build(terms: readonly string[], count: number, previous?: SortedTerms): Generator<void, SortedTerms> {
    const from = previous && previous.terms === terms ? Math.min(previous.count, count) : 0;
    const fresh = new Int32Array(count - from);
    for (let i = 0; i < fresh.length; i++) fresh[i] = from + i;
    const added = yield* sortIds(terms, fresh);
    if (from === 0) return new SortedTerms(terms, count, added);
    const ids = new Int32Array(count);
    yield* mergeSteps(terms, previous!.ids, 0, from, added, 0, added.length, ids, 0, { n: 0 });
    return new SortedTerms(terms, count, ids);
  }

  /** `build` at once (tests, small vocabularies). */
  static of(terms: readonly string[], count = terms.length, previous?: SortedTerms): SortedTerms {
    return atOnce(SortedTerms.build(terms, count, previous));
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

  /** Bytes of its array. */
  get bytes(): number {
    return this.ids.byteLength;
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

/** Terms compared or moved per step of a sort or merge. */
const SORT_STEP = 4096;
/** Terms of the runs sorted in one step each before the merges. */
const RUN = 256;

/** `ids` sorted by their terms (runs sorted a step each, then merged bottom-up in steps); may reuse `ids`. */
function* sortIds(terms: readonly string[], ids: Int32Array): Generator<void, Int32Array> {
  const n = ids.length;
  const byTerm = (a: number, b: number) => compare(terms[a], terms[b]);
  for (let i = 0; i < n; i += RUN) {
    ids.subarray(i, Math.min(n, i + RUN)).sort(byTerm);
    yield;
  }
  let src: Int32Array = ids;
  let dst: Int32Array = new Int32Array(n);
  const done = { n: 0 };
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(n, lo + width);
      const hi = Math.min(n, lo + 2 * width);
      yield* mergeSteps(terms, src, lo, mid, src, mid, hi, dst, lo, done);
    }
    [src, dst] = [dst, src];
  }
  return src;
}

/**
 * Merges sorted runs `a[aLo, aHi)` and `b[bLo, bHi)` into `out` from `at` (ties: `a` first),
 * yielding each time `done.n` (terms placed, counted across calls) reaches `SORT_STEP`.
 */
function* mergeSteps(
  terms: readonly string[],
  a: Int32Array,
  aLo: number,
  aHi: number,
  b: Int32Array,
  bLo: number,
  bHi: number,
  out: Int32Array,
  at: number,
  done: { n: number },
): Generator<void> {
  let i = aLo;
  let j = bLo;
  while (i < aHi || j < bHi) {
    out[at++] = j >= bHi || (i < aHi && compare(terms[a[i]], terms[b[j]]) <= 0) ? a[i++] : b[j++];
    if (++done.n === SORT_STEP) {
      done.n = 0;
      yield;
    }
  }
}
