/** Content: the item model and its validation, the stores, upload parsing and exports. */
export * from './item';
export * from './store';
export * from './file-store';
export * from './redis-store';
export * from './content-service';
export * from './parse-files';
export * from './export';
export * from './plain-text';
