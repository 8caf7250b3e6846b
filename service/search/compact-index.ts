import SearchableMap from 'minisearch/SearchableMap';
import { grow } from './growable';
import type { ScoreCursor } from './max-score';
import type { Expansion } from './query-plan';

// MiniSearch's default search weights of prefix and fuzzy matches (`SearchOptions.weights`).
const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;
// Term frequencies are stored in 16 bits; a term repeated more often in one field counts this much.
const MAX_TF = 0xffff;

/** Options of `CompactIndex`. */
export interface CompactIndexOptions {
  /**
   * The appended segment is merged into the base once it holds this many documents and an
   * eighth of the live ones (or once this many and a quarter of the base's documents are
   * deleted): merges then cost amortised O(1) per write, and the appended segment stays small
   * next to the base. @default 1024
   */
  readonly minMergeDocs?: number;
}

/** How `CompactIndex.expansions` looks for index terms near a query term. */
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

/** One query term and its weight (RM3 weight, or 1; a term given twice counts twice). */
export type WeightedTerm = readonly [term: string, weight: number];

/** The documents some terms matched, unsorted; parallel arrays. */
export interface TermScores {
  /** External ids. */
  readonly ids: string[];
  /** Summed BM25 score of each id. */
  readonly scores: number[];
  /** Distinct query terms each id matched (the coordination factor). */
  readonly matched: number[];
}

/**
 * Postings held in `CompactIndex`'s cache of scored posting arrays, at most, summed over terms:
 * about 4 bytes of document id and 8 per field holding the term, each. Least recently used terms
 * go first; the cache empties when the index changes.
 */
export const POSTING_CACHE_LIMIT = 4_000_000;

/** A term's postings in document order with their unweighted BM25 values per field. */
interface TermPostings {
  readonly docs: Int32Array;
  readonly vals: Array<Float64Array | null>;
  /** Largest Σ over fields of field boost × value. */
  readonly maxImpact: number;
}

/** Postings of every term of the documents below `end`, per field in CSR form. */
interface BaseSegment {
  readonly end: number;
  /** Per field: term t's postings sit at `start[t]` .. `start[t + 1]` (terms newer than the segment have none). */
  readonly start: Int32Array[];
  readonly docs: Int32Array[];
  readonly tfs: Uint16Array[];
}

/**
 * The inverted index of the search: BM25 over a few fields, held in typed arrays. Documents get
 * short ids in order of arrival; each one's terms per field are kept once as (term id, tf) pairs
 * in flat arrays (the forward index: RM3's term vectors, highlighting, coordination, merges).
 * Postings live in two segments: a base in CSR form (per field and term, a run of document ids
 * with their tfs) and a small appended one (per field, a map of term to [doc, tf, …]) that new
 * documents go to; deletes are tombstones. When the appended segment or the tombstones grow,
 * both are merged into a new base (ids renumbered, deleted documents dropped) in two passes,
 * synchronously in the write that triggers it (0.3–0.4 s at 200,000 documents, about once per
 * 25,000 writes at that size).
 * The vocabulary is a radix tree (MiniSearch's `SearchableMap`) for prefix and fuzzy look-ups
 * without a scan.
 *
 * Scores are MiniSearch's BM25 to the last bit: the same expression, live document frequencies,
 * and field-length averages kept with MiniSearch's running formula.
 */
export class CompactIndex {
  private readonly nf: number;
  private readonly minMergeDocs: number;
  private readonly fieldIds: Readonly<Record<string, number>>;
  private ids: Array<string | undefined> = [];
  private shortIds = new Map<string, number>();
  private next = 0;
  private live = 0;
  private readonly avg: Float64Array;
  private lengths = new Int32Array(0);
  private fwdStart = new Int32Array(1);
  private fwdTerm = new Int32Array(0);
  private fwdTf = new Uint16Array(0);
  private terms: string[] = [];
  private termIds = new Map<string, number>();
  private tree = new SearchableMap<number>();
  private df: Int32Array[];
  private base: BaseSegment;
  private tail: Array<Map<number, number[]>>;
  private tailDocs = 0;
  private deadBase = 0;
  // Any write moves the version; caches derived from the postings hold for one version.
  private version = 0;
  private acc = new Float64Array(0);
  private termScore = new Float64Array(0);
  private termStamp = new Int32Array(0);
  private count = new Uint16Array(0);
  private stamp = 0;
  private slot = new Int32Array(0);
  private slotStamp = new Int32Array(0);
  private slotStampN = 0;
  private norms = new Map<number, { key: string; norm: Float64Array }>();
  private postingCache = new Map<string, TermPostings>();
  private postingCacheKey = '';
  private postingCacheSize = 0;

  /** An empty index over `fields`, in the order their scores are summed. */
  constructor(
    readonly fields: readonly string[],
    opts: CompactIndexOptions = {},
  ) {
    this.nf = fields.length;
    this.minMergeDocs = opts.minMergeDocs ?? 1024;
    this.fieldIds = Object.fromEntries(fields.map((f, i) => [f, i]));
    this.avg = new Float64Array(this.nf);
    this.df = fields.map(() => new Int32Array(0));
    this.tail = fields.map(() => new Map());
    this.base = { end: 0, start: fields.map(() => new Int32Array(1)), docs: fields.map(() => new Int32Array(0)), tfs: fields.map(() => new Uint16Array(0)) };
  }

  /** Live documents. */
  get documentCount(): number {
    return this.live;
  }

  /** Whether `id` is indexed. */
  has(id: string): boolean {
    return this.shortIds.has(id);
  }

  /** The short id of `id`, if indexed. */
  shortId(id: string): number | undefined {
    return this.shortIds.get(id);
  }

  /** The external id of a short document id. */
  externalId(docId: number): string {
    return this.ids[docId] as string;
  }

  /** Adds a document (an id not indexed yet) by its analyzed terms per field, searchable at once. */
  add(id: string, fieldTerms: ReadonlyArray<readonly string[]>): void {
    this.append(id, fieldTerms, true);
    this.tailDocs += 1;
    this.maybeMerge();
  }

  /**
   * Adds a document to the forward index only: it is searchable after `seal()`. Building a whole
   * index this way fills the postings once, in two passes, instead of growing them per document.
   */
  load(id: string, fieldTerms: ReadonlyArray<readonly string[]>): void {
    this.append(id, fieldTerms, false);
  }

  /** Makes every loaded document searchable (merges all postings into the base). */
  seal(): void {
    this.merge();
  }

  private termId(term: string): number {
    let t = this.termIds.get(term);
    if (t === undefined) {
      t = this.terms.length;
      this.terms.push(term);
      this.termIds.set(term, t);
      this.tree.set(term, t);
      for (let f = 0; f < this.nf; f++) this.df[f] = grow(this.df[f], t + 1);
      this.slot = grow(this.slot, t + 1);
      this.slotStamp = grow(this.slotStamp, t + 1);
    }
    return t;
  }

  private append(id: string, fieldTerms: ReadonlyArray<readonly string[]>, index: boolean): void {
    if (this.shortIds.has(id)) throw new Error(`CompactIndex: duplicate id ${id}`);
    const { nf } = this;
    const d = this.next++;
    this.ids[d] = id;
    this.shortIds.set(id, d);
    this.lengths = grow(this.lengths, (d + 1) * nf);
    this.fwdStart = grow(this.fwdStart, (d + 1) * nf + 1);
    let end = this.fwdStart[d * nf];
    for (let f = 0; f < nf; f++) {
      const tokens = fieldTerms[f] ?? [];
      // MiniSearch's running average (`addFieldLength`), so scores match it bit for bit.
      this.avg[f] = (this.avg[f] * this.live + tokens.length) / (this.live + 1);
      this.lengths[d * nf + f] = tokens.length;
      // Distinct terms in order of first occurrence, counted in place: `fwdTerm` from `first` on,
      // with `slot` (stamped per field of a document) pointing a term id at its entry.
      const first = end;
      const stamp = this.nextSlotStamp();
      for (const term of tokens) {
        const t = this.termId(term);
        if (this.slotStamp[t] === stamp) {
          // Saturates at MAX_TF (a Uint16Array would wrap).
          if (this.fwdTf[this.slot[t]] < MAX_TF) this.fwdTf[this.slot[t]] += 1;
          continue;
        }
        this.slotStamp[t] = stamp;
        this.slot[t] = end;
        this.fwdTerm = grow(this.fwdTerm, end + 1);
        this.fwdTf = grow(this.fwdTf, end + 1);
        this.fwdTerm[end] = t;
        this.fwdTf[end] = 1;
        end += 1;
      }
      const df = this.df[f];
      for (let i = first; i < end; i++) {
        const t = this.fwdTerm[i];
        df[t] += 1;
        if (!index) continue;
        const list = this.tail[f].get(t);
        if (list) list.push(d, this.fwdTf[i]);
        else this.tail[f].set(t, [d, this.fwdTf[i]]);
      }
      this.fwdStart[d * nf + f + 1] = end;
    }
    this.live += 1;
    this.version += 1;
  }

  /** Removes `id` (a tombstone until the next merge); false if it was not indexed. */
  discard(id: string): boolean {
    const d = this.shortIds.get(id);
    if (d === undefined) return false;
    const { nf } = this;
    for (let f = 0; f < nf; f++) {
      // MiniSearch's `removeFieldLength`.
      this.avg[f] = this.live === 1 ? 0 : (this.avg[f] * this.live - this.lengths[d * nf + f]) / (this.live - 1);
      const df = this.df[f];
      for (let i = this.fwdStart[d * nf + f]; i < this.fwdStart[d * nf + f + 1]; i++) df[this.fwdTerm[i]] -= 1;
    }
    this.ids[d] = undefined;
    this.shortIds.delete(id);
    this.live -= 1;
    this.version += 1;
    if (d < this.base.end) this.deadBase += 1;
    this.maybeMerge();
    return true;
  }

  private maybeMerge(): void {
    const tailFull = this.tailDocs >= this.minMergeDocs && this.tailDocs * 8 >= this.live;
    const baseDirty = this.deadBase >= this.minMergeDocs && this.deadBase * 4 >= this.base.end;
    if (tailFull || baseDirty) this.merge();
  }

  /** One new base of every live document (renumbered in order), in two passes over the forward index. */
  private merge(): void {
    const { nf } = this;
    const n = this.live;
    let entries = 0;
    for (let d = 0; d < this.next; d++) if (this.ids[d] !== undefined) entries += this.fwdStart[(d + 1) * nf] - this.fwdStart[d * nf];
    const ids: string[] = new Array(n);
    const lengths = new Int32Array(n * nf);
    const fwdStart = new Int32Array(n * nf + 1);
    const fwdTerm = new Int32Array(entries);
    const fwdTf = new Uint16Array(entries);
    let nd = 0;
    let at = 0;
    for (let d = 0; d < this.next; d++) {
      const id = this.ids[d];
      if (id === undefined) continue;
      ids[nd] = id;
      this.shortIds.set(id, nd);
      for (let f = 0; f < nf; f++) {
        lengths[nd * nf + f] = this.lengths[d * nf + f];
        for (let i = this.fwdStart[d * nf + f]; i < this.fwdStart[d * nf + f + 1]; i++) {
          fwdTerm[at] = this.fwdTerm[i];
          fwdTf[at] = this.fwdTf[i];
          at += 1;
        }
        fwdStart[nd * nf + f + 1] = at;
      }
      nd += 1;
    }
    const nt = this.terms.length;
    const start: Int32Array[] = [];
    const docs: Int32Array[] = [];
    const tfs: Uint16Array[] = [];
    for (let f = 0; f < nf; f++) {
      // Live document frequencies are the run lengths: prefix sums place every run.
      const s = new Int32Array(nt + 1);
      const df = this.df[f];
      for (let t = 0; t < nt; t++) s[t + 1] = s[t] + df[t];
      const fill = s.slice(0, nt);
      const fd = new Int32Array(s[nt]);
      const ft = new Uint16Array(s[nt]);
      for (let d = 0; d < n; d++) {
        for (let i = fwdStart[d * nf + f]; i < fwdStart[d * nf + f + 1]; i++) {
          const p = fill[fwdTerm[i]]++;
          fd[p] = d;
          ft[p] = fwdTf[i];
        }
      }
      start.push(s);
      docs.push(fd);
      tfs.push(ft);
    }
    this.ids = ids;
    this.lengths = lengths;
    this.fwdStart = fwdStart;
    this.fwdTerm = fwdTerm;
    this.fwdTf = fwdTf;
    this.next = n;
    this.base = { end: n, start, docs, tfs };
    this.tail = this.fields.map(() => new Map());
    this.tailDocs = 0;
    this.deadBase = 0;
    this.version += 1;
  }

  /** Calls `fn` for every live posting of term `t` in field `f`, in document order. */
  private eachPosting(f: number, t: number, fn: (doc: number, tf: number) => void): void {
    const { base, ids } = this;
    const start = base.start[f];
    if (t + 1 < start.length) {
      const docs = base.docs[f];
      const tfs = base.tfs[f];
      for (let i = start[t]; i < start[t + 1]; i++) if (ids[docs[i]] !== undefined) fn(docs[i], tfs[i]);
    }
    const list = this.tail[f].get(t);
    if (list) for (let i = 0; i < list.length; i += 2) if (ids[list[i]] !== undefined) fn(list[i], list[i + 1]);
  }

  /** Largest document frequency of `t` over the fields. */
  private maxDf(t: number): number {
    let most = 0;
    for (let f = 0; f < this.nf; f++) most = Math.max(most, this.df[f][t]);
    return most;
  }

  /**
   * Index terms that `term` is a prefix of (at most `scanLimit` looked at) or within `fuzzy`
   * edits of, weighted as MiniSearch's own prefix and fuzzy search weights them (a term found
   * both ways counts as a prefix match); the term itself is left out, and so are terms no live
   * document holds.
   */
  expansions(term: string, lookup: ExpansionLookup): Expansion[] {
    const out = new Map<string, Expansion>();
    if (lookup.prefix) {
      let seen = 0;
      for (const [t, id] of this.tree.atPrefix(term)) {
        const df = this.maxDf(id);
        if (df === 0) continue;
        if (++seen > lookup.scanLimit) break;
        const distance = t.length - term.length;
        if (distance > 0) out.set(t, { term: t, weight: (PREFIX_WEIGHT * t.length) / (t.length + 0.3 * distance), distance, df });
      }
    }
    if (lookup.fuzzy > 0) {
      for (const [t, [id, distance]] of this.tree.fuzzyGet(term, lookup.fuzzy)) {
        const df = this.maxDf(id);
        if (df > 0 && distance > 0 && !out.has(t)) out.set(t, { term: t, weight: (FUZZY_WEIGHT * t.length) / (t.length + distance), distance, df });
      }
    }
    return [...out.values()];
  }

  /** The analyzed terms of a document's field with their frequencies, in order of first occurrence. */
  fieldTerms(docId: number, field: string): Map<string, number> {
    const f = this.fieldIds[field];
    const out = new Map<string, number>();
    const base = docId * this.nf + f;
    for (let i = this.fwdStart[base]; i < this.fwdStart[base + 1]; i++) out.set(this.terms[this.fwdTerm[i]], this.fwdTf[i]);
    return out;
  }

  /** Terms in a document's field, repeats counted (its BM25 length). */
  fieldLength(docId: number, field: string): number {
    return this.lengths[docId * this.nf + this.fieldIds[field]];
  }

  /** Whether a document's field holds `term`. */
  hasTerm(docId: number, field: string, term: string): boolean {
    const t = this.termIds.get(term);
    if (t === undefined) return false;
    const base = docId * this.nf + this.fieldIds[field];
    for (let i = this.fwdStart[base]; i < this.fwdStart[base + 1]; i++) if (this.fwdTerm[i] === t) return true;
    return false;
  }

  private lengthNorm(f: number, bm25: Bm25Params): Float64Array {
    const avg = this.avg[f];
    const key = `${this.version}:${avg}:${bm25.k}:${bm25.b}`;
    const cached = this.norms.get(f);
    if (cached?.key === key) return cached.norm;
    const norm = new Float64Array(this.next);
    const { k, b } = bm25;
    const { nf, lengths, ids } = this;
    for (let d = 0; d < this.next; d++) if (ids[d] !== undefined) norm[d] = k * (1 - b + (b * lengths[d * nf + f]) / avg);
    this.norms.set(f, { key, norm });
    return norm;
  }

  private idf(f: number, t: number): number {
    const df = this.df[f][t];
    return Math.log(1 + (this.live - df + 0.5) / (df + 0.5));
  }

  private nextSlotStamp(): number {
    if (++this.slotStampN === 0x7fffffff) {
      this.slotStamp.fill(0);
      this.slotStampN = 1;
    }
    return this.slotStampN;
  }

  private ensureScratch(): void {
    const n = this.next;
    if (this.acc.length >= n) return;
    const size = Math.max(n, this.acc.length * 2, 1024);
    this.acc = new Float64Array(size);
    this.termScore = new Float64Array(size);
    this.termStamp = new Int32Array(size);
    this.count = new Uint16Array(size);
    this.stamp = 0;
  }

  private nextStamp(): number {
    if (++this.stamp === 0x7fffffff) {
      this.termStamp.fill(0);
      this.stamp = 1;
    }
    return this.stamp;
  }

  private searched(boost: Readonly<Record<string, number>>): number[] {
    return Object.keys(boost)
      .filter((f) => boost[f] > 0 && this.fieldIds[f] !== undefined)
      .map((f) => this.fieldIds[f]);
  }

  /** The term's postings as sorted arrays of BM25 values, from the cache or built from the segments. */
  private postings(term: string, fields: readonly number[], boost: readonly number[], bm25: Bm25Params): TermPostings | undefined {
    const key = `${this.version}:${bm25.k}:${bm25.b}:${bm25.d}:${fields.map((f, i) => `${f}=${boost[i]}`).join(',')}`;
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
    const t = this.termIds.get(term);
    if (t === undefined || fields.every((f) => this.df[f][t] === 0)) return undefined;
    this.ensureScratch();
    const stamp = this.nextStamp();
    const { termStamp } = this;
    const all: number[] = [];
    for (const f of fields) {
      this.eachPosting(f, t, (doc) => {
        if (termStamp[doc] === stamp) return;
        termStamp[doc] = stamp;
        all.push(doc);
      });
    }
    const docs = Int32Array.from(all).sort();
    const at = this.acc;
    for (let i = 0; i < docs.length; i++) at[docs[i]] = i;
    const { k, d } = bm25;
    const k1 = k + 1;
    const vals = fields.map((f) => {
      if (this.df[f][t] === 0) return null;
      const idf = this.idf(f, t);
      const norm = this.lengthNorm(f, bm25);
      const v = new Float64Array(docs.length);
      this.eachPosting(f, t, (doc, tf) => void (v[at[doc]] = idf * (d + (tf * k1) / (tf + norm[doc]))));
      return v;
    });
    for (let i = 0; i < docs.length; i++) at[docs[i]] = 0;
    let maxImpact = 0;
    for (let i = 0; i < docs.length; i++) {
      let s = 0;
      for (let f = 0; f < fields.length; f++) if (vals[f]) s += boost[f] * vals[f]![i];
      if (s > maxImpact) maxImpact = s;
    }
    const entry = { docs, vals, maxImpact };
    this.postingCache.set(term, entry);
    this.postingCacheSize += docs.length;
    for (const [old, e] of this.postingCache) {
      if (this.postingCacheSize <= POSTING_CACHE_LIMIT || old === term) break;
      this.postingCache.delete(old);
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
    const fields = this.searched(boost);
    const boosts = fields.map((f) => boost[this.fields[f]]);
    const cursors: ScoreCursor[] = [];
    const seen = new Set<string>();
    for (const [term, weight] of terms) {
      if (!(weight > 0)) continue;
      const p = this.postings(term, fields, boosts, bm25);
      if (!p) continue;
      cursors.push({ docs: p.docs, vals: p.vals, factors: boosts.map((b) => weight * b), bound: weight * p.maxImpact * (1 + 1e-9), distinct: !seen.has(term) });
      seen.add(term);
    }
    if (!count) return { cursors, total: 0 };
    this.ensureScratch();
    const stamp = this.nextStamp();
    const { termStamp } = this;
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

  /**
   * Every document holding at least one of `terms` (exactly, no prefix or fuzzy matching) with
   * Σ over terms and fields of weight × field boost × BM25, summed as MiniSearch sums (per term:
   * fields in order; then terms in order). Fields absent from `boost` or boosted 0 are not
   * searched; terms of weight ≤ 0 are skipped.
   */
  scoreTerms(terms: readonly WeightedTerm[], boost: Readonly<Record<string, number>>, bm25: Bm25Params): TermScores {
    this.ensureScratch();
    const fields = this.searched(boost);
    const { acc, termScore, termStamp, count } = this;
    const touched: number[] = [];
    const termDocs: number[] = [];
    const seenTerms = new Set<string>();
    const { k, d } = bm25;
    const k1 = k + 1;
    for (const [term, weight] of terms) {
      if (!(weight > 0)) continue;
      const t = this.termIds.get(term);
      if (t === undefined || fields.every((f) => this.df[f][t] === 0)) continue;
      const distinct = !seenTerms.has(term);
      seenTerms.add(term);
      const stamp = this.nextStamp();
      termDocs.length = 0;
      for (const f of fields) {
        if (this.df[f][t] === 0) continue;
        const idf = this.idf(f, t);
        const norm = this.lengthNorm(f, bm25);
        const factor = weight * boost[this.fields[f]];
        this.eachPosting(f, t, (doc, tf) => {
          const s = factor * (idf * (d + (tf * k1) / (tf + norm[doc])));
          if (termStamp[doc] !== stamp) {
            termStamp[doc] = stamp;
            termScore[doc] = s;
            termDocs.push(doc);
          } else {
            termScore[doc] += s;
          }
        });
      }
      for (const doc of termDocs) {
        if (count[doc] === 0) touched.push(doc);
        if (distinct) count[doc] += 1;
        acc[doc] += termScore[doc];
      }
    }
    const ids: string[] = new Array(touched.length);
    const scores: number[] = new Array(touched.length);
    const matched: number[] = new Array(touched.length);
    for (let i = 0; i < touched.length; i++) {
      const doc = touched[i];
      ids[i] = this.ids[doc] as string;
      scores[i] = acc[doc];
      matched[i] = count[doc];
      acc[doc] = 0;
      count[doc] = 0;
    }
    return { ids, scores, matched };
  }
}
