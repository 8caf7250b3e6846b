/** The embedded durable content store (`DATA_DIR`): what the rest of the service uses of it. */
export { FileContentStore, type FileContentStoreOptions } from './file-content-store';
export { CATALOGUE_FILE } from './generation-files';
