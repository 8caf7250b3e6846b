import { AppendedPostings } from './appended-postings';
import { grow } from './growable';
import { BLOCK_SHIFT, blockCount, type CursorScoring, type ProximitySource, type ScoreCursor, type WeightedTerm, type WindowCounts } from './cursor';
import type { Expansion } from '../vocabulary/expansions';
import type { QueryGate } from '../query-gate';

import { Vocabulary } from '../vocabulary/vocabulary';
import { PositionWriter, positionsOf, windowCounts } from './positions';
import { WindowDfCache, baseWindows, liveWindows, windowsOf } from './window-df';
import { TimeSlicer, yieldToLoop } from '../../lib/yield-to-loop';
import { FieldLengths, scaled, scoredBytes, scoredCacheBudget, termValues, type ValueStats } from './term-values';

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
  /**
   * Run merges off the write that triggers them: the new base is built in slices of about
   * `mergeSliceMs`, yielding to the event loop between them, while searches and writes go on
   * against the old base (writes land in a fresh appended segment); the new base is swapped in
   * at the end. Off: a merge runs to its end inside the write (tests). @default true
   */
  readonly background?: boolean;
  /** Longest slice of a background merge, milliseconds. @default 8 */
  readonly mergeSliceMs?: number;
  /**
   * Called with every new base once it is swapped in (after a merge or `seal`): a consistent
   * image of the documents live when the merge began, for persisting (`segment-file.ts`).
   */
  readonly onSealed?: (sealed: SealedIndex) => void;
  /** Queries in slices of the index that serves this one: a background merge swaps its new base in only while none runs. */
  readonly gate?: QueryGate;
  /**
   * The field whose token sequence is kept (`positions.ts`: per document, each token as the index
   * of its term among that field's forward entries), for proximity (`windowCounts`, `windowDf`).
   * @default none: no positions kept
   */
  readonly positions?: string;
}

/**
 * A base segment with everything needed to serve it alone: what a merge builds, and what is
 * written to disk and read back (`segment-file.ts`). Its arrays are never written after it is
 * made (appends to the index reallocate them), so it can be persisted while the index goes on.
 */
export interface SealedIndex {
  /** Field names, in order. */
  readonly fields: readonly string[];
  /** External ids by short id. */
  readonly ids: readonly string[];
  /** Per document, the fingerprint it was added with (the caller's content version). */
  readonly fingerprints: Uint32Array;
  /** Per field, MiniSearch's running average field length when the merge began. */
  readonly avg: Float64Array;
  /** Per document and field, terms counted with repeats. */
  readonly lengths: Int32Array;
  /** Forward index: per document and field, its entries sit at `fwdStart[d·nf + f]` .. `fwdStart[d·nf + f + 1]`. */
  readonly fwdStart: Int32Array;
  readonly fwdTerm: Int32Array;
  readonly fwdTf: Uint16Array;
  /** Index of the field whose positions are kept, −1 for none. */
  readonly posField: number;
  /** Positions (`positions.ts`): document d's token sequence is `posBytes[posStart[d]]` .. `posBytes[posStart[d + 1]]` (all empty without `posField`). */
  readonly posStart: Int32Array;
  readonly posBytes: Uint8Array;
  /** The vocabulary by term id. */
  readonly terms: readonly string[];
  /** Per field, postings in CSR form: term t's run is `start[t]` .. `start[t + 1]` of `docs` and `tfs`. */
  readonly start: readonly Int32Array[];
  readonly docs: readonly Int32Array[];
  readonly tfs: readonly Uint16Array[];
}

/** What a finished merge job hands to `install`. */
interface MergeResult {
  readonly sealed: SealedIndex;
  readonly base: BaseSegment;
  /** Base runs of the terms searched lately, built ahead in the new base (no first query pays for them). */
  readonly runs: Map<number, BaseRun>;
  /** New short id of each old one below the merge's end, −1 for documents already deleted. */
  readonly newOf: Int32Array;
  readonly shortIds: Map<string, number>;
  /**
   * The new base's per-document arrays with room after its documents (the sealed index holds
   * views of their used part): documents appended after the merge's start, or until the next
   * merge, go into that room instead of a copy of every array.
   */
  readonly forward: Forward;
}

/** The forward arrays of an index (see `SealedIndex`), possibly longer than their used part. */
interface Forward {
  readonly fps: Uint32Array;
  readonly lengths: Int32Array;
  readonly fwdStart: Int32Array;
  readonly fwdTerm: Int32Array;
  readonly fwdTf: Uint16Array;
  readonly posStart: Int32Array;
  readonly posBytes: Uint8Array;
}

/** A merge under way: the job, the documents it covers, and what changed meanwhile. */
interface Merging {
  readonly job: Generator<void, MergeResult>;
  /** The merge covers short ids below this (`next` when it began). */
  readonly end: number;
  /** Documents below `end` deleted while it ran, to be tombstoned in the new base. */
  readonly deleted: number[];
  /** Settles once the new base is swapped in. */
  readonly done: Promise<void>;
  readonly settle: () => void;
}

/** Documents copied per step of a merge job, between which a background merge may yield. */
const MERGE_STEP_DOCS = 512;

/**
 * Query terms whose expansions `CompactIndex.expansions` keeps between writes (the oldest go
 * first): a query's prefix and fuzzy look-ups were a fifth of a 2-word query's time at 200k
 * documents (in MiniSearch's radix tree), and the same words recur.
 */
const EXPANSION_CACHE_TERMS = 4096;

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


/**
 * A read-only view of an index's live postings and of the statistics BM25 is defined on, for a
 * scorer that visits every posting: the exhaustive oracle of the pruned search
 * (tools/oracles/exhaustive-scorer.ts), which is not in the service. It gives the postings as
 * they are stored (the base segment's runs, then the appended segments', deleted documents left
 * out), not the pruned path's assembly of them (base runs merged over fields, cached parts,
 * block bounds, cursors), which is what the oracle checks; and the searched fields, document
 * frequencies, idf and lengths that the pruned path scores with.
 */
export interface PostingsView {
  /** Field names by field id. */
  readonly fields: readonly string[];
  /** Short document ids are below this (for scratch arrays indexed by them). */
  idLimit(): number;
  /** Moves with every write and merge: what is derived from the view holds for one version. */
  version(): number;
  /** Field ids that `boost` searches (boost > 0), in the order a document's score sums them. */
  searched(boost: Readonly<Record<string, number>>): readonly number[];
  /** The id of an index term, or undefined. */
  termId(term: string): number | undefined;
  /** Live documents whose field `f` holds term `t`. */
  df(f: number, t: number): number;
  /** BM25 idf of term `t` in field `f` over the live documents. */
  idf(f: number, t: number): number;
  /** Calls `fn` for every live posting of term `t` in field `f`, in document order. */
  eachPosting(f: number, t: number, fn: (doc: number, tf: number) => void): void;
  /** Terms in document `doc`'s field `f`, repeats counted (its BM25 length). */
  fieldLength(doc: number, f: number): number;
  /** Field `f`'s average length (MiniSearch's running average). */
  averageLength(f: number): number;
  /** The external id of a short document id. */
  externalId(doc: number): string;
  /** Live documents. */
  documents(): number;
  /** The field whose positions are kept, −1 for none. */
  readonly positionsField: number;
  /** The positions (token offsets) of term `t` in a document's field with positions, increasing. */
  positions(doc: number, t: number): number[];
}

/**
 * Postings held, at most, summed over terms, in the cache of the terms' base postings merged over
 * fields (4 bytes of document id and 2 of tf per field holding the term, each; kept until the
 * next merge). Least recently used terms go first. The cache of scored postings of the current
 * index version is bounded in bytes by the index's size (`scoredCacheBudget`).
 */
export const POSTING_CACHE_LIMIT = 4_000_000;

/**
 * Postings per 32-document word a part of a term's postings must hold for `unionSize` to keep it
 * as a bitmap (OR-ed in a word at a time instead of one step per posting): at 2 the bitmap takes
 * at most half the bytes of the part's document ids.
 */
export const UNION_BITMAP_DENSITY = 2;

/** Sets the bit of each of `docs` in `words`, whose word 0 stands for documents `lo·32` … `lo·32 + 31`; returns `words`. */
function setBits(docs: Int32Array, words: Int32Array, lo: number): Int32Array {
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i];
    words[(d >>> 5) - lo] |= 1 << (d & 31);
  }
  return words;
}

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

/** A term's base postings merged over fields (`CompactIndex.baseRun`). */
interface BaseRun {
  /** Document ids, increasing (deleted documents included). */
  readonly docs: Int32Array;
  /** Per field, the term's tf in each of `docs` (0 = not in that field), or null when no document's field holds it. */
  readonly tfs: ReadonlyArray<Uint16Array | null>;
}

/** Postings of every term of the documents below `end`, per field in CSR form. */
interface BaseSegment {
  readonly end: number;
  /** Per field: term t's postings sit at `start[t]` .. `start[t + 1]` (terms newer than the segment have none). */
  readonly start: readonly Int32Array[];
  readonly docs: readonly Int32Array[];
  readonly tfs: readonly Uint16Array[];
}

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
 * Scores are MiniSearch's BM25 to the last bit: the same expression, live document frequencies,
 * and field-length averages kept with MiniSearch's running formula.
 */
export class CompactIndex {
  private readonly nf: number;
  private readonly minMergeDocs: number;
  private readonly fieldIds: Readonly<Record<string, number>>;
  private ids: Array<string | undefined> = [];
  private shortIds = new Map<string, number>();
  /** Documents `mapAt … mapEnd - 1` of a restored base are not in `shortIds` yet (`idMap`, `fillIds`). */
  private mapAt = 0;
  private mapEnd = 0;
  private next = 0;
  private live = 0;
  private readonly avg: Float64Array;
  private lengths: Int32Array = new Int32Array(0);
  private fps: Uint32Array = new Uint32Array(0);
  private fwdStart: Int32Array = new Int32Array(1);
  private fwdTerm: Int32Array = new Int32Array(0);
  private fwdTf: Uint16Array = new Uint16Array(0);
  // Positions of field `posField` (−1: none kept), see `SealedIndex.posStart`.
  private readonly posField: number;
  private posStart: Int32Array = new Int32Array(1);
  private posBytes: Uint8Array = new Uint8Array(0);
  // Exact window document frequencies of query pairs over the base segment (`windowDf`).
  private readonly windowDfs = new WindowDfCache();
  private terms: string[] = [];
  private termIds = new Map<string, number>();
  // Prefix and fuzzy look-ups of `terms` (`vocabulary()`).
  private vocab: Vocabulary | undefined;
  private df: Int32Array[];
  private base: BaseSegment;
  private tail: AppendedPostings[];
  // The appended segment a running merge is folding into the new base; still searched until then.
  private frozenTail: AppendedPostings[] | undefined;
  private merging: Merging | undefined;
  private readonly background: boolean;
  private readonly mergeSliceMs: number;
  private readonly onSealed: ((sealed: SealedIndex) => void) | undefined;
  private readonly gate: QueryGate | undefined;
  private tailDocs = 0;
  private deadBase = 0;
  // Any write moves the version; caches derived from the postings hold for one version.
  private version = 0;
  private acc = new Float64Array(0);
  private termStamp = new Int32Array(0);
  private stamp = 0;
  private slot = new Int32Array(0);
  private slotStamp = new Int32Array(0);
  private slotStampN = 0;
  private postingCache = new Map<string, TermPostings>();
  // Bytes each cached entry holds beyond the base runs it shares (`scoredBytes`).
  private postingCacheSizes = new Map<string, number>();
  private baseRuns = new Map<number, BaseRun>();
  private baseRunsOf: BaseSegment | undefined;
  private baseRunsSize = 0;
  private postingCacheKey = '';
  private postingCacheSize = 0;
  // Document lengths per field in 16 bits for the scored postings' pass (`termValues`).
  private fieldLengths = new FieldLengths();
  // Expansions by look-up and term, for `expansionsVersion` (the vocabulary and its document
  // frequencies change only on writes).
  private expansionCache = new Map<string, Expansion[]>();
  private expansionsVersion = -1;
  // Scratch bitmap of `unionSize`, all zero between calls.
  private unionBits = new Int32Array(0);
  // The exhaustive oracle's view, made once: its functions stay the same ones from call to call.
  private view: PostingsView | undefined;
  private proximityView: ProximitySource | undefined;
  // Scratch of `windows`: a document's positions of the two terms of a pair.
  private pa: Int32Array = new Int32Array(64);
  private pb: Int32Array = new Int32Array(64);

  /** An empty index over `fields`, in the order their scores are summed. */
  constructor(
    readonly fields: readonly string[],
    opts: CompactIndexOptions = {},
  ) {
    this.nf = fields.length;
    this.minMergeDocs = opts.minMergeDocs ?? 1024;
    this.background = opts.background ?? true;
    this.mergeSliceMs = opts.mergeSliceMs ?? 8;
    this.onSealed = opts.onSealed;
    this.gate = opts.gate;
    this.fieldIds = Object.fromEntries(fields.map((f, i) => [f, i]));
    this.posField = opts.positions === undefined ? -1 : (this.fieldIds[opts.positions] ?? -1);
    if (opts.positions !== undefined && this.posField < 0) throw new Error(`CompactIndex: positions of ${opts.positions}, not a field`);
    this.avg = new Float64Array(this.nf);
    this.df = fields.map(() => new Int32Array(0));
    this.tail = fields.map(() => new AppendedPostings());
    this.base = { end: 0, start: fields.map(() => new Int32Array(1)), docs: fields.map(() => new Int32Array(0)), tfs: fields.map(() => new Uint16Array(0)) };
  }

  /** Live documents. */
  get documentCount(): number {
    return this.live;
  }

  /** Whether `id` is indexed. */
  has(id: string): boolean {
    return this.idMap().has(id);
  }

  /** The short id of `id`, if indexed. */
  shortId(id: string): number | undefined {
    return this.idMap().get(id);
  }

  /** The map of ids to short ids, every document in it (a restored base's ids not yet entered go in now). */
  private idMap(): Map<string, number> {
    if (this.mapAt < this.mapEnd) {
      const { ids, shortIds } = this;
      for (let d = this.mapAt; d < this.mapEnd; d++) {
        const id = ids[d];
        if (id !== undefined) shortIds.set(id, d);
      }
      this.mapAt = this.mapEnd;
    }
    return this.shortIds;
  }

  /**
   * Enters a restored base's ids into the id map in slices of about `sliceMs` (after the start,
   * like `fillVocabulary`); a look-up before it is done enters the rest first.
   */
  async fillIds(sliceMs: number): Promise<void> {
    const slicer = new TimeSlicer(sliceMs);
    await yieldToLoop();
    while (this.mapAt < this.mapEnd) {
      const d = this.mapAt++;
      const id = this.ids[d];
      if (id !== undefined) this.shortIds.set(id, d);
      if ((d & 1023) === 1023) await slicer.maybeYield();
    }
  }

  /** Documents of a restored base not in the id map yet (`fillIds`). */
  get idsPending(): number {
    return this.mapEnd - this.mapAt;
  }

  /** The external id of a short document id. */
  externalId(docId: number): string {
    return this.ids[docId] as string;
  }

  /**
   * Adds a document (an id not indexed yet) by its analyzed terms per field, searchable at once.
   * `fingerprint` is kept with it (and persisted) to tell later whether the content changed.
   */
  add(id: string, fieldTerms: ReadonlyArray<readonly string[]>, fingerprint = 0): void {
    this.append(id, fieldTerms, true, fingerprint);
    this.tailDocs += 1;
    this.maybeMerge();
  }

  /**
   * Adds a document to the forward index only: it is searchable after `seal()`. Building a whole
   * index this way fills the postings once, in two passes, instead of growing them per document.
   */
  load(id: string, fieldTerms: ReadonlyArray<readonly string[]>, fingerprint = 0): void {
    this.append(id, fieldTerms, false, fingerprint);
  }

  /** Makes every loaded document searchable (merges all postings into the base), in one step. */
  seal(): void {
    this.finishMerge();
    this.startMerge();
    this.finishMerge();
  }

  /** `seal`, yielding to the event loop about every `sliceMs` (searches see the old state until the end). */
  async sealInSlices(sliceMs: number): Promise<void> {
    this.finishMerge();
    const m = this.startMerge();
    const slicer = new TimeSlicer(sliceMs);
    while (this.merging === m && !this.step(m)) await slicer.maybeYield();
  }

  /**
   * Starts a merge (in the background unless `background` is off) if anything was appended or
   * deleted since the last one: the next `onSealed` then covers every document. For persisting
   * once writes pause, so a restart has little to re-index.
   */
  checkpoint(): void {
    if (this.merging || !this.unmerged) return;
    const m = this.startMerge();
    if (!this.background) this.finishMerge();
    else void this.drive(m);
  }

  /** Whether documents were appended or deleted since the base was sealed: a `checkpoint` would merge them. */
  get unmerged(): boolean {
    return this.tailDocs > 0 || this.deadBase > 0 || this.base.end !== this.next;
  }

  /** Documents appended (a replaced one counts again) and base documents deleted since the base was sealed. */
  get unmergedDocs(): number {
    return this.next - this.base.end + this.deadBase;
  }

  /** Settles once no merge is running (tests and benchmarks). */
  async merged(): Promise<void> {
    while (this.merging) await this.merging.done;
  }

  /** The fingerprint a document was added with. */
  fingerprint(docId: number): number {
    return this.fps[docId];
  }

  private termId(term: string): number {
    let t = this.termIds.get(term);
    if (t === undefined) {
      t = this.terms.length;
      this.terms.push(term);
      this.termIds.set(term, t);
      for (let f = 0; f < this.nf; f++) this.df[f] = grow(this.df[f], t + 1);
      this.slot = grow(this.slot, t + 1);
      this.slotStamp = grow(this.slotStamp, t + 1);
    }
    return t;
  }

  private append(id: string, fieldTerms: ReadonlyArray<readonly string[]>, index: boolean, fingerprint: number): void {
    if (this.idMap().has(id)) throw new Error(`CompactIndex: duplicate id ${id}`);
    const { nf } = this;
    const d = this.next++;
    this.ids[d] = id;
    this.shortIds.set(id, d);
    this.fps = grow(this.fps, d + 1);
    this.fps[d] = fingerprint >>> 0;
    this.lengths = grow(this.lengths, (d + 1) * nf);
    this.fwdStart = grow(this.fwdStart, (d + 1) * nf + 1);
    let end = this.fwdStart[d * nf];
    let posEnd = this.posStart[d];
    for (let f = 0; f < nf; f++) {
      const tokens = fieldTerms[f] ?? [];
      // MiniSearch's running average (`addFieldLength`), so scores match it bit for bit.
      this.avg[f] = (this.avg[f] * this.live + tokens.length) / (this.live + 1);
      this.lengths[d * nf + f] = tokens.length;
      // Distinct terms in order of first occurrence, counted in place: `fwdTerm` from `first` on,
      // with `slot` (stamped per field of a document) pointing a term id at its entry.
      const first = end;
      const stamp = this.nextSlotStamp();
      const positions = f === this.posField ? new PositionWriter(this.posBytes, this.posStart[d], tokens.length) : undefined;
      for (const term of tokens) {
        const t = this.termId(term);
        if (this.slotStamp[t] === stamp) {
          positions?.push(this.slot[t] - first);
          // Saturates at MAX_TF (a Uint16Array would wrap).
          if (this.fwdTf[this.slot[t]] < MAX_TF) this.fwdTf[this.slot[t]] += 1;
          continue;
        }
        positions?.push(end - first);
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
        if (index) this.tail[f].add(t, d, this.fwdTf[i]);
      }
      this.fwdStart[d * nf + f + 1] = end;
      if (positions) {
        this.posBytes = positions.bytes;
        posEnd = positions.end;
      }
    }
    this.posStart = grow(this.posStart, d + 2);
    this.posStart[d + 1] = posEnd;
    this.live += 1;
    this.version += 1;
  }

  /** Removes `id` (a tombstone until the next merge); false if it was not indexed. */
  discard(id: string): boolean {
    const d = this.idMap().get(id);
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
    if (this.merging && d < this.merging.end) this.merging.deleted.push(d);
    this.maybeMerge();
    return true;
  }

  private maybeMerge(): void {
    if (this.merging) return;
    const tailFull = this.tailDocs >= this.minMergeDocs && this.tailDocs * 8 >= this.live;
    const baseDirty = this.deadBase >= this.minMergeDocs && this.deadBase * 4 >= this.base.end;
    if (!tailFull && !baseDirty) return;
    const m = this.startMerge();
    if (!this.background) this.finishMerge();
    else void this.drive(m);
  }

  /**
   * Begins a merge of every document indexed so far: the appended segment is frozen (still
   * searched) and new documents go to a fresh one. Runs the job's first step.
   */
  private startMerge(): Merging {
    let settle!: () => void;
    const done = new Promise<void>((r) => (settle = r));
    const end = this.next;
    this.frozenTail = this.tail;
    this.tail = this.fields.map(() => new AppendedPostings());
    this.tailDocs = 0;
    const m: Merging = { job: this.mergeJob(end), end, deleted: [], done, settle };
    this.merging = m;
    this.step(m);
    return m;
  }

  /** Advances a merge by one step; installs the new base and returns true once it is done. */
  private step(m: Merging): boolean {
    const r = m.job.next();
    if (!r.done) return false;
    this.install(m, r.value);
    return true;
  }

  /** Runs a merge to its end in slices, yielding to the event loop between them. */
  private async drive(m: Merging): Promise<void> {
    const slicer = new TimeSlicer(this.mergeSliceMs);
    // The merge's first step ran in the write that started it; the next ones in turns of their own.
    await slicer.begin();
    do {
      await slicer.maybeYield();
      if (await this.gate?.quiet()) slicer.restart();
    } while (this.merging === m && !this.step(m));
  }

  /** Runs the merge under way (if any) to its end now. */
  private finishMerge(): void {
    const m = this.merging;
    if (m) while (!this.step(m));
  }

  /**
   * One new base of every document live at the start (renumbered in order), in two passes over
   * the forward index, a step at a time. The live set, averages and document frequencies are
   * read at the start, in one step, so the result is the index as it was then; documents are
   * never changed in place (deletes are tombstones, appends reallocate), so the arrays read
   * later still hold what they held then.
   */
  private *mergeJob(end: number): Generator<void, MergeResult> {
    const { nf } = this;
    const nt = this.terms.length;
    const { ids: oldIds, fwdStart: oldStart, fwdTerm: oldTerm, fwdTf: oldTf, lengths: oldLengths, fps: oldFps, posStart: oldPosStart, posBytes: oldPos } = this;
    const newOf = new Int32Array(end).fill(-1);
    let n = 0;
    let entries = 0;
    let posLength = 0;
    for (let d = 0; d < end; d++) {
      if (oldIds[d] === undefined) continue;
      newOf[d] = n++;
      entries += oldStart[(d + 1) * nf] - oldStart[d * nf];
      posLength += oldPosStart[d + 1] - oldPosStart[d];
    }
    const ids: string[] = new Array(n);
    for (let d = 0; d < end; d++) if (newOf[d] >= 0) ids[newOf[d]] = oldIds[d] as string;
    const avg = this.avg.slice();
    // Live document frequencies are the run lengths: prefix sums place every run.
    const starts = this.df.map((df) => {
      const s = new Int32Array(nt + 1);
      for (let t = 0; t < nt; t++) s[t + 1] = s[t] + df[t];
      return s;
    });
    const terms = this.terms.slice(0, nt);
    yield;
    const shortIds = new Map<string, number>();
    // Room for a quarter more documents (the next merge starts once an eighth is appended), with
    // their entries at a quarter above the average: appends until then, and those made while
    // this merge runs, need no copy of these arrays.
    const room = Math.max(this.minMergeDocs, Math.ceil(n / 4));
    const roomEntries = Math.ceil((room * 1.25 * entries) / Math.max(1, n)) + 1024;
    const fingerprints = new Uint32Array(n + room);
    const lengths = new Int32Array((n + room) * nf);
    const fwdStart = new Int32Array((n + room) * nf + 1);
    const fwdTerm = new Int32Array(entries + roomEntries);
    const fwdTf = new Uint16Array(entries + roomEntries);
    const posStart = new Int32Array(n + room + 1);
    const posBytes = new Uint8Array(posLength + (posLength ? Math.ceil((room * 1.25 * posLength) / Math.max(1, n)) + 1024 : 0));
    let at = 0;
    let posAt = 0;
    for (let d = 0; d < end; d++) {
      const nd = newOf[d];
      if (nd < 0) continue;
      shortIds.set(ids[nd], nd);
      fingerprints[nd] = oldFps[d];
      for (let f = 0; f < nf; f++) {
        lengths[nd * nf + f] = oldLengths[d * nf + f];
        const from = oldStart[d * nf + f];
        const to = oldStart[d * nf + f + 1];
        fwdTerm.set(oldTerm.subarray(from, to), at);
        fwdTf.set(oldTf.subarray(from, to), at);
        at += to - from;
        fwdStart[nd * nf + f + 1] = at;
      }
      const from = oldPosStart[d];
      const to = oldPosStart[d + 1];
      if (to > from) posBytes.set(oldPos.subarray(from, to), posAt);
      posAt += to - from;
      posStart[nd + 1] = posAt;
      if (nd % MERGE_STEP_DOCS === MERGE_STEP_DOCS - 1) yield;
    }
    const docs: Int32Array[] = [];
    const tfs: Uint16Array[] = [];
    for (let f = 0; f < nf; f++) {
      const s = starts[f];
      const fill = s.slice(0, nt);
      const fd = new Int32Array(s[nt]);
      const ft = new Uint16Array(s[nt]);
      for (let d = 0; d < n; d++) {
        for (let i = fwdStart[d * nf + f]; i < fwdStart[d * nf + f + 1]; i++) {
          const p = fill[fwdTerm[i]]++;
          fd[p] = d;
          ft[p] = fwdTf[i];
        }
        if (d % MERGE_STEP_DOCS === MERGE_STEP_DOCS - 1) yield;
      }
      docs.push(fd);
      tfs.push(ft);
    }
    const sealed: SealedIndex = {
      fields: this.fields,
      ids,
      fingerprints: fingerprints.subarray(0, n),
      avg,
      lengths: lengths.subarray(0, n * nf),
      fwdStart: fwdStart.subarray(0, n * nf + 1),
      fwdTerm: fwdTerm.subarray(0, entries),
      fwdTf: fwdTf.subarray(0, entries),
      posField: this.posField,
      posStart: posStart.subarray(0, n + 1),
      posBytes: posBytes.subarray(0, posLength),
      terms,
      start: starts,
      docs,
      tfs,
    };
    const forward: Forward = { fps: fingerprints, lengths, fwdStart, fwdTerm, fwdTf, posStart, posBytes };
    const base: BaseSegment = { end: n, start: starts, docs, tfs };
    // The terms searched lately get their runs in the new base now, a step at a time, so the
    // first queries after the swap do not build them all at once.
    const runs = new Map<number, BaseRun>();
    let work = 0;
    for (const t of [...this.baseRuns.keys()]) {
      if (t >= nt) continue;
      const run = buildRun(base, nf, t);
      if (run) runs.set(t, run);
      work += run ? run.docs.length : 1;
      if (work >= MERGE_STEP_DOCS * 32) {
        work = 0;
        yield;
      }
    }
    return { sealed, base, runs, newOf, shortIds, forward };
  }

  /**
   * Swaps a finished merge's base in, in one step: documents added while it ran are renumbered
   * after it (their forward entries copied, their appended postings shifted), documents deleted
   * while it ran become tombstones of the new base.
   */
  private install(m: Merging, r: MergeResult): void {
    const { nf } = this;
    const { sealed, newOf, shortIds } = r;
    const n = sealed.ids.length;
    const extra = this.next - m.end;
    const next = n + extra;
    const ids: Array<string | undefined> = sealed.ids.slice();
    let dead = 0;
    for (const d of m.deleted) {
      const nd = newOf[d];
      if (nd < 0 || ids[nd] === undefined) continue;
      shortIds.delete(ids[nd] as string);
      ids[nd] = undefined;
      dead += 1;
    }
    for (let d = m.end; d < this.next; d++) {
      const id = this.ids[d];
      ids[n + d - m.end] = id;
      if (id !== undefined) shortIds.set(id, n + d - m.end);
    }
    const from = this.fwdStart[m.end * nf];
    const to = this.fwdStart[this.next * nf];
    const e = sealed.fwdTerm.length;
    const fw = r.forward;
    const posFrom = this.posStart[m.end];
    const posTo = this.posStart[this.next];
    const pe = sealed.posBytes.length;
    if (fw.fps.length >= next && fw.fwdTerm.length >= e + to - from && fw.posBytes.length >= pe + posTo - posFrom) {
      // The documents appended meanwhile fit in the room after the new base: copy theirs only.
      if (extra > 0) {
        fw.lengths.set(this.lengths.subarray(m.end * nf, this.next * nf), n * nf);
        fw.fps.set(this.fps.subarray(m.end, this.next), n);
        for (let i = 1; i <= extra * nf; i++) fw.fwdStart[n * nf + i] = this.fwdStart[m.end * nf + i] - from + e;
        fw.fwdTerm.set(this.fwdTerm.subarray(from, to), e);
        fw.fwdTf.set(this.fwdTf.subarray(from, to), e);
        for (let i = 1; i <= extra; i++) fw.posStart[n + i] = this.posStart[m.end + i] - posFrom + pe;
        fw.posBytes.set(this.posBytes.subarray(posFrom, posTo), pe);
      }
      this.lengths = fw.lengths;
      this.fps = fw.fps;
      this.fwdStart = fw.fwdStart;
      this.fwdTerm = fw.fwdTerm;
      this.fwdTf = fw.fwdTf;
      this.posStart = fw.posStart;
      this.posBytes = fw.posBytes;
    } else {
      const lengths = new Int32Array(next * nf);
      lengths.set(sealed.lengths);
      lengths.set(this.lengths.subarray(m.end * nf, this.next * nf), n * nf);
      const fps = new Uint32Array(next);
      fps.set(sealed.fingerprints);
      fps.set(this.fps.subarray(m.end, this.next), n);
      const fwdStart = new Int32Array(next * nf + 1);
      fwdStart.set(sealed.fwdStart);
      for (let i = 1; i <= extra * nf; i++) fwdStart[n * nf + i] = this.fwdStart[m.end * nf + i] - from + e;
      const fwdTerm = new Int32Array(e + to - from);
      fwdTerm.set(sealed.fwdTerm);
      fwdTerm.set(this.fwdTerm.subarray(from, to), e);
      const fwdTf = new Uint16Array(e + to - from);
      fwdTf.set(sealed.fwdTf);
      fwdTf.set(this.fwdTf.subarray(from, to), e);
      const posStart = new Int32Array(next + 1);
      posStart.set(sealed.posStart);
      for (let i = 1; i <= extra; i++) posStart[n + i] = this.posStart[m.end + i] - posFrom + pe;
      const posBytes = new Uint8Array(pe + posTo - posFrom);
      posBytes.set(sealed.posBytes);
      posBytes.set(this.posBytes.subarray(posFrom, posTo), pe);
      this.posStart = posStart;
      this.posBytes = posBytes;
      this.lengths = lengths;
      this.fps = fps;
      this.fwdStart = fwdStart;
      this.fwdTerm = fwdTerm;
      this.fwdTf = fwdTf;
    }
    const shift = n - m.end;
    if (extra > 0 && shift !== 0) for (const field of this.tail) field.shiftDocs(shift);
    this.ids = ids;
    this.shortIds = shortIds;
    this.mapAt = this.mapEnd = 0;
    this.next = next;
    this.base = r.base;
    this.baseRuns = new Map();
    this.baseRunsOf = r.base;
    this.baseRunsSize = 0;
    for (const [t, run] of r.runs) this.keepRun(t, run);
    this.frozenTail = undefined;
    this.deadBase = dead;
    this.version += 1;
    this.merging = undefined;
    m.settle();
    this.onSealed?.(sealed);
    this.maybeMerge();
  }

  /** The index a persisted base restores: every document of `sealed`, nothing appended. */
  static async restore(sealed: SealedIndex, opts: CompactIndexOptions & { sliceMs?: number } = {}): Promise<CompactIndex> {
    const c = new CompactIndex(sealed.fields, opts);
    const slicer = new TimeSlicer(opts.sliceMs ?? 8);
    const { nf } = c;
    const n = sealed.ids.length;
    const nt = sealed.terms.length;
    c.ids = sealed.ids.slice();
    // The id map is filled after the start (`fillIds`) or at its first use: a start from an intact
    // segment looks documents up by position, not by id. (A sealed index never holds an id twice:
    // ids are unique when appended, and the segment file is checked whole.)
    c.mapEnd = n;
    c.next = n;
    c.live = n;
    c.avg.set(sealed.avg);
    c.lengths = sealed.lengths;
    c.fps = sealed.fingerprints;
    c.fwdStart = sealed.fwdStart;
    c.fwdTerm = sealed.fwdTerm;
    c.fwdTf = sealed.fwdTf;
    if (sealed.posField !== c.posField) throw new Error(`positions of field ${sealed.posField}, the index keeps ${c.posField}`);
    c.posStart = sealed.posStart;
    c.posBytes = sealed.posBytes;
    c.terms = sealed.terms.slice();
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

  /** Calls `fn` for every live posting of term `t` in field `f`, in document order. */
  private eachPosting(f: number, t: number, fn: (doc: number, tf: number) => void): void {
    const { base, ids } = this;
    const start = base.start[f];
    if (t + 1 < start.length) {
      const docs = base.docs[f];
      const tfs = base.tfs[f];
      for (let i = start[t]; i < start[t + 1]; i++) if (ids[docs[i]] !== undefined) fn(docs[i], tfs[i]);
    }
    this.eachAppendedPosting(f, t, fn);
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
    if (this.expansionsVersion !== this.version) {
      this.expansionCache.clear();
      this.expansionsVersion = this.version;
    }
    const key = `${lookup.prefix ? 1 : 0}:${lookup.fuzzy}:${lookup.scanLimit}:${term}`;
    let found = this.expansionCache.get(key);
    if (!found) {
      found = this.lookUpExpansions(term, lookup);
      if (this.expansionCache.size >= EXPANSION_CACHE_TERMS) this.expansionCache.delete(this.expansionCache.keys().next().value!);
      this.expansionCache.set(key, found);
    }
    return found.slice();
  }

  /**
   * `expansions` looked up in the vocabulary: prefix matches (all of them when the prefix has at
   * most `scanLimit` terms; past that, the first `scanLimit` in the radix tree's order, as
   * MiniSearch's tree gave them) and near spellings.
   */
  private lookUpExpansions(term: string, lookup: ExpansionLookup): Expansion[] {
    const out = new Map<string, Expansion>();
    const { terms } = this;
    const vocabulary = this.vocabulary();
    if (lookup.prefix) {
      vocabulary.prefixed(term, lookup.scanLimit, (id) => {
        const df = this.maxDf(id);
        if (df === 0) return false;
        const t = terms[id];
        const distance = t.length - term.length;
        if (distance > 0) out.set(t, { term: t, weight: (PREFIX_WEIGHT * t.length) / (t.length + 0.3 * distance), distance, df });
        return true;
      });
    }
    if (lookup.fuzzy > 0) {
      vocabulary.near(term, lookup.fuzzy, (id, distance) => {
        const t = terms[id];
        const df = this.maxDf(id);
        if (df > 0 && distance > 0 && !out.has(t)) out.set(t, { term: t, weight: (FUZZY_WEIGHT * t.length) / (t.length + distance), distance, df });
      });
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

  /** Those of `terms` a document's field holds, in one pass over its terms (a snippet's matches). */
  heldTerms(docId: number, field: string, terms: ReadonlySet<string>): Set<string> {
    const out = new Set<string>();
    const base = docId * this.nf + this.fieldIds[field];
    for (let i = this.fwdStart[base]; i < this.fwdStart[base + 1]; i++) {
      const t = this.terms[this.fwdTerm[i]];
      if (terms.has(t)) out.add(t);
    }
    return out;
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
    this.termStamp = new Int32Array(size);
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
  private postings(term: string, fields: readonly number[], boost: readonly number[], bm25: Bm25Params, keepValues: boolean): TermPostings | undefined {
    const key = `${this.version}:${bm25.k}:${bm25.b}:${bm25.d}:${fields.map((f, i) => `${f}=${boost[i]}`).join(',')}`;
    if (key !== this.postingCacheKey) {
      this.postingCache.clear();
      this.postingCacheSizes.clear();
      this.postingCacheKey = key;
      this.postingCacheSize = 0;
    }
    const cached = this.postingCache.get(term);
    if (cached) {
      this.postingCache.delete(term);
      this.postingCache.set(term, cached);
      if (!cached.parts[0].vals) this.fillValues(term, cached, fields, boost, bm25);
      return cached;
    }
    const t = this.termIds.get(term);
    if (t === undefined || fields.every((f) => this.df[f][t] === 0)) return undefined;
    // The base's part comes merged over fields from `baseRun` (kept until the next merge), with
    // a bound from its largest tf and shortest length: no pass over it per write. Only the
    // appended segments' part is gathered, sorted and bounded exactly here.
    const run = this.baseRun(t);
    const { ids } = this;
    const idf = fields.map((f) => (this.df[f][t] === 0 ? 0 : this.idf(f, t)));
    const short = this.fieldLengths.get(this.base, this.lengths, this.nf, this.next);
    const stats: ValueStats = { lengths: this.lengths, short, nf: this.nf, avg: this.avg, k: bm25.k, b: bm25.b, d: bm25.d };
    const parts: TermPostings['parts'] = [];
    if (run) {
      // The values and the exact bounds, per block and in all: one pass over the run (cached
      // with the postings for the index version, so repeated queries between writes do not pay it again).
      const dead = this.deadBase > 0;
      const runTfs = fields.map((f) => run.tfs[f] ?? null);
      const { vals, blockMax } = termValues(run.docs, runTfs, fields, boost, idf, stats, dead ? ids : undefined, keepValues);
      const maxImpact = largest(blockMax);
      if (!dead) parts.push({ docs: run.docs, tfs: runTfs, maxImpact, blockMax, vals: keepValues ? vals : undefined });
      else {
        const keep: number[] = [];
        for (let i = 0; i < run.docs.length; i++) if (ids[run.docs[i]] !== undefined) keep.push(i);
        if (keep.length) {
          const docs = Int32Array.from(keep, (i) => run.docs[i]);
          const tfs = runTfs.map((from) => (from ? Uint16Array.from(keep, (i) => from[i]) : null));
          // A block of the kept postings takes the largest bound of the run blocks they come from.
          const kept = keepValues ? vals.map((v) => v && Float64Array.from(keep, (i) => v[i])) : undefined;
          parts.push({ docs, tfs, maxImpact, blockMax: keptBlockMax(blockMax, keep), vals: kept });
        }
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
          out ??= new Uint16Array(appended.length);
          out[at[doc]] = tf;
        });
        return out as Uint16Array | null;
      });
      for (let i = 0; i < appended.length; i++) at[appended[i]] = 0;
      const docs = Int32Array.from(appended);
      const { vals, blockMax } = termValues(docs, tfs, fields, boost, idf, stats, undefined, keepValues);
      parts.push({ docs, tfs, maxImpact: largest(blockMax), blockMax, vals: keepValues ? vals : undefined });
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

  /** Fills in the parts' values of a cached term whose first use did not keep them (`termValues`), and counts them in the cache. */
  private fillValues(term: string, p: TermPostings, fields: readonly number[], boost: readonly number[], bm25: Bm25Params): void {
    const short = this.fieldLengths.get(this.base, this.lengths, this.nf, this.next);
    const stats: ValueStats = { lengths: this.lengths, short, nf: this.nf, avg: this.avg, k: bm25.k, b: bm25.b, d: bm25.d };
    let added = 0;
    for (const part of p.parts) {
      part.vals = termValues(part.docs, part.tfs, fields, boost, p.idf, stats).vals;
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

  /** Calls `fn` for every live posting of term `t` in field `f` in the appended segments (frozen, then fresh), in document order. */
  private eachAppendedPosting(f: number, t: number, fn: (doc: number, tf: number) => void): void {
    const { ids } = this;
    const live = (doc: number, tf: number) => {
      if (ids[doc] !== undefined) fn(doc, tf);
    };
    this.frozenTail?.[f].forEach(t, live);
    this.tail[f].forEach(t, live);
  }

  /**
   * Term `t`'s postings in the base segment, every field merged: document ids in order (deleted
   * ones included) with each field's tf (0 where the field lacks the term; null for a field
   * without it at all). They change only with the base, so they are kept (least recently used
   * go first past `POSTING_CACHE_LIMIT` postings) until the next merge, while the BM25 values
   * built from them follow every write.
   */
  private baseRun(t: number): BaseRun | undefined {
    const { base } = this;
    if (this.baseRunsOf !== base) {
      this.baseRuns.clear();
      this.baseRunsOf = base;
      this.baseRunsSize = 0;
    }
    const hit = this.baseRuns.get(t);
    if (hit) {
      this.baseRuns.delete(t);
      this.baseRuns.set(t, hit);
      return hit;
    }
    const run = buildRun(base, this.nf, t);
    if (run) this.keepRun(t, run);
    return run;
  }

  private keepRun(t: number, run: BaseRun): void {
    this.baseRuns.set(t, run);
    this.baseRunsSize += run.docs.length;
    for (const [old, e] of this.baseRuns) {
      if (this.baseRunsSize <= POSTING_CACHE_LIMIT || old === t) break;
      this.baseRuns.delete(old);
      this.baseRunsSize -= e.docs.length;
    }
  }

  /**
   * Cursors over `terms` for `maxScoreTopK` (terms absent from the index left out), with the
   * fields, weights and BM25 the exhaustive oracle scores with, and, when `count`, the number of
   * documents they match together (of those `keep` keeps; else 0).
   */
  cursors(
    terms: readonly WeightedTerm[],
    boost: Readonly<Record<string, number>>,
    bm25: Bm25Params,
    count: boolean,
    keep?: (docId: number) => boolean,
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
    keep?: (docId: number) => boolean,
    keepValues = true,
  ): Generator<void, { cursors: ScoreCursor[]; total: number; whole: (doc: number) => number }> {
    const fields = this.searched(boost);
    const boosts = fields.map((f) => boost[this.fields[f]]);
    const cursors: ScoreCursor[] = [];
    const termOf: number[] = [];
    // Each cursor's part of its term's cached postings, and the term (`unionSize`).
    const partOf: Array<TermPostings['parts'][number]> = [];
    const termNames: string[] = [];
    const seen = new Set<string>();
    const scoring: CursorScoring = { lengths: this.lengths, nf: this.nf, fields, avg: fields.map((f) => this.avg[f]), k: bm25.k, b: bm25.b, d: bm25.d };
    for (const [term, weight] of terms) {
      if (!(weight > 0)) continue;
      const p = this.postings(term, fields, boosts, bm25, keepValues);
      if (!p) continue;
      // A term's parts hold disjoint documents: each document meets the term in one cursor,
      // in the term's place in the query, so sums and distinct-term counts are unchanged.
      const distinct = !seen.has(term);
      seen.add(term);
      const factors = boosts.map((b) => weight * b);
      for (const part of p.parts) {
        const scale = weight * (1 + 1e-9);
        cursors.push({ docs: part.docs, tfs: part.tfs, vals: part.vals, idf: p.idf, scoring, factors, bound: part.maxImpact * scale, blockMax: scaled(part.blockMax, scale), distinct });
        termOf.push(this.termIds.get(term)!);
        partOf.push(part);
        termNames.push(term);
      }
      yield;
    }
    const whole = this.wholeScorer(cursors, termOf, scoring);
    if (!count) return { cursors, total: 0, whole };
    return { cursors, total: yield* this.unionSize(cursors, partOf, termNames, keep), whole };
  }

  /**
   * A live document's score over `cursors` (`termOf`: each one's term), the same to the last bit
   * as looking it up in every cursor and summing `cursorScore` in the cursors' order (max-score.ts's
   * `wholeScore`), but from the document's forward entries: one walk over its terms in the
   * searched fields instead of a galloping search per cursor (at 1M documents an RM3 query's ~45
   * cursors are long lists, and each search missed the cache at every step of its binary part).
   * A document is in the cursor of a term it holds whose part's document range covers it (a
   * term's parts hold disjoint ranges: the base's documents, then the appended ones). For
   * `TopKOptions.whole`; valid while the index does not change (as the cursors).
   */
  private wholeScorer(cursors: readonly ScoreCursor[], termOf: readonly number[], scoring: CursorScoring): (doc: number) => number {
    const m = cursors.length;
    const { fields, avg, k, b, d } = scoring;
    const nfs = fields.length;
    const { nf, fwdStart, fwdTerm, fwdTf, lengths } = this;
    const k1 = k + 1;
    // Cursors by term: the first of a term's cursors, and the next cursor of the same term (−1 ends).
    const first = new Map<number, number>();
    const nextOf = new Int32Array(m).fill(-1);
    for (let i = m - 1; i >= 0; i--) {
      const f = first.get(termOf[i]);
      if (f !== undefined) nextOf[i] = f;
      first.set(termOf[i], i);
    }
    const lo = new Int32Array(m);
    const hi = new Int32Array(m).fill(-1);
    for (let i = 0; i < m; i++) {
      const { docs } = cursors[i];
      if (docs.length === 0) continue;
      lo[i] = docs[0];
      hi[i] = docs[docs.length - 1];
    }
    // Per cursor and searched field, the document's tf (all zero between calls).
    const tf = new Uint16Array(m * nfs);
    const hit = new Uint8Array(m);
    return (doc) => {
      let any = false;
      for (let j = 0; j < nfs; j++) {
        const at = doc * nf + fields[j];
        for (let e = fwdStart[at]; e < fwdStart[at + 1]; e++) {
          let i = first.get(fwdTerm[e]);
          if (i === undefined) continue;
          for (; i >= 0; i = nextOf[i]) {
            if (doc < lo[i] || doc > hi[i]) continue;
            tf[i * nfs + j] = fwdTf[e];
            hit[i] = 1;
            any = true;
          }
        }
      }
      if (!any) return 0;
      let sum = 0;
      for (let i = 0; i < m; i++) {
        if (hit[i] === 0) continue;
        hit[i] = 0;
        const c = cursors[i];
        let s = 0;
        for (let j = 0; j < nfs; j++) {
          const t = tf[i * nfs + j];
          if (t === 0) continue;
          tf[i * nfs + j] = 0;
          s += c.factors[j] * (c.idf[j] * (d + (t * k1) / (t + k * (1 - b + (b * lengths[doc * nf + fields[j]]) / avg[j]))));
        }
        sum += s;
      }
      return sum;
    };
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
  private *unionSize(cursors: readonly ScoreCursor[], parts: ReadonlyArray<TermPostings['parts'][number]>, terms: readonly string[], keep?: (docId: number) => boolean): Generator<void, number> {
    const words = (this.next + 31) >>> 5;
    if (this.unionBits.length < words) this.unionBits = new Int32Array(Math.max(words, this.unionBits.length * 2));
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
      if (!part.bits && part.counted && n >= (last - first + 1) * UNION_BITMAP_DENSITY && this.postingCache.get(terms[c])?.parts.includes(part)) {
        part.bits = { lo: first, words: setBits(docs, new Int32Array(last - first + 1), first) };
        this.countCached(terms[c], part.bits.words.byteLength);
      }
      if (part.bits) {
        const { lo: at, words: own } = part.bits;
        for (let w = 0; w < own.length; w++) bits[at + w] |= own[w];
      } else {
        setBits(docs, bits, 0);
        part.counted = true;
      }
      yield;
    }
    let total = 0;
    for (let w = lo; w < hi; w++) {
      let x = bits[w];
      if (x === 0) continue;
      bits[w] = 0;
      if (keep) {
        for (; x !== 0; x &= x - 1) if (keep((w << 5) + 31 - Math.clz32(x & -x))) total += 1;
        continue;
      }
      x -= (x >>> 1) & 0x55555555;
      x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
      total += Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
    }
    return total;
  }

  /** Whether positions are kept (`CompactIndexOptions.positions`). */
  get hasPositions(): boolean {
    return this.posField >= 0;
  }

  /** The positions (token offsets) of term `t` in a document's field with positions, increasing. */
  positions(doc: number, t: number): number[] {
    const e = this.entryOf(doc, t);
    if (e < 0) return [];
    const r = positionsOf(this.posBytes, this.posStart[doc], this.posStart[doc + 1], e, -1, new Int32Array(8), new Int32Array(0));
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
    const { base, ids } = this;
    let kept = this.windowDfs.get(base, a, b, window);
    if (!kept) {
      const s = base.start[f];
      const run = (t: number) => (t + 1 < s.length ? [s[t], s[t + 1]] : [0, 0]);
      const [aLo, aHi] = run(a);
      const [bLo, bHi] = run(b);
      kept = yield* baseWindows(base.docs[f], aLo, aHi, bLo, bHi, (doc, out) => this.windows(doc, a, b, window, out));
      this.windowDfs.set(base, a, b, window, kept);
    }
    const df = liveWindows(kept, this.deadBase > 0 ? (doc) => ids[doc] === undefined : undefined);
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
      const tail = liveWindows(yield* windowsOf(Int32Array.from(both), both.length, (doc, out) => this.windows(doc, a, b, window, out)), undefined);
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
      externalId: (doc) => this.ids[doc] as string,
      documents: () => this.live,
      positionsField: this.posField,
      positions: (doc, t) => this.positions(doc, t),
    });
  }
}

/** The largest of `xs` (0 when empty). */
function largest(xs: Float64Array): number {
  let most = 0;
  for (const x of xs) if (x > most) most = x;
  return most;
}

/**
 * Block bounds of the postings kept from a run (their indices `keep`, increasing): kept block c
 * holds kept postings c·BLOCK_SIZE .. (c + 1)·BLOCK_SIZE − 1, which sit in the run's blocks from
 * that of its first to that of its last; their largest bound is the kept block's.
 */
function keptBlockMax(runMax: Float64Array, keep: readonly number[]): Float64Array {
  const out = new Float64Array(blockCount(keep.length));
  for (let c = 0; c < out.length; c++) {
    const from = keep[c << BLOCK_SHIFT] >> BLOCK_SHIFT;
    const to = keep[Math.min(keep.length, (c + 1) << BLOCK_SHIFT) - 1] >> BLOCK_SHIFT;
    let most = 0;
    for (let b = from; b <= to; b++) if (runMax[b] > most) most = runMax[b];
    out[c] = most;
  }
  return out;
}

/** Term `t`'s run in `base` (see `CompactIndex.baseRun`). */
/**
 * The merged run of a term whose postings in one field cover its postings in every other field
 * (`lo`/`hi`: each field's range in `base`): that field's documents and tfs copied whole (a copy
 * of the range, not a k-way merge), undefined when no field covers the others. Copies, not views
 * into the base's arrays: with views warm queries were slower (2-word ~1.3x main's CPU in one
 * process at 1M, against ~1.1x with copies; not explained).
 */
function coveredRun(base: BaseSegment, nf: number, lo: readonly number[], hi: readonly number[]): BaseRun | undefined {
  let wide = 0;
  for (let f = 1; f < nf; f++) if (hi[f] - lo[f] > hi[wide] - lo[wide]) wide = f;
  const docs = base.docs[wide].slice(lo[wide], hi[wide]);
  const tfs: Array<Uint16Array | null> = [];
  for (let f = 0; f < nf; f++) {
    if (f === wide) tfs.push(base.tfs[f].slice(lo[f], hi[f]));
    else if (hi[f] === lo[f]) tfs.push(null);
    else {
      const out = new Uint16Array(docs.length);
      const from = base.docs[f];
      let at = 0;
      for (let i = lo[f]; i < hi[f]; i++) {
        const doc = from[i];
        while (at < docs.length && docs[at] < doc) at++;
        if (at === docs.length || docs[at] !== doc) return undefined;
        out[at] = base.tfs[f][i];
      }
      tfs.push(out);
    }
  }
  return { docs, tfs };
}

function buildRun(base: BaseSegment, nf: number, t: number): BaseRun | undefined {
  const lo = new Array<number>(nf).fill(0);
  const hi = new Array<number>(nf).fill(0);
  let fieldsWith = 0;
  let only = -1;
  let total = 0;
  for (let f = 0; f < nf; f++) {
    const s = base.start[f];
    if (t + 1 >= s.length || s[t + 1] === s[t]) continue;
    lo[f] = s[t];
    hi[f] = s[t + 1];
    fieldsWith += 1;
    only = f;
    total += hi[f] - lo[f];
  }
  if (fieldsWith === 0) return undefined;
  let run: BaseRun;
  if (fieldsWith === 1) {
    run = {
      docs: base.docs[only].subarray(lo[only], hi[only]),
      tfs: base.tfs.map((arr, f) => (f === only ? arr.subarray(lo[f], hi[f]) : null)),
    };
  } else {
    // When one field's run holds every document of the others (the index's `text` holds the
    // title's and the tags' terms), its run is the documents, copied whole, and the others' tfs
    // are placed along it. Else a merge of the fields' sorted runs.
    const covered = coveredRun(base, nf, lo, hi);
    if (covered) return covered;
    const docs = new Int32Array(total);
    const tfs = base.tfs.map((_a, f) => (hi[f] > lo[f] ? new Uint16Array(total) : null));
    const pos = lo.slice();
    let n = 0;
    for (;;) {
      let min = 0x7fffffff;
      for (let f = 0; f < nf; f++) if (pos[f] < hi[f] && base.docs[f][pos[f]] < min) min = base.docs[f][pos[f]];
      if (min === 0x7fffffff) break;
      docs[n] = min;
      for (let f = 0; f < nf; f++) {
        if (pos[f] < hi[f] && base.docs[f][pos[f]] === min) {
          tfs[f]![n] = base.tfs[f][pos[f]];
          pos[f] += 1;
        }
      }
      n += 1;
    }
    run = { docs: docs.slice(0, n), tfs: tfs.map((a) => a && a.slice(0, n)) };
  }
  return run;
}
