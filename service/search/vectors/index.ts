/**
 * The vector index room (issue 41): nearest neighbours by meaning over items' passage vectors,
 * exact below a size and for small filters, a usearch HNSW graph above, persisted beside the
 * search segment with its checksum and staleness rules. Imports nothing else of the search wing.
 */
export { dotRow, exactTopK, TopK, type ScoredRows } from './exact-scan';
export { HnswGraph, type GraphOptions } from './hnsw-graph';
export { IdLines, VectorFileError, type GraphRef, type VectorMeta } from './vector-file';
export {
  VectorError,
  VectorIndex,
  type Accept,
  type VectorHit,
  type StoredSnapshot,
  type VectorIndexOptions,
  type VectorSnapshot,
} from './vector-index';
export {
  VECTOR_FILE,
  VectorStore,
  type LoadedVectors,
  type VectorFileExpect,
  type VectorStoreOptions,
} from './vector-store';
