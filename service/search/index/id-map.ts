/**
 * Shards of an `IdMap`: a power of two. At 1M documents a shard holds ~8,000 ids, so growing
 * one rehashes ~8,000 entries, not a million.
 */
const SHARDS = 128;

/** The shard of `id`: a multiplicative hash of its characters. */
function shardOf(id: string): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x9e3779b1);
  return (h ^ (h >>> 15)) >>> 25;
}

/**
 * External ids to short ids, as a `Map` in `SHARDS` smaller maps. A `Map` rehashes its whole
 * table in one call when it grows: filled with a merge's ~900,000 ids (a step of 512 documents
 * each), the step that crossed 524,288 entries took ~160 ms at 1M documents (~80 ms at 300k,
 * issue 39); an append to a large index paid the same in one write. Sharded, each growth
 * rehashes one shard.
 */
export class IdMap {
  private readonly shards: Array<Map<string, number>> = Array.from({ length: SHARDS }, () => new Map());

  /** The short id of `id`, if present. */
  get(id: string): number | undefined {
    return this.shards[shardOf(id)].get(id);
  }

  /** Whether `id` is present. */
  has(id: string): boolean {
    return this.shards[shardOf(id)].has(id);
  }

  /** Maps `id` to `doc`. */
  set(id: string, doc: number): void {
    this.shards[shardOf(id)].set(id, doc);
  }

  /** Removes `id`; false if it was absent. */
  delete(id: string): boolean {
    return this.shards[shardOf(id)].delete(id);
  }
}
