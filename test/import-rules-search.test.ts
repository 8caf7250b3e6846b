import { violationsIn } from './helpers/import-rules';

/**
 * The rules between the rooms of service/search/ (issue 38) bite: `depcruise` with the
 * repository's own .dependency-cruiser.cjs over a small tree of the same rooms, written to a
 * temporary folder (as test/import-rules.test.ts does for the top floor). Every forbidden import
 * is reported under its rule, type-only ones included, and the allowed ones are not. One run
 * (~1 s of CPU).
 */
const S = 'service/search';

const TREE: Record<string, string> = {
  // allowed: index/ uses itself and the vocabulary; scoring/ and query/ read index/ through
  // cursor.ts only (query/ uses the vocabulary too); the glue in service/search/ uses every room
  [`${S}/index/cursor.ts`]: 'export interface Cursor { readonly docs: Int32Array }\n',
  [`${S}/index/store.ts`]:
    "import type { Cursor } from './cursor';\nimport { TERMS } from '../vocabulary/terms';\nexport const cursors = (): Cursor[] => TERMS.map(() => ({ docs: new Int32Array(0) }));\n",
  [`${S}/vocabulary/terms.ts`]: "export const TERMS = ['a'];\n",
  [`${S}/scoring/top-k.ts`]:
    "import type { Cursor } from '../index/cursor';\nexport const topK = (c: Cursor[]) => c.length;\n",
  [`${S}/scoring/rank.ts`]: "import { topK } from './top-k';\nexport const rank = topK;\n",
  [`${S}/query/plan.ts`]:
    "import type { Cursor } from '../index/cursor';\nimport { TERMS } from '../vocabulary/terms';\nexport const plan = (c?: Cursor) => [c, TERMS];\n",
  [`${S}/analysis/analyzer.ts`]: "export const analyze = (s: string) => s.split(' ');\n",
  [`${S}/analysis/snippet.ts`]: "import { analyze } from './analyzer';\nexport const snippet = analyze;\n",
  [`${S}/vectors/exact.ts`]: 'export const dot = (a: number[]) => a.length;\n',
  [`${S}/vectors/vector-index.ts`]: "import { dot } from './exact';\nexport const nearest = dot;\n",
  [`${S}/embedded.ts`]:
    "import { nearest } from './vectors/vector-index';\nimport { cursors } from './index/store';\nimport { rank } from './scoring/rank';\nimport { plan } from './query/plan';\nimport { snippet } from './analysis/snippet';\nimport { TERMS } from './vocabulary/terms';\nexport const search = () => [rank(cursors()), plan(), snippet('a'), TERMS, nearest];\n",
  // forbidden
  [`${S}/index/bad-scoring.ts`]: "import type { topK } from '../scoring/top-k';\nexport type X = typeof topK;\n",
  [`${S}/index/bad-query.ts`]: "import { plan } from '../query/plan';\nexport const x = plan;\n",
  [`${S}/index/bad-glue.ts`]: "import type { search } from '../embedded';\nexport type X = typeof search;\n",
  [`${S}/vocabulary/bad-index.ts`]: "import type { Cursor } from '../index/cursor';\nexport type X = Cursor;\n",
  [`${S}/scoring/bad-store.ts`]: "import { cursors } from '../index/store';\nexport const x = cursors;\n",
  [`${S}/scoring/bad-query.ts`]: "import type { plan } from '../query/plan';\nexport type X = typeof plan;\n",
  [`${S}/query/bad-store.ts`]: "import type { cursors } from '../index/store';\nexport type X = typeof cursors;\n",
  [`${S}/query/bad-scoring.ts`]: "import { topK } from '../scoring/top-k';\nexport const x = topK;\n",
  [`${S}/vectors/bad-index.ts`]: "import type { Cursor } from '../index/cursor';\nexport type X = Cursor;\n",
  [`${S}/vectors/bad-analysis.ts`]: "import { analyze } from '../analysis/analyzer';\nexport const x = analyze;\n",
  [`${S}/scoring/bad-vectors.ts`]: "import { nearest } from '../vectors/vector-index';\nexport const x = nearest;\n",
  [`${S}/analysis/bad-vocabulary.ts`]: "import { TERMS } from '../vocabulary/terms';\nexport const x = TERMS;\n",
};

test('every forbidden import between the rooms of service/search fails lint under its rule, type-only ones included; the allowed ones pass', () => {
  const found = violationsIn(TREE);
  expect(found).toEqual([
    `search-analysis-imports-no-other-room: ${S}/analysis/bad-vocabulary.ts → ${S}/vocabulary/terms.ts`,
    `search-index-imports-no-scoring-query: ${S}/index/bad-glue.ts → ${S}/embedded.ts`,
    `search-index-imports-no-scoring-query: ${S}/index/bad-query.ts → ${S}/query/plan.ts`,
    `search-index-imports-no-scoring-query: ${S}/index/bad-scoring.ts → ${S}/scoring/top-k.ts`,
    `search-query-reads-index-through-cursor: ${S}/query/bad-scoring.ts → ${S}/scoring/top-k.ts`,
    `search-query-reads-index-through-cursor: ${S}/query/bad-store.ts → ${S}/index/store.ts`,
    `search-scoring-reads-index-through-cursor: ${S}/scoring/bad-query.ts → ${S}/query/plan.ts`,
    `search-scoring-reads-index-through-cursor: ${S}/scoring/bad-store.ts → ${S}/index/store.ts`,
    `search-scoring-reads-index-through-cursor: ${S}/scoring/bad-vectors.ts → ${S}/vectors/vector-index.ts`,
    `search-vectors-imports-no-other-room: ${S}/vectors/bad-analysis.ts → ${S}/analysis/analyzer.ts`,
    `search-vectors-imports-no-other-room: ${S}/vectors/bad-index.ts → ${S}/index/cursor.ts`,
    `search-vocabulary-imports-no-other-room: ${S}/vocabulary/bad-index.ts → ${S}/index/cursor.ts`,
  ]);
});
