/** The embedded durable content store (`DATA_DIR`): what the rest of the service uses of it. */
export { CATALOGUE_TAIL_BYTES } from './catalogue-writer';
export { COMPACTION_RETRY } from './compaction-retries';
export { FileContentStore, type FileContentStoreOptions } from './file-content-store';
export { CATALOGUE_FILE } from './generation-files';
export { SPACE_CHECK_MS } from './write-health';
