import type { Item } from '../item';
import { yieldToLoop } from '../../lib/yield-to-loop';
import { sortInSteps } from './sort-in-steps';

/**
 * One scope's items in listing order, kept up to date by merging. A write marks its ids (with the
 * item each replaced); the next read takes the replaced items out and puts the new ones in at
 * their places, found by binary search, then copies the listing once: O(N) plain copies and
 * O(k log N) comparisons for k writes, instead of sorting every item again after every write
 * (N log N comparisons: over half a second of CPU at a million items, on the first listing after
 * each write). The listing is a new array each time it changes, so one handed out before stays as
 * it was.
 *
 * The first read places the items that know their rank in a catalogue's listing (`rankOf`: a
 * content catalogue's lazy items, content-catalogue.ts) by that rank, in linear time and without
 * reading their fields, and merges the others in as written ones; so the first listing after a
 * start neither sorts nor parses the catalogue's items.
 */
export class SortedListing {
  private sorted: Item[] | undefined;
  /** Ids written since the listing was last read, each with the item it replaced, if any. */
  private readonly changed = new Map<string, Item | undefined>();
  /** One set per running `settle`: the ids marked since it began. */
  private readonly watchers = new Set<Set<string>>();

  constructor(
    private readonly compare: (a: Item, b: Item) => number,
    private readonly belongs: (item: Item) => boolean,
    private readonly rankOf: (item: Item) => { readonly of: object; readonly rank: number } | undefined = () =>
      undefined,
  ) {}

  /** Starts the listing from `sorted` (the items that belong, already in order). */
  seed(sorted: Item[]): void {
    this.sorted = sorted;
    this.changed.clear();
  }

  /** `id` was written (created, replaced, or moved to another type); `previous` is the item it replaced. */
  mark(id: string, previous: Item | undefined): void {
    for (const w of this.watchers) w.add(id);
    if (this.sorted && !this.changed.has(id)) this.changed.set(id, previous);
  }

  /**
   * The listing: `every` gives every item of the in-memory copy for a full sort, `current` an item by id
   * (both as the in-memory copy serves them).
   */
  items(every: () => Iterable<Item>, current: (id: string) => Item | undefined): readonly Item[] {
    if (!this.sorted) {
      this.sorted = this.sortAll(every());
      this.changed.clear();
      return this.sorted;
    }
    if (this.changed.size) {
      const fresh: Item[] = [];
      for (const id of this.changed.keys()) {
        const item = current(id);
        if (item && this.belongs(item)) fresh.push(item);
      }
      fresh.sort(this.compare);
      const old = this.sorted;
      const out = this.placesOfReplaced(old);
      this.sorted = out ? this.spliced(old, out, fresh) : this.filteredMerge(old, fresh);
      this.changed.clear();
    }
    return this.sorted;
  }

  /**
   * Does the first read's sort now, in steps (`due` after each item or comparison; what it returns
   * awaited), so that the read only hands the listing out: items without a catalogue rank (a
   * start from Redis) made the first read sort every item in one turn, 1.4-1.6 s of CPU for
   * `list('article')` and 3.4-3.7 s for `all()` at 1M items. Built from the items `every` gives as
   * it meets them; an id written meanwhile is left out of it and marked as new, so the next read
   * merges its item as it is then. A read meanwhile (which sorts by itself) makes the work moot.
   */
  async prepare(every: () => Iterable<Item>, due: () => Promise<void> | undefined): Promise<void> {
    if (this.sorted) return;
    const since = new Set<string>();
    this.watchers.add(since);
    try {
      const first = new FirstRead(this.rankOf);
      let s: Promise<void> | undefined;
      for (const item of every()) {
        if (this.belongs(item)) first.add(item);
        if ((s = due())) await s;
      }
      if (this.sorted) return;
      // The ranked ones by rank (linear), the others sorted in steps, then merged.
      const placed = first.placed();
      const fresh = await sortInSteps(first.rest, this.compare, due);
      let next = placed.length ? await this.splicedInSteps(placed, [], fresh, due) : fresh;
      if (this.sorted) return;
      if (since.size) next = next.filter((i) => !since.has(i.id));
      this.sorted = next;
      this.changed.clear();
      for (const id of since) this.changed.set(id, undefined);
    } finally {
      this.watchers.delete(since);
    }
  }

  /**
   * Does the next read's merge now, in steps (`due` after each comparison or look-up; what it
   * returns awaited), so that the read only hands the listing out: after a reload that changed
   * many items (the read's merge compares k log N times, ~0.2 µs each for packed items: 36-39 ms
   * at the first `all()` after a reload that changed 1% of 200,000; a linear merge when k log N
   * passes N). The new listing is built beside the one served, from it as it was when this began;
   * a read meanwhile (which merges by itself) makes the work moot. An id written meanwhile stays
   * marked for the next read, out of the new listing if it was taken in. The last turn costs the
   * ids written meanwhile (and, only when one of them was taken, a pass over the listing).
   */
  async settle(current: (id: string) => Item | undefined, due: () => Promise<void> | undefined): Promise<void> {
    const base = this.sorted;
    if (!base || !this.changed.size) return;
    const since = new Set<string>();
    this.watchers.add(since);
    try {
      let linear = this.changed.size * Math.log2(base.length + 2) > base.length;
      // Each id marked before this began, with what it is now if it belongs (read live: an id marked
      // since is left to the next read, with the item it replaced, which stays in the listing).
      const taken = new Map<string, Item | undefined>();
      const out: number[] = [];
      let s: Promise<void> | undefined;
      for (const [id, previous] of this.changed) {
        if (since.has(id)) continue;
        if (!linear && previous && this.belongs(previous)) {
          // Not where its sort key says: the linear merge, which finds it by id.
          const at = this.lowerBound(base, previous);
          if (base[at]?.id === id) out.push(at);
          else linear = true;
        }
        const item = current(id);
        taken.set(id, item && this.belongs(item) ? item : undefined);
        if ((s = due())) await s;
      }
      const fresh = await sortInSteps(
        [...taken.values()].filter((i): i is Item => i !== undefined),
        this.compare,
        due,
      );
      let next: Item[];
      if (linear) {
        next = [];
        let f = 0;
        for (const item of base) {
          if (!taken.has(item.id)) {
            while (f < fresh.length && this.compare(fresh[f], item) < 0) next.push(fresh[f++]);
            next.push(item);
          }
          if ((s = due())) await s;
        }
        while (f < fresh.length) next.push(fresh[f++]);
      } else
        next = await this.splicedInSteps(
          base,
          out.sort((a, b) => a - b),
          fresh,
          due,
        );
      if (this.sorted !== base) return;
      // Ids taken and written since: out of the new listing, marked with nothing it holds.
      const stale = [...since].filter((id) => taken.get(id) !== undefined);
      if (stale.length) {
        const gone = new Set(stale);
        next = next.filter((i) => !gone.has(i.id) || i !== taken.get(i.id));
      }
      const left = [...since].map((id) => [id, taken.has(id) ? undefined : this.changed.get(id)] as const);
      this.changed.clear();
      for (const [id, previous] of left) this.changed.set(id, previous);
      this.sorted = next;
    } finally {
      this.watchers.delete(since);
    }
  }

  /** The items of `every` that belong, in order: those with a rank (of one catalogue) placed by it, the others merged in. */
  private sortAll(every: Iterable<Item>): Item[] {
    const first = new FirstRead(this.rankOf);
    for (const item of every) if (this.belongs(item)) first.add(item);
    const sorted = first.placed();
    if (!first.rest.length) return sorted;
    return this.spliced(sorted, [], first.rest.sort(this.compare));
  }

  /**
   * Where the replaced items sit in `old`, ascending, by binary search (the order is total: ids
   * break ties); undefined when one is not where its sort key says (then `filteredMerge`).
   */
  private placesOfReplaced(old: readonly Item[]): number[] | undefined {
    const places: number[] = [];
    for (const [id, previous] of this.changed) {
      if (!previous || !this.belongs(previous)) continue;
      const at = this.lowerBound(old, previous);
      if (old[at]?.id !== id) return undefined;
      places.push(at);
    }
    return places.sort((a, b) => a - b);
  }

  /** `old` without the items at `out`, with `fresh` (sorted) put in at their places. */
  private spliced(old: readonly Item[], out: readonly number[], fresh: readonly Item[]): Item[] {
    const at = new Array<number>(fresh.length);
    for (let f = 0, from = 0; f < fresh.length; f++) at[f] = from = this.lowerBound(old, fresh[f], from);
    return this.splicedAt(old, out, fresh, at);
  }

  /**
   * `spliced` in steps: `fresh`'s places in `old` found with `due` after each (what it returns
   * awaited), then the splice in a turn of its own (a million copies at most).
   */
  private async splicedInSteps(
    old: readonly Item[],
    out: readonly number[],
    fresh: readonly Item[],
    due: () => Promise<void> | undefined,
  ): Promise<Item[]> {
    const at = new Array<number>(fresh.length);
    let s: Promise<void> | undefined;
    for (let f = 0, from = 0; f < fresh.length; f++) {
      at[f] = from = this.lowerBound(old, fresh[f], from);
      if ((s = due())) await s;
    }
    await yieldToLoop();
    return this.splicedAt(old, out, fresh, at);
  }

  /** `old` without the items at `out` (ascending), with `fresh` (sorted) put in before `old[at[f]]` each. */
  private splicedAt(
    old: readonly Item[],
    out: readonly number[],
    fresh: readonly Item[],
    at: readonly number[],
  ): Item[] {
    const next: Item[] = new Array<Item>(old.length - out.length + fresh.length);
    let n = 0;
    let o = 0;
    let f = 0;
    let from = 0;
    const copyTo = (end: number) => {
      // `old[from, end)` less the replaced items, with the fresh items that sort before old[end].
      for (let i = from; i < end; i++) {
        if (o < out.length && out[o] === i) {
          o++;
          continue;
        }
        next[n++] = old[i];
      }
      from = end;
    };
    for (; f < fresh.length; f++) {
      copyTo(at[f]);
      next[n++] = fresh[f];
    }
    copyTo(old.length);
    next.length = n;
    return next;
  }

  /** The same result in one linear pass over `old` (a replaced item not found by its key). */
  private filteredMerge(old: readonly Item[], fresh: readonly Item[]): Item[] {
    const { changed, compare } = this;
    const next: Item[] = [];
    let f = 0;
    for (const item of old) {
      if (changed.has(item.id)) continue;
      while (f < fresh.length && compare(fresh[f], item) < 0) next.push(fresh[f++]);
      next.push(item);
    }
    while (f < fresh.length) next.push(fresh[f++]);
    return next;
  }

  /** The first index at or after `from` whose item does not sort before `item`. */
  private lowerBound(list: readonly Item[], item: Item, from = 0): number {
    let lo = from;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(list[mid], item) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/**
 * A listing's items as its first read places them: those with a rank of one catalogue by that
 * rank (`placed`, linear), the others (`rest`) to be sorted and merged in.
 */
class FirstRead {
  /** The items without a rank (or of another catalogue), in the order met. */
  readonly rest: Item[] = [];
  private readonly ranked: Item[] = [];
  private readonly ranks: number[] = [];
  private of: object | undefined;
  private top = 0;

  constructor(private readonly rankOf: (item: Item) => { readonly of: object; readonly rank: number } | undefined) {}

  add(item: Item): void {
    const r = this.rankOf(item);
    if (r && (this.of ??= r.of) === r.of) {
      this.ranked.push(item);
      this.ranks.push(r.rank);
      if (r.rank >= this.top) this.top = r.rank + 1;
    } else this.rest.push(item);
  }

  /** The ranked items in rank order (ranks are distinct: each goes to its slot, then the slots are read in order). */
  placed(): Item[] {
    const slot = new Int32Array(this.top).fill(-1);
    for (let i = 0; i < this.ranks.length; i++) slot[this.ranks[i]] = i;
    const sorted: Item[] = new Array<Item>(this.ranked.length);
    let n = 0;
    for (let r = 0; r < this.top; r++) if (slot[r] >= 0) sorted[n++] = this.ranked[slot[r]];
    return sorted;
  }
}
