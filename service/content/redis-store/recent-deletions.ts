/**
 * The deletions one replica knows of (its own, and those it read in the change stream), each with
 * its stamp (ms), for writing them back should Redis lose its tombstones (redis-scripts.ts
 * `restoreDeletions`). Bounded twice: a deletion older than the retention is forgotten (Redis
 * compacts its tombstone away then too), and past `max` entries the oldest known is forgotten
 * first. A later write of the id by this replica forgets it (the write superseded the deletion);
 * other replicas' writes are not followed (their notices carry no version): Redis's record of the
 * superseded deletion (`<prefix>:revived`), or the newer item's `updated_at`, keeps a deletion
 * written back from being applied to them.
 */
export class RecentDeletions {
  /** Insertion order = the order they became known (oldest first). */
  private readonly stamps = new Map<string, number>();

  constructor(
    /** How long a deletion is remembered after its stamp, ms. */
    readonly retentionMs: number,
    /** Most deletions remembered. */
    private readonly max: number,
  ) {}

  /** Remembers that `id` was deleted at `stamp` (the newer stamp wins). */
  remember(id: string, stamp: number): void {
    const known = this.stamps.get(id);
    if (known !== undefined && known >= stamp) return;
    this.stamps.delete(id);
    this.stamps.set(id, stamp);
    if (this.stamps.size > this.max) this.stamps.delete(this.stamps.keys().next().value as string);
  }

  /** `id` was written again by this replica, as a version of `updatedMs`: a deletion older than it is superseded. */
  forget(id: string, updatedMs: number): void {
    const known = this.stamps.get(id);
    if (known !== undefined && updatedMs > known) this.stamps.delete(id);
  }

  /** Deletions remembered, as `[id, stamp]`; those past the retention at `now` are forgotten first. */
  entries(now: number): Array<[string, number]> {
    const cutoff = now - this.retentionMs;
    for (const [id, stamp] of this.stamps) if (stamp < cutoff) this.stamps.delete(id);
    return [...this.stamps];
  }

  /** How many are remembered. */
  get size(): number {
    return this.stamps.size;
  }
}
