import { violationsIn } from './helpers/import-rules';

/**
 * The embedder's room (.dependency-cruiser.cjs, "issue 41: the embedder's room") bites:
 * `depcruise` with the repository's own config over a small service/ holding the room and its
 * neighbours, written to a temporary folder, as test/import-rules-service.test.ts does for the
 * layers. Every forbidden import is reported under its rule, type-only ones included, and the
 * allowed ones are not. One run (~1 s of CPU).
 */

const TREE: Record<string, string> = {
  // allowed: the room on the items, their text and the leaves, its parts on each other; the
  // composition root and the features through its index.ts
  'service/lib/clock.ts': 'export const now = (): number => 0;\n',
  'service/content/item.ts': 'export type Item = { id: string; body: string };\n',
  'service/content/sentences.ts': 'export const sentences = (t: string): string[] => t.split(".");\n',
  'service/content/file-store/index.ts': "import type { Item } from '../item';\nexport const stored: Item[] = [];\n",
  'service/search/search-service.ts': 'export const search = (q: string): string[] => [q];\n',
  'service/metrics/request-stats.ts': 'export class RequestStats { addTokens(n: number): number { return n; } }\n',
  'service/embeddings/types.ts': 'export interface TokenCounter { addTokens(n: number): void }\n',
  'service/embeddings/passages.ts':
    "import type { Item } from '../content/item';\nimport { sentences } from '../content/sentences';\nimport { now } from '../lib/clock';\nexport const passages = (i: Item) => [sentences(i.body), now()];\n",
  'service/embeddings/index.ts': "export * from './types';\nexport * from './passages';\n",
  'service/features.ts':
    "import { passages } from './embeddings';\nimport type { TokenCounter } from './embeddings/index';\nexport const f = [passages] as unknown as TokenCounter;\n",
  'service/chat/retrieval.ts': "import { passages } from '../embeddings/index';\nexport const r = passages;\n",
  // forbidden
  'service/embeddings/bad-search.ts': "import { search } from '../search/search-service';\nexport const x = search;\n",
  'service/embeddings/bad-metrics.ts':
    "import type { RequestStats } from '../metrics/request-stats';\nexport type X = RequestStats;\n",
  'service/embeddings/bad-store.ts':
    "import { stored } from '../content/file-store/index';\nexport const x = stored;\n",
  'service/search/bad-part.ts': "import { passages } from '../embeddings/passages';\nexport const x = passages;\n",
  'service/bad-root.ts': "import type { TokenCounter } from './embeddings/types';\nexport type X = TokenCounter;\n",
};

test('every import against the embedder’s room fails lint under its rule, type-only ones included; the allowed ones pass', () => {
  const found = violationsIn(TREE);
  expect(found).toEqual([
    'embeddings-imports-only-items-and-leaves: service/embeddings/bad-metrics.ts → service/metrics/request-stats.ts',
    'embeddings-imports-only-items-and-leaves: service/embeddings/bad-search.ts → service/search/search-service.ts',
    'embeddings-imports-only-items-and-leaves: service/embeddings/bad-store.ts → service/content/file-store/index.ts',
    'service-enters-embeddings-by-index: service/bad-root.ts → service/embeddings/types.ts',
    'service-enters-embeddings-by-index: service/search/bad-part.ts → service/embeddings/passages.ts',
  ]);
});
