import { buildRun, type BaseRun, type BaseSegment } from './base-runs';

/* Merging the appended segment and the tombstones into a new base: the job, a step at a time. */

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
  /** Per field, the live documents' average field length when the merge began (their lengths' sum over their count). */
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
export interface MergeResult {
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
  readonly ids: ReadonlyArray<string | undefined>;
  readonly avg: Float64Array;
  readonly df: readonly Int32Array[];
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

/**
 * One new base of every document live at the start (renumbered in order), in two passes over
 * the forward index, a step at a time. The live set, averages and document frequencies are
 * read at the start, in one step, so the result is the index as it was then; documents are
 * never changed in place (deletes are tombstones, appends reallocate), so the arrays read
 * later still hold what they held then.
 */
export function* mergeJob(src: MergeSource, end: number): Generator<void, MergeResult> {
  const { nf } = src;
  const nt = src.terms.length;
  const {
    ids: oldIds,
    fwdStart: oldStart,
    fwdTerm: oldTerm,
    fwdTf: oldTf,
    lengths: oldLengths,
    fps: oldFps,
    posStart: oldPosStart,
    posBytes: oldPos,
  } = src;
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
  const avg = src.avg.slice();
  // Live document frequencies are the run lengths: prefix sums place every run.
  const starts = src.df.map((df) => {
    const s = new Int32Array(nt + 1);
    for (let t = 0; t < nt; t++) s[t + 1] = s[t] + df[t];
    return s;
  });
  const terms = src.terms.slice(0, nt);
  yield;
  const shortIds = new Map<string, number>();
  // Room for a quarter more documents (the next merge starts once an eighth is appended), with
  // their entries at a quarter above the average: appends until then, and those made while
  // this merge runs, need no copy of these arrays.
  const room = Math.max(src.minMergeDocs, Math.ceil(n / 4));
  const roomEntries = Math.ceil((room * 1.25 * entries) / Math.max(1, n)) + 1024;
  const fingerprints = new Uint32Array(n + room);
  const lengths = new Int32Array((n + room) * nf);
  const fwdStart = new Int32Array((n + room) * nf + 1);
  const fwdTerm = new Int32Array(entries + roomEntries);
  const fwdTf = new Uint16Array(entries + roomEntries);
  const posStart = new Int32Array(n + room + 1);
  const posBytes = new Uint8Array(
    posLength + (posLength ? Math.ceil((room * 1.25 * posLength) / Math.max(1, n)) + 1024 : 0),
  );
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
    fields: src.fields,
    ids,
    fingerprints: fingerprints.subarray(0, n),
    avg,
    lengths: lengths.subarray(0, n * nf),
    fwdStart: fwdStart.subarray(0, n * nf + 1),
    fwdTerm: fwdTerm.subarray(0, entries),
    fwdTf: fwdTf.subarray(0, entries),
    posField: src.posField,
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
  for (const t of src.recentTerms()) {
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
