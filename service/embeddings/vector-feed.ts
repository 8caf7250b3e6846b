/**
 * The contract between the content side of search by meaning (vectors stored with items,
 * embedded once per content version) and the search side (the vector index, hybrid ranking):
 * issue 41. The content side implements `VectorFeed`; the search side subscribes to it.
 */

/** The vectors of one content version of one item. */
export interface ItemVectors {
  readonly id: string;
  /** `itemFingerprint` (content/item-fingerprint.ts) of the content version the vectors were computed from. */
  readonly fingerprint: number;
  /** Where they came from: the embedder's key (`model/dimensions`), or `client` for an item's own `vector`. */
  readonly source: string;
  /** One vector a passage (an item's own `vector`: exactly one), each of `EMBEDDINGS_DIMENSIONS` numbers. */
  readonly vectors: readonly Float32Array[];
}

/** Told of every change of the vectors the feed holds. */
export interface VectorFeedListener {
  /** Vectors new or refreshed (the item's older vectors, if any, are replaced). */
  put(vectors: readonly ItemVectors[]): void;
  /** Items whose vectors are gone: deleted, or changed so that their vectors are stale. */
  remove(ids: readonly string[]): void;
}

/** How search by meaning stands: `off` (no embedder, no item with vectors), `ok`, or `degraded` (the embedder's last call failed). */
export type SemanticStatus = 'off' | 'ok' | 'degraded';

/** The current vectors of the stored items, and their changes. */
export interface VectorFeed {
  /**
   * The current vectors of every item that has them (read once at start, after the content is
   * loaded); an array returned is the caller's to keep: the feed does not change it afterwards.
   */
  current(): Iterable<ItemVectors>;
  /** Registers a listener of later changes; returns the call that removes it. */
  subscribe(listener: VectorFeedListener): () => void;
  /** Stored items whose current vectors are missing yet (the embedding backlog); 0 without an embedder. */
  pending(): number;
  /** How search by meaning stands now. */
  status(): SemanticStatus;
}
