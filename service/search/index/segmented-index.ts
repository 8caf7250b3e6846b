import { f64, i32 } from '../../lib/untracked-arrays';
import { AppendedPostings } from './appended-postings';
import { BaseRunCache, RUNS_AHEAD_POSTINGS, type BaseSegment } from './base-runs';
import { grow } from './growable';
import { ShardedMap } from '../../lib/sharded-map';
import { ChunkedList, arrayChunks } from '../../lib/chunked-list';
import { idList, mergeJob, type IdList, type Merging, type MergeResult, type SealedIndex } from './merge';
import type { MergeSource, Renumbered } from './merge-pass';
import { PositionWriter } from './positions';
import { TimeSlicer, yieldToLoop } from '../../lib/yield-to-loop';
import type { CompactIndexOptions, MergeGate } from './index-options';

// Term frequencies are stored in 16 bits; a term repeated more often in one field counts this much.
const MAX_TF = 0xffff;

/**
 * The storage of `CompactIndex` (see there): documents' short ids, the forward index, positions,
 * document frequencies and the two segments of postings (the base in CSR form, the appended one),
 * appends, tombstones, and merges into a new base in the background. What reads postings for
 * queries is built on it (`PostingsIndex`, then `CompactIndex`).
 */
export class SegmentedIndex {
  protected readonly nf: number;
  private readonly minMergeDocs: number;
  protected readonly fieldIds: Readonly<Record<string, number>>;
  /** External ids of the base's documents by short id (`SealedIndex.ids`, never written). */
  protected baseIds: IdList = idList();
  /** External ids of the documents after the base, by short id − `base.end` (deleted ones too, until a merge). */
  private tailIds = new ChunkedList(arrayChunks<string>());
  /**
   * Per short id, 1 once the document is deleted (a tombstone until a merge drops it), 0 while it
   * is live: liveness apart from the ids, so that a merge makes one list of ids, shared by its
   * sealed index and the served one, and the hot loops read a byte a posting.
   */
  protected gone: Uint8Array = new Uint8Array(0);
  // Replaced whenever a merge renumbers the short ids (`numbering`).
  private numberingMark: object = {};
  /**
   * Ids to slots. A document keeps its slot while it lives, whatever short id a merge gives it, so
   * a merge renumbers the slots in two typed arrays (`shortOfSlot`, `slotOfShort`) and leaves the
   * map alone: a new map of every id a merge was ~30 MB of heap in ~900,000 entries at 1M
   * documents, the growth that started the full collections during a merge (issue 39).
   */
  private readonly slots = new ShardedMap<number>();
  /** The short id of each slot's document (stale for free slots). */
  protected shortOfSlot: Int32Array = new Int32Array(0);
  /** The slot of each short id's document (stale for deleted ones). */
  protected slotOfShort: Int32Array = new Int32Array(0);
  /** Slots below this have been handed out. */
  protected slotLimit = 0;
  // Slots to hand out again, a stack (typed: after 500,000 deletes a JS array of them was ~12 B a
  // live document of heap); `freeSlots[freeCount - 1]` is the next.
  private freeSlots: Int32Array = new Int32Array(0);
  private freeCount = 0;
  // Slots of documents deleted while a merge runs: the job may have placed them in its new
  // arrays, so they go back to the stack only once it is swapped in (`freeAt` … `freeCount - 1`
  // until then, and not handed out: `freeAt` is the stack's usable height).
  private freeAt = 0;
  /** Documents `mapAt … mapEnd - 1` of a restored base are not in `slots` yet (`idMap`, `fillIds`): their slot is their short id. */
  protected mapAt = 0;
  protected mapEnd = 0;
  protected next = 0;
  protected live = 0;
  /**
   * Per field, the live documents' length (terms counted with repeats) summed: an integer, exact
   * in a double, so `avg` is a function of the live set alone, whatever order documents came and
   * went in (issue 39: an index after any writes ranks as one built from its survivors, to the bit).
   */
  protected readonly lengthSum: Float64Array;
  /** Per field, the live documents' average length: `lengthSum / live` (0 when none). */
  protected readonly avg: Float64Array;
  protected lengths: Int32Array = new Int32Array(0);
  protected fps: Uint32Array = new Uint32Array(0);
  protected fwdStart: Int32Array = new Int32Array(1);
  protected fwdTerm: Int32Array = new Int32Array(0);
  protected fwdTf: Uint16Array = new Uint16Array(0);
  // Positions of field `posField` (−1: none kept), see `SealedIndex.posStart`.
  protected readonly posField: number;
  protected posStart: Int32Array = new Int32Array(1);
  protected posBytes: Uint8Array = new Uint8Array(0);
  protected terms: string[] = [];
  protected termIds = new Map<string, number>();
  protected df: Int32Array[];
  protected base: BaseSegment;
  private tail: AppendedPostings[];
  // The appended segment a running merge is folding into the new base; still searched until then.
  private frozenTail: AppendedPostings[] | undefined;
  private merging: Merging | undefined;
  private readonly background: boolean;
  private readonly mergeSliceMs: number;
  private readonly onSealed: ((sealed: SealedIndex) => void) | undefined;
  private readonly gate: MergeGate | undefined;
  private tailDocs = 0;
  protected deadBase = 0;
  // Any write moves the version; caches derived from the postings hold for one version.
  protected version = 0;
  protected acc: Float64Array = new Float64Array(0);
  protected termStamp: Int32Array = new Int32Array(0);
  private stamp = 0;
  protected slot = new Int32Array(0);
  protected slotStamp = new Int32Array(0);
  private slotStampN = 0;
  // The base segment's runs of the terms searched lately, kept until the next merge.
  protected readonly runs = new BaseRunCache();

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
    if (opts.positions !== undefined && this.posField < 0)
      throw new Error(`CompactIndex: positions of ${opts.positions}, not a field`);
    this.lengthSum = new Float64Array(this.nf);
    this.avg = new Float64Array(this.nf);
    this.df = fields.map(() => new Int32Array(0));
    this.tail = fields.map(() => new AppendedPostings());
    this.base = {
      end: 0,
      start: fields.map(() => new Int32Array(1)),
      docs: fields.map(() => new Int32Array(0)),
      tfs: fields.map(() => new Uint16Array(0)),
    };
  }

  /** Live documents. */
  get documentCount(): number {
    return this.live;
  }

  /** Short ids are below this (deleted documents' included, until a merge drops them). */
  get idLimit(): number {
    return this.next;
  }

  /**
   * The same object until short ids are renumbered (a merge's base swapped in): what is kept by
   * short id (the search's document columns) holds while it stays the same.
   */
  get numbering(): object {
    return this.numberingMark;
  }

  /** Whether `id` is indexed. */
  has(id: string): boolean {
    return this.idMap().has(id);
  }

  /** The short id of `id`, if indexed. */
  shortId(id: string): number | undefined {
    const slot = this.idMap().get(id);
    return slot === undefined ? undefined : this.shortOfSlot[slot];
  }

  /** The map of ids to short ids, every document in it (a restored base's ids not yet entered go in now). */
  private idMap(): ShardedMap<number> {
    if (this.mapAt < this.mapEnd) {
      const { gone, slots } = this;
      for (let d = this.mapAt; d < this.mapEnd; d++) if (gone[d] === 0) slots.set(this.idAt(d), d);
      this.mapAt = this.mapEnd;
    }
    return this.slots;
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
      if (this.gone[d] === 0) this.slots.set(this.idAt(d), d);
      if ((d & 1023) === 1023) await slicer.maybeYield();
    }
  }

  /** Documents of a restored base not in the id map yet (`fillIds`). */
  get idsPending(): number {
    return this.mapEnd - this.mapAt;
  }

  /** The external id of a short document id (undefined, despite the type, once it is deleted or past `idLimit`). */
  externalId(docId: number): string {
    return (this.gone[docId] === 0 ? this.idAt(docId) : undefined) as string;
  }

  /**
   * The live documents as a bitmap: sets `out[w]`, for the words `lo … hi - 1`, to the word of
   * documents `32w … 32w + 31` with bit `d & 31` set for each live document d (below `idLimit`);
   * returns how many are live. A byte read a document (`externalId` per document, the faceted
   * browse's count until issue 40's browse2, read an id too), a word a read when none is deleted.
   */
  liveWords(out: Int32Array, lo: number, hi: number): number {
    const n = this.next;
    const { gone } = this;
    const allLive = this.live === n;
    let live = 0;
    for (let w = lo; w < hi; w++) {
      const d0 = w << 5;
      const e = Math.min(32, n - d0);
      let x = 0;
      if (e > 0 && allLive) {
        x = e === 32 ? -1 : (1 << e) - 1;
        live += e;
      } else
        for (let i = 0; i < e; i++)
          if (gone[d0 + i] === 0) {
            x |= 1 << i;
            live += 1;
          }
      out[w] = x;
    }
    return live;
  }

  /**
   * The slot of document `doc` (below `idLimit`), -1 once it is deleted: the same while the
   * document lives, whatever short id a merge gives it (what is kept per document across merges
   * is kept by slot: the search's document attributes); a later document may take it once it is
   * deleted. A restored base's documents' slots are their short ids at the restore.
   */
  slotOf(doc: number): number {
    return this.gone[doc] === 0 ? this.slotOfShort[doc] : -1;
  }

  /** The external id of a short document id below `idLimit`, deleted or not. */
  protected idAt(docId: number): string {
    const end = this.base.end;
    return docId < end ? this.baseIds.get(docId) : this.tailIds.get(docId - end);
  }

  /**
   * Adds a document (an id not indexed yet) by its analyzed terms per field, searchable at once.
   * `fingerprint` is kept with it (and persisted) to tell later whether the content changed.
   * Returns its slot (`slotOf`).
   */
  add(id: string, fieldTerms: ReadonlyArray<readonly string[]>, fingerprint = 0): number {
    const slot = this.append(id, fieldTerms, true, fingerprint);
    this.tailDocs += 1;
    this.maybeMerge();
    return slot;
  }

  /**
   * Adds a document to the forward index only: it is searchable after `seal()`. Building a whole
   * index this way fills the postings once, in two passes, instead of growing them per document.
   * Returns its slot (`slotOf`).
   */
  load(id: string, fieldTerms: ReadonlyArray<readonly string[]>, fingerprint = 0): number {
    return this.append(id, fieldTerms, false, fingerprint);
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

  private append(
    id: string,
    fieldTerms: ReadonlyArray<readonly string[]>,
    index: boolean,
    fingerprint: number,
  ): number {
    if (this.idMap().has(id)) throw new Error(`CompactIndex: duplicate id ${id}`);
    const { nf } = this;
    const d = this.next++;
    this.tailIds.push(id);
    this.gone = grow(this.gone, d + 1);
    const slot = this.freeAt > 0 ? this.takeFreeSlot() : this.slotLimit++;
    this.slots.set(id, slot);
    this.shortOfSlot = grow(this.shortOfSlot, slot + 1);
    this.shortOfSlot[slot] = d;
    this.slotOfShort = grow(this.slotOfShort, d + 1);
    this.slotOfShort[d] = slot;
    this.fps = grow(this.fps, d + 1);
    this.fps[d] = fingerprint >>> 0;
    this.lengths = grow(this.lengths, (d + 1) * nf);
    this.fwdStart = grow(this.fwdStart, (d + 1) * nf + 1);
    let end = this.fwdStart[d * nf];
    let posEnd = this.posStart[d];
    for (let f = 0; f < nf; f++) {
      const tokens = fieldTerms[f] ?? [];
      this.lengthSum[f] += tokens.length;
      this.avg[f] = this.lengthSum[f] / (this.live + 1);
      this.lengths[d * nf + f] = tokens.length;
      // Distinct terms in order of first occurrence, counted in place: `fwdTerm` from `first` on,
      // with `slot` (stamped per field of a document) pointing a term id at its entry.
      const first = end;
      const stamp = this.nextSlotStamp();
      const positions =
        f === this.posField ? new PositionWriter(this.posBytes, this.posStart[d], tokens.length) : undefined;
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
    return slot;
  }

  /** Removes `id` (a tombstone until the next merge); false if it was not indexed. */
  discard(id: string): boolean {
    const slot = this.idMap().get(id);
    if (slot === undefined) return false;
    const d = this.shortOfSlot[slot];
    const { nf } = this;
    for (let f = 0; f < nf; f++) {
      this.lengthSum[f] -= this.lengths[d * nf + f];
      this.avg[f] = this.live === 1 ? 0 : this.lengthSum[f] / (this.live - 1);
      const df = this.df[f];
      for (let i = this.fwdStart[d * nf + f]; i < this.fwdStart[d * nf + f + 1]; i++) df[this.fwdTerm[i]] -= 1;
    }
    this.gone[d] = 1;
    this.slots.delete(id);
    this.freeSlots = grow(this.freeSlots, this.freeCount + 1);
    this.freeSlots[this.freeCount++] = slot;
    if (!this.merging) this.freeAt = this.freeCount;
    this.live -= 1;
    this.version += 1;
    if (d < this.base.end) this.deadBase += 1;
    if (this.merging && d < this.merging.end) this.merging.deleted.push(d);
    this.maybeMerge();
    return true;
  }

  /** A slot off the stack's usable part (its place taken by the top one, if freed while a merge runs). */
  private takeFreeSlot(): number {
    const at = --this.freeAt;
    const slot = this.freeSlots[at];
    this.freeSlots[at] = this.freeSlots[--this.freeCount];
    return slot;
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
    // A restored base's ids go into the map first: their slots are their short ids of this base.
    this.idMap();
    this.frozenTail = this.tail;
    this.tail = this.fields.map(() => new AppendedPostings());
    this.tailDocs = 0;
    const m: Merging = { job: mergeJob(this.mergeSource(), end), end, deleted: [], done, settle };
    this.merging = m;
    this.step(m);
    return m;
  }

  /** What a merge job reads of the index, as it is now (`mergeJob`). */
  private mergeSource(): MergeSource {
    return {
      fields: this.fields,
      nf: this.nf,
      minMergeDocs: this.minMergeDocs,
      posField: this.posField,
      terms: this.terms,
      live: (d) => this.gone[d] === 0,
      idOf: (d) => this.idAt(d),
      slotOf: (d) => this.slotOfShort[d],
      slotLimit: this.slotLimit,
      noneDeleted: this.live === this.next,
      compactIds: () => this.slots.compactSteps(),
      lengths: this.lengths,
      fps: this.fps,
      fwdStart: this.fwdStart,
      fwdTerm: this.fwdTerm,
      fwdTf: this.fwdTf,
      posStart: this.posStart,
      posBytes: this.posBytes,
      recentTerms: () => this.runs.recent(RUNS_AHEAD_POSTINGS),
    };
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
   * Swaps a finished merge's base in, in one step. A merge that adopted the index's forward
   * arrays changes no short id: the documents added while it ran follow it where they are, those
   * deleted are already tombstones. Otherwise documents added while it ran are renumbered after it
   * (their forward entries copied, their appended postings shifted), documents deleted while it
   * ran become tombstones of the new base.
   */
  private install(m: Merging, r: MergeResult): void {
    const { sealed } = r;
    const n = sealed.ids.length;
    const tailIds = new ChunkedList(arrayChunks<string>());
    for (let d = m.end; d < this.next; d++) tailIds.push(this.idAt(d));
    this.freeAt = this.freeCount;
    // Tombstones of the new base: documents below its end deleted while the merge ran.
    const dead = r.renumbered ? this.renumber(m, r.renumbered, n) : m.deleted.length;
    if (r.renumbered) this.numberingMark = {};
    this.baseIds = sealed.ids;
    this.tailIds = tailIds;
    this.base = r.base;
    this.runs.reset(r.base, r.runs);
    this.frozenTail = undefined;
    this.deadBase = dead;
    this.version += 1;
    this.merging = undefined;
    this.installed(r);
    m.settle();
    this.onSealed?.(sealed);
    this.maybeMerge();
  }

  /**
   * Takes a renumbering merge's arrays (`install`): moves the documents appended while it ran
   * after its `n`, and marks its documents deleted meanwhile; returns how many it marked.
   */
  private renumber(m: Merging, r: Renumbered, n: number): number {
    const { nf } = this;
    const { newOf } = r;
    const extra = this.next - m.end;
    const next = n + extra;
    const gone = grow(r.gone, next);
    let dead = 0;
    for (const d of m.deleted) {
      const nd = newOf[d];
      if (nd < 0 || gone[nd] !== 0) continue;
      gone[nd] = 1;
      dead += 1;
    }
    const slotOfShort = grow(r.slotOfShort, next);
    const shortOfSlot = grow(r.shortOfSlot, this.slotLimit);
    for (let d = m.end; d < this.next; d++) {
      const nd = n + d - m.end;
      if (this.gone[d] !== 0) gone[nd] = 1;
      else {
        const slot = this.slotOfShort[d];
        slotOfShort[nd] = slot;
        shortOfSlot[slot] = nd;
      }
    }
    // The documents appended meanwhile go after the new base, in the room left for them (or
    // past it: the large arrays grow in place, `growable`).
    const fw = r.forward;
    const from = this.fwdStart[m.end * nf];
    const to = this.fwdStart[this.next * nf];
    const e = fw.fwdStart[n * nf];
    const posFrom = this.posStart[m.end];
    const posTo = this.posStart[this.next];
    const pe = fw.posStart[n];
    const lengths = grow(fw.lengths, next * nf);
    const fps = grow(fw.fps, next);
    const fwdStart = grow(fw.fwdStart, next * nf + 1);
    const fwdTerm = grow(fw.fwdTerm, e + to - from);
    const fwdTf = grow(fw.fwdTf, e + to - from);
    const posStart = grow(fw.posStart, next + 1);
    const posBytes = grow(fw.posBytes, pe + posTo - posFrom);
    if (extra > 0) {
      lengths.set(this.lengths.subarray(m.end * nf, this.next * nf), n * nf);
      fps.set(this.fps.subarray(m.end, this.next), n);
      for (let i = 1; i <= extra * nf; i++) fwdStart[n * nf + i] = this.fwdStart[m.end * nf + i] - from + e;
      fwdTerm.set(this.fwdTerm.subarray(from, to), e);
      fwdTf.set(this.fwdTf.subarray(from, to), e);
      for (let i = 1; i <= extra; i++) posStart[n + i] = this.posStart[m.end + i] - posFrom + pe;
      posBytes.set(this.posBytes.subarray(posFrom, posTo), pe);
      const shift = n - m.end;
      if (shift !== 0) for (const field of this.tail) field.shiftDocs(shift);
    }
    this.lengths = lengths;
    this.fps = fps;
    this.fwdStart = fwdStart;
    this.fwdTerm = fwdTerm;
    this.fwdTf = fwdTf;
    this.posStart = posStart;
    this.posBytes = posBytes;
    this.gone = gone;
    this.slotOfShort = slotOfShort;
    this.shortOfSlot = shortOfSlot;
    this.next = next;
    return dead;
  }

  /** Called once a merge's base is swapped in (before `onSealed`): what a layer above keeps per base. */
  protected installed(_r: MergeResult): void {
    // Nothing kept here.
  }

  /** Calls `fn` for every live posting of term `t` in field `f`, in document order. */
  protected eachPosting(f: number, t: number, fn: (doc: number, tf: number) => void): void {
    const { base, gone } = this;
    const start = base.start[f];
    if (t + 1 < start.length) {
      const docs = base.docs[f];
      const tfs = base.tfs[f];
      for (let i = start[t]; i < start[t + 1]; i++) if (gone[docs[i]] === 0) fn(docs[i], tfs[i]);
    }
    this.eachAppendedPosting(f, t, fn);
  }

  /** Largest document frequency of `t` over the fields. */
  protected maxDf(t: number): number {
    let most = 0;
    for (let f = 0; f < this.nf; f++) most = Math.max(most, this.df[f][t]);
    return most;
  }

  /** The analyzed terms of a document's field with their frequencies, in order of first occurrence. */
  fieldTerms(docId: number, field: string): Map<string, number> {
    const f = this.fieldIds[field];
    const out = new Map<string, number>();
    const base = docId * this.nf + f;
    for (let i = this.fwdStart[base]; i < this.fwdStart[base + 1]; i++)
      out.set(this.terms[this.fwdTerm[i]], this.fwdTf[i]);
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

  protected idf(f: number, t: number): number {
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

  protected ensureScratch(): void {
    const n = this.next;
    if (this.acc.length >= n) return;
    const size = Math.max(n, this.acc.length * 2, 1024);
    this.acc = f64(size);
    this.termStamp = i32(size);
    this.stamp = 0;
  }

  protected nextStamp(): number {
    if (++this.stamp === 0x7fffffff) {
      this.termStamp.fill(0);
      this.stamp = 1;
    }
    return this.stamp;
  }

  protected searched(boost: Readonly<Record<string, number>>): number[] {
    return Object.keys(boost)
      .filter((f) => boost[f] > 0 && this.fieldIds[f] !== undefined)
      .map((f) => this.fieldIds[f]);
  }

  /** Calls `fn` for every live posting of term `t` in field `f` in the appended segments (frozen, then fresh), in document order. */
  protected eachAppendedPosting(f: number, t: number, fn: (doc: number, tf: number) => void): void {
    const { gone } = this;
    const live = (doc: number, tf: number) => {
      if (gone[doc] === 0) fn(doc, tf);
    };
    this.frozenTail?.[f].forEach(t, live);
    this.tail[f].forEach(t, live);
  }
}
