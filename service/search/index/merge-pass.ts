import type { ChunkedList } from '../../lib/chunked-list';

/*
 * The first pass of a merge job over the documents, in two kinds (`adopt-pass.ts`, `copy-pass.ts`):
 * what it reads of the index, what it hands on to the job (`merge.ts`), and the step sizes both
 * keep.
 */

/** Documents copied per step of a merge job, between which a background merge may yield. */
export const MERGE_STEP_DOCS = 512;

/**
 * Elements per step of the passes over the vocabulary (counts summed, copied) and of the
 * passes that write every page of a new postings array once, in order (256 KB of Int32 a
 * step), before its postings are scattered into it. A page of fresh memory costs ~15–25 µs to
 * fault in on the machines measured: written by the scatter, whose first documents reach
 * thousands of terms' runs, the first steps of a field faulted thousands of pages each.
 */
export const FILL_STEP = 65_536;

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

/** What a merge job's pass over the documents took: the new base's documents and their forward index. */
export interface Taken {
  /** Documents in the new base. */
  readonly n: number;
  readonly ids: ChunkedList<string, string[]>;
  /** Per field, the documents' lengths summed. */
  readonly lengthSum: Float64Array;
  /** The arrays holding the new base's forward index first (the index's own when adopted). */
  readonly forward: Forward;
  /** Per field, the new base's documents' lengths in 16 bits (`FieldLengths`), with room after them. */
  readonly short: Uint16Array[];
  readonly renumbered?: Renumbered;
}

/** Room the new base's per-document arrays get after its `most` documents: a quarter more (the next merge starts once an eighth is appended). */
export const roomAfter = (src: MergeSource, most: number): number => Math.max(src.minMergeDocs, Math.ceil(most / 4));

/** Writes zeros over `arr` (new, untouched) `FILL_STEP` elements a step: its pages faulted in, in order. */
export function* touch(arr: Int32Array | Uint16Array): Generator<void, void> {
  for (let i = 0; i < arr.length; i += FILL_STEP) {
    arr.fill(0, i, i + FILL_STEP);
    yield;
  }
}
