import type { Item, ItemType } from '../item';
import { catalogueEntry, type ListingKeys } from '../lazy-item';
import { SortedListing } from './sorted-listing';

/** The distinct tags of `item`, case-folded (a tag filter matches case-insensitively). */
function foldedTags(item: Item): Set<string> {
  return new Set(item.tags.map((t) => t.toLowerCase()));
}

/**
 * One type's items by tag: for every tag (case-folded), the items of the type that carry it, in
 * the type's listing order, each list kept up by merging writes in (sorted-listing.ts). Built at
 * the first filtered read in one pass over the type's listing (already in order: nothing is
 * sorted, and a catalogue's lazy items are not parsed: their tags are in the catalogue); from
 * then on a filtered page costs what it returns plus the writes since the last read, instead of
 * a pass over every item of the type per request.
 */
export class TagIndex {
  private readonly byTag = new Map<string, SortedListing>();
  private built = false;

  constructor(
    private readonly type: ItemType,
    private readonly compare: (a: Item, b: Item) => number,
  ) {}

  /** `id` was written as `next`, replacing `previous` (either may be of another type), or deleted (`next` undefined). */
  mark(id: string, previous: Item | undefined, next: Item | undefined): void {
    if (!this.built) return;
    const tags = new Set<string>();
    for (const i of [previous, next]) if (i?.type === this.type) for (const t of foldedTags(i)) tags.add(t);
    for (const t of tags) this.listing(t).mark(id, previous);
  }

  /** Does the next reads' merges now, in steps, list by list (`SortedListing.settle`). */
  async settle(current: (id: string) => Item | undefined, due: () => Promise<void> | undefined): Promise<void> {
    for (const l of this.byTag.values()) await l.settle(current, due);
  }

  /**
   * The items of the type with `tag` (case-folded), in listing order: `typeListing` gives the
   * type's listing (read once, to build), `current` an item by id.
   */
  items(tag: string, typeListing: () => readonly Item[], current: (id: string) => Item | undefined): readonly Item[] {
    if (!this.built) this.build(typeListing());
    const listing = this.byTag.get(tag.toLowerCase());
    return listing ? listing.items(() => typeListing(), current) : [];
  }

  private build(listing: readonly Item[]): void {
    const lists = new Map<string, Item[]>();
    const add = (t: string, item: Item) => {
      let l = lists.get(t);
      if (!l) lists.set(t, (l = []));
      if (l[l.length - 1] !== item) l.push(item);
    };
    // A catalogue's items by their entries: each distinct tag folded once, no keys decoded.
    let keys: ListingKeys | undefined;
    let folded: Array<string | undefined> = [];
    for (const item of listing) {
      const c = catalogueEntry(item);
      if (!c) {
        for (const t of foldedTags(item)) add(t, item);
        continue;
      }
      if (c.of !== keys) {
        keys = c.of;
        folded = new Array<string | undefined>(keys.tagNames.length);
      }
      const { tagAt, tagIds, tagNames } = c.of;
      for (let k = tagAt[c.entry]; k < tagAt[c.entry + 1]; k++) {
        const id = tagIds[k];
        add((folded[id] ??= tagNames[id].toLowerCase()), item);
      }
    }
    for (const [t, l] of lists) this.listing(t).seed(l);
    this.built = true;
  }

  /** The list of tag `t` (case-folded), made empty if there is none yet. */
  private listing(t: string): SortedListing {
    let l = this.byTag.get(t);
    if (!l) {
      l = new SortedListing(this.compare, (i) => i.type === this.type && foldedTags(i).has(t));
      l.seed([]);
      this.byTag.set(t, l);
    }
    return l;
  }
}
