import type { SealedIndex } from './merge';

/** What a background merge waits on before each slice: queries under way (`QueryGate.quiet`). */
export interface MergeGate {
  /** Settles once no query runs; true when it had to wait. */
  quiet(): Promise<boolean>;
}

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
   * image of the documents the merge took (those live when its copy pass reached them, or all
   * below its end when it adopted the forward arrays; one deleted after that is a tombstone of the
   * served base), for persisting (`segment-file.ts`).
   */
  readonly onSealed?: (sealed: SealedIndex) => void;
  /** Queries in slices of the index that serves this one: a background merge swaps its new base in only while none runs. */
  readonly gate?: MergeGate;
  /**
   * The field whose token sequence is kept (`positions.ts`: per document, each token as the index
   * of its term among that field's forward entries), for proximity (`windowCounts`, `windowDf`).
   * @default none: no positions kept
   */
  readonly positions?: string;
}
