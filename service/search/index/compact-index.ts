import type { ProximitySource, WindowCounts } from './cursor';
import type { SealedIndex } from './merge';
import { MERGE_STEP_DOCS } from './merge-pass';
import { positionsOf, windowCounts } from './positions';
import type { PostingsView } from './postings-view';
import { PostingsIndex } from './postings-index';
import type { CompactIndexOptions } from './index-options';
import { WindowDfCache, baseWindows, liveWindows, windowsOf } from './window-df';
import { ExpansionCache, type Expansion, type ExpansionLookup } from '../vocabulary/expansions';
import { Vocabulary } from '../vocabulary/vocabulary';
import { TimeSlicer } from '../../lib/yield-to-loop';
import { i32, u8 } from '../../lib/untracked-arrays';

/**
 * The inverted index of the search: BM25 over a few fields, held in typed arrays. Documents get
 * short ids in order of arrival; each one's terms per field are kept once as (term id, tf) pairs
 * in flat arrays (the forward index: RM3's term vectors, highlighting, coordination, merges).
 * Postings live in two segments: a base in CSR form (per field and term, a run of document ids
 * with their tfs) and a small appended one (per field, `AppendedPostings`: per term, (doc, tf) pairs) that new
 * documents go to; deletes are tombstones. When the appended segment or the tombstones grow,
 * both are merged into a new base (ids renumbered, deleted documents dropped) in two passes. A
 * merge runs in the background in slices (0.3–0.4 s of work at 200,000 documents, about once per
 * 25,000 writes at that size): searches use the old base and writes go to a fresh appended
 * segment until the new base is swapped in, its short ids renumbered then. A merged base can be
 * persisted (`SealedIndex`) and an index restored from one without analysing anything.
 * The vocabulary's prefix and fuzzy look-ups go to a `Vocabulary` (sorted terms and a trigram
 * index in typed arrays, built in the background; MiniSearch's radix tree's answers).
 *
 * Scores are MiniSearch's BM25 expression over live document frequencies and live field-length
 * averages; an average is the live lengths' exact sum over the live documents (MiniSearch keeps a
 * running average, whose last bits depend on the order of adds and removes), so the index after
 * any sequence of writes scores as one built from the surviving documents, to the last bit.
 *
 * The class is built in layers, one concern a file: storage, appends and merges
 * (`SegmentedIndex`, segmented-index.ts, with the merge job in merge.ts and the base's runs in
 * base-runs.ts); postings assembled for queries and the cursors over them (`PostingsIndex`,
 * postings-index.ts); here the restore, the vocabulary's look-ups, positions and proximity
 * windows, and the views the proximity stage and the exhaustive oracle read.
 */
export class CompactIndex extends PostingsIndex {
  // Exact window document frequencies of query pairs over the base segment (`windowDf`).
  private readonly windowDfs = new WindowDfCache();
  // Prefix and fuzzy look-ups of `terms` (`vocabulary()`).
  private vocab: Vocabulary | undefined;
  // Expansions by look-up and term for the index version (the vocabulary and its document
  // frequencies change only on writes).
  private readonly expansionCache = new ExpansionCache();
  // The exhaustive oracle's view, made once: its functions stay the same ones from call to call.
  private view: PostingsView | undefined;
  private proximityView: ProximitySource | undefined;
  // Scratch of `windows`: a document's positions of the two terms of a pair.
  private pa: Int32Array = new Int32Array(64);
  private pb: Int32Array = new Int32Array(64);

  /** The index a persisted base restores: every document of `sealed`, nothing appended. */
  static async restore(
    sealed: SealedIndex,
    opts: CompactIndexOptions & { sliceMs?: number } = {},
  ): Promise<CompactIndex> {
    const c = new CompactIndex(sealed.fields, opts);
    const slicer = new TimeSlicer(opts.sliceMs ?? 8);
    const { nf } = c;
    const n = sealed.ids.length;
    const nt = sealed.termCount;
    c.baseIds = sealed.ids;
    c.gone = u8(n);
    // The id map is filled after the start (`fillIds`) or at its first use: a start from an intact
    // segment looks documents up by position, not by id. (A sealed index never holds an id twice:
    // ids are unique when appended, and the segment file is checked whole.)
    c.mapEnd = n;
    // Each document's slot is its short id (`SegmentedIndex.slots`).
    c.slotOfShort = i32(n);
    c.shortOfSlot = i32(n);
    c.slotLimit = n;
    c.next = n;
    c.live = n;
    // The sums from the lengths (the file's averages are those sums over its documents, but an
    // older file's are MiniSearch's running averages, a few bits off).
    for (let d = 0; d < n; d++) {
      for (let f = 0; f < nf; f++) c.lengthSum[f] += sealed.lengths[d * nf + f];
      c.slotOfShort[d] = c.shortOfSlot[d] = d;
      if (d % (MERGE_STEP_DOCS * 64) === 0) await slicer.maybeYield();
    }
    for (let f = 0; f < nf; f++) c.avg[f] = n ? c.lengthSum[f] / n : 0;
    c.lengths = sealed.lengths;
    c.fps = sealed.fingerprints;
    c.fwdStart = sealed.fwdStart;
    c.fwdTerm = sealed.fwdTerm;
    c.fwdTf = sealed.fwdTf;
    if (sealed.posField !== c.posField)
      throw new Error(`positions of field ${sealed.posField}, the index keeps ${c.posField}`);
    c.posStart = sealed.posStart;
    c.posBytes = sealed.posBytes;
    c.terms = sealed.terms.slice(0, nt);
    for (let t = 0; t < nt; t++) {
      c.termIds.set(c.terms[t], t);
      if (t % MERGE_STEP_DOCS === 0) await slicer.maybeYield();
    }
    // The vocabulary's look-up structures are built by `fillVocabulary`, not here: EmbeddedIndex
    // builds them in slices before it swaps a restored index in.
    c.slot = new Int32Array(nt);
    c.slotStamp = new Int32Array(nt);
    for (let f = 0; f < nf; f++) {
      const s = sealed.start[f];
      const df = new Int32Array(nt);
      for (let t = 0; t < nt; t++) df[t] = s[t + 1] - s[t];
      c.df[f] = df;
    }
    c.base = { end: n, start: [...sealed.start], docs: [...sealed.docs], tfs: [...sealed.tfs] };
    c.version += 1;
    return c;
  }

  /** The look-ups of the vocabulary (terms added since its last build are scanned until the next). */
  private vocabulary(): Vocabulary {
    if (this.vocab?.terms !== this.terms) this.vocab = new Vocabulary(this.terms);
    return this.vocab;
  }

  /**
   * Builds the vocabulary's look-up structures in the background, in slices of about `sliceMs`
   * (a look-up meanwhile scans the terms not covered yet). Called once an index is swapped in.
   */
  fillVocabulary(sliceMs: number): Promise<void> {
    return this.vocabulary().fill(sliceMs);
  }

  /** Terms the vocabulary's look-up structures do not cover yet (a look-up scans them). */
  get vocabularyUncovered(): number {
    return this.terms.length - (this.vocab?.terms === this.terms ? this.vocab.covered : 0);
  }

  /**
   * Index terms that `term` is a prefix of (at most `scanLimit` looked at) or within `fuzzy`
   * edits of, weighted as MiniSearch's own prefix and fuzzy search weights them (a term found
   * both ways counts as a prefix match); the term itself is left out, and so are terms no live
   * document holds.
   */
  expansions(term: string, lookup: ExpansionLookup): Expansion[] {
    return this.expansionCache.expansions(term, lookup, this.version, () => ({
      vocabulary: this.vocabulary(),
      terms: this.terms,
      maxDf: (t) => this.maxDf(t),
    }));
  }

  /** Whether positions are kept (`CompactIndexOptions.positions`). */
  get hasPositions(): boolean {
    return this.posField >= 0;
  }

  /** The positions (token offsets) of term `t` in a document's field with positions, increasing. */
  positions(doc: number, t: number): number[] {
    const e = this.entryOf(doc, t);
    if (e < 0) return [];
    const r = positionsOf(
      this.posBytes,
      this.posStart[doc],
      this.posStart[doc + 1],
      e,
      -1,
      new Int32Array(8),
      new Int32Array(0),
    );
    return [...r.pa.subarray(0, r.na)];
  }

  /** Index of term `t` among a document's entries of the field with positions, −1 when absent. */
  private entryOf(doc: number, t: number): number {
    const at = doc * this.nf + this.posField;
    const from = this.fwdStart[at];
    const to = this.fwdStart[at + 1];
    for (let i = from; i < to; i++) if (this.fwdTerm[i] === t) return i - from;
    return -1;
  }

  /** Window counts of terms `a` and `b` in a document (`windowCounts`). */
  private windows(doc: number, a: number, b: number, window: number, out: WindowCounts): WindowCounts {
    const ea = this.entryOf(doc, a);
    const eb = ea < 0 ? -1 : this.entryOf(doc, b);
    if (eb < 0) {
      out.o = out.u = 0;
      return out;
    }
    const r = positionsOf(this.posBytes, this.posStart[doc], this.posStart[doc + 1], ea, eb, this.pa, this.pb);
    this.pa = r.pa;
    this.pb = r.pb;
    return windowCounts(r.pa, r.na, r.pb, r.nb, window, out);
  }

  /**
   * Live documents with an ordered and an unordered window of `a` and `b`: the base segment's
   * found once per base (`WindowDfCache`; deleted documents left out as counted), the appended
   * segments' each time (few: they are merged at an eighth of the documents). Exact, so every
   * replica holding the same items finds the same. The index must not change until the job is done.
   */
  private *windowDf(a: number, b: number, window: number): Generator<void, WindowCounts> {
    const f = this.posField;
    const { base } = this;
    let kept = this.windowDfs.get(base, a, b, window);
    if (!kept) {
      const s = base.start[f];
      const run = (t: number) => (t + 1 < s.length ? [s[t], s[t + 1]] : [0, 0]);
      const [aLo, aHi] = run(a);
      const [bLo, bHi] = run(b);
      kept = yield* baseWindows(base.docs[f], aLo, aHi, bLo, bHi, (doc, out) => this.windows(doc, a, b, window, out));
      this.windowDfs.set(base, a, b, window, kept);
    }
    const { gone } = this;
    const df = liveWindows(kept, this.deadBase > 0 ? (doc) => gone[doc] !== 0 : undefined);
    // Appended documents holding both terms (`a`'s stamped, then `b`'s looked up), counted as the base's.
    this.ensureScratch();
    const stamp = this.nextStamp();
    const { termStamp } = this;
    this.eachAppendedPosting(f, a, (doc) => (termStamp[doc] = stamp));
    const both: number[] = [];
    this.eachAppendedPosting(f, b, (doc) => {
      if (termStamp[doc] === stamp) both.push(doc);
    });
    if (both.length) {
      const tail = liveWindows(
        yield* windowsOf(Int32Array.from(both), both.length, (doc, out) => this.windows(doc, a, b, window, out)),
        undefined,
      );
      df.o += tail.o;
      df.u += tail.u;
    }
    return df;
  }

  /** The proximity stage's view of the field with positions (`proximity.ts`); undefined without positions. */
  proximitySource(): ProximitySource | undefined {
    if (this.posField < 0) return undefined;
    const f = this.posField;
    return (this.proximityView ??= {
      termId: (term) => this.termIds.get(term),
      documents: () => this.live,
      averageLength: () => this.avg[f],
      length: (doc) => this.lengths[doc * this.nf + f],
      windows: (doc, a, b, window, out) => this.windows(doc, a, b, window, out),
      windowDf: (a, b, window) => this.windowDf(a, b, window),
    });
  }

  /** The index as the exhaustive oracle reads it (see `PostingsView`): a live view, not a copy. */
  postingsView(): PostingsView {
    return (this.view ??= {
      fields: this.fields,
      idLimit: () => this.next,
      version: () => this.version,
      searched: (boost) => this.searched(boost),
      termId: (term) => this.termIds.get(term),
      df: (f, t) => this.df[f][t],
      idf: (f, t) => this.idf(f, t),
      eachPosting: (f, t, fn) => this.eachPosting(f, t, fn),
      fieldLength: (doc, f) => this.lengths[doc * this.nf + f],
      averageLength: (f) => this.avg[f],
      externalId: (doc) => this.externalId(doc),
      shortId: (id) => this.shortId(id),
      documents: () => this.live,
      positionsField: this.posField,
      positions: (doc, t) => this.positions(doc, t),
    });
  }
}
