/**
 * Shards of a `ShardedMap`. At 1M keys a shard holds 2,700–5,500, so growing one rehashes a few
 * thousand entries, not a million.
 */
const SHARDS = 256;

/**
 * Top bits of a key's hash that pick its shard (`SHARD_OF_BUCKET`): 65,536 buckets, ~180 for the
 * smallest shard, so the shares are within 0.5 % of their aim.
 */
const BUCKET_BITS = 16;

/**
 * The shard of each of the `2^BUCKET_BITS` buckets: shard `s` takes a share of the keys
 * proportional to `2^(s / SHARDS)`, so the largest shard is twice the smallest and their sizes
 * spread evenly over that octave. Shards of equal shares all reached a power of two within a few
 * thousand keys of each other (128 of them at 524,288 keys: 128 rehashes in ~40 turns of 1,000
 * adds, 10–15 ms of CPU a turn, the longest turn while 1M vectors were added, issue 41). Spread
 * over an octave, one shard grows every ~2,000 keys at 500,000 (chance bunches a few): simulated
 * with two shapes of ids, at most 12,288 entries rehashed in a turn of 1,000 adds up to 1M keys
 * (16–25k up to 2M), against 32,768 at 524,288 with 128 equal shares.
 */
const SHARD_OF_BUCKET = Uint8Array.from({ length: 1 << BUCKET_BITS }, (_, b) =>
  Math.floor(SHARDS * Math.log2(1 + (b + 0.5) / (1 << BUCKET_BITS))),
);

/** The shard of `key`: a multiplicative hash of its UTF-16 code units (ids are a few tens of them), then `SHARD_OF_BUCKET`. */
export function shardOf(key: string): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x9e3779b1);
  return SHARD_OF_BUCKET[(h ^ (h >>> 15)) >>> (32 - BUCKET_BITS)];
}

/**
 * A `Map` from string keys in `SHARDS` smaller maps. A `Map` doubles its table when full and
 * rehashes every entry in that one call: at 524,288 keys 233 ms of CPU in one turn of the event
 * loop (vector ids while vectors were added, issue 41), and the merge step that filled a new base's
 * ~900,000 ids past that size took ~160 ms at 1M documents (issue 39). Sharded, each growth
 * rehashes one shard, and shards of unequal shares (`SHARD_OF_BUCKET`) grow at different times.
 * Used for the search index's short ids and the vector index's slots.
 */
export class ShardedMap<V> {
  private readonly shards: Array<Map<string, V>> = Array.from({ length: SHARDS }, () => new Map<string, V>());
  // Per shard, the most keys it held since it was made: its table's size (`compactSteps`).
  private readonly peaks = new Int32Array(SHARDS);
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
    const s = shardOf(key);
    const shard = this.shards[s];
    const had = shard.size;
    shard.set(key, value);
    this.count += shard.size - had;
    if (shard.size > this.peaks[s]) this.peaks[s] = shard.size;
  }

  /** Removes `key`; false if it was absent. */
  delete(key: string): boolean {
    const gone = this.shards[shardOf(key)].delete(key);
    if (gone) this.count -= 1;
    return gone;
  }

  /**
   * Copies each shard that lost a third of its keys, if they fit a smaller table, a shard a step: a `Map` keeps the table of its largest size until it is under a quarter full, so after
   * half the keys are deleted the tables stay as large as before (at 1M ids, ~15 MB of heap for
   * ids gone; issue 39). The map may be read and written between steps.
   */
  *compactSteps(): Generator<void, void> {
    for (let s = 0; s < SHARDS; s++) {
      const shard = this.shards[s];
      // Copied once a third of its keys are gone and a smaller table would hold the rest.
      if (shard.size * 3 > this.peaks[s] * 2 || tableOf(shard.size) >= tableOf(this.peaks[s])) continue;
      this.shards[s] = new Map(shard);
      this.peaks[s] = shard.size;
      yield;
    }
  }
}

/** Entries a `Map`'s table holds once `n` keys went in: the power of two at or above `n` (V8 doubles it when full). */
function tableOf(n: number): number {
  let t = 4;
  while (t < n) t *= 2;
  return t;
}
