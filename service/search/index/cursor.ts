/**
 * What the scorers (`scoring/`) and the query plan (`query/`) read of the index: the one file of
 * `index/` they may import (.dependency-cruiser.cjs, rules of issue 38). The index builds these
 * cursors and sources; the scorers walk them without knowing how postings are stored.
 */

/** One query term and its weight (RM3 weight, or 1; a term given twice counts twice). */
export type WeightedTerm = readonly [term: string, weight: number];

/** Postings per block of `ScoreCursor.blockMax`: `1 << BLOCK_SHIFT`. */
export const BLOCK_SHIFT = 6;

/** Documents per region of `ScoreCursor.regions`: `1 << REGION_SHIFT`. */
export const REGION_SHIFT = 8;

/**
 * A term's bound per region of `1 << REGION_SHIFT` documents (by short id, from 0): `max[r]` for
 * documents `(first + r) << REGION_SHIFT …`, at least the largest score (before the query weight,
 * as `ScoreCursor.blockMax`) the term gives a document there, 0 where it holds none.
 */
export interface RegionMax {
  /** The region of `max[0]`. */
  readonly first: number;
  readonly max: Float64Array;
}

/** Blocks of a run of `n` postings. */
export function blockCount(n: number): number {
  return (n + (1 << BLOCK_SHIFT) - 1) >> BLOCK_SHIFT;
}

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
   * Per block of `BLOCK_SIZE` postings (`docs[b·BLOCK_SIZE ..]`), times `blockScale`, at least the
   * largest score this term gives a document of the block (block-max pruning; without it, `bound`
   * for every block): `blockBound`.
   */
  readonly blockMax?: Float64Array;
  /**
   * What `blockMax` and `regions` are multiplied by (the query weight): the index's cached bounds
   * are shared, not copied scaled per query (a copy a cursor was ~160 KB of new typed arrays per
   * RM3 query at 1M documents, external memory whose every 64 MB started a full collection).
   * @default 1
   */
  readonly blockScale?: number;
  /**
   * Per region of documents, times `blockScale`, at least the largest score this term gives a
   * document of the region (0 where it has none): by document, so a window of the cursor has the
   * same (`boundedTopK` bounds its candidates by them). @default none: `bound` everywhere
   */
  readonly regions?: RegionMax;
  /** First occurrence of its term in the query (counts toward coordination). */
  readonly distinct: boolean;
}

/**
 * A cursor with every field of `ScoreCursor` set (absent ones `undefined`), in one order, made
 * here only: the index's cursors and `windowedTopK`'s windows of them then share one hidden class,
 * so the scorers' property loads see one map, not one per maker (a window's cursor without
 * `blockMax`/`blockScale` was a second map; issue 40).
 */
export function scoreCursor(c: ScoreCursor): ScoreCursor {
  return {
    docs: c.docs,
    tfs: c.tfs,
    vals: c.vals,
    idf: c.idf,
    scoring: c.scoring,
    factors: c.factors,
    bound: c.bound,
    blockMax: c.blockMax,
    blockScale: c.blockScale,
    regions: c.regions,
    distinct: c.distinct,
  };
}

/** Cursor `c`'s bound of block `b`: its `blockMax` there times its `blockScale` (the same bits as a scaled copy), else its `bound`. */
export function blockBound(c: ScoreCursor, b: number): number {
  return c.blockMax ? c.blockMax[b] * (c.blockScale ?? 1) : c.bound;
}

/** Window counts of a pair of terms: `o` ordered (`#1`), `u` unordered (`#uwN`). */
export interface WindowCounts {
  o: number;
  u: number;
}

/** What the proximity stage reads of an index: the field with positions (`text`) and its statistics. */
export interface ProximitySource {
  /** The id of an index term, or undefined. */
  termId(term: string): number | undefined;
  /** Live documents (BM25's N). */
  documents(): number;
  /** Average length of the field with positions. */
  averageLength(): number;
  /** Length of a document's field with positions. */
  length(doc: number): number;
  /** The window counts of terms `a` and `b` in a document's field with positions. */
  windows(doc: number, a: number, b: number, window: number, out: WindowCounts): WindowCounts;
  /** Live documents with an ordered (`o`) and an unordered (`u`) window of `a` and `b`: a step at a time. */
  windowDf(a: number, b: number, window: number): Generator<void, WindowCounts>;
}
