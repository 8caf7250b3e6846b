import type { Item } from '../../service/content/item';
import { packItem } from '../../service/content/lazy-item';
import { growCorpus } from '../../tools/corpus/grow-corpus';
import type { VaswaniItem } from '../../tools/corpus/vaswani';

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

/**
 * `size` documents grown from `items` (`growCorpus`) as the service holds them (`heldItem`), with
 * no tags and both times at the epoch: the corpus of the stall and delete benches. Held so, not as
 * spread copies: V8 gives each object made by a spread at a megamorphic site its own hidden class
 * (a map and a descriptor array per item, ~0.6M more objects at 200k that the service never has).
 */
export function heldCorpus(items: readonly VaswaniItem[], size: number): Item[] {
  const now = new Date(0).toISOString();
  return growCorpus(items, size).map((i) =>
    heldItem({ id: i.id, type: i.type, title: i.title, body: i.body, tags: [], created_at: now, updated_at: now }),
  );
}
