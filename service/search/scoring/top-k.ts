import { byRank, type DocHit } from './top-hits';
import { BLOCK_SHIFT, blockCount, type ScoreCursor } from '../index/cursor';
import type { TopKScratch, TopPairs } from './top-k-scratch';

/*
 * What the three top-k scorers share: their options, the galloping search, the heap of the
 * best hits, and a cursor's score at a posting (the exhaustive scorer's expression, so every
 * scorer's sums agree to the last bit). One scorer a file: `max-score.ts`, `accumulated-top-k.ts`,
 * `bounded-top-k.ts`.
 */

/** Options of the top-k scorers (`maxScoreTopK`, `accumulatedTopK`, `boundedTopK`). */
export interface TopKOptions {
  /** Hits wanted. */
  readonly k: number;
  /** External id of a short document id (ties are broken by it). */
  readonly idOf: (doc: number) => string;
  /**
   * Keeps a document or not (the query's filter); `bits`, when given, is the bitmap of the
   * documents it keeps (bit `doc & 31` of word `doc >>> 5`; words past its end keep none).
   * @default every document
   */
  readonly keep?: ((doc: number) => boolean) & { readonly bits?: Int32Array };
  /**
   * Multiplier of a document's summed score (the coordination factor), from the distinct terms
   * it matched. @default 1
   */
  readonly coordination?: (doc: number, matchedDistinct: number) => number;
  /** Largest value `coordination` can return. @default 1 */
  readonly maxCoordination?: number;
  /**
   * A score that `k` documents elsewhere already reach (`windowedTopK`'s earlier windows): a
   * document scoring below it cannot make the page and is pruned from the start; ties are kept
   * (`maxScoreTopK` and `boundedTopK`). @default none
   */
  readonly floor?: number;
  /**
   * Documents known to match and be kept (say, a first pass's top documents, whose terms an RM3
   * query is drawn from): the k-th best of their exact scores is a floor of the k-th best score
   * of all, so pruning starts from it instead of from the first k documents met. Fewer than k:
   * no floor. @default none
   */
  readonly known?: readonly number[];
  /**
   * `accumulatedTopK` adds here the number of documents it met (of those `keep` keeps): the
   * query's total without a pass of its own over the postings (`windowedTopK`'s windows hold
   * disjoint documents, so their counts add up). Other scorers leave it. @default not counted
   */
  readonly counted?: { matched: number };
  /**
   * A document's exact score over the cursors (their sum in the cursors' order, to the last bit,
   * as `wholeScore` gives it), computed another way: the index's forward entries
   * (`CompactIndex.cursorJob`), one walk over the document's terms instead of a galloping search
   * in every cursor. Used for floors (`known`, `WholeScores`) and the survivors' final sums.
   * @default a galloping search per cursor
   */
  readonly whole?: (doc: number) => number;
  /**
   * Reusable arrays of the accumulator scorers (`accumulatedTopK`, `boundedTopK`), owned by the
   * caller (an index's, across its queries). @default a new one for the call
   */
  readonly scratch?: TopKScratch;
  /**
   * Documents `sample.keep` keeps among those met while a new document could still make the
   * page (`boundedTopK`'s first phase), offered to `sample.top` with their partial sums (reset by
   * the caller, kept across `windowedTopK`'s windows): RM3's expanded pass under a filter starts
   * its pruning from the k-th best of their expanded scores (`known`), where the first pass's
   * best documents that pass a narrow filter are fewer than k. Other scorers leave it.
   * @default none
   */
  readonly sample?: KeptSample;
}

/** `TopKOptions.sample`: a filter, and the best partial sums of the documents it keeps. */
export interface KeptSample {
  readonly keep: NonNullable<TopKOptions['keep']>;
  readonly top: TopPairs;
}

/** Last document of block `b` of `docs`. */
export function blockEnd(docs: Int32Array, b: number): number {
  return docs[Math.min(docs.length, (b + 1) << BLOCK_SHIFT) - 1];
}

/**
 * First block ≥ `from` whose last document is ≥ `target`, or the block count if none: the block
 * of the first posting ≥ `target`, found by `seek` from the next block on unless block `from`
 * holds it (answered without a search).
 */
export function seekBlock(docs: Int32Array, from: number, target: number): number {
  const n = blockCount(docs.length);
  if (from >= n || blockEnd(docs, from) >= target) return from;
  const at = seek(docs, (from + 1) << BLOCK_SHIFT, target);
  return at < docs.length ? at >> BLOCK_SHIFT : n;
}

// Bounds are compared after a relative allowance, so a rounding difference between a bound
// (summed in another order) and an exact score can never prune a document that belongs.
export const SLACK = 1 + 1e-9;

/** First index ≥ `from` whose doc is ≥ `target` (galloping, then binary search). */
export function seek(docs: Int32Array, from: number, target: number): number {
  const n = docs.length;
  if (from >= n || docs[from] >= target) return from;
  let step = 1;
  let lo = from;
  let hi = from + 1;
  while (hi < n && docs[hi] < target) {
    lo = hi;
    step *= 2;
    hi = from + step;
  }
  if (hi > n) hi = n;
  while (lo + 1 < hi) {
    const mid = (lo + hi) >>> 1;
    if (docs[mid] < target) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** Bounded heap of the best k hits under `byRank`; the root is the worst kept. */
export class Best {
  readonly heap: DocHit[] = [];
  constructor(private readonly k: number) {}

  get full(): boolean {
    return this.heap.length >= this.k;
  }

  /** Score of the worst kept hit once full, else −∞. */
  get threshold(): number {
    return this.full ? this.heap[0].score : -Infinity;
  }

  offer(hit: DocHit): boolean {
    const h = this.heap;
    if (h.length < this.k) {
      h.push(hit);
      for (let i = h.length - 1; i > 0;) {
        const p = (i - 1) >> 1;
        if (byRank(h[i], h[p]) <= 0) break;
        [h[i], h[p]] = [h[p], h[i]];
        i = p;
      }
      return true;
    }
    if (byRank(hit, h[0]) >= 0) return false;
    h[0] = hit;
    for (let i = 0; ;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && byRank(h[l], h[m]) > 0) m = l;
      if (r < h.length && byRank(h[r], h[m]) > 0) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m], h[i]];
      i = m;
    }
    return true;
  }
}

/**
 * The larger of `opts.floor` and the k-th best exact score of `opts.known` (−∞ without either, or
 * with fewer than k known), the latter lowered by a relative 1e-9 so that a different summation
 * order can never put it above a document's own score: every document of the true top k scores
 * at least that much.
 */
export function knownFloor(cursors: readonly ScoreCursor[], opts: TopKOptions): number {
  const given = opts.floor ?? -Infinity;
  const known = opts.known;
  if (!known || known.length < opts.k) return given;
  const scores = known.map((doc) => exactScore(cursors, opts, doc));
  const kth = scores.sort((a, b) => b - a)[opts.k - 1];
  return Math.max(given, kth > 0 ? kth * (1 - 1e-9) : -Infinity);
}

/** Cursor `c`'s score at its posting `at`: the exhaustive scorer's expression and order, so scores agree to the last bit. */
export function cursorScore(c: ScoreCursor, at: number): number {
  if (c.vals) {
    let v = 0;
    for (let f = 0; f < c.vals.length; f++) {
      const vals = c.vals[f];
      if (vals && c.tfs[f]![at] > 0) v += c.factors[f] * vals[at];
    }
    return v;
  }
  const { lengths, nf, fields, avg, k, b, d } = c.scoring;
  const k1 = k + 1;
  const doc = c.docs[at];
  let s = 0;
  for (let f = 0; f < c.tfs.length; f++) {
    const tfs = c.tfs[f];
    if (!tfs) continue;
    const tf = tfs[at];
    if (tf > 0)
      s +=
        c.factors[f] * (c.idf[f] * (d + (tf * k1) / (tf + k * (1 - b + (b * lengths[doc * nf + fields[f]]) / avg[f]))));
  }
  return s;
}

/**
 * Document `doc`'s exact score over `cursors` (0 where none holds it): `opts.whole`'s sum, else
 * a galloping search per cursor, times the coordination factor when there is one.
 */
export function exactScore(
  cursors: readonly ScoreCursor[],
  opts: Pick<TopKOptions, 'whole' | 'coordination'>,
  doc: number,
): number {
  const { whole } = opts;
  if (whole && !opts.coordination) return whole(doc);
  let sum = 0;
  let distinct = 0;
  for (const c of cursors) {
    const at = seek(c.docs, 0, doc);
    if (at >= c.docs.length || c.docs[at] !== doc) continue;
    sum += cursorScore(c, at);
    if (c.distinct) distinct += 1;
  }
  return opts.coordination ? sum * opts.coordination(doc, distinct) : sum;
}

/** Document `doc`'s score over `cursors`, summed in their order (as the exhaustive scorer sums). */
export function wholeScore(cursors: readonly ScoreCursor[], doc: number): number {
  let sum = 0;
  for (const c of cursors) {
    const at = seek(c.docs, 0, doc);
    if (at < c.docs.length && c.docs[at] === doc) sum += cursorScore(c, at);
  }
  return sum;
}

/**
 * A cursor's values computed ahead, with their factors, per field that has them; `undefined`
 * without values. With them, a posting's score is their products summed in field order (0 where
 * a field lacks the term, and 0 added changes no sum): `cursorScore`'s, to the bit.
 */
export function valueFields(c: ScoreCursor): ReadonlyArray<readonly [Float64Array, number]> | undefined {
  return c.vals?.flatMap((v, f) => (v ? [[v, c.factors[f]] as const] : []));
}

/** Adds cursor `c`'s value at its postings `from` .. `to` (all by default) to `score`; `vals`: its `valueFields`. */
export function addPostings(
  c: ScoreCursor,
  score: Float64Array,
  vals = valueFields(c),
  from = 0,
  to = c.docs.length,
): void {
  const { docs } = c;
  if (vals?.length === 1) {
    const [[v0, f0]] = vals;
    for (let at = from; at < to; at++) score[docs[at]] += f0 * v0[at];
  } else if (vals?.length === 2) {
    const [[v0, f0], [v1, f1]] = vals;
    for (let at = from; at < to; at++) score[docs[at]] += f0 * v0[at] + f1 * v1[at];
  } else {
    for (let at = from; at < to; at++) score[docs[at]] += cursorScore(c, at);
  }
}
