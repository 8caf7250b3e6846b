/** The embedder (issue 41): turns passages and queries into vectors through an embeddings API. */
export * from './types';
export * from './embedding-answer';
export * from './openai-embedder';
export * from './query-cache';
export * from './passages';
export * from './create-embedder';
export type { ItemVectors, SemanticStatus, VectorFeed, VectorFeedListener } from './vector-feed';
export * from './stored-vector-feed';
