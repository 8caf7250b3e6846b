/** Search: analysis, the index behind an interface, ranking, snippets, the result cache. */
export * from './analyzer';
export * from './search-index';
export * from './minisearch-index';
export * from './compact-index';
export * from './query-plan';
export * from './yield-to-loop';
export * from './top-hits';
export * from './expansion';
export * from './snippet';
export * from './result-cache';
export * from './search-service';
