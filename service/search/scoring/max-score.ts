import { byRank, type DocHit } from './top-hits';
import { BLOCK_SHIFT, blockBound, blockCount, type ScoreCursor } from '../index/cursor';
import { TopKScratch } from './top-k-scratch';
import { Best, blockEnd, cursorScore, knownFloor, seek, seekBlock, SLACK, type TopKOptions } from './top-k';

/** Non-essential terms (those with the largest bounds) a block-max check looks at by their blocks. */
export const BLOCK_CHECK_TERMS = 3;

/** Block-max checks a query makes before it keeps making them only while at least 1 in 8 skips postings. */
const CHECKS_ON_TRIAL = 256;

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
  const scratch = opts.scratch ?? new TopKScratch();
  const cum = scratch.f64('maxScore.cum', m + 1);
  for (let j = 0; j < m; j++) cum[j + 1] = cum[j] + cursors[order[j]].bound;
  const pos = scratch.i32('maxScore.pos', m);
  const contrib = scratch.f64('maxScore.contrib', m);
  const hit = scratch.u8('maxScore.hit', m);
  const matched = scratch.i32('maxScore.matched', m);
  const best = new Best(opts.k);
  // order[0 .. p) are non-essential; the essential ones sit in a heap by their current document,
  // so each posting costs a heap step instead of a pass over every term.
  const floor = knownFloor(cursors, opts);
  let threshold = floor;
  let p = 0;
  while (p < m && cum[p + 1] * maxCoord * SLACK < threshold) p += 1;
  const heap = new DocHeap(cursors, pos, scratch.i32('maxScore.cur', m));
  for (let j = p; j < m; j++) heap.push(order[j]);
  // Per cursor, the block its shallow seeks (non-essential) have reached.
  const blk = scratch.i32('maxScore.blk', m);
  // near[j + 1]: what order[low .. j] can add to the current document (block bounds), from cum[low].
  const near = scratch.f64('maxScore.near', m + 1);
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
            v = blockBound(o, ob);
            end = Math.min(end, blockEnd(o.docs, ob));
          }
        }
        near[j + 1] = near[j] + v;
      }
      if ((blockBound(c, b) + near[p]) * maxCoord * SLACK < threshold) {
        skips += 1;
        pos[top] = seek(c.docs, pos[top], end + 1);
        if (pos[top] < c.docs.length) heap.replaceTop(top);
        else heap.pop();
        continue;
      }
    }
    if (opts.keep && !opts.keep(doc)) {
      // Left out by the filter: its postings are passed over unscored (it could never be offered).
      while (heap.size > 0 && heap.topDoc() === doc) {
        const i = heap.top();
        pos[i] += 1;
        if (pos[i] < cursors[i].docs.length) heap.replaceTop(i);
        else heap.pop();
      }
      continue;
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
    const keep = !pruned && partial * maxCoord * SLACK >= threshold;
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
 * Min-heap of cursor indices by the document each points at. Each entry's document is read from
 * its cursor once, when it enters or moves (`push`, `replaceTop`), and kept in `cur`: the sifts'
 * comparisons read one array instead of the cursor, its postings and its position (at 1M
 * documents those reads were a quarter of the first pass's own time).
 */
class DocHeap {
  private items: number[] = [];
  constructor(
    private readonly cursors: readonly ScoreCursor[],
    private readonly pos: Int32Array,
    private readonly cur: Int32Array,
  ) {}

  get size(): number {
    return this.items.length;
  }

  top(): number {
    return this.items[0];
  }

  topDoc(): number {
    return this.cur[this.items[0]];
  }

  /** Whether no other cursor is at the top's document. */
  topAlone(): boolean {
    const h = this.items;
    const cur = this.cur;
    const d = cur[h[0]];
    return !(h.length > 1 && cur[h[1]] === d) && !(h.length > 2 && cur[h[2]] === d);
  }

  /** The smallest document after the top's (its children hold it), or 2³¹ with no other cursor. */
  secondDoc(): number {
    const h = this.items;
    let d = 0x7fffffff;
    if (h.length > 1) d = this.cur[h[1]];
    if (h.length > 2) d = Math.min(d, this.cur[h[2]]);
    return d;
  }

  push(i: number): void {
    if (this.pos[i] >= this.cursors[i].docs.length) return;
    const h = this.items;
    const cur = this.cur;
    h.push(i);
    let at = h.length - 1;
    const d = (cur[i] = this.cursors[i].docs[this.pos[i]]);
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (cur[h[parent]] <= d) break;
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
    const cur = this.cur;
    const n = h.length;
    const d = (cur[i] = this.cursors[i].docs[this.pos[i]]);
    let at = 0;
    for (;;) {
      const l = 2 * at + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && cur[h[r]] < cur[h[l]] ? r : l;
      if (cur[h[c]] >= d) break;
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
