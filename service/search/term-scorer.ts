import MiniSearch from 'minisearch';
import type { ScoreCursor } from './max-score';
import type { Expansion } from './query-plan';

// MiniSearch's default search weights of prefix and fuzzy matches (`SearchOptions.weights`).
const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;

/** How `ScoringMiniSearch.expansions` looks for index terms near a query term. */
export interface ExpansionLookup {
  /** Match index terms that start with the query term. */
  readonly prefix: boolean;
  /** Largest edit distance of a near spelling; 0 = none. */
  readonly fuzzy: number;
  /** Prefix matches looked at, at most. */
  readonly scanLimit: number;
}

/** BM25 parameters in MiniSearch's names: saturation `k` (k1), length normalisation `b`, BM25+ floor `d`. */
export interface Bm25Params {
  readonly k: number;
  readonly b: number;
  readonly d: number;
}

/**
 * Postings held in `ScoringMiniSearch`'s cache of sorted posting arrays, at most, summed over
 * terms: about 4 bytes of document id and 8 per field holding the term, each. Least recently
 * used terms go first; the cache empties when the index changes.
 */
export const POSTING_CACHE_LIMIT = 4_000_000;

/** A term's postings in document order with their unweighted BM25 values per field. */
interface TermPostings {
  readonly docs: Int32Array;
  readonly vals: Array<Float64Array | null>;
  /** Largest Σ over fields of field boost × value. */
  readonly maxImpact: number;
}

/** One query term and its weight (RM3 weight, or 1; a term given twice counts twice). */
export type WeightedTerm = readonly [term: string, weight: number];

/** The documents some terms matched, unsorted; parallel arrays. */
export interface TermScores {
  /** External ids. */
  readonly ids: string[];
  /** Summed BM25 score of each id. */
  readonly scores: number[];
  /** Distinct query terms each id matched (MiniSearch's coordination factor). */
  readonly matched: number[];
}

/**
 * MiniSearch with one more way to search: exact terms only, scored straight from its postings
 * into flat arrays. `search(…, {combineWith: 'OR', boostTerm})` computes the same sums, but
 * builds a result object (score, term list, match map) for every posting of every term and
 * merges those maps term by term; on a long RM3-expanded query over common terms that is most
 * of the time and garbage of a query. Here each posting costs one BM25 evaluation and two array
 * writes, with the summation order of MiniSearch (per term: fields in order; then terms in
 * order), so scores are the same to the last bit before any coordination factor.
 *
 * It reads MiniSearch's protected index structures (`_index`, `_fieldLength`, …), which is why
 * it is a subclass: the structures are part of MiniSearch's subclassing surface, and the
 * `minisearch-index` tests compare both paths.
 */
export class ScoringMiniSearch<T = unknown> extends MiniSearch<T> {
  // Scratch space indexed by MiniSearch's short document ids, reused between calls (searches
  // are synchronous, so one set per index is enough). Entries are reset after every call.
  private acc = new Float64Array(0);
  private termScore = new Float64Array(0);
  private termStamp = new Int32Array(0);
  private count = new Uint16Array(0);
  private stamp = 0;
  // k·(1 − b + b·length/avgLength) per field and document: the part of BM25 that depends on the
  // document only. Valid while the index and the parameters are unchanged; every add and discard
  // moves `_nextId` or `_documentCount`, and the average length with them.
  private norms = new Map<number, { key: string; norm: Float64Array }>();
  // Sorted posting arrays per term for the pruned scorer, valid for one `postingsKey`.
  private postingCache = new Map<string, TermPostings>();
  private postingCacheKey = '';
  private postingCacheSize = 0;

  private lengthNorm(fieldId: number, bm25: Bm25Params): Float64Array {
    const avg = this._avgFieldLength[fieldId];
    const key = `${this._nextId}:${this._documentCount}:${avg}:${bm25.k}:${bm25.b}`;
    const cached = this.norms.get(fieldId);
    if (cached?.key === key) return cached.norm;
    const norm = new Float64Array(this._nextId);
    const { k, b } = bm25;
    for (const [docId, lengths] of this._fieldLength) norm[docId] = k * (1 - b + (b * lengths[fieldId]) / avg);
    this.norms.set(fieldId, { key, norm });
    return norm;
  }

  private ensureScratch(): void {
    const n = this._nextId;
    if (this.acc.length >= n) return;
    const size = Math.max(n, this.acc.length * 2, 1024);
    this.acc = new Float64Array(size);
    this.termScore = new Float64Array(size);
    this.termStamp = new Int32Array(size);
    this.count = new Uint16Array(size);
    this.stamp = 0;
  }

  /**
   * Index terms that `term` is a prefix of (at most `scanLimit` looked at) or within `fuzzy`
   * edits of, weighted as MiniSearch's own prefix and fuzzy search weights them (a term found
   * both ways counts as a prefix match); the term itself is left out.
   */
  expansions(term: string, lookup: ExpansionLookup): Expansion[] {
    const out = new Map<string, Expansion>();
    const df = (data: Map<number, Map<number, number>>): number => {
      let most = 0;
      for (const postings of data.values()) most = Math.max(most, postings.size);
      return most;
    };
    if (lookup.prefix) {
      let seen = 0;
      for (const [t, data] of this._index.atPrefix(term)) {
        if (++seen > lookup.scanLimit) break;
        const distance = t.length - term.length;
        if (distance > 0) out.set(t, { term: t, weight: (PREFIX_WEIGHT * t.length) / (t.length + 0.3 * distance), distance, df: df(data) });
      }
    }
    if (lookup.fuzzy > 0) {
      for (const [t, [data, distance]] of this._index.fuzzyGet(term, lookup.fuzzy)) {
        if (distance > 0 && !out.has(t)) out.set(t, { term: t, weight: (FUZZY_WEIGHT * t.length) / (t.length + distance), distance, df: df(data) });
      }
    }
    return [...out.values()];
  }

  /** The term's postings as sorted arrays, from the cache or built from MiniSearch's maps. */
  private postings(term: string, fields: readonly string[], boost: Readonly<Record<string, number>>, bm25: Bm25Params): TermPostings | undefined {
    // Document ids only grow and discards only lower the count, so (next id, count) names one
    // state of the index.
    const key = `${this._nextId}:${this._documentCount}:${bm25.k}:${bm25.b}:${bm25.d}:${fields.map((f) => `${f}=${boost[f]}`).join(',')}`;
    if (key !== this.postingCacheKey) {
      this.postingCache.clear();
      this.postingCacheKey = key;
      this.postingCacheSize = 0;
    }
    const cached = this.postingCache.get(term);
    if (cached) {
      this.postingCache.delete(term);
      this.postingCache.set(term, cached);
      return cached;
    }
    const data = this._index.get(term);
    if (!data) return undefined;
    this.ensureScratch();
    const live = (docId: number) => this._dirtCount === 0 || this._documentIds.has(docId);
    const all: number[] = [];
    const { termStamp } = this;
    if (++this.stamp === 0x7fffffff) {
      termStamp.fill(0);
      this.stamp = 1;
    }
    const stamp = this.stamp;
    for (const field of fields) {
      data.get(this._fieldIds[field])?.forEach((_tf, docId) => {
        if (termStamp[docId] !== stamp && live(docId)) {
          termStamp[docId] = stamp;
          all.push(docId);
        }
      });
    }
    if (!all.length) return undefined;
    const docs = Int32Array.from(all).sort();
    const at = this.acc;
    for (let i = 0; i < docs.length; i++) at[docs[i]] = i;
    const total = this._documentCount;
    const { k, d } = bm25;
    const k1 = k + 1;
    const vals = fields.map((field) => {
      const fieldId = this._fieldIds[field];
      const postings = data.get(fieldId);
      if (!postings) return null;
      let df = postings.size;
      if (this._dirtCount > 0) postings.forEach((_tf, docId) => void (this._documentIds.has(docId) || (df -= 1)));
      // The same expression as `scoreTerms`, so a value times its factor is the same number.
      const idf = Math.log(1 + (total - df + 0.5) / (df + 0.5));
      const norm = this.lengthNorm(fieldId, bm25);
      const v = new Float64Array(docs.length);
      postings.forEach((tf, docId) => {
        if (live(docId)) v[at[docId]] = idf * (d + (tf * k1) / (tf + norm[docId]));
      });
      return v;
    });
    for (let i = 0; i < docs.length; i++) at[docs[i]] = 0;
    let maxImpact = 0;
    for (let i = 0; i < docs.length; i++) {
      let s = 0;
      for (let f = 0; f < fields.length; f++) if (vals[f]) s += boost[fields[f]] * vals[f]![i];
      if (s > maxImpact) maxImpact = s;
    }
    const entry = { docs, vals, maxImpact };
    this.postingCache.set(term, entry);
    this.postingCacheSize += docs.length;
    for (const [t, e] of this.postingCache) {
      if (this.postingCacheSize <= POSTING_CACHE_LIMIT || t === term) break;
      this.postingCache.delete(t);
      this.postingCacheSize -= e.docs.length;
    }
    return entry;
  }

  /**
   * Cursors over `terms` for `maxScoreTopK` (terms absent from the index left out), with the
   * fields, weights and BM25 of `scoreTerms`, and, when `count`, the number of documents they
   * match together (of those `keep` keeps; else 0).
   */
  cursors(
    terms: readonly WeightedTerm[],
    boost: Readonly<Record<string, number>>,
    bm25: Bm25Params,
    count: boolean,
    keep?: (docId: number) => boolean,
  ): { cursors: ScoreCursor[]; total: number } {
    const fields = Object.keys(boost).filter((f) => boost[f] > 0 && this._fieldIds[f] !== undefined);
    const cursors: ScoreCursor[] = [];
    const seen = new Set<string>();
    for (const [term, weight] of terms) {
      if (!(weight > 0)) continue;
      const p = this.postings(term, fields, boost, bm25);
      if (!p) continue;
      cursors.push({
        docs: p.docs,
        vals: p.vals,
        factors: fields.map((f) => weight * boost[f]),
        bound: weight * p.maxImpact * (1 + 1e-9),
        distinct: !seen.has(term),
      });
      seen.add(term);
    }
    if (!count) return { cursors, total: 0 };
    this.ensureScratch();
    if (++this.stamp === 0x7fffffff) {
      this.termStamp.fill(0);
      this.stamp = 1;
    }
    const { termStamp, stamp } = this;
    let total = 0;
    for (const c of cursors) {
      for (const docId of c.docs) {
        if (termStamp[docId] === stamp) continue;
        termStamp[docId] = stamp;
        if (!keep || keep(docId)) total += 1;
      }
    }
    return { cursors, total };
  }

  /** The external id of a short document id. */
  externalId(docId: number): string {
    return this._documentIds.get(docId) as string;
  }

  /**
   * Every document holding at least one of `terms` (exactly, no prefix or fuzzy matching) with
   * Σ over terms and fields of weight × field boost × BM25. Fields absent from `boost` or boosted
   * 0 are not searched; terms of weight ≤ 0 are skipped.
   */
  scoreTerms(terms: readonly WeightedTerm[], boost: Readonly<Record<string, number>>, bm25: Bm25Params): TermScores {
    this.ensureScratch();
    const fields = Object.keys(boost).filter((f) => boost[f] > 0 && this._fieldIds[f] !== undefined);
    const { acc, termScore, termStamp, count } = this;
    const touched: number[] = [];
    const termDocs: number[] = [];
    const seenTerms = new Set<string>();
    const total = this._documentCount;
    const dirty = this._dirtCount > 0;
    for (const [term, weight] of terms) {
      if (!(weight > 0)) continue;
      const data = this._index.get(term);
      if (!data) continue;
      const distinct = !seenTerms.has(term);
      seenTerms.add(term);
      if (++this.stamp === 0x7fffffff) {
        termStamp.fill(0);
        this.stamp = 1;
      }
      const stamp = this.stamp;
      termDocs.length = 0;
      for (const field of fields) {
        const fieldId = this._fieldIds[field];
        const postings = data.get(fieldId);
        if (!postings) continue;
        // Document frequency over live documents (discarded ones linger until the vacuum).
        let df = postings.size;
        if (dirty) postings.forEach((_tf, docId) => void (this._documentIds.has(docId) || (df -= 1)));
        const idf = Math.log(1 + (total - df + 0.5) / (df + 0.5));
        const norm = this.lengthNorm(fieldId, bm25);
        // MiniSearch's weightedScore = termWeight (1) × termBoost × fieldBoost × docBoost (1) × BM25.
        const factor = weight * boost[field];
        const { k, d } = bm25;
        const k1 = k + 1;
        postings.forEach((tf, docId) => {
          if (dirty && !this._documentIds.has(docId)) return;
          const s = factor * (idf * (d + (tf * k1) / (tf + norm[docId])));
          if (termStamp[docId] !== stamp) {
            termStamp[docId] = stamp;
            termScore[docId] = s;
            termDocs.push(docId);
          } else {
            termScore[docId] += s;
          }
        });
      }
      for (const docId of termDocs) {
        if (count[docId] === 0) touched.push(docId);
        if (distinct) count[docId] += 1;
        acc[docId] += termScore[docId];
      }
    }
    const ids: string[] = new Array(touched.length);
    const scores: number[] = new Array(touched.length);
    const matched: number[] = new Array(touched.length);
    for (let i = 0; i < touched.length; i++) {
      const docId = touched[i];
      ids[i] = this._documentIds.get(docId) as string;
      scores[i] = acc[docId];
      matched[i] = count[docId];
      acc[docId] = 0;
      count[docId] = 0;
    }
    return { ids, scores, matched };
  }
}
