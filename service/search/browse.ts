import type { FacetName } from '../content/item-filter';
import { ITEM_TYPES } from '../content/item';
import type { SearchSort } from '../http/contract/search';
import type { CompiledFilter, DocColumns, TagBitmaps } from './doc-columns';
import { popcount, type DocKeep } from './index/postings-index';

/** Facet counts: per facet asked for, its values and how many matching documents hold each. */
export type FacetCounts = Partial<Record<FacetName, Record<string, number>>>;

/** A short id's document id (defined for live documents). */
type IdOf = (doc: number) => string;

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
    this.tagBits = this.tagCounts ? cols.tagBitmaps() : undefined;
    // Matching documents of a word from which the frequent tags' popcounts cost less than their steps.
    this.denseWord = this.tagBits && this.tagBits.perDoc > 0 ? this.tagBits.codes.length / this.tagBits.perDoc : 33;
  }
  private readonly tagBits: TagBitmaps | undefined;
  private readonly denseWord: number;

  /**
   * Counts matching document `doc`; whether it passes the whole filter. `visit.word` counts a
   * word of 32 matching documents at once from the filter's bitmaps (`DocKeep.word`).
   */
  readonly visit: DocKeep = Object.assign((doc: number): boolean => this.one(doc), {
    word: (w: number, x: number): number => this.word(w, x),
  });

  /**
   * `word`: the types by popcounts of the bitmaps; the tags document by document, or in a word
   * dense with matches the frequent tags by popcounts of their bitmaps (`DocColumns.tagBitmaps`).
   */
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
      let tagStart: Int32Array = this.cols.tagStart;
      let tagCodes: Int32Array = this.cols.tagCodes;
      const tb = this.tagBits;
      // A dense word: the frequent tags by popcounts, the others document by document.
      if (tb && popcount(y) >= this.denseWord) {
        const { codes, bits } = tb;
        for (let i = 0; i < codes.length; i++) if (w < bits[i].length) tagCounts[codes[i]] += popcount(y & bits[i][w]);
        tagStart = tb.rareStart;
        tagCodes = tb.rareCodes;
      }
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
  const byId = (a: number, b: number) => {
    const x = idOf(a);
    const y = idOf(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
  const { days, updated } = cols;
  if (sort === 'date:asc') return (a, b) => days[a] - days[b] || byId(a, b);
  if (sort === 'date:desc') return (a, b) => days[b] - days[a] || byId(a, b);
  return (a, b) => updated[b] - updated[a] || byId(a, b);
}

/**
 * The first `k` of `docs` in the order `cmp`, in that order: a bounded heap whose root is the
 * worst kept (n log k comparisons, not a sort of all n).
 */
export function firstK(docs: ArrayLike<number>, k: number, cmp: (a: number, b: number) => number): number[] {
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
  }
  return heap.sort(cmp);
}

// A day YYYYMMDD as a code that orders as the day does, with at most 372 codes a year.
const dayCode = (day: number) => Math.floor(day / 10_000) * 372 + (Math.floor(day / 100) % 100) * 31 + (day % 100);
// Documents handled between yields in `DayOrder.build`.
const STEP = 65_536;

/**
 * The documents grouped by day (a counting sort over the days' codes: linear, in slices), so that
 * a search without words sorted by date reads the page from the few days it spans instead of
 * sorting every document: only the documents of those days are put in id order.
 */
export class DayOrder {
  /** Short ids, grouped by day ascending (in short-id order within a day). */
  private order = new Int32Array(0);
  /** The documents of the i-th day code from the first are `order[start[i] … start[i + 1] - 1]`. */
  private start = new Int32Array(1);
  /** The `DocColumns.generation` built from (−1: none). */
  generation = -1;

  /** Rebuilds the order from the columns' first `n` documents, yielding between slices. */
  *build(cols: DocColumns, n: number): Generator<void, void> {
    const { days } = cols;
    let lo = Infinity;
    let hi = -Infinity;
    for (let d = 0; d < n; d++) {
      const c = dayCode(days[d]);
      if (c < lo) lo = c;
      if (c > hi) hi = c;
    }
    if (n === 0) lo = hi = 0;
    yield;
    const start = new Int32Array(hi - lo + 2);
    for (let d = 0; d < n; d++) start[dayCode(days[d]) - lo + 1] += 1;
    for (let i = 1; i < start.length; i++) start[i] += start[i - 1];
    yield;
    const fill = start.slice();
    const order = new Int32Array(n);
    for (let d = 0; d < n; d++) {
      order[fill[dayCode(days[d]) - lo]++] = d;
      if ((d + 1) % STEP === 0) yield;
    }
    this.order = order;
    this.start = start;
    this.generation = cols.generation;
  }

  /**
   * The page `offset … offset + limit - 1` of the documents `keep` keeps, by day (`desc`: newest
   * first), ties by id; and their number. When `total` is known (no filter), the walk stops at the
   * page; else it counts every kept document.
   */
  page(
    opts: { desc: boolean; offset: number; limit: number; total?: number },
    keep: (doc: number) => boolean,
    idOf: IdOf,
  ): { docs: number[]; total: number } {
    const { order, start } = this;
    const { desc, offset, limit } = opts;
    const end = offset + limit;
    const days = start.length - 1;
    const docs: number[] = [];
    let seen = 0;
    for (let i = 0; i < days; i++) {
      const b = desc ? days - 1 - i : i;
      const from = start[b];
      const to = start[b + 1];
      if (from === to) continue;
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
