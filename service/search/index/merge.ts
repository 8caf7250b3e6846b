import { mapped } from '../../lib/untracked-arrays';
import { ChunkedList, arrayChunks } from '../../lib/chunked-list';
import { adoptPass } from './adopt-pass';
import { runSteps, type BaseRun, type BaseSegment } from './base-runs';
import { copyPass } from './copy-pass';
import { FILL_STEP, MERGE_STEP_DOCS, touch, type MergeSource, type Renumbered } from './merge-pass';

/*
 * Merging the appended segment and the tombstones into a new base: the job, a step at a time (its
 * first pass over the documents: `adopt-pass.ts` or `copy-pass.ts`).
 */

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

/** Documents per step of the passes that scatter postings into a field's new run arrays. */
const SCATTER_STEP_DOCS = 256;

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
