/** The shared content store in Redis (`KVSTORE_URL`): what the rest of the service uses of it. */
export { RedisContentStore, type RedisContentStoreOptions } from './redis-content-store';
