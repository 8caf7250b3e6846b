import { byRank, type DocHit } from './top-hits';
import { REGION_SHIFT, type ScoreCursor } from '../index/cursor';
import { maxScoreTopK } from './max-score';
import {
  Best,
  cursorScore,
  knownFloor,
  seek,
  SLACK,
  valueFields,
  wholeScore,
  type KeptSample,
  type TopKOptions,
} from './top-k';
import { TopKScratch, type TopPairs } from './top-k-scratch';

/**
 * `boundedTopK` lists its surviving candidates from the documents it met rather than from every
 * accumulator of their range when they number fewer than 1 in this many of the range.
 */
const SPARSE_MET = 4;

/** `boundedTopK` passes over its candidates after a term once the bounds still to come have fallen to this share of theirs at the last pass (or the candidates are few). */
const PASS_AFTER_FALL = 0.8;

/** Accumulators of `boundedTopK` whose document is one of its candidates. */
const CANDIDATE = 1;
/** Accumulators of `boundedTopK` whose document the `keep` filter leaves out. */
const LEFT_OUT = 2;

/**
 * The same best `k` as `maxScoreTopK` (without a coordination factor: with one, it is
 * `maxScoreTopK`), term at a time into accumulators that score bounds prune, as in Moffat &
 * Zobel's continue strategy with MaxScore's bounds:
 *
 * - Terms go by their bound, the largest first. Every contribution is ≥ 0, so a document's
 *   partial sum is a floor of its score; the k-th best whole score of any k documents is a
 *   floor θ of the k-th best score (`WholeScores`: after each term, the k best partial sums'
 *   documents are scored whole, each once, by galloping search in every cursor; and
 *   `opts.known`'s floor).
 * - While the bounds of the terms still to come add up to θ or more, a document met first now
 *   could still make the top k: each posting adds to its document's accumulator (created if
 *   new). From then on no new document can: the candidates that can still reach θ are marked in
 *   a bitmap, and each remaining term adds to them only (by galloping search when they are few
 *   next to its postings, else in one scan that tests each posting's bit); after each term, a
 *   candidate whose partial sum plus the bounds of the terms after it falls short of θ is dropped.
 * - The survivors' scores are then summed again in the cursors' order, as the exhaustive scorer
 *   sums them, so the scores and the page are the same to the last bit.
 *
 * An expanded (RM3) query has ~45 terms (5 feedback documents, 40 expansion terms); most of its
 * postings are in the long lists of common terms with small bounds, which this touches only for
 * the candidates left.
 */
export function boundedTopK(cursors: readonly ScoreCursor[], opts: TopKOptions): DocHit[] {
  const m = cursors.length;
  if (opts.k <= 0 || m === 0) return [];
  if (opts.coordination) return maxScoreTopK(cursors, opts);
  const { k, keep } = opts;
  const order = [...cursors.keys()].sort((a, b) => cursors[b].bound - cursors[a].bound || a - b);
  // rest[j]: what order[j ..] can add to a document at most.
  const scratch = opts.scratch ?? new TopKScratch();
  const rest = scratch.f64('bounded.rest', m + 1);
  for (let j = m - 1; j >= 0; j--) rest[j] = rest[j + 1] + cursors[order[j]].bound;
  scratch.grow(cursors);
  const { score, seen: state, docs: cands } = scratch;
  const whole = new WholeScores(opts.whole ?? ((doc) => wholeScore(cursors, doc)), cursors.length, k);
  const top = scratch.top.reset(k);
  let n = 0;
  let theta = knownFloor(cursors, opts);
  let j = 0;
  // The documents the accumulators were written at lie in lo … hi.
  let lo = 0;
  let hi = -1;
  // What the terms from the j-th on can add, per region of documents: `ahead(j, d)`.
  const regions = regionBounds(cursors, order, scratch);
  const { first, count, rows } = regions;
  const ahead = (at: number, d: number) => rows[at * count + (d >> REGION_SHIFT) - first];
  for (; j < m && largest(rows, j * count, count) * SLACK >= theta; j++) {
    const c = cursors[order[j]];
    const { docs } = c;
    if (docs.length === 0) continue;
    lo = hi < 0 ? docs[0] : Math.min(lo, docs[0]);
    hi = Math.max(hi, docs[docs.length - 1]);
    // Partial sums only grow: the best of those this term added to are the likeliest to make
    // the page (cheaper than over every candidate; that is taken once, below). Taken as the
    // term is gathered: a pass of their own over its postings was ~7 % of a full query's CPU
    // at 200k documents, more under a narrow filter (its floor is lower: more terms before the
    // second phase).
    n = gather(c, score, state, cands, n, keep, regions, j, theta, top.reset(k));
    theta = Math.max(theta, whole.floor(top, docs.length));
  }
  // No document met (a window whose bounds fall short of the floor so far): none can make the
  // page. Past here `hi` would be −1, and the bitmap sized for it 2^27 words (512 MB, met in a
  // windowed RM3 pass at 200k documents).
  if (n === 0) return [];
  theta = Math.max(theta, whole.floor(bestPartials(top.reset(k), cands, n, score, state), n));
  // The documents met while new ones could still make the page: those a filter keeps, aside.
  if (opts.sample) offerKept(opts.sample, cands, n, score, state);
  // Nothing after this adds new documents. The candidates that can still reach θ are listed in
  // document order and marked in a bitmap (the others cleared); their partial sums stay in the
  // accumulators. Found in one pass over the accumulators in order, or, when the documents met
  // are few next to the range they span (an RM3 pass at 1M documents met a fraction of each
  // window's, and the pass over every accumulator of the range was ~40% of this function's
  // time), by a pass over the documents met, the survivors then read off the bitmap in order.
  const alive = scratch.aliveBits(hi);
  let s = 0;
  if (n * SPARSE_MET < hi - lo + 1) {
    for (let i = 0; i < n; i++) {
      const d = cands[i];
      const st = state[d];
      state[d] = 0;
      if (st === CANDIDATE && (score[d] + ahead(j, d)) * SLACK >= theta) alive[d >>> 5] |= 1 << (d & 31);
      else score[d] = 0;
    }
    // In document order: the bitmap's words in order, each word's bits from the lowest.
    for (let w = lo >>> 5; w <= hi >>> 5; w++)
      for (let x = alive[w]; x !== 0; x &= x - 1) cands[s++] = (w << 5) + 31 - Math.clz32(x & -x);
  } else {
    for (let d = lo; d <= hi; d++) {
      const st = state[d];
      if (st === 0) continue;
      state[d] = 0;
      if (st === CANDIDATE && (score[d] + ahead(j, d)) * SLACK >= theta) {
        cands[s++] = d;
        alive[d >>> 5] |= 1 << (d & 31);
      } else score[d] = 0;
    }
  }
  n = s;
  let passAfter = rest[j];
  for (; j < m && n > 0; j++) {
    const c = cursors[order[j]];
    const { docs } = c;
    if (n * 16 < docs.length) {
      let at = 0;
      for (let i = 0; i < n; i++) {
        const d = cands[i];
        at = seek(docs, at, d);
        if (at >= docs.length) break;
        if (docs[at] === d) score[d] += cursorScore(c, at);
      }
    } else {
      addAlive(c, score, alive);
    }
    // One pass over the candidates: the best partial sums (scored whole, a floor), and those
    // that can no longer reach θ with what the terms after this one add are dropped. It costs a
    // step per candidate, so it is made when they are no more than this term's postings, or once
    // what the terms still to come can add has fallen by `PASS_AFTER_FALL` since the last pass
    // (an RM3 query's many light terms each lower it a little, and a pass after each was ~13% of
    // a full query's CPU at 1M documents); a candidate kept meanwhile is settled by a later pass,
    // the survivors' check or its exact sum.
    const after = rest[j + 1];
    if (n > docs.length && after > passAfter * PASS_AFTER_FALL) continue;
    passAfter = after;
    top.reset(k);
    let least = -Infinity;
    s = 0;
    for (let i = 0; i < n; i++) {
      const d = cands[i];
      const v = score[d];
      if (v > least) least = top.add(v, d);
      if ((v + ahead(j + 1, d)) * SLACK >= theta) cands[s++] = d;
      else {
        score[d] = 0;
        alive[d >>> 5] &= ~(1 << (d & 31));
      }
    }
    n = s;
    theta = Math.max(theta, whole.floor(top, docs.length + n));
  }
  // The survivors (accumulators and bitmap cleared).
  s = 0;
  for (let i = 0; i < n; i++) {
    const d = cands[i];
    const v = score[d];
    score[d] = 0;
    alive[d >>> 5] = 0;
    if (v * SLACK >= theta) cands[s++] = d;
  }
  n = s;
  // Their scores, summed in the cursors' order.
  const exact = scratch.f64('bounded.exact', n);
  if (opts.whole) for (let i = 0; i < n; i++) exact[i] = opts.whole(cands[i]);
  else
    for (const c of cursors) {
      const { docs } = c;
      let at = 0;
      for (let i = 0; i < n; i++) {
        at = seek(docs, at, cands[i]);
        if (at >= docs.length) break;
        if (docs[at] === cands[i]) exact[i] += cursorScore(c, at);
      }
    }
  const best = new Best(k);
  for (let i = 0; i < n; i++)
    if (exact[i] >= best.threshold) best.offer({ id: opts.idOf(cands[i]), score: exact[i], doc: cands[i] });
  return best.heap.sort(byRank);
}

/** Offers `top` the partial sums of the candidates among the first `n` of `docs`; returns it. */
function bestPartials(top: TopPairs, docs: Int32Array, n: number, score: Float64Array, state: Uint8Array): TopPairs {
  let least = -Infinity;
  for (let i = 0; i < n; i++) {
    const d = docs[i];
    if (state[d] === CANDIDATE && score[d] > least) least = top.add(score[d], d);
  }
  return top;
}

/** Offers `sample.top` the partial sums of the candidates among the first `n` of `docs` that `sample.keep` keeps. */
function offerKept(sample: KeptSample, docs: Int32Array, n: number, score: Float64Array, state: Uint8Array): void {
  const { keep, top } = sample;
  const bits = keep.bits;
  let least = -Infinity;
  for (let i = 0; i < n; i++) {
    const d = docs[i];
    if (state[d] !== CANDIDATE || score[d] <= least) continue;
    if (bits ? (bits[d >>> 5] & (1 << (d & 31))) !== 0 : keep(d)) least = top.add(score[d], d);
  }
}

/**
 * Lists each document of cursor `c` (the `j`-th in the scorer's order) met for the first time
 * (`state` 0) in `cands` from `n` on, marked `CANDIDATE` or, when `keep` leaves it out,
 * `LEFT_OUT` (with `keep.bits`, only the documents kept), and adds the cursor's value at each of
 * its postings to the candidates' `score`, offering `top` each sum so made, in the same pass. A
 * document whose region's bound for the terms from this one on falls short of `theta` is not
 * listed: it could not make the page (every term before this one gave it 0). Returns the new count.
 */
function gather(
  c: ScoreCursor,
  score: Float64Array,
  state: Uint8Array,
  cands: Int32Array,
  n: number,
  keep: TopKOptions['keep'],
  regions: RegionBounds,
  j: number,
  theta: number,
  top: TopPairs,
): number {
  const { docs } = c;
  const bits = keep?.bits;
  const test = bits ? undefined : keep;
  const { first, rows } = regions;
  const row = j * regions.count - first;
  const vals = valueFields(c);
  const width = vals?.length ?? 0;
  const [v0, f0] = width >= 1 ? vals![0] : NO_VALUES;
  const [v1, f1] = width >= 2 ? vals![1] : NO_VALUES;
  let least = -Infinity;
  for (let at = 0; at < docs.length; at++) {
    const d = docs[at];
    // A filter with a bitmap: the documents it leaves out are neither listed nor summed, tested
    // first (one bit test per posting; a selective filter's query meets mostly those: an RM3
    // query under a filter keeping 10-15 % gathered 2-3x the postings of the same query unfiltered).
    if (bits && (bits[d >>> 5] & (1 << (d & 31))) === 0) continue;
    const st = state[d];
    if (st === 0) {
      if (rows[row + (d >> REGION_SHIFT)] * SLACK < theta) continue;
      cands[n++] = d;
      if (test && !test(d)) {
        state[d] = LEFT_OUT;
        continue;
      }
      state[d] = CANDIDATE;
    } else if (st !== CANDIDATE) continue;
    const v = (score[d] += width === 1 ? f0 * v0[at] : width === 2 ? f0 * v0[at] + f1 * v1[at] : cursorScore(c, at));
    if (v > least) least = top.add(v, d);
  }
  return n;
}

/** `gather`'s value fields when a cursor has fewer than two. */
const NO_VALUES = [new Float64Array(0), 0] as const;

/**
 * What the suffixes of a scorer's terms (in its order) can add to a document, per region of
 * `1 << REGION_SHIFT` documents: most of an RM3 query's ~40 expansion terms hold no document of
 * most regions, so there their bounds add nothing.
 */
interface RegionBounds {
  /** The region of row entry 0. */
  readonly first: number;
  /** Regions a row. */
  readonly count: number;
  /** Row j (from `j × count`): per region, what `order[j ..]` can add to a document in it; row m is 0. */
  readonly rows: Float64Array;
}

/**
 * `RegionBounds` of `cursors` in `order`, over the regions their documents span: a cursor's
 * `regions` (times its `blockScale`), else its `bound` in each region where it has a posting (a
 * walk over its postings, when they are fewer than the regions) or in every one. Each entry is
 * written once, from the row below (copied where the cursor holds no document): the rows are
 * read after every term (a pass over the candidates after ~27 of an RM3 pass's ~36 terms at 1M),
 * but built per call over its whole range (~150k entries a full query at 1M); zeroed first, added
 * to in place and their largest taken as they were built, they were ~9 % of `boundedTopK`'s CPU at
 * 1M, and 0.65x that built so (in-process A/B at 200k, BENCHMARKS.md rm3first).
 */
function regionBounds(cursors: readonly ScoreCursor[], order: readonly number[], scratch: TopKScratch): RegionBounds {
  const m = order.length;
  let lo = 0x7fffffff;
  let hi = -1;
  for (const { docs } of cursors)
    if (docs.length > 0) {
      lo = Math.min(lo, docs[0]);
      hi = Math.max(hi, docs[docs.length - 1]);
    }
  const first = hi < 0 ? 0 : lo >> REGION_SHIFT;
  const count = hi < 0 ? 1 : (hi >> REGION_SHIFT) - first + 1;
  const rows = scratch.f64Unzeroed('bounded.regions', (m + 1) * count);
  rows.fill(0, m * count, (m + 1) * count);
  for (let j = m - 1; j >= 0; j--) {
    const c = cursors[order[j]];
    const row = j * count;
    const next = row + count;
    const { docs, regions, bound } = c;
    if (regions) {
      const scale = c.blockScale ?? 1;
      const { max } = regions;
      const shift = regions.first - first;
      const from = Math.max(0, shift);
      const to = Math.max(from, Math.min(count, shift + max.length));
      if (from > 0) rows.copyWithin(row, next, next + from);
      for (let r = from; r < to; r++) rows[row + r] = rows[next + r] + max[r - shift] * scale;
      if (to < count) rows.copyWithin(row + to, next + to, next + count);
    } else if (docs.length < count) {
      rows.copyWithin(row, next, next + count);
      for (let at = 0; at < docs.length; at++) {
        const r = row + (docs[at] >> REGION_SHIFT) - first;
        rows[r] = rows[r + count] + bound;
      }
    } else for (let r = row; r < next; r++) rows[r] = rows[r + count] + bound;
  }
  return { first, count, rows };
}

/**
 * The largest of `rows[from ..]`'s `count` entries (≥ 0): what the terms of a row can add to
 * any document, asked only of the rows of the first phase (~6 of ~36 terms at 1M).
 */
function largest(rows: Float64Array, from: number, count: number): number {
  let top = 0;
  for (let r = from, e = from + count; r < e; r++) if (rows[r] > top) top = rows[r];
  return top;
}

/** Adds cursor `c`'s value at each of its postings whose document is set in `alive` to `score`. */
function addAlive(c: ScoreCursor, score: Float64Array, alive: Int32Array): void {
  const { docs } = c;
  const vals = valueFields(c);
  if (vals?.length === 1) {
    const [[v0, f0]] = vals;
    for (let at = 0; at < docs.length; at++) {
      const d = docs[at];
      if (alive[d >>> 5] & (1 << (d & 31))) score[d] += f0 * v0[at];
    }
  } else if (vals?.length === 2) {
    const [[v0, f0], [v1, f1]] = vals;
    for (let at = 0; at < docs.length; at++) {
      const d = docs[at];
      if (alive[d >>> 5] & (1 << (d & 31))) score[d] += f0 * v0[at] + f1 * v1[at];
    }
  } else {
    for (let at = 0; at < docs.length; at++) {
      const d = docs[at];
      if (alive[d >>> 5] & (1 << (d & 31))) score[d] += cursorScore(c, at);
    }
  }
}

/**
 * Documents scored whole (each once), for a floor: the k-th best of their scores is at most the
 * k-th best score of all, and once partial sums single out the likely winners it is near it.
 */
class WholeScores {
  private readonly seen = new Set<number>();
  // The k best whole scores so far, best first.
  private readonly best: number[] = [];

  constructor(
    private readonly whole: (doc: number) => number,
    private readonly m: number,
    private readonly k: number,
  ) {}

  /**
   * Scores `top`'s documents not scored yet; the k-th best whole score so far, lowered as
   * `kth`'s (−∞ with fewer than k), or `top`'s k-th if higher. Only after a step of at least
   * `work` ≥ k × cursors postings or candidates: a document scored whole costs a galloping
   * search per cursor, and on a small index (11k documents) scoring k of them after every term
   * made the RM3 pass 1.15× main's time.
   */
  floor(top: TopPairs, work: number): number {
    const { best, k } = this;
    for (let i = 0; i < top.size && work >= k * this.m; i++) {
      const doc = top.docs[i];
      if (this.seen.has(doc)) continue;
      this.seen.add(doc);
      const v = this.whole(doc);
      if (best.length === k && v <= best[k - 1]) continue;
      if (best.length === k) best.pop();
      let at = best.length;
      while (at > 0 && best[at - 1] < v) at -= 1;
      best.splice(at, 0, v);
    }
    return Math.max(top.kth(), best.length < k ? -Infinity : best[k - 1] * (1 - 1e-9));
  }
}
