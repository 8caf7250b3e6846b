/** The embedded durable content store (`DATA_DIR`): what the rest of the service uses of it. */
export { CATALOGUE_FILE, CATALOGUE_TAIL_BYTES, COMPACTION_RETRY, FileContentStore, SPACE_CHECK_MS, type FileContentStoreOptions } from './file-content-store';
