import type { FacetName } from '../content/item-filter';
import { ITEM_TYPES } from '../content/item';
import type { SearchSort } from '../http/contract/search';
import type { CompiledFilter, DocColumns, FacetGroups } from './doc-columns';
import { grow } from './index/growable';
import { popcount, type DocKeep } from './index/postings-index';
import { SharedBuild } from './shared-build';

/** Facet counts: per facet asked for, its values and how many matching documents hold each. */
export type FacetCounts = Partial<Record<FacetName, Record<string, number>>>;

/** A short id's document id (defined for live documents). */
export type IdOf = (doc: number) => string;

/** Documents in id order: the tie-break of every sort but relevance. */
export function byId(idOf: IdOf): (a: number, b: number) => number {
  return (a, b) => {
    const x = idOf(a);
    const y = idOf(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

/**
 * The facet counts of one search, gathered in the pass that counts its total: every matching
 * document goes through `visit` once, which answers whether it passes the whole filter (the
 * total) and counts it in each facet whose filter, without that facet's own part, it passes
 * (disjunctive facets: the counts of `type` ignore the `type` filter, so a reader sees what else
 * there is to pick).
 */
export class FacetTally {
  private readonly typeCounts: Int32Array | undefined;
  private readonly tagCounts: Int32Array | undefined;

  constructor(
    private readonly cols: DocColumns,
    private readonly f: CompiledFilter,
    facets: readonly FacetName[],
  ) {
    this.typeCounts = facets.includes('type') ? new Int32Array(256) : undefined;
    this.tagCounts = facets.includes('tag') ? new Int32Array(cols.tagCount) : undefined;
  }
  /**
   * Counts matching document `doc`; whether it passes the whole filter. `visit.word` counts a
   * word of 32 matching documents at once from the filter's bitmaps (`DocKeep.word`).
   */
  readonly visit: DocKeep = Object.assign((doc: number): boolean => this.one(doc), {
    word: (w: number, x: number): number => this.word(w, x),
    words: (union: Int32Array, lo: number, hi: number): number => this.words(union, lo, hi),
  });

  /**
   * Makes what the counts read (the blocks' group counts with tags asked, the types' bitmaps
   * without), a step at a time, so that `visit` and its `word`, `words` find it made: at 1M
   * documents either is a pass over every document, once per change of the columns.
   */
  *preparing(): Generator<void, void> {
    if (this.tagCounts) {
      if (!this.f.bits.date) yield* this.cols.countingBlocks();
    } else if (this.typeCounts) yield* this.cols.makingTypeBitmaps();
  }

  /**
   * When `visit.words` counts a block of documents (`DocColumns.groupBlocks`) the union mostly
   * holds from the block's counts: the block's size in words and the facet groups, whose number
   * plus that of the block's documents the union lacks is the work of counting the block so
   * (`groupsOfPiece`); undefined when it counts document by document (or word by word).
   */
  blockWork(): { readonly words: number; readonly groups: number } | undefined {
    if (!this.tagCounts || this.f.bits.date) return undefined;
    const blocks = this.cols.groupBlocks();
    return blocks && { words: blocks.size >>> 5, groups: this.cols.groups().count };
  }

  /**
   * `visit.words`: the union's words `lo … hi - 1` in one pass. With tags asked for, each
   * matching document the date part keeps adds one to its facet group (`DocColumns.groups`: a
   * step per document, where `word` takes a step per document and tag, and popcounts for the
   * types), and the groups' counts are then spread over types, tags and the total, each group by
   * the type and tag parts of the filter; else word by word (`word`: the types by popcounts).
   * Without a date part, a block of documents (`DocColumns.groupBlocks`) the union mostly holds is
   * counted from the block's groups less the documents the union lacks (`groupsOfPiece`): a full
   * RM3 query's union holds ~90 % of the documents at the median (Vaswani's 93 at 200k).
   */
  private words(union: Int32Array, lo: number, hi: number): number {
    const { typeCounts, tagCounts, f } = this;
    let total = 0;
    if (!tagCounts) {
      for (let w = lo; w < hi; w++) if (union[w] !== 0) total += this.word(w, union[w]);
      return total;
    }
    const g = this.cols.groups();
    const counts = this.cols.groupCounts();
    const of = g.of;
    const dates = f.bits.date;
    // Without a date part every matching document counts in its group: where the union holds
    // most of a block of documents, its groups' counts are the block's less those it lacks.
    const blocks = dates ? undefined : this.cols.groupBlocks();
    if (blocks) {
      const per = blocks.size >>> 5;
      for (let a = lo; a < hi;) {
        const b = Math.floor(a / per);
        const e = Math.min(hi, (b + 1) * per);
        const first = b * blocks.size;
        const block = { counts: blocks.counts[b], first, last: Math.min(this.cols.built, first + blocks.size) };
        groupsOfPiece(union, a, e, g, counts, block);
        a = e;
      }
    } else
      for (let w = lo; w < hi; w++) {
        let y = union[w];
        if (dates) y &= w < dates.length ? dates[w] : 0;
        for (; y !== 0; y &= y - 1) counts[of[(w << 5) + 31 - Math.clz32(y & -y)]] += 1;
      }
    const { type, start, tags } = g;
    for (let c = 0; c < g.count; c++) {
      const m = counts[c];
      if (m === 0) continue;
      counts[c] = 0;
      const s = start[c];
      const e = start[c + 1];
      const typeOk = f.typeCode(type[c]);
      const tagOk = f.tagList(tags, s, e);
      if (typeOk && tagOk) total += m;
      if (typeCounts && tagOk) typeCounts[type[c]] += m;
      if (typeOk) for (let i = s; i < e; i++) tagCounts[tags[i]] += m;
    }
    return total;
  }

  /** `word`: the types by popcounts of the bitmaps, the tags document by document. */
  private word(w: number, x: number): number {
    const { typeCounts, tagCounts } = this;
    const b = this.f.bits;
    const part = (bm: Int32Array | undefined) => (bm === undefined ? -1 : w < bm.length ? bm[w] : 0);
    const t = part(b.type);
    const g = part(b.tag);
    const d = part(b.date);
    if (typeCounts) {
      const gd = x & g & d;
      if (gd !== 0) {
        const byType = this.cols.typeBitmaps();
        for (let c = 0; c < byType.length; c++) if (w < byType[c].length) typeCounts[c] += popcount(gd & byType[c][w]);
      }
    }
    const y = x & t & d;
    if (tagCounts && y !== 0) {
      const { tagStart, tagCodes } = this.cols;
      for (let z = y; z !== 0; z &= z - 1) {
        const doc = (w << 5) + 31 - Math.clz32(z & -z);
        for (let i = tagStart[doc], e = tagStart[doc + 1]; i < e; i++) tagCounts[tagCodes[i]] += 1;
      }
    }
    return popcount(x & t & g & d);
  }

  private one(doc: number): boolean {
    const { f, typeCounts, tagCounts } = this;
    const date = f.date(doc);
    const type = f.type(doc);
    const tag = f.tag(doc);
    if (date) {
      if (typeCounts && tag) typeCounts[this.cols.types[doc]] += 1;
      if (tagCounts && type) {
        const { tagStart, tagCodes } = this.cols;
        for (let i = tagStart[doc], e = tagStart[doc + 1]; i < e; i++) tagCounts[tagCodes[i]] += 1;
      }
    }
    return date && type && tag;
  }

  /** The counts: every type (0 included, in `ITEM_TYPES` order); the `tagLimit` most frequent tags (ties by name), none at 0. */
  counts(tagLimit: number): FacetCounts {
    const out: FacetCounts = {};
    if (this.typeCounts) {
      const t: Record<string, number> = {};
      ITEM_TYPES.forEach((name, code) => (t[name] = this.typeCounts![code]));
      out.type = t;
    }
    if (this.tagCounts) out.tag = topTags(this.tagCounts, this.cols.tagNames, tagLimit);
    return out;
  }
}

/** A block of documents `first … last - 1` (the entered ones) and their counts per facet group (`GroupBlocks`; absent: not kept). */
export interface GroupBlock {
  readonly counts: Int32Array | undefined;
  readonly first: number;
  readonly last: number;
}

/**
 * Adds to `counts` (per facet group of `g`) the groups of the documents set in `union`'s words
 * `a … e - 1`, which lie in `block`: one step per document set, or, when fewer, the block's
 * counts less one step per document of the block the words lack (those outside them included),
 * plus one per group.
 */
export function groupsOfPiece(
  union: Int32Array,
  a: number,
  e: number,
  g: Pick<FacetGroups, 'of' | 'count'>,
  counts: Int32Array,
  block: GroupBlock,
): void {
  const { of, count: groups } = g;
  const { first, last } = block;
  let set = 0;
  for (let w = a; w < e; w++) if (union[w] !== 0) set += popcount(union[w]);
  const from = Math.max(first, a << 5);
  const to = Math.min(last, e << 5);
  const inside = Math.max(0, to - from);
  const lacking = inside - set + (last - first - inside);
  if (!block.counts || lacking + groups >= set) {
    for (let w = a; w < e; w++)
      for (let y = union[w]; y !== 0; y &= y - 1) counts[of[(w << 5) + 31 - Math.clz32(y & -y)]] += 1;
    return;
  }
  const own = block.counts;
  for (let c = 0, n = Math.min(groups, own.length); c < n; c++) counts[c] += own[c];
  // The block's documents outside the words, then those in them the union lacks.
  for (let d = first; d < Math.min(last, a << 5); d++) counts[of[d]] -= 1;
  for (let d = Math.max(first, e << 5); d < last; d++) counts[of[d]] -= 1;
  for (let w = a; w < e; w++) {
    const d0 = w << 5;
    let z = ~union[w];
    // Past the entered documents nothing is counted.
    if (d0 + 32 > last) z = last <= d0 ? 0 : z & ((1 << (last - d0)) - 1);
    for (; z !== 0; z &= z - 1) counts[of[d0 + 31 - Math.clz32(z & -z)]] -= 1;
  }
}

/** The `limit` largest counts of `counts` by name, most first, ties by name ascending. */
export function topTags(counts: Int32Array, names: readonly string[], limit: number): Record<string, number> {
  const codes: number[] = [];
  for (let c = 0; c < counts.length; c++) if (counts[c] > 0) codes.push(c);
  codes.sort((a, b) => counts[b] - counts[a] || (names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : 0));
  const out: Record<string, number> = {};
  for (const c of codes.slice(0, limit)) out[names[c]] = counts[c];
  return out;
}

/** The comparison of two documents in `sort` (not `relevance`): negative when `a` comes first. */
export function sortOrder(
  sort: Exclude<SearchSort, 'relevance'>,
  cols: DocColumns,
  idOf: IdOf,
): (a: number, b: number) => number {
  const ids = byId(idOf);
  const { days, updated } = cols;
  if (sort === 'date:asc') return (a, b) => days[a] - days[b] || ids(a, b);
  if (sort === 'date:desc') return (a, b) => days[b] - days[a] || ids(a, b);
  return (a, b) => updated[b] - updated[a] || ids(a, b);
}

/**
 * Documents handled between yields in `firstK` and the browse orders' `build`, read between
 * yields in their `page` (`DayOrder`, `UpdateOrder`): steps of 65,536 took up to 25 ms of the loop
 * thread's CPU at 1M on a loaded machine (load ~22); the query's slicer still yields only every ~5 ms.
 */
export const BROWSE_STEP = 16_384;

/**
 * Documents a step of the browse orders' `build` handles (`DayOrder`, `UpdateOrder`): a quarter of
 * `BROWSE_STEP`, as their passes write fresh arrays (a step of `UpdateOrder.build` took up to
 * 14.5 ms of the loop thread's CPU at 1M, quiet, with steps of 16,384).
 */
export const BUILD_STEP = 4096;

/**
 * The first `k` of `docs` in the order `cmp`, in that order: a bounded heap whose root is the
 * worst kept (n log k comparisons, not a sort of all n). A step per `BROWSE_STEP` documents: at 1M
 * documents and k = 10,020 the whole is ~110 ms.
 */
export function* firstK(
  docs: ArrayLike<number>,
  k: number,
  cmp: (a: number, b: number) => number,
): Generator<void, number[]> {
  const heap: number[] = [];
  if (k <= 0) return heap;
  const worse = (i: number, j: number) => cmp(heap[i], heap[j]) > 0;
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let w = i;
      if (l < heap.length && worse(l, w)) w = l;
      if (r < heap.length && worse(r, w)) w = r;
      if (w === i) return;
      [heap[i], heap[w]] = [heap[w], heap[i]];
      i = w;
    }
  };
  for (let n = 0; n < docs.length; n++) {
    const d = docs[n];
    if (heap.length < k) {
      heap.push(d);
      for (let i = heap.length - 1; i > 0;) {
        const p = (i - 1) >> 1;
        if (!worse(i, p)) break;
        [heap[i], heap[p]] = [heap[p], heap[i]];
        i = p;
      }
    } else if (cmp(d, heap[0]) < 0) {
      heap[0] = d;
      down(0);
    }
    if ((n + 1) % BROWSE_STEP === 0) yield;
  }
  return heap.sort(cmp);
}

// A day YYYYMMDD as a code that orders as the day does, with at most 372 codes a year.
const dayCode = (day: number) => Math.floor(day / 10_000) * 372 + (Math.floor(day / 100) % 100) * 31 + (day % 100);

/**
 * The documents grouped by day (a counting sort over the days' codes: linear, in slices), so that
 * a search without words sorted by date reads the page from the few days it spans instead of
 * sorting every document: only the documents of those days are put in id order.
 */
export class DayOrder {
  /** Short ids, grouped by day ascending (in short-id order within a day): a view of `kept`. */
  private order = new Int32Array(0);
  // The order's array, kept from build to build and grown in place (`grow`): a build after every
  // write made a new one (4 MB at 1M documents). A build overwrites the order before, which is
  // read only once the build of the columns' generation is done (`ensure` first).
  private kept = new Int32Array(0);
  /** The documents of the i-th day code from the first are `order[start[i] … start[i + 1] - 1]`. */
  private start = new Int32Array(1);
  /** The `DocColumns.generation` built from (−1: none). */
  generation = -1;
  private readonly building = new SharedBuild<void>();

  /**
   * Brings the order up to the columns (every entered document), yielding between steps: the
   * build of their generation under way is continued (`SharedBuild`), else one is started.
   */
  *ensure(cols: DocColumns): Generator<void, void> {
    if (this.generation !== cols.generation)
      yield* this.building.run(cols.generation, () => this.build(cols, cols.built));
  }

  /** Rebuilds the order from the columns' first `n` documents, yielding between slices. */
  *build(cols: DocColumns, n: number): Generator<void, void> {
    const { days, generation } = cols;
    let lo = Infinity;
    let hi = -Infinity;
    for (let d = 0; d < n; d++) {
      const c = dayCode(days[d]);
      if (c < lo) lo = c;
      if (c > hi) hi = c;
      if ((d + 1) % BUILD_STEP === 0) yield;
    }
    if (n === 0) lo = hi = 0;
    yield;
    const start = new Int32Array(hi - lo + 2);
    for (let d = 0; d < n; d++) {
      start[dayCode(days[d]) - lo + 1] += 1;
      if ((d + 1) % BUILD_STEP === 0) yield;
    }
    for (let i = 1; i < start.length; i++) start[i] += start[i - 1];
    yield;
    const fill = start.slice();
    this.kept = grow(this.kept, n);
    const order = this.kept.subarray(0, n);
    for (let d = 0; d < n; d++) {
      order[fill[dayCode(days[d]) - lo]++] = d;
      if ((d + 1) % BUILD_STEP === 0) yield;
    }
    this.order = order;
    this.start = start;
    this.generation = generation;
  }

  /**
   * The page `offset … offset + limit - 1` of the documents `keep` keeps, by day (`desc`: newest
   * first), ties by id; and their number. When `total` is known (no filter), the walk stops at the
   * page; else it counts every kept document, a step per `BROWSE_STEP` documents read (~50 ms at 1M).
   */
  *page(
    opts: { desc: boolean; offset: number; limit: number; total?: number },
    keep: (doc: number) => boolean,
    idOf: IdOf,
  ): Generator<void, { docs: number[]; total: number }> {
    const { order, start } = this;
    const { desc, offset, limit } = opts;
    const end = offset + limit;
    const days = start.length - 1;
    const docs: number[] = [];
    let seen = 0;
    // Documents read since the last step.
    let read = 0;
    for (let i = 0; i < days; i++) {
      const b = desc ? days - 1 - i : i;
      const from = start[b];
      const to = start[b + 1];
      if (from === to) continue;
      read += to - from;
      if (read >= BROWSE_STEP) {
        read = 0;
        yield;
      }
      if (seen >= end) {
        if (opts.total !== undefined) return { docs, total: opts.total };
        for (let j = from; j < to; j++) if (keep(order[j])) seen += 1;
        continue;
      }
      const kept: number[] = [];
      for (let j = from; j < to; j++) if (keep(order[j])) kept.push(order[j]);
      if (seen + kept.length > offset) {
        const ids = kept.map(idOf);
        const at = kept.map((_, k) => k).sort((x, y) => (ids[x] < ids[y] ? -1 : ids[x] > ids[y] ? 1 : 0));
        for (let k = Math.max(0, offset - seen); k < at.length && seen + k < end; k++) docs.push(kept[at[k]]);
      }
      seen += kept.length;
    }
    return { docs, total: seen };
  }
}
