import type { ItemVectors, SemanticStatus, VectorFeed, VectorFeedListener } from '../../service/embeddings';

/**
 * A `VectorFeed` held in memory (issue 41's contract), for tests of the search side: vectors are
 * put and removed by hand, and every listener is told at once, as the content side tells it.
 */
export class MemoryVectorFeed implements VectorFeed {
  private readonly items = new Map<string, ItemVectors>();
  private readonly listeners = new Set<VectorFeedListener>();
  /** `pending()`'s answer. */
  backlog = 0;
  /** `status()`'s answer; `ok` once vectors are put, else `off`, unless set. */
  state?: SemanticStatus;

  /** Puts the vectors of items (one vector each given as numbers, or passages), replacing older ones. */
  put(
    ...items: Array<{ id: string; vector?: ArrayLike<number>; vectors?: ArrayLike<number>[]; fingerprint?: number }>
  ): void {
    const batch = items.map((i) => ({
      id: i.id,
      fingerprint: i.fingerprint ?? 0,
      source: 'client',
      vectors: (i.vectors ?? [i.vector!]).map((v) => Float32Array.from(v)),
    }));
    for (const b of batch) this.items.set(b.id, b);
    for (const l of this.listeners) l.put(batch);
  }

  remove(...ids: string[]): void {
    for (const id of ids) this.items.delete(id);
    for (const l of this.listeners) l.remove(ids);
  }

  current(): Iterable<ItemVectors> {
    return [...this.items.values()];
  }

  subscribe(listener: VectorFeedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  pending(): number {
    return this.backlog;
  }

  status(): SemanticStatus {
    return this.state ?? (this.items.size > 0 ? 'ok' : 'off');
  }
}
