import { byRank, type DocHit } from './top-hits';
import type { ScoreCursor } from '../index/cursor';
import { addPostings, Best, seek, valueFields, type TopKOptions } from './top-k';
import { TopKScratch } from './top-k-scratch';

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
export function accumulatedTopK(
  cursors: readonly ScoreCursor[],
  opts: TopKOptions,
  block = ACCUMULATOR_BLOCK,
): DocHit[] {
  if (opts.k <= 0 || cursors.length === 0) return [];
  const scratch = opts.scratch ?? new TopKScratch();
  scratch.grow(cursors);
  const { score, distinct, seen, docs: touched } = scratch;
  const { keep, coordination } = opts;
  // A filter's bitmap, tested here rather than through its function: a call per document met.
  const bits = keep?.bits;
  const m = cursors.length;
  const vals = cursors.map(valueFields);
  const at = scratch.i32('accumulated.at', m);
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
      if (bits ? (bits[doc >>> 5] & (1 << (doc & 31))) === 0 : keep !== undefined && !keep(doc)) continue;
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
