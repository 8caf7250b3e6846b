import { BoundedDistance } from './edit-distance';
import { atOnce } from '../../lib/yield-to-loop';

/** Gram length: trigrams of the term padded with two units on each side. */
const Q = 3;
const PAD = 0;
/**
 * The count bound left after the longest trigram lists are dropped from a look-up: lower means
 * fewer postings counted and more candidates checked. At 200,000 documents (49k terms, the
 * 2-word queries' terms) 3 was fastest: 1 → 2.2×, 2 → 1.1×, 4 → 1.6× its CPU time.
 */
const KEPT_BOUND = 3;
/** Terms handled per step of a build, between which a background build may yield. */
const BUILD_STEP_TERMS = 2048;

/**
 * Near spellings of a vocabulary, in typed arrays: the terms in order of length (then id), and a
 * trigram index over them (per hashed trigram of the padded term, the ranks of the terms holding
 * it, ascending). A term within `k` edits of a query shares at least
 * `max(|term|, |query|) + Q − 1 − k·Q` of the query's padded trigrams (the q-gram lemma, counted
 * with repeats); only the terms of lengths within `k` of the query's that reach that count are
 * checked with `BoundedDistance`. Trigrams whose hashes collide share a list: that only adds
 * candidates, never loses one. Where the bound is 0 or less (queries of a few letters at a
 * large distance), every term of those lengths is checked. So the terms found are exactly those
 * within `k` edits, at their exact distance: MiniSearch's `fuzzyGet`.
 */
export class FuzzyIndex {
  /** Term ids by rank (rank order: by length, then id). */
  private byRank = new Int32Array(0);
  /** First rank of each length, up to the longest + 1. */
  private lengthStart = new Int32Array(1);
  private gramStart = new Int32Array(1);
  private postings = new Int32Array(0);
  private shift = 32;
  // Scratch of a look-up: shared trigrams per rank (all zero between look-ups) and the ranks met.
  private counts = new Uint16Array(0);
  private touched = new Int32Array(0);

  private constructor(
    private readonly terms: readonly string[],
    /** Terms `0 … count − 1` are covered. */
    readonly count: number,
  ) {}

  /** The index of terms `0 … count − 1` of `terms`, built a step at a time (each step a few milliseconds). */
  static *build(terms: readonly string[], count: number): Generator<void, FuzzyIndex> {
    const x = new FuzzyIndex(terms, count);
    const lengths = new Uint32Array(count);
    let longest = 0;
    for (let t = 0; t < count; t++) {
      lengths[t] = terms[t].length;
      longest = Math.max(longest, lengths[t]);
      if (t % BUILD_STEP_TERMS === BUILD_STEP_TERMS - 1) yield;
    }
    const lengthStart = new Int32Array(longest + 2);
    for (let t = 0; t < count; t++) lengthStart[lengths[t] + 1]++;
    for (let l = 0; l <= longest; l++) lengthStart[l + 1] += lengthStart[l];
    const fill = lengthStart.slice();
    const byRank = new Int32Array(count);
    for (let t = 0; t < count; t++) byRank[fill[lengths[t]]++] = t;
    yield;
    // Buckets: a power of two, about one per term (the distinct trigrams are fewer than the terms).
    const bits = Math.max(10, Math.min(20, Math.ceil(Math.log2(Math.max(1, count)))));
    const mask = (1 << bits) - 1;
    const shift = 32 - bits;
    const gramStart = new Int32Array(mask + 2);
    for (let r = 0; r < count; r++) {
      forGrams(terms[byRank[r]], shift, (h) => gramStart[h + 1]++);
      if (r % BUILD_STEP_TERMS === BUILD_STEP_TERMS - 1) yield;
    }
    for (let h = 0; h <= mask; h++) gramStart[h + 1] += gramStart[h];
    const at = gramStart.slice(0, mask + 1);
    const postings = new Int32Array(gramStart[mask + 1]);
    yield;
    for (let r = 0; r < count; r++) {
      forGrams(terms[byRank[r]], shift, (h) => (postings[at[h]++] = r));
      if (r % BUILD_STEP_TERMS === BUILD_STEP_TERMS - 1) yield;
    }
    Object.assign(x, {
      byRank,
      lengthStart,
      gramStart,
      postings,
      shift,
      counts: new Uint16Array(count),
      touched: new Int32Array(count),
    });
    return x;
  }

  /** The index at once (tests, small vocabularies). */
  static of(terms: readonly string[], count = terms.length): FuzzyIndex {
    return atOnce(FuzzyIndex.build(terms, count));
  }

  /** Calls `found(id, distance)` for every covered term within `k` edits of `query` (the query itself at 0). */
  near(query: string, k: number, found: (id: number, distance: number) => void): void {
    const { terms, byRank, lengthStart, counts, touched } = this;
    const m = query.length;
    const longest = lengthStart.length - 2;
    const lo = Math.max(0, m - k);
    const hi = Math.min(longest, m + k);
    if (lo > hi) return;
    const dist = BoundedDistance.shared(query, k);
    const check = (r: number) => {
      const id = byRank[r];
      const d = dist.distance(terms[id]);
      if (d <= k) found(id, d);
    };
    // Shared trigrams needed by a term of length l: `need(l)`; lengths up to `direct` need none.
    const need = (l: number) => Math.max(l, m) + Q - 1 - k * Q;
    let direct = lo - 1;
    // (A query too long for 16-bit counts, never an analyzed term, is checked against every term of those lengths.)
    if (m + Q > 0xffff) direct = hi;
    while (direct < hi && need(direct + 1) <= 0) direct++;
    for (let r = lengthStart[lo]; r < lengthStart[direct + 1]; r++) check(r);
    if (direct >= hi) return;
    const first = direct + 1;
    const rankLo = lengthStart[first];
    const rankHi = lengthStart[hi + 1];
    // The query's trigram buckets, with their counts and their lists' parts in [rankLo, rankHi).
    const grams: number[] = [];
    forGrams(query, this.shift, (h) => grams.push(h));
    grams.sort((x, y) => x - y);
    const lists: Array<[from: number, to: number, cq: number]> = [];
    for (let i = 0; i < grams.length;) {
      const h = grams[i];
      let cq = 0;
      for (; i < grams.length && grams[i] === h; i++) cq++;
      lists.push([this.lowerBound(h, rankLo), this.lowerBound(h, rankHi), cq]);
    }
    // A term within k edits shares at least `need(first)` of the query's trigrams; the longest
    // lists are left out while they hold at most `need(first) − KEPT_BOUND` of them, and the bound
    // is lowered by what they hold (it stays ≥ 1, so every such term is still met in a list kept).
    lists.sort((x, y) => y[1] - y[0] - (x[1] - x[0]));
    let dropped = 0;
    let kept = 0;
    while (kept < lists.length && dropped + lists[kept][2] <= need(first) - KEPT_BOUND) dropped += lists[kept++][2];
    let met = 0;
    for (let i = kept; i < lists.length; i++) met = this.countList(lists[i][0], lists[i][1], lists[i][2], met);
    // Per length (ranks are in order of length: no read of the term), the count a candidate needs.
    const needs = new Int32Array(hi + 2);
    for (let l = first; l <= hi; l++) needs[l] = need(l) - dropped;
    for (let i = 0; i < met; i++) {
      const r = touched[i];
      let l = first;
      while (r >= lengthStart[l + 1]) l++;
      if (counts[r] >= needs[l]) check(r);
      counts[r] = 0;
    }
  }

  /** First position of bucket `h`'s list holding a rank ≥ `rank`. */
  private lowerBound(h: number, rank: number): number {
    const { postings } = this;
    let a = this.gramStart[h];
    let b = this.gramStart[h + 1];
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (postings[mid] < rank) a = mid + 1;
      else b = mid;
    }
    return a;
  }

  /** Adds the ranks at `postings[from, to)` to `counts`, each at most `cq` times; returns the ranks met so far. */
  private countList(from: number, to: number, cq: number, met: number): number {
    const { postings, counts, touched } = this;
    let prev = -1;
    let run = 0;
    for (let i = from; i < to; i++) {
      const r = postings[i];
      run = r === prev ? run + 1 : 1;
      prev = r;
      if (run > cq) continue;
      if (counts[r]++ === 0) touched[met++] = r;
    }
    return met;
  }

  /** Bytes of its arrays (the heap it holds beyond the vocabulary's strings). */
  get bytes(): number {
    return (
      this.byRank.byteLength +
      this.lengthStart.byteLength +
      this.gramStart.byteLength +
      this.postings.byteLength +
      this.counts.byteLength +
      this.touched.byteLength
    );
  }
}

/** Calls `fn` with the bucket (the top `32 − shift` bits of a hash) of every trigram of `term` padded with two units on each side. */
function forGrams(term: string, shift: number, fn: (h: number) => void): void {
  const n = term.length;
  let a = PAD;
  let b = PAD;
  for (let i = 0; i < n + Q - 1; i++) {
    const c = i < n ? term.charCodeAt(i) : PAD;
    fn((Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca77) ^ Math.imul(c, 0xc2b2ae3d)) >>> shift);
    a = b;
    b = c;
  }
}
