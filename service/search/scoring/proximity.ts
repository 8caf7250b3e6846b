import type { ProximitySource, WindowCounts } from '../index/cursor';
import { byRank, type Scored } from './top-hits';

/**
 * Proximity in ranking (issue 28, sixth slice): the sequential dependence model's window
 * features (Metzler & Croft 2005), weight-free, added to the exact top `depth` of the final
 * ranking and re-sorted, as issue 28's ranking sweep (bench/search/sweep-collection.ts,
 * `proximity()`) measured them. For every adjacent pair of the query's terms (distinct, each pair
 * once), a document's ordered `#1` and unordered `#uwN` window counts (`windowCounts`) are each
 * turned into a BM25 value with the pair's own document frequency over the whole index (the live
 * documents holding such a window: `ProximitySource.windowDf`), weighted SDM's 0.1 and 0.05
 * against the terms' 0.85, and added × `weight` × one original query term's weight in the final
 * pass. Only documents already in the top `depth` change places, so a pruned page equals an
 * exhaustive one whenever the top `depth` does.
 */

/** `RankingOptions.proximity`. */
export interface ProximityOptions {
  /** Scale of the window features against SDM's standard weights; 0 = off. */
  readonly weight: number;
  /** The unordered window's span `N` of `#uwN`: b within N − 1 tokens of a. */
  readonly window: number;
  /** The top this many of the final ranking are re-scored (R). */
  readonly depth: number;
}

// SDM's standard weights: terms 0.85, ordered windows 0.1, unordered 0.05.
const ORDERED = 0.1 / 0.85;
const UNORDERED = 0.05 / 0.85;
// The BM25 of window counts, as the sweep measured it: k1 0.9, b 0.4 (the service's BM25 before
// issue 28), written as the sweep writes them (k1 + 1 = 1.9, 1 − b = 0.6) so the values agree to the bit.
const K1 = 0.9;
const K1_PLUS_1 = 1.9;
const ONE_MINUS_B = 0.6;
const B = 0.4;

/**
 * Pairs a query is re-scored with, at most (the first ones, in query order): each may cost a
 * pass over postings on its first use, so a request's work stays bounded whatever its text. The
 * longest query of Vaswani and of the Debian collection has 13.
 */
export const MAX_QUERY_PAIRS = 16;

/** The adjacent pairs of `terms` (repeats kept, in order), each distinct pair of distinct terms once, at most `MAX_QUERY_PAIRS`. */
export function queryPairs(terms: readonly string[]): Array<readonly [string, string]> {
  const pairs: Array<readonly [string, string]> = [];
  for (let i = 0; i + 1 < terms.length && pairs.length < MAX_QUERY_PAIRS; i++) {
    const a = terms[i];
    const b = terms[i + 1];
    if (a !== b && !pairs.some(([x, y]) => x === a && y === b)) pairs.push([a, b]);
  }
  return pairs;
}

/**
 * `hits` (the exact top `max(depth, page)` of the final pass, best first, with their short ids
 * `docs`) with the top `depth` re-scored by proximity and re-sorted (`byRank`); the rest as they
 * were. `unit`: one original query term's weight in the final pass (RM3's λ / query length).
 * A step at a time: each pair's window document frequency may take a pass over postings.
 */
export function* proximityRerank<T extends Scored>(
  source: ProximitySource,
  terms: readonly string[],
  hits: readonly T[],
  docs: readonly number[],
  opts: ProximityOptions,
  unit: number,
): Generator<void, T[]> {
  if (!(opts.weight > 0) || hits.length === 0) return [...hits];
  const pairs: Array<[number, number]> = [];
  for (const [a, b] of queryPairs(terms)) {
    const ta = source.termId(a);
    const tb = source.termId(b);
    if (ta !== undefined && tb !== undefined) pairs.push([ta, tb]);
  }
  if (!pairs.length) return [...hits];
  const depth = Math.min(opts.depth, hits.length);
  const N = source.documents();
  const avg = source.averageLength();
  const bm25 = (tf: number, len: number, df: number) =>
    tf && df
      ? Math.log(1 + (N - df + 0.5) / (df + 0.5)) * ((tf * K1_PLUS_1) / (tf + K1 * (ONE_MINUS_B + (B * len) / avg)))
      : 0;
  // A plain array: `depth` (a few dozen) numbers, not a backing store of their own per query.
  const extra: number[] = new Array<number>(depth).fill(0);
  const w: WindowCounts = { o: 0, u: 0 };
  for (const [a, b] of pairs) {
    let df: WindowCounts | undefined;
    for (let i = 0; i < depth; i++) {
      const d = docs[i];
      source.windows(d, a, b, opts.window, w);
      if (!w.o && !w.u) continue;
      const { o, u } = w;
      df ??= yield* source.windowDf(a, b, opts.window);
      const len = source.length(d);
      extra[i] += ORDERED * bm25(o, len, df.o) + UNORDERED * bm25(u, len, df.u);
    }
    yield;
  }
  const scale = opts.weight * unit;
  const top = hits.slice(0, depth).map((h, i) => (extra[i] ? { ...h, score: h.score + scale * extra[i] } : h));
  return [...top.sort(byRank), ...hits.slice(depth)];
}
