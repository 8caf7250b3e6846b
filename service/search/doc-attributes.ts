import { ITEM_TYPES, type Item, type ItemType } from '../content/item';
import { dayNumber, itemDay } from '../content/item-filter';
import { grow } from './index/growable';
import type { TagDictionary } from './tag-dictionary';

/*
 * What the filters, facets and sorts read of an indexed document, entered in typed arrays when
 * the index enters the document (index-lifecycle.ts), so that the columns (`DocColumns`), built
 * again after every merge that renumbers the short ids, copy arrays instead of looking each
 * document's item up by id and reading its fields (two thirds of their build's CPU, and an
 * object a document: issue 40).
 */

/** Type codes by type: the type's place in `ITEM_TYPES`. */
export const TYPE_CODE = new Map<ItemType, number>(ITEM_TYPES.map((t, i) => [t, i]));
/** The type code of a deleted document, or of a type not in `ITEM_TYPES`. */
export const NO_TYPE = 255;
// The type code of a row not entered (a restored document's until its item is read).
const UNENTERED = 254;

/**
 * The documents' types, tags, days and update times by row: a document's row is its slot in
 * the index (`SegmentedIndex.slotOf`), which stays the same while it lives whatever short id a
 * merge gives it, and which a later document may take once it is deleted (entered again then).
 * Tags are codes of `dictionary`, a row's `tags[tagStart[row] … tagEnd[row] - 1]` in a pool that
 * a row entered again leaves a hole in, compacted once the holes outweigh the rest. The arrays
 * grow in place (`grow`): filling the table at a build leaves no garbage behind.
 */
export class DocAttributeTable {
  /** Type codes (`TYPE_CODE`, `NO_TYPE`) by row. */
  types = new Uint8Array(0);
  /** `itemDay` as YYYYMMDD (`dayNumber`) by row. */
  days = new Int32Array(0);
  /** `updated_at`, milliseconds since the epoch, by row. */
  updated = new Float64Array(0);
  tagStart = new Int32Array(0);
  tagEnd = new Int32Array(0);
  /** The rows' tag codes. */
  tags = new Int32Array(0);
  // Codes used in `tags`, and how many of them are live rows' (the rest are holes).
  private tagsUsed = 0;
  private tagsLive = 0;

  constructor(readonly dictionary: TagDictionary) {}

  /** Whether row `row` has been entered. */
  entered(row: number): boolean {
    return row < this.types.length && this.types[row] !== UNENTERED;
  }

  /** Enters `item`'s attributes in row `row`: the item's own fields, read once (a lazy item answers them without a parse). */
  enter(row: number, item: Item): void {
    this.enterAttributes(row, item.type, item.tags, dayNumber(itemDay(item)), Date.parse(item.updated_at));
  }

  /** Enters a document of type `type`, `tags` (lower-cased here), day `day` (`dayNumber`) and update time `updated` in row `row`. */
  enterAttributes(row: number, type: ItemType, tags: readonly string[], day: number, updated: number): void {
    if (row >= this.types.length) {
      const before = this.types.length;
      this.types = grow(this.types, row + 1);
      this.types.fill(UNENTERED, before);
    }
    this.days = grow(this.days, row + 1);
    this.updated = grow(this.updated, row + 1);
    this.tagStart = grow(this.tagStart, row + 1);
    this.tagEnd = grow(this.tagEnd, row + 1);
    if (this.types[row] !== UNENTERED) {
      // Its codes become a hole (not copied if the pool is compacted now).
      this.tagsLive -= this.tagEnd[row] - this.tagStart[row];
      this.tagEnd[row] = this.tagStart[row];
    }
    if (this.tagsUsed + tags.length > this.tags.length) this.makeRoom(tags.length);
    this.types[row] = TYPE_CODE.get(type) ?? NO_TYPE;
    this.days[row] = day;
    this.updated[row] = updated;
    let at = this.tagsUsed;
    this.tagStart[row] = at;
    for (const t of tags) this.tags[at++] = this.dictionary.codeOf(t);
    this.tagEnd[row] = at;
    this.tagsUsed = at;
    this.tagsLive += tags.length;
  }

  /**
   * Room for `n` more codes in `tags`: the live rows' codes moved to the front once the holes are
   * at least as many (a pass over the rows), else the pool grown.
   */
  private makeRoom(n: number): void {
    const holes = this.tagsUsed - this.tagsLive;
    if (holes < this.tagsLive || holes < 1024) {
      this.tags = grow(this.tags, this.tagsUsed + n);
      return;
    }
    const old = this.tags;
    const tags = new Int32Array(Math.max(2 * (this.tagsLive + n), 1024));
    let at = 0;
    for (let r = 0; r < this.types.length; r++) {
      if (this.types[r] === UNENTERED) continue;
      const s = this.tagStart[r];
      const e = this.tagEnd[r];
      this.tagStart[r] = at;
      for (let i = s; i < e; i++) tags[at++] = old[i];
      this.tagEnd[r] = at;
    }
    this.tags = tags;
    this.tagsUsed = at;
  }
}
