import { violationsIn } from './helpers/import-rules';

/**
 * The rules between the rooms of service/content (issue 38) bite: `depcruise` with the
 * repository's own .dependency-cruiser.cjs over a small tree of those rooms, written to a
 * temporary folder (as test/import-rules.test.ts does for the top floor). Every forbidden import
 * is reported under its rule, type-only ones included, and the allowed ones are not. One run
 * (~1 s of CPU).
 */

const TREE: Record<string, string> = {
  // allowed: the item model and the store interface at the top; each store room on them, its
  // index the way in; the service and its rooms on the interface; the composition root on the
  // stores' indexes; tests on anything
  'service/content/item.ts': 'export type Item = { id: string };\n',
  'service/content/content-store.ts':
    "import type { Item } from './item';\nexport interface ContentStore { load(): Promise<Item[]> }\n",
  'service/content/listing/sorted-listing.ts':
    "import type { Item } from '../item';\nexport const listing: Item[] = [];\n",
  'service/content/parse/parse-files.ts': "import type { Item } from '../item';\nexport const parsed: Item[] = [];\n",
  'service/content/content-service.ts':
    "import type { ContentStore } from './content-store';\nimport { listing } from './listing/sorted-listing';\nexport const service = (s: ContentStore) => [s, listing];\n",
  'service/content/file-store/record-log.ts': 'export const encode = (x: unknown) => JSON.stringify(x);\n',
  'service/content/file-store/file-content-store.ts':
    "import type { ContentStore } from '../content-store';\nimport type { Item } from '../item';\nimport { encode } from './record-log';\nexport class FileContentStore implements ContentStore {\n  async load(): Promise<Item[]> {\n    encode(1);\n    return [];\n  }\n}\n",
  'service/content/file-store/index.ts': "export { FileContentStore } from './file-content-store';\n",
  'service/content/redis-store/redis-content-store.ts':
    "import type { ContentStore } from '../content-store';\nimport type { Item } from '../item';\nexport class RedisContentStore implements ContentStore {\n  async load(): Promise<Item[]> {\n    return [];\n  }\n}\n",
  'service/content/redis-store/index.ts': "export { RedisContentStore } from './redis-content-store';\n",
  'service/features.ts':
    "import { service } from './content/content-service';\nimport { FileContentStore } from './content/file-store';\nimport { RedisContentStore } from './content/redis-store/index';\nexport const features = [service, FileContentStore, RedisContentStore];\n",
  'test/file-store.test.ts':
    "import { encode } from '../service/content/file-store/record-log';\nexport const t = encode;\n",
  // forbidden
  'service/content/file-store/bad-redis.ts':
    "import { RedisContentStore } from '../redis-store/redis-content-store';\nexport const x = RedisContentStore;\n",
  'service/content/redis-store/bad-file.ts':
    "import type { FileContentStore } from '../file-store';\nexport type X = FileContentStore;\n",
  'service/content/file-store/bad-service.ts':
    "import type { service } from '../content-service';\nexport type X = typeof service;\n",
  'service/content/redis-store/bad-listing.ts':
    "import { listing } from '../listing/sorted-listing';\nexport const x = listing;\n",
  'service/content/redis-store/bad-parse.ts':
    "import { parsed } from '../parse/parse-files';\nexport const x = parsed;\n",
  'service/content/bad-store.ts':
    "import { FileContentStore } from './file-store';\nexport const x = FileContentStore;\n",
  'service/content/listing/bad-store.ts':
    "import type { RedisContentStore } from '../redis-store/redis-content-store';\nexport type X = RedisContentStore;\n",
  'service/bad-parts.ts': "import { encode } from './content/file-store/record-log';\nexport const x = encode;\n",
  'service/routes/bad-parts.ts':
    "import type { RedisContentStore } from '../content/redis-store/redis-content-store';\nexport type X = RedisContentStore;\n",
};

test('every forbidden import between the rooms of service/content fails lint under its rule, type-only ones included; the allowed ones pass', () => {
  const found = violationsIn(TREE);
  expect(found).toEqual([
    'content-file-store-imports-no-redis-store: service/content/file-store/bad-redis.ts → service/content/redis-store/redis-content-store.ts',
    'content-imports-no-store-room: service/content/bad-store.ts → service/content/file-store/index.ts',
    'content-imports-no-store-room: service/content/listing/bad-store.ts → service/content/redis-store/redis-content-store.ts',
    'content-redis-store-imports-no-file-store: service/content/redis-store/bad-file.ts → service/content/file-store/index.ts',
    'content-stores-import-no-content-service: service/content/file-store/bad-service.ts → service/content/content-service.ts',
    'content-stores-import-no-content-service: service/content/redis-store/bad-listing.ts → service/content/listing/sorted-listing.ts',
    'content-stores-import-no-content-service: service/content/redis-store/bad-parse.ts → service/content/parse/parse-files.ts',
    'service-enters-store-rooms-by-index: service/bad-parts.ts → service/content/file-store/record-log.ts',
    'service-enters-store-rooms-by-index: service/routes/bad-parts.ts → service/content/redis-store/redis-content-store.ts',
  ]);
});
