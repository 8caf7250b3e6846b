import { mapped } from '../../lib/untracked-arrays';
import { ChunkedList, arrayChunks } from '../../lib/chunked-list';
import { runSteps, type BaseRun, type BaseSegment } from './base-runs';
import { growable } from './growable';

/* Merging the appended segment and the tombstones into a new base: the job, a step at a time. */

/**
 * A base segment with everything needed to serve it alone: what a merge builds, and what is
 * written to disk and read back (`segment-file.ts`). Its arrays are never written after it is
 * made (they are views of the index's arrays' first part, which appends go past or reallocate),
 * so it can be persisted while the index goes on.
 */
export interface SealedIndex {
  /** Field names, in order. */
  readonly fields: readonly string[];
  /** External ids by short id. */
  readonly ids: IdList;
  /** Per document, the fingerprint it was added with (the caller's content version). */
  readonly fingerprints: Uint32Array;
  /** Per field, its documents' average field length (their lengths' sum over their count). */
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
  /**
   * The vocabulary by term id: `terms`' first `termCount` entries. A merge's sealed index shares
   * the index's own vocabulary array, which only grows (terms are appended, never changed or
   * dropped), so terms added after the seal may sit past `termCount`: a copy of ~1M terms at 1M
   * documents was one step of 17–130 ms of page faults (issue 39).
   */
  readonly terms: readonly string[];
  readonly termCount: number;
  /** Per field, postings in CSR form: term t's run is `start[t]` .. `start[t + 1]` of `docs` and `tfs`. */
  readonly start: readonly Int32Array[];
  readonly docs: readonly Int32Array[];
  readonly tfs: readonly Uint16Array[];
}

/**
 * External ids by short id, never written: a merge's in chunks (`ChunkedList`: no array of every
 * id made whole in one step, 37–85 ms of page faults at 1M documents; issue 39), a segment file's
 * one array read back.
 */
export interface IdList {
  readonly length: number;
  get(i: number): string;
}

/** `ids` as an `IdList` (taken, not copied). */
export function idList(ids: string[] = []): IdList {
  return new ChunkedList(arrayChunks<string>(), ids);
}

/** What a finished merge job hands to `install`. */
export interface MergeResult {
  readonly sealed: SealedIndex;
  readonly base: BaseSegment;
  /** Base runs of the terms searched lately, built ahead in the new base (no first query pays for them). */
  readonly runs: Map<number, BaseRun>;
  /**
   * Per field, the new base's documents' lengths in 16 bits (`FieldLengths`), with room after
   * them: made in the job's steps, so the first query after the swap does not make them whole.
   */
  readonly short: Uint16Array[];
  /**
   * The new numbering and arrays of a merge that dropped deleted documents; undefined when the
   * merge adopted the index's own arrays (nothing below its end was deleted when it began, so
   * every document keeps its short id: `mergeJob`).
   */
  readonly renumbered?: Renumbered;
}

/** What a merge that renumbers the documents (drops deleted ones) makes besides the postings. */
export interface Renumbered {
  /** New short id of each old one below the merge's end, −1 for documents not in the new base. */
  readonly newOf: Int32Array;
  /** Per new short id, its document's slot (`SegmentedIndex.slots`), with room after the new base. */
  readonly slotOfShort: Int32Array;
  /** Per slot below the merge's `slotLimit`, its document's new short id (stale for slots not in the new base). */
  readonly shortOfSlot: Int32Array;
  /**
   * The served index's deletions by short id (`SegmentedIndex.gone`), none yet, with room for a
   * quarter more documents: the ids themselves are `sealed.ids`, shared (liveness is kept apart
   * from them, so the served index needs no second array of ids).
   */
  readonly gone: Uint8Array;
  /**
   * The new base's per-document arrays with room after its documents (the sealed index holds
   * views of their used part), the large ones growing in place (`growable`): documents appended
   * after the merge's start, or until the next merge, go into that room instead of a copy of
   * every array.
   */
  readonly forward: Forward;
}

/** The forward arrays of an index (see `SealedIndex`), possibly longer than their used part. */
export interface Forward {
  readonly fps: Uint32Array;
  readonly lengths: Int32Array;
  readonly fwdStart: Int32Array;
  readonly fwdTerm: Int32Array;
  readonly fwdTf: Uint16Array;
  readonly posStart: Int32Array;
  readonly posBytes: Uint8Array;
}

/** A merge under way: the job, the documents it covers, and what changed meanwhile. */
export interface Merging {
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
export const MERGE_STEP_DOCS = 512;

/** What a merge job reads of the index, taken when the merge begins (`CompactIndex.startMerge`). */
export interface MergeSource {
  readonly fields: readonly string[];
  readonly nf: number;
  readonly minMergeDocs: number;
  readonly posField: number;
  readonly terms: readonly string[];
  /** Whether document `d` is live now (read as the job reaches it). */
  live(d: number): boolean;
  /** The external id of document `d`, deleted or not. */
  idOf(d: number): string;
  /** The slot of live document `d` (`SegmentedIndex.slots`). */
  slotOf(d: number): number;
  /** Slots handed out so far. */
  readonly slotLimit: number;
  /** Whether no document below the merge's end is deleted as it begins: then it adopts the forward arrays. */
  readonly noneDeleted: boolean;
  /** Steps that shrink the id map's tables to its keys (after many deletes), between which it may be used. */
  compactIds(): Generator<void, void>;
  readonly lengths: Int32Array;
  readonly fps: Uint32Array;
  readonly fwdStart: Int32Array;
  readonly fwdTerm: Int32Array;
  readonly fwdTf: Uint16Array;
  readonly posStart: Int32Array;
  readonly posBytes: Uint8Array;
  /** Terms searched lately (read at the job's end): their runs are built ahead in the new base. */
  recentTerms(): Iterable<number>;
}

/** Documents per step of a merge job's first pass, which only sizes the new arrays. */
const SCAN_STEP_DOCS = 32_768;

/**
 * Elements per step of the passes over the vocabulary (counts summed, copied) and of the
 * passes that write every page of a new postings array once, in order (256 KB of Int32 a
 * step), before its postings are scattered into it. A page of fresh memory costs ~15–25 µs to
 * fault in on the machines measured: written by the scatter, whose first documents reach
 * thousands of terms' runs, the first steps of a field faulted thousands of pages each.
 */
const FILL_STEP = 65_536;

/** Documents per step of the passes that scatter postings into a field's new run arrays. */
const SCATTER_STEP_DOCS = 256;

/** Lengths at or above this are read from the full table (`FieldLengths`'s long mark). */
const LONG = 0xffff;

/**
 * One new base of the documents below `end`, a step at a time: a pass over the documents that
 * takes their forward index (`adoptPass` or `copyPass`) and counts each term's postings per
 * field, prefix sums, and per field one that places the postings. Every step's work is bounded,
 * nothing runs over the whole document set or vocabulary at once (issue 39: at 1M documents the
 * first step read the live set, the document frequencies and the vocabulary in one step, ~190 ms).
 *
 * When no document below `end` is deleted as the job begins (`noneDeleted`: a bulk load's
 * `seal`, a merge of appends alone), the numbering stays and the new base adopts the index's
 * forward arrays as they are: the job reaches every document at its start, so one deleted while
 * it runs becomes a tombstone of the new base. Otherwise the documents live when the copy pass
 * reaches them are copied, renumbered in order: one deleted while it runs is in the new base if
 * the copy pass reached it first (then `install` makes it a tombstone), else left out. Either
 * way the runs' sizes are counted from what the pass took, so the base is consistent whatever was
 * deleted meanwhile. Documents are never changed in place (deletes are tombstones, appends go past
 * `end` or reallocate), so the arrays read later still hold what they held at the start.
 */
export function* mergeJob(src: MergeSource, end: number): Generator<void, MergeResult> {
  const { nf } = src;
  const nt = src.terms.length;
  // Per field, term t's postings counted at `t + 1`, then summed into run starts.
  const starts: Int32Array[] = [];
  for (let f = 0; f < nf; f++) {
    const s = mapped.i32(nt + 1);
    starts.push(s);
    yield* touch(s);
  }
  const taken = src.noneDeleted ? yield* adoptPass(src, end, starts) : yield* copyPass(src, end, starts);
  const { n, ids, lengthSum, forward: fw } = taken;
  yield* src.compactIds();
  const avg = new Float64Array(nf);
  for (let f = 0; f < nf; f++) avg[f] = n ? lengthSum[f] / n : 0;
  for (const s of starts) {
    for (let t = 0; t < nt; t++) {
      s[t + 1] += s[t];
      if (t % FILL_STEP === FILL_STEP - 1) yield;
    }
    yield;
  }
  const { fwdStart, fwdTerm, fwdTf } = fw;
  const docs: Int32Array[] = [];
  const tfs: Uint16Array[] = [];
  const fill = mapped.i32(nt);
  for (let f = 0; f < nf; f++) {
    const s = starts[f];
    for (let t = 0; t < nt; t += FILL_STEP) {
      fill.set(s.subarray(t, Math.min(nt, t + FILL_STEP)), t);
      yield;
    }
    const fd = mapped.i32(s[nt]);
    yield* touch(fd);
    const ft = mapped.u16(s[nt]);
    yield* touch(ft);
    for (let d = 0; d < n; d++) {
      for (let i = fwdStart[d * nf + f]; i < fwdStart[d * nf + f + 1]; i++) {
        const p = fill[fwdTerm[i]]++;
        fd[p] = d;
        ft[p] = fwdTf[i];
      }
      if (d % SCATTER_STEP_DOCS === SCATTER_STEP_DOCS - 1) yield;
    }
    docs.push(fd);
    tfs.push(ft);
    yield;
  }
  const entries = fwdStart[n * nf];
  const sealed: SealedIndex = {
    fields: src.fields,
    ids,
    fingerprints: fw.fps.subarray(0, n),
    avg,
    lengths: fw.lengths.subarray(0, n * nf),
    fwdStart: fwdStart.subarray(0, n * nf + 1),
    fwdTerm: fwdTerm.subarray(0, entries),
    fwdTf: fwdTf.subarray(0, entries),
    posField: src.posField,
    posStart: fw.posStart.subarray(0, n + 1),
    posBytes: fw.posBytes.subarray(0, fw.posStart[n]),
    terms: src.terms,
    termCount: nt,
    start: starts,
    docs,
    tfs,
  };
  const base: BaseSegment = { end: n, start: starts, docs, tfs };
  // The terms searched lately get their runs in the new base now, a step at a time, so the
  // first queries after the swap do not build them all at once.
  const runs = new Map<number, BaseRun>();
  let work = 0;
  for (const t of src.recentTerms()) {
    if (t >= nt) continue;
    const run = yield* runSteps(base, nf, t);
    if (run) runs.set(t, run);
    work += run ? run.docs.length : 1;
    if (work >= MERGE_STEP_DOCS * 32) {
      work = 0;
      yield;
    }
  }
  return { sealed, base, runs, short: taken.short, renumbered: taken.renumbered };
}

/** What a merge job's pass over the documents took: the new base's documents and their forward index. */
interface Taken {
  /** Documents in the new base. */
  readonly n: number;
  readonly ids: IdList & ChunkedList<string, string[]>;
  /** Per field, the documents' lengths summed. */
  readonly lengthSum: Float64Array;
  /** The arrays holding the new base's forward index first (the index's own when adopted). */
  readonly forward: Forward;
  readonly short: Uint16Array[];
  readonly renumbered?: Renumbered;
}

/** Room the new base's per-document arrays get after its `most` documents: a quarter more (the next merge starts once an eighth is appended). */
const roomAfter = (src: MergeSource, most: number): number => Math.max(src.minMergeDocs, Math.ceil(most / 4));

/**
 * The pass of a merge that renumbers nothing: every document below `end` stays where it is, in
 * the index's own forward arrays (their first part becomes the sealed index's, appends go on past
 * it), so nothing is copied and no array of the old forward index dies. A bulk load's doubled
 * arrays, replaced by copies at `seal`, were ~550 MiB of garbage at 1M documents whose sweep was
 * a 127 ms pause on the event loop's thread (issue 40). Counts each term's postings into `starts`.
 */
function* adoptPass(src: MergeSource, end: number, starts: Int32Array[]): Generator<void, Taken> {
  const { nf, lengths, fwdStart, fwdTerm } = src;
  const ids = new ChunkedList(arrayChunks<string>());
  const short: Uint16Array[] = [];
  for (let f = 0; f < nf; f++) {
    short.push(mapped.u16(end + roomAfter(src, end)));
    yield;
  }
  const lengthSum = new Float64Array(nf);
  for (let d = 0; d < end; d++) {
    ids.push(src.idOf(d));
    for (let f = 0; f < nf; f++) {
      const length = lengths[d * nf + f];
      short[f][d] = Math.min(length, LONG);
      lengthSum[f] += length;
      const count = starts[f];
      for (let i = fwdStart[d * nf + f]; i < fwdStart[d * nf + f + 1]; i++) count[fwdTerm[i] + 1] += 1;
    }
    if (d % MERGE_STEP_DOCS === MERGE_STEP_DOCS - 1) yield;
  }
  return { n: end, ids, lengthSum, forward: src, short };
}

/**
 * The pass of a merge that drops deleted documents: a pass that sizes the new arrays, then one
 * that copies the documents live when it reaches them, renumbered in order, and counts each
 * term's postings into `starts`.
 */
function* copyPass(src: MergeSource, end: number, starts: Int32Array[]): Generator<void, Taken> {
  const { nf } = src;
  const {
    fwdStart: oldStart,
    fwdTerm: oldTerm,
    fwdTf: oldTf,
    lengths: oldLengths,
    fps: oldFps,
    posStart: oldPosStart,
    posBytes: oldPos,
  } = src;
  // Sizes of the documents live now: bounds, as documents below `end` can only be deleted.
  let most = 0;
  let entries = 0;
  let posLength = 0;
  for (let d = 0; d < end; d++) {
    if (src.live(d)) {
      most += 1;
      entries += oldStart[(d + 1) * nf] - oldStart[d * nf];
      posLength += oldPosStart[d + 1] - oldPosStart[d];
    }
    if (d % SCAN_STEP_DOCS === SCAN_STEP_DOCS - 1) yield;
  }
  yield;
  // Room for a quarter more documents, with their entries at a quarter above the average:
  // appends until the next merge, and those made while this one runs, need no copy of these
  // arrays (and past it, the large ones grow in place: `growable`). Typed arrays are allocated
  // untouched (`mapped`, `growable`: fresh mappings, not blocks malloc zeroes whole, 59–152 ms a
  // step at 1M documents); their pages are faulted in as the passes write them, in order. Each is
  // allocated in a step of its own (shared buffers start no collection, but ordinary ones did:
  // issue 39).
  const room = roomAfter(src, most);
  const roomEntries = Math.ceil((room * 1.25 * entries) / Math.max(1, most)) + 1024;
  // The ids go into chunks as the copy pass reaches them: an array of every id is filled (and so
  // faulted in) whole when made, at 1M documents ~7–9 MB, 37–85 ms of page faults in one step at a
  // load of 3–17 (issue 39). The vocabulary is not copied: the sealed index reads the index's own
  // array up to `nt` (`SealedIndex.termCount`).
  const ids = new ChunkedList(arrayChunks<string>());
  const gone = mapped.u8(most + room);
  yield;
  const fingerprints = growable(Uint32Array, most + room);
  yield;
  const lengths = growable(Int32Array, (most + room) * nf);
  yield;
  const fwdStart = growable(Int32Array, (most + room) * nf + 1);
  yield;
  const fwdTerm = growable(Int32Array, entries + roomEntries);
  yield;
  const fwdTf = growable(Uint16Array, entries + roomEntries);
  yield;
  const posStart = growable(Int32Array, most + room + 1);
  yield;
  const posBytes = growable(
    Uint8Array,
    posLength + (posLength ? Math.ceil((room * 1.25 * posLength) / Math.max(1, most)) + 1024 : 0),
  );
  yield;
  const short: Uint16Array[] = [];
  for (let f = 0; f < nf; f++) {
    short.push(mapped.u16(most + room));
    yield;
  }
  const newOf = mapped.i32(end);
  yield;
  // Slots are scattered over the documents: the new short id of each written once in order first.
  const slotOfShort = mapped.i32(most + room);
  yield;
  const shortOfSlot = mapped.i32(src.slotLimit + room);
  yield* touch(shortOfSlot);
  const lengthSum = new Float64Array(nf);
  let n = 0;
  let at = 0;
  let posAt = 0;
  for (let d = 0; d < end; d++) {
    if (!src.live(d)) {
      newOf[d] = -1;
      continue;
    }
    const id = src.idOf(d);
    const nd = n++;
    newOf[d] = nd;
    ids.push(id);
    const slot = src.slotOf(d);
    slotOfShort[nd] = slot;
    shortOfSlot[slot] = nd;
    fingerprints[nd] = oldFps[d];
    for (let f = 0; f < nf; f++) {
      const length = oldLengths[d * nf + f];
      lengths[nd * nf + f] = length;
      short[f][nd] = Math.min(length, LONG);
      lengthSum[f] += length;
      const from = oldStart[d * nf + f];
      const to = oldStart[d * nf + f + 1];
      fwdTerm.set(oldTerm.subarray(from, to), at);
      fwdTf.set(oldTf.subarray(from, to), at);
      const count = starts[f];
      for (let i = from; i < to; i++) count[oldTerm[i] + 1] += 1;
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
  // Documents deleted between the first pass and the copy: fewer than sized (the arrays keep the room).
  const forward: Forward = { fps: fingerprints, lengths, fwdStart, fwdTerm, fwdTf, posStart, posBytes };
  return { n, ids, lengthSum, forward, short, renumbered: { newOf, slotOfShort, shortOfSlot, gone, forward } };
}

/** Writes zeros over `arr` (new, untouched) `FILL_STEP` elements a step: its pages faulted in, in order. */
function* touch(arr: Int32Array | Uint16Array): Generator<void, void> {
  for (let i = 0; i < arr.length; i += FILL_STEP) {
    arr.fill(0, i, i + FILL_STEP);
    yield;
  }
}
