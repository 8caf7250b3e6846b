import { grow } from './growable';
import { BLOCK_SHIFT, blockCount, REGION_SHIFT, type RegionMax } from './cursor';
import { atOnce } from '../../lib/yield-to-loop';

/** What a term's BM25 values are computed from: the index's document lengths and live statistics. */
export interface ValueStats {
  /** Per document, its length in each of the index's `nf` fields (`doc * nf + field`). */
  readonly lengths: Int32Array;
  /** The same per field in 16 bits (`FieldLengths`). */
  readonly short: readonly Uint16Array[];
  readonly nf: number;
  /** Average length per field of the index. */
  readonly avg: Float64Array;
  readonly k: number;
  readonly b: number;
  readonly d: number;
}

/** A run of postings scored: the BM25 value per searched field and the bound per block. */
export interface TermValues {
  /** Per searched field, the value at each posting (0 where the field lacks the term), or null when no posting's field holds it (all null when not kept). */
  readonly vals: Array<Float64Array | null>;
  /** Per block of `1 << BLOCK_SHIFT` postings, the largest Σ over fields of boost × value (deleted documents left out). */
  readonly blockMax: Float64Array;
  /**
   * The same per region of documents (`ScoreCursor.regions`), for runs of at least a posting per
   * region they span (a sparser one's would take more bytes than its postings).
   */
  readonly regions?: RegionMax;
}

/**
 * The BM25 values of a term's postings `docs` (with their tfs per searched field `fields`, idf
 * per field `idf`) and the bound of each block, in one pass per field and one over the blocks.
 * Computing both at once is what a term's first use at an index version costs; before, the
 * bounds were computed at the first use and every value again at the second (the RM3 pass of
 * the same query), two passes over postings that at 1M documents run to hundreds of thousands
 * per common term. The expression and the order of the sums are the exhaustive scorer's, so
 * the values and bounds agree with it to the last bit. Documents whose `gone` entry is not 0
 * (deleted) are left out of the bounds when `gone` is given. With `keep` off the values are
 * computed for the bounds only, not kept: a term the query reads once (an RM3 expansion term, a
 * short query's expansion) would otherwise allocate 8 bytes per posting and field for nothing
 * until its next use, and while writes come in (each moves the index version) that allocation
 * showed in the event-loop stalls of an ingest with queries beside it.
 */
export function termValues(
  docs: Int32Array,
  tfs: ReadonlyArray<Uint16Array | null>,
  fields: readonly number[],
  boost: readonly number[],
  idf: readonly number[],
  s: ValueStats,
  gone?: Uint8Array,
  keep = true,
): TermValues {
  if (sums.length < docs.length) sums = new Float64Array(Math.max(docs.length, sums.length * 2));
  return atOnce(termValueSteps(docs, tfs, fields, boost, idf, s, sums, gone, keep));
}

/**
 * Postings per step of `termValueSteps` (and of the other passes over a term's postings in a
 * query). 2^14: a term's first use in the first queries after a build runs before its loops are
 * optimised, and steps of 2^16 took 56-94 ms of the loop thread's CPU at 1M documents (load ~10).
 */
export const VALUE_STEP = 16_384;

/**
 * `termValues` a step at a time, `VALUE_STEP` postings a step, with `sum` (at least
 * `docs.length` long) as its scratch: at 1M documents a common term has ~500k postings, and its
 * values (8 bytes each of fresh memory per field) made in one step were among the longest turns
 * of a query after a write (issue 39). The values are the same, to the bit: each posting's sum
 * is still taken field after field. The caller keeps `sum` to itself until the job is done.
 * `take`, if given, makes the values' arrays (of any contents: they are cleared here), from a
 * pool (`ArrayPool`) instead of fresh memory.
 */
export function* termValueSteps(
  docs: Int32Array,
  tfs: ReadonlyArray<Uint16Array | null>,
  fields: readonly number[],
  boost: readonly number[],
  idf: readonly number[],
  s: ValueStats,
  sum: Float64Array,
  gone?: Uint8Array,
  keep = true,
  take?: (n: number) => Float64Array,
): Generator<void, TermValues> {
  const n = docs.length;
  const { lengths, short, nf, k, b, d } = s;
  const k1 = k + 1;
  // Each posting's Σ over fields of boost × value, summed field after field (the scorer's order).
  for (let at = 0; at < n; at += VALUE_STEP) {
    sum.fill(0, at, Math.min(n, at + VALUE_STEP));
    if (at + VALUE_STEP < n) yield;
  }
  const vals: Array<Float64Array | null> = [];
  for (let j = 0; j < fields.length; j++) {
    const f = fields[j];
    const t = tfs[j];
    if (!t) {
      vals.push(null);
      continue;
    }
    const v = !keep ? undefined : take ? take(n) : new Float64Array(n);
    const w = idf[j];
    const avg = s.avg[f];
    const bj = boost[j];
    const len = short[f];
    for (let at = 0; at < n; at += VALUE_STEP) {
      const to = Math.min(n, at + VALUE_STEP);
      if (v && take) v.fill(0, at, to);
      for (let i = at; i < to; i++) {
        const tf = t[i];
        if (tf > 0) {
          const doc = docs[i];
          let l = len[doc];
          if (l === LONG_LENGTH) l = lengths[doc * nf + f];
          const x = w * (d + (tf * k1) / (tf + k * (1 - b + (b * l) / avg)));
          if (v) v[i] = x;
          sum[i] += bj * x;
        }
      }
      yield;
    }
    vals.push(v ?? null);
  }
  const blockMax = new Float64Array(blockCount(n));
  const first = n > 0 ? docs[0] >> REGION_SHIFT : 0;
  const spanned = n > 0 ? (docs[n - 1] >> REGION_SHIFT) - first + 1 : 0;
  const regionMax = n > 0 && n >= spanned ? new Float64Array(spanned) : undefined;
  for (let at = 0; at < n; at += VALUE_STEP) {
    for (let i = at, to = Math.min(n, at + VALUE_STEP); i < to; i++) {
      if (gone && gone[docs[i]] !== 0) continue;
      if (sum[i] > blockMax[i >> BLOCK_SHIFT]) blockMax[i >> BLOCK_SHIFT] = sum[i];
      if (regionMax) {
        const r = (docs[i] >> REGION_SHIFT) - first;
        if (sum[i] > regionMax[r]) regionMax[r] = sum[i];
      }
    }
    if (at + VALUE_STEP < n) yield;
  }
  return { vals, blockMax, regions: regionMax && { first, max: regionMax } };
}

// The scratch of `termValues` (one for the process: it runs to its end at once).
let sums = new Float64Array(0);

/**
 * The least the cache of scored postings (`CompactIndex`'s terms' values and bounds of one
 * index version) may hold, bytes: what a small index's queries use.
 */
export const SCORED_CACHE_MIN_BYTES = 64 << 20;

/**
 * The most the cache of scored postings may hold, bytes: twice what the base segment's postings
 * take (`postingBytes`: 6 bytes per posting and field), at least `SCORED_CACHE_MIN_BYTES`. Values
 * take 8 bytes per posting and field, so every term of the base fits with room for the appended
 * segment's: the cache grows with the index instead of holding a fixed count (4M postings held
 * the common terms of 200k documents, not of 1M, where one stream of the 93 Vaswani queries
 * uses ~14M postings, ~230 MB of values, and the base's postings take 177 MB: a budget of 1×
 * made that stream evict what it would use again, 2× its CPU per query), and it is bounded
 * where it used to count only postings not shared with the base.
 */
export function scoredCacheBudget(postingBytes: number): number {
  return Math.max(SCORED_CACHE_MIN_BYTES, 2 * postingBytes);
}

/** Bytes a term's scored parts hold beyond the arrays they share with `shared` (its base run's documents). */
export function scoredBytes(
  parts: ReadonlyArray<{
    docs: Int32Array;
    tfs: ReadonlyArray<Uint16Array | null>;
    vals?: ReadonlyArray<Float64Array | null>;
    blockMax: Float64Array;
    regions?: RegionMax;
  }>,
  shared?: Int32Array,
): number {
  let n = 0;
  for (const p of parts) {
    n += p.blockMax.byteLength + (p.regions?.max.byteLength ?? 0);
    for (const v of p.vals ?? []) n += v?.byteLength ?? 0;
    if (p.docs === shared) continue;
    n += p.docs.byteLength;
    for (const t of p.tfs) n += t?.byteLength ?? 0;
  }
  return n;
}

/** A length of `FieldLengths` that does not fit in 16 bits: read it from the full table. */
export const LONG_LENGTH = 0xffff;

/**
 * The documents' field lengths per field in 16 bits, beside the index's table of 32 bits per
 * document and field (interleaved): a term's pass reads one length per posting, and at 1M
 * documents the full table is 12 MB, so nearly every posting of a long run missed the cache
 * there (the single largest cost of a term's first use in the profile). Per field and in 16
 * bits the text field's lengths take 2 MB. Kept per base segment (a merge renumbers the
 * documents) and extended to documents appended since; a length of 0xffff or more is read from
 * the full table.
 */
export class FieldLengths {
  private of: object | undefined;
  private end = 0;
  private per: Uint16Array[] = [];

  /**
   * Takes `per` (per field, the lengths of documents `0 … end - 1` of base `base` in 16 bits, as
   * `get` makes them, possibly with room after them) as the table: a merge makes it in its steps.
   */
  seed(base: object, per: Uint16Array[], end: number): void {
    this.of = base;
    this.per = per;
    this.end = end;
  }

  /** The table for documents `0 … next - 1` of base `base` (any object that changes with the document numbering), from `lengths`. */
  get(base: object, lengths: Int32Array, nf: number, next: number): readonly Uint16Array[] {
    if (base !== this.of) {
      this.of = base;
      this.end = 0;
      this.per = [];
    }
    if (this.end < next) {
      for (let f = 0; f < nf; f++) {
        const out = (this.per[f] = grow(this.per[f] ?? new Uint16Array(0), next));
        for (let doc = this.end; doc < next; doc++) out[doc] = Math.min(lengths[doc * nf + f], LONG_LENGTH);
      }
      this.end = next;
    }
    return this.per;
  }
}
