import type { Item } from '../content/item';
import { dayNumber, itemDay } from '../content/item-filter';
import type { DocAttributes } from './doc-columns';

/*
 * What the filters, facets and sorts read of an indexed item (`DocColumns` enters them in its
 * typed arrays): read from the item itself whenever the columns are extended or rebuilt, so the
 * index keeps no object per document beside the item (index-lifecycle.ts).
 */

/** A document without tags. */
const NO_TAGS: readonly string[] = [];

/** `tags` lower-cased: the item's own array when every tag already is. */
const lowerTags = (tags: readonly string[]): readonly string[] =>
  !tags.length ? NO_TAGS : tags.every((t) => t === t.toLowerCase()) ? tags : tags.map((t) => t.toLowerCase());

/**
 * The attributes of `item`: its type, its tags lower-cased, its day (`itemDay` as `dayNumber`)
 * and update time. A catalogue's lazy item answers these without being parsed (lazy-item.ts).
 */
export const attributesOf = (item: Item): DocAttributes => ({
  type: item.type,
  tags: lowerTags(item.tags),
  day: dayNumber(itemDay(item)),
  updated: Date.parse(item.updated_at),
});
