/**
 * Shards of a `ShardedMap`: a power of two. At 1M keys a shard holds ~8,000, so growing one
 * rehashes ~8,000 entries, not a million.
 */
const SHARDS = 128;

/** The shard of `key`: a multiplicative hash of its UTF-16 code units (ids are a few tens of them). */
function shardOf(key: string): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x9e3779b1);
  return (h ^ (h >>> 15)) >>> 25;
}

/**
 * A `Map` from string keys in `SHARDS` smaller maps. A `Map` doubles its table when full and
 * rehashes every entry in that one call: at 524,288 keys 233 ms of CPU in one turn of the event
 * loop (vector ids while vectors were added, issue 41), and the merge step that filled a new base's
 * ~900,000 ids past that size took ~160 ms at 1M documents (issue 39). Sharded, each growth
 * rehashes one shard. Used for the search index's short ids and the vector index's slots.
 */
export class ShardedMap<V> {
  private readonly shards: Array<Map<string, V>> = Array.from({ length: SHARDS }, () => new Map<string, V>());
  private count = 0;

  /** Keys held. */
  get size(): number {
    return this.count;
  }

  /** The value of `key`, if present. */
  get(key: string): V | undefined {
    return this.shards[shardOf(key)].get(key);
  }

  /** Whether `key` is present. */
  has(key: string): boolean {
    return this.shards[shardOf(key)].has(key);
  }

  /** Maps `key` to `value`. */
  set(key: string, value: V): void {
    const shard = this.shards[shardOf(key)];
    const had = shard.size;
    shard.set(key, value);
    this.count += shard.size - had;
  }

  /** Removes `key`; false if it was absent. */
  delete(key: string): boolean {
    const gone = this.shards[shardOf(key)].delete(key);
    if (gone) this.count -= 1;
    return gone;
  }
}
