import { BLOCK_SHIFT, knownFloor, type ScoreCursor, type TopKOptions } from './max-score';
import { byRank, type Scored } from './top-hits';

/**
 * Postings a window of `windowedTopK` holds, about: a query over fewer postings is scored in one
 * step. 2^16: during an ingest at 200k documents (term values rebuilt after every write) a window
 * of `boundedTopK` takes up to ~10 ms; at 2^18 it took up to 37 ms, the longest unit of a query's
 * slices (issue 28, seventh slice: BENCHMARKS.md).
 */
export const WINDOW_POSTINGS = 1 << 16;

/** A top-k scorer over cursors (`maxScoreTopK`, `boundedTopK`, `accumulatedTopK`). */
export type TopK = (cursors: readonly ScoreCursor[], opts: TopKOptions) => Scored[];

/** First index ≥ `from` of `docs` (increasing) whose document is ≥ `target`. */
function lowerBound(docs: Int32Array, from: number, target: number): number {
  let lo = from;
  let hi = docs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (docs[mid] < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Cursor `c`'s postings `from` .. `to` as a cursor of their own: the same arrays' views, bounded
 * by the largest block bound among the blocks they sit in (at most `c.bound`), without block
 * bounds of their own (the window does not start on a block boundary).
 */
function windowOf(c: ScoreCursor, from: number, to: number): ScoreCursor {
  let bound = c.bound;
  if (c.blockMax) {
    bound = 0;
    for (let b = from >> BLOCK_SHIFT; b <= (to - 1) >> BLOCK_SHIFT; b++) if (c.blockMax[b] > bound) bound = c.blockMax[b];
  }
  return {
    docs: c.docs.subarray(from, to),
    tfs: c.tfs.map((t) => t && t.subarray(from, to)),
    vals: c.vals?.map((v) => v && v.subarray(from, to)),
    idf: c.idf,
    scoring: c.scoring,
    factors: c.factors,
    bound,
    distinct: c.distinct,
  };
}

/**
 * `topK(cursors, opts)` computed a window of documents at a time, `pause()` awaited between
 * windows, so that one query never holds the event loop for long. Windows are ranges of
 * document ids holding about `windowPostings` postings together; each window's best `opts.k`
 * are exact (every document's score is summed from the same cursors in the same order, so to
 * the same bits), and the best `opts.k` of their union, by score then id, are the whole
 * query's. Once k hits are found, a window starts from their k-th score (`TopKOptions.floor`),
 * so it prunes as the one pass would. A query over fewer postings is one window: `topK` as is.
 */
export async function windowedTopK(topK: TopK, cursors: readonly ScoreCursor[], opts: TopKOptions, pause: () => Promise<void>, windowPostings = WINDOW_POSTINGS): Promise<Scored[]> {
  let postings = 0;
  let end = 0;
  for (const { docs } of cursors) {
    postings += docs.length;
    if (docs.length > 0) end = Math.max(end, docs[docs.length - 1] + 1);
  }
  const windows = Math.ceil(postings / windowPostings);
  if (windows <= 1) return topK(cursors, opts);
  // Known documents (`TopKOptions.known`) are scored once over the whole cursors: their floor
  // holds for every window, where only the window's own known documents would be seen.
  const base: TopKOptions = opts.known ? { ...opts, known: undefined, floor: knownFloor(cursors, opts) } : opts;
  const width = Math.ceil(end / windows);
  const at = new Int32Array(cursors.length);
  let best: Scored[] = [];
  for (let lo = 0; lo < end; lo += width) {
    const part: ScoreCursor[] = [];
    for (let i = 0; i < cursors.length; i++) {
      const c = cursors[i];
      const to = lowerBound(c.docs, at[i], lo + width);
      if (to > at[i]) part.push(windowOf(c, at[i], to));
      at[i] = to;
    }
    // The k-th best score so far: documents of this window below it cannot make the page.
    const found = topK(part, best.length < opts.k ? base : { ...base, floor: Math.max(base.floor ?? -Infinity, best[opts.k - 1].score) });
    if (found.length) best = [...best, ...found].sort(byRank).slice(0, opts.k);
    if (lo + width < end) await pause();
  }
  return best;
}
