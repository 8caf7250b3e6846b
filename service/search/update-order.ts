import { BROWSE_STEP, BUILD_STEP, byId, firstK, type IdOf } from './browse';
import type { DocColumns } from './doc-columns';
import { grow } from './index/growable';
import { SharedBuild } from './shared-build';
// Bits of one digit of the radix sort: four passes over a 64-bit key.
const DIGIT_BITS = 16;
const DIGITS = 1 << DIGIT_BITS;

/** Whether two update times are one (NaN, a time no date parsed to, is one with NaN). */
const sameTime = (a: number, b: number): boolean => a === b || (a !== a && b !== b);

// Whether this machine stores a float's low word first (then word 0 of its bits is the low one).
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
// The places of a float's low and high words among its two.
const LOW = LITTLE_ENDIAN ? 0 : 1;
const HIGH = 1 - LOW;

/**
 * Digit `digit` (0: the lowest `DIGIT_BITS` bits) of document d's sort key, an unsigned 64-bit
 * integer that orders ascending as its update time descends, read off the time's bits (`bits`:
 * two words a document). A float's bits order as its value does once a negative one's are all
 * flipped and a positive one's sign is set; flipped again, they order as the value descends.
 */
function keyDigit(bits: Uint32Array, d: number, digit: number): number {
  const high = bits[2 * d + HIGH];
  const word = digit < 2 ? bits[2 * d + LOW] : high;
  const key = high >>> 31 === 1 ? word : digit < 2 ? ~word : ~(word | 0x8000_0000);
  return (key >>> ((digit & 1) * DIGIT_BITS)) & (DIGITS - 1);
}

/**
 * The documents by update time, newest first: a stable radix sort of the times' bits (linear, in
 * steps of `BUILD_STEP` documents), so that a search without words sorted by `updated:desc` reads its
 * page off the front, as `DayOrder` does by day, instead of picking the best `offset + limit` of
 * every document kept (`firstK` over all of them: at 1M documents ~110 ms of CPU a query, in steps
 * of 64–72 ms on a service's first such query, its code not yet optimised). Documents of one
 * update time stay in short-id order here; only those of the times a page reaches are put in id
 * order, as the sort's ties are.
 */
export class UpdateOrder {
  /** Short ids, newest update time first (in short-id order within a time): a view of `a` or `b`. */
  private order = new Int32Array(0);
  /** The `DocColumns.generation` built from (−1: none). */
  generation = -1;
  private readonly building = new SharedBuild<void>();
  // The sort's two arrays of short ids, kept from build to build and grown in place (`grow`), and
  // its digits' counts: a build after every write (each starts a generation of the columns) made
  // five arrays, ~17 MB at 1M documents, of which one lived on. A build overwrites the order
  // before: it is read only once the build of the columns' generation is done (`ensure` first).
  private a = new Int32Array(0);
  private b = new Int32Array(0);
  private counts: Int32Array | undefined;

  /** Brings the order up to the columns, continuing the build of their generation under way (as `DayOrder.ensure`). */
  *ensure(cols: DocColumns): Generator<void, void> {
    if (this.generation !== cols.generation)
      yield* this.building.run(cols.generation, () => this.build(cols, cols.built));
  }

  /** Rebuilds the order from the columns' first `n` documents, yielding between steps. */
  *build(cols: DocColumns, n: number): Generator<void, void> {
    const { updated, generation } = cols;
    // The times' bits, read as each one's key (`keyDigit`) in every pass: no array of keys.
    const bits = new Uint32Array(updated.buffer, updated.byteOffset, 2 * n);
    const counts = (this.counts ??= new Int32Array(4 * DIGITS));
    counts.fill(0);
    this.a = grow(this.a, n);
    this.b = grow(this.b, n);
    let src = this.a;
    let dst = this.b;
    for (let d = 0; d < n; d++) {
      counts[keyDigit(bits, d, 0)] += 1;
      counts[DIGITS + keyDigit(bits, d, 1)] += 1;
      counts[2 * DIGITS + keyDigit(bits, d, 2)] += 1;
      counts[3 * DIGITS + keyDigit(bits, d, 3)] += 1;
      src[d] = d;
      if ((d + 1) % BUILD_STEP === 0) yield;
    }
    for (let pass = 0; pass < 4 && n > 0; pass++) {
      const at = counts.subarray(pass * DIGITS, (pass + 1) * DIGITS);
      // Every key has the same digit here (the high bits of times a few years apart): nothing moves.
      if (at[keyDigit(bits, 0, pass)] === n) continue;
      for (let i = 0, sum = 0; i < DIGITS; i++) {
        const c = at[i];
        at[i] = sum;
        sum += c;
      }
      yield;
      for (let j = 0; j < n; j++) {
        const d = src[j];
        dst[at[keyDigit(bits, d, pass)]++] = d;
        if ((j + 1) % BUILD_STEP === 0) yield;
      }
      [src, dst] = [dst, src];
    }
    this.order = src.subarray(0, n);
    this.generation = generation;
  }

  /**
   * The page `offset … offset + limit - 1` of the documents `keep` keeps, newest first, ties by id;
   * and their number. When `total` is known the walk stops at the page; else it counts every kept
   * document. A step per `BROWSE_STEP` documents read; the documents of one time that the page reaches
   * are put in id order by `firstK` (in steps too: a bulk load may stamp many with one time).
   */
  *page(
    cols: DocColumns,
    opts: { offset: number; limit: number; total?: number },
    keep: (doc: number) => boolean,
    idOf: IdOf,
  ): Generator<void, { docs: number[]; total: number }> {
    const { order } = this;
    const { updated } = cols;
    const { offset, limit } = opts;
    const end = offset + limit;
    const n = order.length;
    const docs: number[] = [];
    const ids = byId(idOf);
    let seen = 0;
    let j = 0;
    while (j < n && seen < end) {
      // One time's documents, those kept.
      const t = updated[order[j]];
      const kept: number[] = [];
      // (A time that is no number, NaN, stands with the others of its kind: they sort first.)
      for (; j < n && sameTime(updated[order[j]], t); j++) {
        if (keep(order[j])) kept.push(order[j]);
        if ((j + 1) % BROWSE_STEP === 0) yield;
      }
      if (seen + kept.length > offset) {
        const ranked = yield* firstK(kept, Math.min(kept.length, end - seen), ids);
        for (let k = Math.max(0, offset - seen); k < ranked.length; k++) docs.push(ranked[k]);
      }
      seen += kept.length;
    }
    if (opts.total !== undefined) return { docs, total: opts.total };
    for (; j < n; j++) {
      if (keep(order[j])) seen += 1;
      if ((j + 1) % BROWSE_STEP === 0) yield;
    }
    return { docs, total: seen };
  }
}
