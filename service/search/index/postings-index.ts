import { f64, i32, sized, u16 } from '../../lib/untracked-arrays';
import { ArrayPool } from './array-pool';
import { scoreCursor, type CursorScoring, type RegionMax, type ScoreCursor, type WeightedTerm } from './cursor';
import type { MergeResult } from './merge';
import { SegmentedIndex } from './segmented-index';
import {
  FieldLengths,
  scoredBytes,
  scoredCacheBudget,
  termValueSteps,
  VALUE_STEP,
  type TermValues,
  type ValueStats,
} from './term-values';
import { site, traced, tracing } from './step-trace';
import { wholeScorer } from './whole-score';

/** BM25 parameters in MiniSearch's names: saturation `k` (k1), length normalisation `b`, BM25+ floor `d`. */
export interface Bm25Params {
  readonly k: number;
  readonly b: number;
  readonly d: number;
}

/**
 * Postings per 32-document word a part of a term's postings must hold for `unionSize` to keep it
 * as a bitmap (OR-ed in a word at a time instead of one step per posting): at 2 the bitmap takes
 * at most half the bytes of the part's document ids.
 */
export const UNION_BITMAP_DENSITY = 2;

/**
 * The least bytes of free arrays each of the scored postings' pools keeps (`ArrayPool`): beyond
 * it, a share of the scored postings' cache budget (`poolBudgets`).
 */
const POOL_MIN_BYTES = 32 << 20;

/** The pools a term's live postings and values are taken from at one index version and given back to at the next. */
interface PostingPools {
  readonly docs: ArrayPool<Int32Array>;
  readonly tfs: ArrayPool<Uint16Array>;
  readonly vals: ArrayPool<Float64Array>;
}

/**
 * Which documents a count keeps: a predicate by short id, and optionally the same as a bitmap
 * (bit d of word d >> 5 for document d; words past its end keep nothing), which `unionSize` ANDs
 * a word at a time instead of calling the predicate per document.
 */
export type DocKeep = ((docId: number) => boolean) & {
  readonly bits?: Int32Array;
  /**
   * Takes the union's documents a 32-document word at a time instead (word `w`, its bits `x`,
   * never 0) and answers how many of them count: a facet tally reads them so.
   */
  readonly word?: (w: number, x: number) => number;
  /**
   * Takes the union's documents all at once instead: its words `lo … hi - 1` (bit d of word
   * d >> 5 for document d; left as they are), and answers how many of them count.
   */
  readonly words?: (union: Int32Array, lo: number, hi: number) => number;
};

/** Set bits of a 32-bit word. */
export function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/**
 * Sets the bit of each of `docs` in `words`, whose word 0 stands for documents `lo·32` …
 * `lo·32 + 31`, `VALUE_STEP` postings a step; returns `words`.
 */
function* settingBits(docs: Int32Array, words: Int32Array, lo: number): Generator<void, Int32Array> {
  for (let at = 0; at < docs.length; at += VALUE_STEP) {
    for (let i = at, to = Math.min(docs.length, at + VALUE_STEP); i < to; i++) {
      const d = docs[i];
      words[(d >>> 5) - lo] |= 1 << (d & 31);
    }
    site('bits:set', undefined, docs.length);
    if (at + VALUE_STEP < docs.length) yield;
  }
  return words;
}

/**
 * Words of the union's bitmap counted a step (`unionSize`): 2^13, 262,144 documents (before the
 * count's loops are optimised, the whole of 1M documents in one step was one of the longest
 * turns of the first queries after a build).
 */
const COUNT_WORDS = 8_192;

/** A term's live postings in document order with their tfs per searched field, and what scores them. */
interface TermPostings {
  /**
   * The live postings in parts, each in document order: the base segment's (shared with
   * `baseRun` unless documents were deleted), then the appended segments'. A document is in one
   * part only.
   */
  readonly parts: Array<{
    readonly docs: Int32Array;
    /** Per searched field, parallel to `docs` (0 = not in that field); null when the part's documents lack the term there. */
    readonly tfs: Array<Uint16Array | null>;
    /** At least the largest Σ over fields of field boost × BM25 value in this part. */
    readonly maxImpact: number;
    /** The same per block of `BLOCK_SIZE` postings (`ScoreCursor.blockMax` before the query weight). */
    readonly blockMax: Float64Array;
    /** The same per region of documents (`ScoreCursor.regions`), for runs dense enough. */
    readonly regions?: RegionMax;
    /**
     * Per searched field, the BM25 value at each of `docs` (`termValues`, with the bounds), when
     * the term was to be read twice at its first use at this index version, else filled in at its
     * second use (queries between writes read them instead of computing each value again).
     */
    vals?: Array<Float64Array | null>;
    /** Counted by `unionSize` before, by scattering its documents (its bitmap is made at the next count). */
    counted?: boolean;
    /** Its documents as a bitmap of the 32-document words `lo` .. (`unionSize`), once counted twice and dense enough. */
    bits?: { readonly lo: number; readonly words: Int32Array };
  }>;
  /** Per searched field (0 where no live document's field holds the term). */
  readonly idf: number[];
}

/**
 * A term's postings assembled for queries over the segments of `SegmentedIndex`: per searched
 * field, with BM25 values and block bounds, cached for the index version; the cursors the scorers
 * walk (`cursor.ts`), and the number of documents they match together.
 */
export class PostingsIndex extends SegmentedIndex {
  private postingCache = new Map<string, TermPostings>();
  // Bytes each cached entry holds beyond the base runs it shares (`scoredBytes`).
  private postingCacheSizes = new Map<string, number>();
  private postingCacheKey = '';
  private postingCacheVersion = -1;
  private postingCacheSize = 0;
  // What the cache's entries of one version took, given back when the version moves (see `postings`).
  private readonly pools: PostingPools = {
    docs: new ArrayPool((n) => sized.i32(n), POOL_MIN_BYTES),
    tfs: new ArrayPool((n) => sized.u16(n), POOL_MIN_BYTES),
    vals: new ArrayPool((n) => sized.f64(n), POOL_MIN_BYTES),
  };
  // Document lengths per field in 16 bits for the scored postings' pass (`termValues`).
  private fieldLengths = new FieldLengths();
  // Scratch bitmap of `unionSize`, all zero between calls.
  private unionBits = i32(0);
  // Scratch of a term's passes (its values' sums, the indices of its live postings), kept from
  // query to query: the query's while it runs (one at a time), not fresh memory per term.
  private valueSums = f64(0);
  private liveKeep = i32(0);

  /**
   * The term's postings as sorted arrays of BM25 values, from the cache or built from the
   * segments, a step at a time: a common term's first use at an index version (its base run
   * built, the field lengths' table after a merge, its live postings gathered, their values) is
   * several passes over ~500k postings at 1M documents, each a step of its own (issue 39). Its
   * scratch is the query's (queries run one at a time, query-gate.ts) and the index does not
   * change between the steps.
   */
  private *postings(
    term: string,
    fields: readonly number[],
    boost: readonly number[],
    bm25: Bm25Params,
    keepValues: boolean,
  ): Generator<void, TermPostings | undefined> {
    const key = `${this.version}:${bm25.k}:${bm25.b}:${bm25.d}:${fields.map((f, i) => `${f}=${boost[i]}`).join(',')}`;
    if (key !== this.postingCacheKey) {
      // A write moved the version: no query reads the entries any more (queries run one at a
      // time, and the index changes only between them, query-gate.ts), so their arrays serve
      // this version's. Not on a change of parameters alone, which a query in progress could make.
      if (this.version !== this.postingCacheVersion) {
        this.poolBudgets();
        for (const entry of this.postingCache.values()) this.recycle(entry);
      }
      this.postingCacheVersion = this.version;
      this.postingCache.clear();
      this.postingCacheSizes.clear();
      this.postingCacheKey = key;
      this.postingCacheSize = 0;
    }
    site('postings:start', term, 0);
    const cached = this.postingCache.get(term);
    if (cached) {
      this.postingCache.delete(term);
      this.postingCache.set(term, cached);
      if (!cached.parts[0].vals) yield* this.fillValues(term, cached, fields, boost, bm25);
      return cached;
    }
    const t = this.termIds.get(term);
    if (t === undefined || fields.every((f) => this.df[f][t] === 0)) return undefined;
    site('runs', term, 0);
    // The base's part comes merged over fields from `baseRun` (kept until the next merge), with
    // a bound from its largest tf and shortest length: no pass over it per write. Only the
    // appended segments' part is gathered, sorted and bounded exactly here.
    const run = yield* this.runs.getSteps(this.base, this.nf, t);
    site('postings:run', term, run?.docs.length ?? 0);
    yield;
    const idf = fields.map((f) => (this.df[f][t] === 0 ? 0 : this.idf(f, t)));
    const stats = this.valueStats(bm25);
    site('postings:stats');
    yield;
    const parts: TermPostings['parts'] = [];
    if (run) {
      // The values and the exact bounds, per block and in all: one pass over the live postings
      // (cached with the postings for the index version, so repeated queries between writes do
      // not pay it again).
      const runTfs = fields.map((f) => run.tfs[f] ?? null);
      let live = { docs: run.docs, tfs: runTfs };
      if (this.deadBase > 0) {
        if (this.liveKeep.length < run.docs.length)
          this.liveKeep = sized.i32(Math.max(run.docs.length, this.liveKeep.length * 2));
        live = yield* liveOf(run.docs, runTfs, () => this.gone, this.liveKeep, this.pools);
        site('postings:live', term, live.docs.length);
        yield;
      }
      if (live.docs.length) {
        const { docs, tfs } = live;
        const { vals, blockMax, regions } = yield* this.values(docs, tfs, fields, boost, idf, stats, keepValues);
        parts.push({ docs, tfs, maxImpact: largest(blockMax), blockMax, regions, vals: keepValues ? vals : undefined });
        site('postings:values');
        yield;
      }
    }
    this.ensureScratch();
    const stamp = this.nextStamp();
    const { termStamp } = this;
    const appended: number[] = [];
    for (const f of fields) {
      this.eachAppendedPosting(f, t, (doc) => {
        if (termStamp[doc] === stamp) return;
        termStamp[doc] = stamp;
        appended.push(doc);
      });
    }
    if (appended.length) {
      appended.sort((x, y) => x - y);
      const at = this.acc;
      for (let i = 0; i < appended.length; i++) at[appended[i]] = i;
      const tfs = fields.map((f) => {
        let out: Uint16Array | null = null;
        this.eachAppendedPosting(f, t, (doc, tf) => {
          out ??= u16(appended.length);
          out[at[doc]] = tf;
        });
        return out as Uint16Array | null;
      });
      for (let i = 0; i < appended.length; i++) at[appended[i]] = 0;
      const docs = Int32Array.from(appended);
      const { vals, blockMax, regions } = yield* this.values(docs, tfs, fields, boost, idf, stats, keepValues);
      parts.push({ docs, tfs, maxImpact: largest(blockMax), blockMax, regions, vals: keepValues ? vals : undefined });
    }
    if (!parts.length) return undefined;
    const entry: TermPostings = { parts, idf };
    this.postingCache.set(term, entry);
    const size = scoredBytes(parts, run?.docs);
    this.postingCacheSizes.set(term, size);
    this.postingCacheSize += size;
    const budget = scoredCacheBudget(this.basePostingBytes());
    for (const [old] of this.postingCache) {
      if (this.postingCacheSize <= budget || old === term) break;
      this.postingCache.delete(old);
      this.postingCacheSize -= this.postingCacheSizes.get(old) ?? 0;
      this.postingCacheSizes.delete(old);
    }
    return entry;
  }

  /** The new base's 16-bit field lengths, made by the merge in its steps (`FieldLengths.seed`). */
  protected override installed(r: MergeResult): void {
    this.fieldLengths.seed(r.base, r.short, r.base.end);
  }

  /** What term values are computed from: the field lengths (with the short form of the base's) and BM25's parameters. */
  private valueStats(bm25: Bm25Params): ValueStats {
    const short = this.fieldLengths.get(this.base, this.lengths, this.nf, this.next);
    return { lengths: this.lengths, short, nf: this.nf, avg: this.avg, k: bm25.k, b: bm25.b, d: bm25.d };
  }

  /** `termValueSteps` with the index's scratch. */
  private *values(
    docs: Int32Array,
    tfs: ReadonlyArray<Uint16Array | null>,
    fields: readonly number[],
    boost: readonly number[],
    idf: readonly number[],
    stats: ValueStats,
    keep: boolean,
  ): Generator<void, TermValues> {
    if (this.valueSums.length < docs.length)
      this.valueSums = sized.f64(Math.max(docs.length, this.valueSums.length * 2));
    const vals = this.pools.vals;
    site('values', undefined, docs.length);
    return yield* termValueSteps(docs, tfs, fields, boost, idf, stats, this.valueSums, undefined, keep, (n) =>
      vals.take(n),
    );
  }

  /**
   * Sizes the pools to the index: half the scored postings' cache budget in all, the values' pool
   * half of that (8 bytes a posting and field against the documents' 4 and the tfs' 2): at 1M
   * documents a full query's first pass can keep the values of a few million postings (tens of
   * MB), and with 32 MB a pool a `delete_where` of 100,000 there still saw 7 mark-compacts in 68
   * queries (28 in 190 without pools).
   */
  private poolBudgets(): void {
    const cache = scoredCacheBudget(this.basePostingBytes());
    this.pools.docs.budget = Math.max(POOL_MIN_BYTES, cache / 8);
    this.pools.tfs.budget = Math.max(POOL_MIN_BYTES, cache / 8);
    this.pools.vals.budget = Math.max(POOL_MIN_BYTES, cache / 4);
  }

  /** Gives an entry's pooled arrays back (those not from the pools, a base run's own, are left alone). */
  private recycle(entry: TermPostings): void {
    for (const part of entry.parts) {
      this.pools.docs.give(part.docs);
      for (const t of part.tfs) this.pools.tfs.give(t);
      for (const v of part.vals ?? []) this.pools.vals.give(v);
    }
  }

  /** Fills in the parts' values of a cached term whose first use did not keep them (`termValues`), and counts them in the cache. */
  private *fillValues(
    term: string,
    p: TermPostings,
    fields: readonly number[],
    boost: readonly number[],
    bm25: Bm25Params,
  ): Generator<void, void> {
    const stats = this.valueStats(bm25);
    let added = 0;
    for (const part of p.parts) {
      part.vals = (yield* this.values(part.docs, part.tfs, fields, boost, p.idf, stats, true)).vals;
      for (const v of part.vals) added += v?.byteLength ?? 0;
    }
    this.countCached(term, added);
  }

  /** Counts `bytes` more in a cached term's entry (values or a bitmap added to it after it was cached). */
  private countCached(term: string, bytes: number): void {
    this.postingCacheSizes.set(term, (this.postingCacheSizes.get(term) ?? 0) + bytes);
    this.postingCacheSize += bytes;
  }

  /** Bytes of the base segment's postings (document ids and tfs, every field). */
  private basePostingBytes(): number {
    let n = 0;
    for (let f = 0; f < this.nf; f++) n += this.base.docs[f].byteLength + this.base.tfs[f].byteLength;
    return n;
  }

  /**
   * Cursors over `terms` for the top-k scorers (terms absent from the index left out), with the
   * fields, weights and BM25 the exhaustive oracle scores with, and, when `count`, the number of
   * documents they match together (of those `keep` keeps; else 0).
   */
  cursors(
    terms: readonly WeightedTerm[],
    boost: Readonly<Record<string, number>>,
    bm25: Bm25Params,
    count: boolean,
    keep?: DocKeep,
  ): { cursors: ScoreCursor[]; total: number; whole: (doc: number) => number } {
    const job = this.cursorJob(terms, boost, bm25, count, keep, true);
    for (;;) {
      const r = job.next();
      if (r.done) return r.value;
    }
  }

  /**
   * `cursors` a step at a time (a term's postings, or a cursor's share of the count, per step),
   * for a query that yields to the event loop between steps. The index must not change until
   * the job is done. `keepValues`: keep the values of terms used for the first time at this
   * index version (the query reads them again); else only their bounds are kept, and their
   * values are filled in at their next use.
   */
  *cursorJob(
    terms: readonly WeightedTerm[],
    boost: Readonly<Record<string, number>>,
    bm25: Bm25Params,
    count: boolean,
    keep?: DocKeep,
    keepValues = true,
  ): Generator<void, { cursors: ScoreCursor[]; total: number; whole: (doc: number) => number }> {
    const job = this.cursorSteps(terms, boost, bm25, count, keep, keepValues);
    return yield* tracing() ? traced('cursorJob', job) : job;
  }

  /** `cursorJob`'s steps. */
  private *cursorSteps(
    terms: readonly WeightedTerm[],
    boost: Readonly<Record<string, number>>,
    bm25: Bm25Params,
    count: boolean,
    keep: DocKeep | undefined,
    keepValues: boolean,
  ): Generator<void, { cursors: ScoreCursor[]; total: number; whole: (doc: number) => number }> {
    const fields = this.searched(boost);
    const boosts = fields.map((f) => boost[this.fields[f]]);
    const cursors: ScoreCursor[] = [];
    const termOf: number[] = [];
    // Each cursor's part of its term's cached postings, and the term (`unionSize`).
    const partOf: Array<TermPostings['parts'][number]> = [];
    const termNames: string[] = [];
    const seen = new Set<string>();
    const scoring: CursorScoring = {
      lengths: this.lengths,
      nf: this.nf,
      fields,
      avg: fields.map((f) => this.avg[f]),
      k: bm25.k,
      b: bm25.b,
      d: bm25.d,
    };
    for (const [term, weight] of terms) {
      if (!(weight > 0)) continue;
      site('cursor:postings', term, 0);
      const p = yield* this.postings(term, fields, boosts, bm25, keepValues);
      if (!p) continue;
      // A term's parts hold disjoint documents: each document meets the term in one cursor,
      // in the term's place in the query, so sums and distinct-term counts are unchanged.
      const distinct = !seen.has(term);
      seen.add(term);
      const factors = boosts.map((b) => weight * b);
      for (const part of p.parts) {
        const scale = weight * (1 + 1e-9);
        cursors.push(
          scoreCursor({
            docs: part.docs,
            tfs: part.tfs,
            vals: part.vals,
            idf: p.idf,
            scoring,
            factors,
            bound: part.maxImpact * scale,
            blockMax: part.blockMax,
            blockScale: scale,
            regions: part.regions,
            distinct,
          }),
        );
        termOf.push(this.termIds.get(term)!);
        partOf.push(part);
        termNames.push(term);
      }
      site('cursor:term', term);
      yield;
    }
    site('cursor:whole', '', cursors.length);
    const { nf, fwdStart, fwdTerm, fwdTf, lengths } = this;
    const whole = wholeScorer({ nf, fwdStart, fwdTerm, fwdTf, lengths }, cursors, termOf, scoring);
    if (!count) return { cursors, total: 0, whole };
    return { cursors, total: yield* this.unionSize(cursors, partOf, termNames, keep), whole };
  }

  /**
   * Documents in at least one cursor (of those `keep` keeps): set in a bitmap, then counted a
   * 32-document word at a time over the words the cursors span (each word cleared as it is
   * counted). A part is set one branch-free step per posting, or, once it has been counted
   * before at this index version and holds at least `UNION_BITMAP_DENSITY` postings per word it
   * spans, by OR-ing its own bitmap in a word at a time (made then, kept with its cached postings
   * and counted in the cache's bytes: at most half its documents' bytes). An RM3 query's ~45
   * terms hold ~1.3M postings at 1M documents, mostly in the long lists of common terms, where a
   * word of the bitmap stands for several postings.
   */
  private *unionSize(
    cursors: readonly ScoreCursor[],
    parts: ReadonlyArray<TermPostings['parts'][number]>,
    terms: readonly string[],
    keep?: DocKeep,
  ): Generator<void, number> {
    const words = (this.next + 31) >>> 5;
    if (this.unionBits.length < words) this.unionBits = i32(Math.max(words, this.unionBits.length * 2));
    const bits = this.unionBits;
    let lo = words;
    let hi = 0;
    for (let c = 0; c < cursors.length; c++) {
      const { docs } = cursors[c];
      const n = docs.length;
      if (n === 0) continue;
      const first = docs[0] >>> 5;
      const last = docs[n - 1] >>> 5;
      lo = Math.min(lo, first);
      hi = Math.max(hi, last + 1);
      const part = parts[c];
      if (
        !part.bits &&
        part.counted &&
        n >= (last - first + 1) * UNION_BITMAP_DENSITY &&
        this.postingCache.get(terms[c])?.parts.includes(part)
      ) {
        const words = yield* settingBits(docs, i32(last - first + 1), first);
        site('union:own', terms[c], n);
        yield;
        part.bits = { lo: first, words };
        this.countCached(terms[c], words.byteLength);
      }
      if (part.bits) {
        const { lo: at, words: own } = part.bits;
        for (let w = 0; w < own.length; w++) bits[at + w] |= own[w];
      } else {
        yield* settingBits(docs, bits, 0);
        part.counted = true;
      }
      site('union:part', terms[c], n);
      yield;
    }
    let total = 0;
    if (keep?.words) {
      // `words` counts any run of words (its counts add up): `COUNT_WORDS` a step.
      for (let w = lo; w < hi; w += COUNT_WORDS) {
        const to = Math.min(hi, w + COUNT_WORDS);
        total += keep.words(bits, w, to);
        bits.fill(0, w, to);
        site('union:words');
        if (to < hi) yield;
      }
      return total;
    }
    const kept = keep?.bits;
    const word = keep?.word;
    for (let w = lo; w < hi; w++) {
      if ((w - lo) % COUNT_WORDS === COUNT_WORDS - 1) {
        site('union:count');
        yield;
      }
      let x = bits[w];
      if (x === 0) continue;
      bits[w] = 0;
      if (word) {
        total += word(w, x);
        continue;
      }
      if (kept) x &= w < kept.length ? kept[w] : 0;
      else if (keep) {
        for (; x !== 0; x &= x - 1) if (keep((w << 5) + 31 - Math.clz32(x & -x))) total += 1;
        continue;
      }
      x -= (x >>> 1) & 0x55555555;
      x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
      total += Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
    }
    return total;
  }
}

/**
 * The postings of a base run whose documents are live (their `gone` byte 0, read at each step), its documents and tfs
 * per field gathered in plain loops (a callback per element through `TypedArray.from` cost a
 * query after each slice of a large delete), before any value is computed, `VALUE_STEP`
 * postings a step: at 1M documents with tombstones a common term's run is ~500k postings, and
 * its live postings gathered in one step were among the longest turns of a query after a write
 * (issue 39). `keep` (at least the run's length) is the caller's scratch until the job is done;
 * the arrays returned are taken from `pools`.
 */
function* liveOf(
  docs: Int32Array,
  tfs: ReadonlyArray<Uint16Array | null>,
  gone: () => Uint8Array,
  keep: Int32Array,
  pools: PostingPools,
): Generator<void, { docs: Int32Array; tfs: Array<Uint16Array | null> }> {
  let n = 0;
  for (let at = 0; at < docs.length; at += VALUE_STEP) {
    const to = Math.min(docs.length, at + VALUE_STEP);
    const g = gone();
    for (let i = at; i < to; i++) if (g[docs[i]] === 0) keep[n++] = i;
    site('live:gather', undefined, to);
    yield;
  }
  const out = pools.docs.take(n);
  for (let at = 0; at < n; at += VALUE_STEP) {
    const to = Math.min(n, at + VALUE_STEP);
    for (let k = at; k < to; k++) out[k] = docs[keep[k]];
    site('live:docs', undefined, n);
    yield;
  }
  const outTfs: Array<Uint16Array | null> = [];
  for (const from of tfs) {
    if (!from) {
      outTfs.push(null);
      continue;
    }
    const t = pools.tfs.take(n);
    for (let at = 0; at < n; at += VALUE_STEP) {
      const to = Math.min(n, at + VALUE_STEP);
      for (let k = at; k < to; k++) t[k] = from[keep[k]];
      site('live:tfs', undefined, n);
      yield;
    }
    outTfs.push(t);
  }
  return { docs: out, tfs: outTfs };
}

/** The largest of `xs` (0 when empty). */
function largest(xs: Float64Array): number {
  let most = 0;
  for (const x of xs) if (x > most) most = x;
  return most;
}
