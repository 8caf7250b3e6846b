import { BLOCK_SHIFT, blockCount } from './max-score';

/** What a term's BM25 values are computed from: the index's document lengths and live statistics. */
export interface ValueStats {
  /** Per document, its length in each of the index's `nf` fields (`doc * nf + field`). */
  readonly lengths: Int32Array;
  readonly nf: number;
  /** Average length per field of the index. */
  readonly avg: Float64Array;
  readonly k: number;
  readonly b: number;
  readonly d: number;
}

/** A run of postings scored: the BM25 value per searched field and the bound per block. */
export interface TermValues {
  /** Per searched field, the value at each posting (0 where the field lacks the term), or null when no posting's field holds it. */
  readonly vals: Array<Float64Array | null>;
  /** Per block of `1 << BLOCK_SHIFT` postings, the largest Σ over fields of boost × value (deleted documents left out). */
  readonly blockMax: Float64Array;
}

/**
 * The BM25 values of a term's postings `docs` (with their tfs per searched field `fields`, idf
 * per field `idf`) and the bound of each block, in one pass per field and one over the blocks.
 * Computing both at once is what a term's first use at an index version costs; before, the
 * bounds were computed at the first use and every value again at the second (the RM3 pass of
 * the same query), two passes over postings that at 1M documents run to hundreds of thousands
 * per common term. The expression and the order of the sums are the exhaustive scorer's, so
 * the values and bounds agree with it to the last bit. Documents whose `ids` entry is undefined
 * (deleted) are left out of the bounds when `ids` is given.
 */
export function termValues(
  docs: Int32Array,
  tfs: ReadonlyArray<Uint16Array | null>,
  fields: readonly number[],
  boost: readonly number[],
  idf: readonly number[],
  s: ValueStats,
  ids?: ReadonlyArray<string | undefined>,
): TermValues {
  const n = docs.length;
  const { lengths, nf, k, b, d } = s;
  const k1 = k + 1;
  // Each posting's Σ over fields of boost × value, summed field after field (the scorer's order).
  const sum = scratch(n);
  const vals = fields.map((f, j) => {
    const t = tfs[j];
    if (!t) return null;
    const v = new Float64Array(n);
    const w = idf[j];
    const avg = s.avg[f];
    const bj = boost[j];
    for (let i = 0; i < n; i++) {
      const tf = t[i];
      if (tf > 0) {
        const x = w * (d + (tf * k1) / (tf + k * (1 - b + (b * lengths[docs[i] * nf + f]) / avg)));
        v[i] = x;
        sum[i] += bj * x;
      }
    }
    return v;
  });
  const blockMax = new Float64Array(blockCount(n));
  for (let i = 0; i < n; i++) {
    if (ids && ids[docs[i]] === undefined) continue;
    if (sum[i] > blockMax[i >> BLOCK_SHIFT]) blockMax[i >> BLOCK_SHIFT] = sum[i];
  }
  return { vals, blockMax };
}

let sums = new Float64Array(0);

/** A zeroed scratch array of `n` sums (one for the process: `termValues` runs to its end in one step). */
function scratch(n: number): Float64Array {
  if (sums.length < n) sums = new Float64Array(Math.max(n, sums.length * 2));
  else sums.fill(0, 0, n);
  return sums;
}
