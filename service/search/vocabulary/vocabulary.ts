import { BoundedDistance } from './edit-distance';
import { FuzzyIndex } from './fuzzy-index';
import { radixOrder } from './radix-order';
import { SortedTerms } from './sorted-terms';
import { inSlices, TimeSlicer, yieldToLoop } from '../../lib/yield-to-loop';

/** Slice of a background build started by a look-up, milliseconds. */
const FILL_SLICE_MS = 5;
/** Terms newer than the structures that are scanned per look-up before they are rebuilt: this many and a sixteenth of them. */
const NEWER_TERMS = 1024;

/**
 * The prefix and near-spelling look-ups of an index's vocabulary (its terms by id, only ever
 * appended to), in typed arrays: the terms sorted (`SortedTerms`: a prefix's terms are one
 * range) and a trigram index (`FuzzyIndex`). Both are built after the index is ready, in
 * background slices, and rebuilt in the background once the terms added since are more than
 * `NEWER_TERMS` and a sixteenth of those covered; terms not covered yet are scanned, so every
 * look-up sees every term. The answers are MiniSearch's radix tree's (`SearchableMap.atPrefix`,
 * `fuzzyGet`), which these structures replace: the same terms at the same distances, and where
 * a prefix has more terms than a look-up scans, the same first ones (`radixOrder`).
 */
export class Vocabulary {
  private sorted: SortedTerms | undefined;
  private fuzzy: FuzzyIndex | undefined;
  private filling: Promise<void> | undefined;

  constructor(readonly terms: readonly string[]) {}

  /** Terms covered by both structures. */
  get covered(): number {
    return Math.min(this.sorted?.count ?? 0, this.fuzzy?.count ?? 0);
  }

  /**
   * Builds the structures over every term (rebuilds them if any is newer), in slices of about
   * `sliceMs`; settles when they cover the terms there were when it started (a build under way
   * is joined instead).
   */
  fill(sliceMs: number): Promise<void> {
    if (this.filling) return this.filling;
    if (this.covered === this.terms.length) return Promise.resolve();
    const done = this.build(sliceMs).finally(() => (this.filling = undefined));
    this.filling = done;
    return done;
  }

  private async build(sliceMs: number): Promise<void> {
    const slicer = new TimeSlicer(sliceMs);
    await yieldToLoop();
    slicer.restart();
    const n = this.terms.length;
    this.sorted = await inSlices(SortedTerms.build(this.terms, n, this.sorted), slicer);
    this.fuzzy = await inSlices(FuzzyIndex.build(this.terms, n), slicer);
  }

  /** Starts a background build when the terms not covered are too many to scan per look-up. */
  private keepUp(): void {
    const c = this.covered;
    if (!this.filling && this.terms.length - c > Math.max(NEWER_TERMS, c >> 4)) void this.fill(FILL_SLICE_MS);
  }

  /**
   * Calls `visit(id)` for the terms starting with `prefix` (the prefix itself included if it is
   * a term): every one of them if they are at most `scanLimit`; otherwise in the radix tree's
   * order until `visit` has returned true `scanLimit` times.
   */
  prefixed(prefix: string, scanLimit: number, visit: (id: number) => boolean): void {
    this.keepUp();
    const { terms } = this;
    const s = this.sorted;
    const [lo, hi] = s ? s.prefixRange(prefix) : [0, 0];
    const newer: number[] = [];
    for (let t = s?.count ?? 0; t < terms.length; t++) if (terms[t].startsWith(prefix)) newer.push(t);
    if (hi - lo + newer.length <= scanLimit) {
      for (let i = lo; i < hi; i++) visit(s!.idAt(i));
      for (const t of newer) visit(t);
      return;
    }
    // The range with the newer terms merged in, in sorted order, walked as the tree walks it.
    const ids = newer.sort((a, b) => (terms[a] < terms[b] ? -1 : 1));
    const all = new Int32Array(hi - lo + ids.length);
    for (let i = lo, j = 0, k = 0; k < all.length; k++)
      all[k] = j >= ids.length || (i < hi && terms[s!.idAt(i)] < terms[ids[j]]) ? s!.idAt(i++) : ids[j++];
    let seen = 0;
    radixOrder(
      terms,
      (i) => all[i],
      0,
      all.length,
      prefix,
      (id) => visit(id) && ++seen >= scanLimit,
    );
  }

  /** Calls `found(id, distance)` for every term within `k` edits of `term` (the term itself at 0). */
  near(term: string, k: number, found: (id: number, distance: number) => void): void {
    this.keepUp();
    const { terms } = this;
    const f = this.fuzzy;
    f?.near(term, k, found);
    const dist = BoundedDistance.shared(term, k);
    for (let t = f?.count ?? 0; t < terms.length; t++) {
      const d = dist.distance(terms[t]);
      if (d <= k) found(t, d);
    }
  }

  /** Bytes of the structures' arrays. */
  get bytes(): number {
    return (this.sorted?.bytes ?? 0) + (this.fuzzy?.bytes ?? 0);
  }
}
