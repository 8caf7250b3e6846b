import type { ItemType } from '../../service/content/item';
import { DocAttributeTable } from '../../service/search/doc-attributes';
import type { ColumnSource } from '../../service/search/doc-columns';
import { TagDictionary } from '../../service/search/tag-dictionary';

/** What the columns read of a test's document: its type, tags, day (`dayNumber`) and update time. */
export interface TestAttributes {
  readonly type: ItemType;
  readonly tags: readonly string[];
  readonly day: number;
  readonly updated: number;
}

// The dictionary of every source made here unless one is given: sources made one after another
// for the same columns (extended, renumbered) share it, as an index's do.
const shared = new TagDictionary();

/**
 * The columns' source over documents `0 … n - 1` (a document's row is its short id): document d's
 * attributes are `attributesOf(d)`, undefined for a deleted one; numbered `numbering`.
 */
export function columnSourceOf(
  n: number,
  attributesOf: (doc: number) => TestAttributes | undefined,
  numbering: object = {},
  dictionary: TagDictionary = shared,
): ColumnSource {
  const attributes = new DocAttributeTable(dictionary);
  const live = new Uint8Array(n);
  for (let d = 0; d < n; d++) {
    const a = attributesOf(d);
    if (!a) continue;
    attributes.enterAttributes(d, a.type, a.tags, a.day, a.updated);
    live[d] = 1;
  }
  return { idLimit: n, numbering, rowOf: (doc) => (live[doc] === 1 ? doc : -1), attributes };
}
