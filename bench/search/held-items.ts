import type { Item } from '../../service/content/item';
import { packItem } from '../../service/content/lazy-item';

/**
 * `item` as the service holds it once read from its store: parsed from JSON (objects of one shape,
 * flat strings; spread from grown copies, each item had a hidden class of its own and an id of
 * concatenated strings, ~3M more objects at 1M that the service never has), then packed
 * (lazy-item.ts: the record's bytes with the id, type, fingerprint and listing keys beside them,
 * other fields parsed per use), as the content service and the search index hold every item.
 * Its plain text is not kept (the corpus' records have none), so the index computes it as it
 * reads each item, as it does for a record of another plain-text version.
 */
export const heldItem = (item: Item): Item => packItem(JSON.parse(JSON.stringify(item)) as Item);
