import { byRank } from './top-hits';

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
}

/** One ranked document. */
export interface TopHit {
  readonly id: string;
  readonly score: number;
}

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
  readonly heap: TopHit[] = [];
  constructor(private readonly k: number) {}

  get full(): boolean {
    return this.heap.length >= this.k;
  }

  /** Score of the worst kept hit once full, else −∞. */
  get threshold(): number {
    return this.full ? this.heap[0].score : -Infinity;
  }

  offer(hit: TopHit): boolean {
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
 * Each document's final score adds its terms' scores in the cursors' order (fields in order
 * within a term), as the exhaustive scorer does, so the scores are the same to the last bit.
 */
export function maxScoreTopK(cursors: readonly ScoreCursor[], opts: TopKOptions): TopHit[] {
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
  let p = 0;
  let threshold = -Infinity;
  const heap = new DocHeap(cursors, pos);
  for (let j = 0; j < m; j++) heap.push(order[j]);
  // The exhaustive scorer's expression and order, so scores agree to the last bit.
  const termScore = (i: number, at: number): number => {
    const c = cursors[i];
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
  };
  while (heap.size > 0) {
    const doc = heap.topDoc();
    let n = 0;
    let partial = 0;
    while (heap.size > 0 && heap.topDoc() === doc) {
      const i = heap.top();
      contrib[i] = termScore(i, pos[i]);
      partial += contrib[i];
      hit[i] = 1;
      matched[n++] = i;
      pos[i] += 1;
      if (pos[i] < cursors[i].docs.length) heap.replaceTop(i);
      else heap.pop();
    }
    let pruned = false;
    for (let j = p - 1; j >= 0; j--) {
      if ((partial + cum[j + 1]) * maxCoord * SLACK < threshold) {
        pruned = true;
        break;
      }
      const i = order[j];
      const c = cursors[i];
      pos[i] = seek(c.docs, pos[i], doc);
      if (pos[i] < c.docs.length && c.docs[pos[i]] === doc) {
        contrib[i] = termScore(i, pos[i]);
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
    if (!best.offer({ id: opts.idOf(doc), score })) continue;
    if (!best.full) continue;
    threshold = best.threshold;
    const before = p;
    while (p < m && cum[p + 1] * maxCoord * SLACK < threshold) p += 1;
    if (p !== before) heap.rebuild(order.slice(p).filter((i) => pos[i] < cursors[i].docs.length));
  }
  return best.heap.sort(byRank);
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
