import { byRank, type DocHit } from './top-hits';

/**
 * What turns a term frequency into BM25 the way the exhaustive scorer does, shared by a query's
 * cursors: a field's length norm is `k·(1 − b + b·length/avg)`, computed for the postings visited
 * only (no pass over every document per index version).
 */
export interface CursorScoring {
  /** Field lengths by document id × `nf` + field id. */
  readonly lengths: Int32Array;
  readonly nf: number;
  /** Field id of each searched field (the cursors' fields, in order). */
  readonly fields: readonly number[];
  /** Per searched field, the average length. */
  readonly avg: readonly number[];
  readonly k: number;
  readonly b: number;
  /** BM25+'s δ. */
  readonly d: number;
}

/**
 * One query term's postings (or one part of them) as the pruned scorer walks them: short
 * document ids in increasing order, per searched field the term's frequency at each of them (0
 * where the field lacks the term; `null` for a field without it at all), and what turns a
 * frequency into the term's score, `factor × idf × (d + tf·(k+1) / (tf + norm))` summed over
 * fields in order: computed only for the postings visited.
 */
export interface ScoreCursor {
  /** Short document ids, strictly increasing. */
  readonly docs: Int32Array;
  /** Per searched field, parallel to `docs`. */
  readonly tfs: ReadonlyArray<Uint16Array | null>;
  /** Per searched field, the BM25 value at each of `docs`, when computed ahead (else computed from `tfs`). */
  readonly vals?: ReadonlyArray<Float64Array | null>;
  /** Per searched field, the term's idf. */
  readonly idf: readonly number[];
  readonly scoring: CursorScoring;
  /** Per searched field, query weight × field boost. */
  readonly factors: readonly number[];
  /** At least the largest score this term gives any document. */
  readonly bound: number;
  /**
   * Per block of `BLOCK_SIZE` postings (`docs[b·BLOCK_SIZE ..]`), at least the largest score this
   * term gives a document of the block (block-max pruning; without it, `bound` for every block).
   */
  readonly blockMax?: Float64Array;
  /** First occurrence of its term in the query (counts toward coordination). */
  readonly distinct: boolean;
}

/** Options of `maxScoreTopK`. */
export interface TopKOptions {
  /** Hits wanted. */
  readonly k: number;
  /** External id of a short document id (ties are broken by it). */
  readonly idOf: (doc: number) => string;
  /** Keeps a document or not (type and tag filters). @default every document */
  readonly keep?: (doc: number) => boolean;
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
}

/** Postings per block of `ScoreCursor.blockMax`: `1 << BLOCK_SHIFT`. */
export const BLOCK_SHIFT = 6;

/** Blocks of a run of `n` postings. */
export function blockCount(n: number): number {
  return (n + (1 << BLOCK_SHIFT) - 1) >> BLOCK_SHIFT;
}

/** Last document of block `b` of `docs`. */
function blockEnd(docs: Int32Array, b: number): number {
  return docs[Math.min(docs.length, (b + 1) << BLOCK_SHIFT) - 1];
}

/**
 * First block ≥ `from` whose last document is ≥ `target`, or the block count if none: the block
 * of the first posting ≥ `target`, found by `seek` from the next block on unless block `from`
 * holds it (answered without a search).
 */
function seekBlock(docs: Int32Array, from: number, target: number): number {
  const n = blockCount(docs.length);
  if (from >= n || blockEnd(docs, from) >= target) return from;
  const at = seek(docs, (from + 1) << BLOCK_SHIFT, target);
  return at < docs.length ? at >> BLOCK_SHIFT : n;
}

/** Non-essential terms (those with the largest bounds) a block-max check looks at by their blocks. */
export const BLOCK_CHECK_TERMS = 3;

/** Block-max checks a query makes before it keeps making them only while at least 1 in 8 skips postings. */
const CHECKS_ON_TRIAL = 256;

// Bounds are compared after a relative allowance, so a rounding difference between a bound
// (summed in another order) and an exact score can never prune a document that belongs.
const SLACK = 1 + 1e-9;

/** First index ≥ `from` whose doc is ≥ `target` (galloping, then binary search). */
function seek(docs: Int32Array, from: number, target: number): number {
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
class Best {
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
      for (let i = h.length - 1; i > 0; ) {
        const p = (i - 1) >> 1;
        if (byRank(h[i], h[p]) <= 0) break;
        [h[i], h[p]] = [h[p], h[i]];
        i = p;
      }
      return true;
    }
    if (byRank(hit, h[0]) >= 0) return false;
    h[0] = hit;
    for (let i = 0; ; ) {
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
 * The best `k` documents for the sum of the cursors' scores (times the coordination factor),
 * best first, exactly as scoring every posting and sorting would give them: MaxScore (Turtle &
 * Flood 1995, as in Lucene and PISA). Terms are ordered by their score bound; once the k-th best
 * score so far exceeds what the lowest-bounded terms can reach together, those terms become
 * non-essential: documents are only drawn from the other terms' postings, and a candidate is
 * looked up in the non-essential ones (by galloping search) only while its partial score plus
 * their bounds can still make the top k.
 *
 * Block-max pruning on top (as block-max MaxScore in PISA, Mallia et al. 2019): each cursor may
 * carry a bound per block of postings. When the next candidate comes from one essential term
 * alone, that term's block bound plus the blocks of the strongest non-essential terms around it
 * (and the other non-essential bounds) is checked against the k-th best score first; if it falls
 * short, the term's postings are skipped unscored up to the nearest block end or other term's
 * next document. The same block bounds cut the non-essential look-ups short.
 *
 * Each document's final score adds its terms' scores in the cursors' order (fields in order
 * within a term), as the exhaustive scorer does, so the scores are the same to the last bit.
 */
export function maxScoreTopK(cursors: readonly ScoreCursor[], opts: TopKOptions): DocHit[] {
  const m = cursors.length;
  if (opts.k <= 0 || m === 0) return [];
  const maxCoord = opts.maxCoordination ?? 1;
  const order = [...cursors.keys()].sort((a, b) => cursors[a].bound - cursors[b].bound || a - b);
  // cum[j]: bound of the j lowest-bounded terms together.
  const cum = new Float64Array(m + 1);
  for (let j = 0; j < m; j++) cum[j + 1] = cum[j] + cursors[order[j]].bound;
  const pos = new Int32Array(m);
  const contrib = new Float64Array(m);
  const hit = new Uint8Array(m);
  const matched = new Int32Array(m);
  const best = new Best(opts.k);
  // order[0 .. p) are non-essential; the essential ones sit in a heap by their current document,
  // so each posting costs a heap step instead of a pass over every term.
  const floor = knownFloor(cursors, opts);
  let threshold = floor;
  let p = 0;
  while (p < m && cum[p + 1] * maxCoord * SLACK < threshold) p += 1;
  const heap = new DocHeap(cursors, pos);
  for (let j = p; j < m; j++) heap.push(order[j]);
  // Per cursor, the block its shallow seeks (non-essential) have reached.
  const blk = new Int32Array(m);
  // near[j + 1]: what order[low .. j] can add to the current document (block bounds), from cum[low].
  const near = new Float64Array(m + 1);
  // Block-max checks made and those that skipped: a query whose checks seldom skip stops making them.
  let checks = 0;
  let skips = 0;
  while (heap.size > 0) {
    const doc = heap.topDoc();
    // Non-essential terms from order[low] on are bounded by `near`, those before by `cum`.
    let low = p;
    if (threshold > -Infinity && (checks < CHECKS_ON_TRIAL || skips * 8 >= checks) && heap.topAlone()) {
      checks += 1;
      // Block-max check over documents `doc` .. `end`, where `end` comes before every other
      // essential cursor's next document: there only the top cursor gives anything, at most its
      // block's bound; the non-essential terms with the largest bounds count by their block
      // around `doc` (nothing before it starts), the others by their bounds. If that cannot make
      // the top k, the top cursor's postings up to `end` are skipped unscored.
      const top = heap.top();
      const c = cursors[top];
      const b = pos[top] >> BLOCK_SHIFT;
      let end = Math.min(heap.secondDoc() - 1, blockEnd(c.docs, b));
      low = Math.max(0, p - BLOCK_CHECK_TERMS);
      near[low] = cum[low];
      for (let j = low; j < p; j++) {
        const i = order[j];
        const o = cursors[i];
        const ob = (blk[i] = seekBlock(o.docs, blk[i], doc));
        let v = 0;
        if (ob < blockCount(o.docs.length)) {
          const first = o.docs[ob << BLOCK_SHIFT];
          if (first > doc) end = Math.min(end, first - 1);
          else {
            v = o.blockMax ? o.blockMax[ob] : o.bound;
            end = Math.min(end, blockEnd(o.docs, ob));
          }
        }
        near[j + 1] = near[j] + v;
      }
      if (((c.blockMax ? c.blockMax[b] : c.bound) + near[p]) * maxCoord * SLACK < threshold) {
        skips += 1;
        pos[top] = seek(c.docs, pos[top], end + 1);
        if (pos[top] < c.docs.length) heap.replaceTop(top);
        else heap.pop();
        continue;
      }
    }
    let n = 0;
    let partial = 0;
    while (heap.size > 0 && heap.topDoc() === doc) {
      const i = heap.top();
      contrib[i] = cursorScore(cursors[i], pos[i]);
      partial += contrib[i];
      hit[i] = 1;
      matched[n++] = i;
      pos[i] += 1;
      if (pos[i] < cursors[i].docs.length) heap.replaceTop(i);
      else heap.pop();
    }
    let pruned = false;
    for (let j = p - 1; j >= 0; j--) {
      if ((partial + (j < low ? cum[j + 1] : near[j + 1])) * maxCoord * SLACK < threshold) {
        pruned = true;
        break;
      }
      const i = order[j];
      const c = cursors[i];
      pos[i] = seek(c.docs, pos[i], doc);
      if (pos[i] < c.docs.length && c.docs[pos[i]] === doc) {
        contrib[i] = cursorScore(cursors[i], pos[i]);
        partial += contrib[i];
        hit[i] = 1;
        matched[n++] = i;
      }
    }
    const keep = !pruned && partial * maxCoord * SLACK >= threshold && (!opts.keep || opts.keep(doc));
    let sum = 0;
    let distinct = 0;
    if (keep) {
      // Summed in the cursors' order, as the exhaustive scorer sums.
      for (let i = 0; i < m; i++) {
        if (!hit[i]) continue;
        sum += contrib[i];
        if (cursors[i].distinct) distinct += 1;
      }
    }
    for (let t = 0; t < n; t++) hit[matched[t]] = 0;
    if (!keep) continue;
    const score = opts.coordination ? sum * opts.coordination(doc, distinct) : sum;
    if (score < threshold) continue;
    if (!best.offer({ id: opts.idOf(doc), score, doc })) continue;
    if (!best.full) continue;
    threshold = Math.max(best.threshold, floor);
    const before = p;
    while (p < m && cum[p + 1] * maxCoord * SLACK < threshold) p += 1;
    if (p !== before) heap.rebuild(order.slice(p).filter((i) => pos[i] < cursors[i].docs.length));
  }
  return best.heap.sort(byRank);
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
  const { whole } = opts;
  const scores = known.map((doc) => {
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
  });
  const kth = scores.sort((a, b) => b - a)[opts.k - 1];
  return Math.max(given, kth > 0 ? kth * (1 - 1e-9) : -Infinity);
}

/** Cursor `c`'s score at its posting `at`: the exhaustive scorer's expression and order, so scores agree to the last bit. */
function cursorScore(c: ScoreCursor, at: number): number {
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
    if (tf > 0) s += c.factors[f] * (c.idf[f] * (d + (tf * k1) / (tf + k * (1 - b + (b * lengths[doc * nf + fields[f]]) / avg[f]))));
  }
  return s;
}

// Scratch of `accumulatedTopK` (grown as needed; all zero between calls).
let accScore = new Float64Array(0);
let accDistinct = new Uint16Array(0);
let accSeen = new Uint8Array(0);
let accDocs = new Int32Array(0);

/** Grows the accumulators' scratch to the cursors' documents and postings. */
function growScratch(cursors: readonly ScoreCursor[]): void {
  let size = 0;
  let postings = 0;
  for (const { docs } of cursors) {
    if (docs.length > 0) size = Math.max(size, docs[docs.length - 1] + 1);
    postings += docs.length;
  }
  if (accScore.length < size) {
    accScore = new Float64Array(size);
    accDistinct = new Uint16Array(size);
    accSeen = new Uint8Array(size);
  }
  if (accDocs.length < postings) {
    accDocs = new Int32Array(Math.max(postings, accDocs.length * 2));
  }
}

/**
 * Documents a block of `accumulatedTopK` spans: their accumulators (8 bytes a document, 1 more
 * for the first-met mark, 2 with coordination) stay in the processor's cache while every cursor
 * adds its postings there.
 */
export const ACCUMULATOR_BLOCK = 1 << 15;

/**
 * The same best `k` as `maxScoreTopK`, by scoring every posting term at a time into an
 * accumulator per document (cursors in order, so each document's sum is added in the same order
 * to the same bits), then offering each matched document once. For queries whose postings
 * pruning seldom skips (a short query with its prefix and fuzzy expansions: dozens of cursors,
 * most postings scored anyway), this spares MaxScore's heap step per posting.
 *
 * A block of `block` documents at a time: every cursor adds its postings in the block, then the
 * block's documents are offered. A query's dozens of cursors each spread over the whole index
 * (1M documents: 8 MB of accumulators), so adding them one cursor after another over all of it
 * missed the cache at nearly every posting; within a block the accumulators stay in the cache.
 * The sums are the same (each document's terms added in the cursors' order), and the best k
 * under `byRank` do not depend on the order documents are offered in.
 */
export function accumulatedTopK(cursors: readonly ScoreCursor[], opts: TopKOptions, block = ACCUMULATOR_BLOCK): DocHit[] {
  if (opts.k <= 0 || cursors.length === 0) return [];
  growScratch(cursors);
  const score = accScore;
  const distinct = accDistinct;
  const seen = accSeen;
  const touched = accDocs;
  const { keep, coordination } = opts;
  const m = cursors.length;
  const vals = cursors.map(valueFields);
  const at = new Int32Array(m);
  let lo = 0x7fffffff;
  let end = 0;
  for (const { docs } of cursors) {
    if (docs.length === 0) continue;
    lo = Math.min(lo, docs[0]);
    end = Math.max(end, docs[docs.length - 1] + 1);
  }
  const best = new Best(opts.k);
  let met = 0;
  for (; lo < end; lo += block) {
    const hi = lo + block;
    let n = 0;
    for (let i = 0; i < m; i++) {
      const c = cursors[i];
      const from = at[i];
      const to = (at[i] = seek(c.docs, from, hi));
      if (to === from) continue;
      if (coordination && c.distinct) for (let j = from; j < to; j++) distinct[c.docs[j]] += 1;
      n = addRange(c, vals[i], from, to, score, seen, touched, n);
    }
    for (let i = 0; i < n; i++) {
      const doc = touched[i];
      const sum = score[doc];
      score[doc] = 0;
      seen[doc] = 0;
      let matched = 0;
      if (coordination) {
        matched = distinct[doc];
        distinct[doc] = 0;
      }
      if (keep && !keep(doc)) continue;
      met += 1;
      const s = coordination ? sum * coordination(doc, matched) : sum;
      if (s < best.threshold) continue;
      best.offer({ id: opts.idOf(doc), score: s, doc });
    }
  }
  if (opts.counted) opts.counted.matched += met;
  return best.heap.sort(byRank);
}

/**
 * Adds cursor `c`'s value at its postings `from` .. `to` to `score` (`addPostings`), listing each
 * document met for the first time (`seen` 0) in `touched` from `n` on. Returns the new count.
 */
function addRange(
  c: ScoreCursor,
  vals: ReadonlyArray<readonly [Float64Array, number]> | undefined,
  from: number,
  to: number,
  score: Float64Array,
  seen: Uint8Array,
  touched: Int32Array,
  n: number,
): number {
  const { docs } = c;
  for (let j = from; j < to; j++) {
    const d = docs[j];
    if (seen[d] === 0) {
      seen[d] = 1;
      touched[n++] = d;
    }
  }
  addPostings(c, score, vals, from, to);
  return n;
}

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
  const rest = new Float64Array(m + 1);
  for (let j = m - 1; j >= 0; j--) rest[j] = rest[j + 1] + cursors[order[j]].bound;
  growScratch(cursors);
  const score = accScore;
  const state = accSeen;
  const cands = accDocs;
  const whole = new WholeScores(opts.whole ?? ((doc) => wholeScore(cursors, doc)), cursors.length, k);
  const top = TOP.reset(k);
  let n = 0;
  let theta = knownFloor(cursors, opts);
  let j = 0;
  // The documents the accumulators were written at lie in lo … hi.
  let lo = 0;
  let hi = -1;
  for (; j < m && rest[j] * SLACK >= theta; j++) {
    const c = cursors[order[j]];
    const { docs } = c;
    if (docs.length === 0) continue;
    lo = hi < 0 ? docs[0] : Math.min(lo, docs[0]);
    hi = Math.max(hi, docs[docs.length - 1]);
    n = gather(c, score, state, cands, n, keep);
    // Partial sums only grow: the best of those this term added to are the likeliest to make
    // the page (cheaper than over every candidate; that is taken once, below).
    theta = Math.max(theta, whole.floor(bestPartials(top.reset(k), docs, docs.length, score, state), docs.length));
  }
  theta = Math.max(theta, whole.floor(bestPartials(top.reset(k), cands, n, score, state), n));
  // Nothing after this adds new documents. The candidates that can still reach θ are listed in
  // document order and marked in a bitmap (the others cleared); their partial sums stay in the
  // accumulators. Found in one pass over the accumulators in order, or, when the documents met
  // are few next to the range they span (an RM3 pass at 1M documents met a fraction of each
  // window's, and the pass over every accumulator of the range was ~40% of this function's
  // time), by a pass over the documents met, the survivors then read off the bitmap in order.
  const alive = aliveBits(hi);
  let s = 0;
  if (n * SPARSE_MET < hi - lo + 1) {
    for (let i = 0; i < n; i++) {
      const d = cands[i];
      const st = state[d];
      state[d] = 0;
      if (st === CANDIDATE && (score[d] + rest[j]) * SLACK >= theta) alive[d >>> 5] |= 1 << (d & 31);
      else score[d] = 0;
    }
    // In document order: the bitmap's words in order, each word's bits from the lowest.
    for (let w = lo >>> 5; w <= hi >>> 5; w++) for (let x = alive[w]; x !== 0; x &= x - 1) cands[s++] = (w << 5) + 31 - Math.clz32(x & -x);
  } else {
    for (let d = lo; d <= hi; d++) {
      const st = state[d];
      if (st === 0) continue;
      state[d] = 0;
      if (st === CANDIDATE && (score[d] + rest[j]) * SLACK >= theta) {
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
      if ((v + after) * SLACK >= theta) cands[s++] = d;
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
  const exact = new Float64Array(n);
  if (opts.whole) for (let i = 0; i < n; i++) exact[i] = opts.whole(cands[i]);
  else for (const c of cursors) {
    const { docs } = c;
    let at = 0;
    for (let i = 0; i < n; i++) {
      at = seek(docs, at, cands[i]);
      if (at >= docs.length) break;
      if (docs[at] === cands[i]) exact[i] += cursorScore(c, at);
    }
  }
  const best = new Best(k);
  for (let i = 0; i < n; i++) if (exact[i] >= best.threshold) best.offer({ id: opts.idOf(cands[i]), score: exact[i], doc: cands[i] });
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

/**
 * Lists each document of cursor `c` met for the first time (`state` 0) in `cands` from `n` on,
 * marked `CANDIDATE` or, when `keep` leaves it out, `LEFT_OUT`, and adds the cursor's value at
 * each of its postings to `score`. Returns the new count.
 */
function gather(c: ScoreCursor, score: Float64Array, state: Uint8Array, cands: Int32Array, n: number, keep: ((doc: number) => boolean) | undefined): number {
  const { docs } = c;
  for (let at = 0; at < docs.length; at++) {
    const d = docs[at];
    if (state[d] === 0) {
      state[d] = keep && !keep(d) ? LEFT_OUT : CANDIDATE;
      cands[n++] = d;
    }
  }
  addPostings(c, score);
  return n;
}

/**
 * A cursor's values computed ahead, with their factors, per field that has them; `undefined`
 * without values. With them, a posting's score is their products summed in field order (0 where
 * a field lacks the term, and 0 added changes no sum): `cursorScore`'s, to the bit.
 */
function valueFields(c: ScoreCursor): ReadonlyArray<readonly [Float64Array, number]> | undefined {
  return c.vals?.flatMap((v, f) => (v ? [[v, c.factors[f]] as const] : []));
}

// Scratch bitmap of `boundedTopK`'s candidates (all zero between calls).
let aliveWords = new Int32Array(0);

/** The candidates' bitmap, all zero, for documents up to `hi`. */
function aliveBits(hi: number): Int32Array {
  const words = (hi >>> 5) + 1;
  if (aliveWords.length < words) aliveWords = new Int32Array(Math.max(words, aliveWords.length * 2));
  return aliveWords;
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

/** Adds cursor `c`'s value at its postings `from` .. `to` (all by default) to `score`; `vals`: its `valueFields`. */
function addPostings(c: ScoreCursor, score: Float64Array, vals = valueFields(c), from = 0, to = c.docs.length): void {
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

/** The k best values offered with their documents, in a min-heap by value (a scratch reused). */
class TopPairs {
  size = 0;
  private k = 0;
  vals = new Float64Array(0);
  docs = new Int32Array(0);

  reset(k: number): this {
    if (this.vals.length < k) {
      this.vals = new Float64Array(k);
      this.docs = new Int32Array(k);
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

const TOP = new TopPairs();

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

/** Document `doc`'s score over `cursors`, summed in their order (as the exhaustive scorer sums). */
function wholeScore(cursors: readonly ScoreCursor[], doc: number): number {
  let sum = 0;
  for (const c of cursors) {
    const at = seek(c.docs, 0, doc);
    if (at < c.docs.length && c.docs[at] === doc) sum += cursorScore(c, at);
  }
  return sum;
}

/** Min-heap of cursor indices by the document each points at. */
class DocHeap {
  private items: number[] = [];
  constructor(
    private readonly cursors: readonly ScoreCursor[],
    private readonly pos: Int32Array,
  ) {}

  get size(): number {
    return this.items.length;
  }

  private doc(i: number): number {
    return this.cursors[i].docs[this.pos[i]];
  }

  top(): number {
    return this.items[0];
  }

  topDoc(): number {
    return this.doc(this.items[0]);
  }

  /** Whether no other cursor is at the top's document. */
  topAlone(): boolean {
    const h = this.items;
    const d = this.doc(h[0]);
    return !(h.length > 1 && this.doc(h[1]) === d) && !(h.length > 2 && this.doc(h[2]) === d);
  }

  /** The smallest document after the top's (its children hold it), or 2³¹ with no other cursor. */
  secondDoc(): number {
    const h = this.items;
    let d = 0x7fffffff;
    if (h.length > 1) d = this.doc(h[1]);
    if (h.length > 2) d = Math.min(d, this.doc(h[2]));
    return d;
  }

  push(i: number): void {
    if (this.pos[i] >= this.cursors[i].docs.length) return;
    const h = this.items;
    h.push(i);
    let at = h.length - 1;
    const d = this.doc(i);
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (this.doc(h[parent]) <= d) break;
      h[at] = h[parent];
      at = parent;
    }
    h[at] = i;
  }

  pop(): void {
    const last = this.items.pop()!;
    if (this.items.length > 0) this.replaceTop(last);
  }

  /** Puts `i` at the root (its position moved on) and sifts it down. */
  replaceTop(i: number): void {
    const h = this.items;
    const n = h.length;
    const d = this.doc(i);
    let at = 0;
    for (;;) {
      const l = 2 * at + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.doc(h[r]) < this.doc(h[l]) ? r : l;
      if (this.doc(h[c]) >= d) break;
      h[at] = h[c];
      at = c;
    }
    h[at] = i;
  }

  rebuild(indices: readonly number[]): void {
    this.items = [];
    for (const i of indices) this.push(i);
  }
}
