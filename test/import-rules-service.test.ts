import { violationsIn } from './helpers/import-rules';

/**
 * The layers inside service/ (.dependency-cruiser.cjs, "issue 38: layers of service") bite:
 * `depcruise` with the repository's own config over a small service/ of the same rooms, written to
 * a temporary folder, as test/import-rules.test.ts does for the top-level rooms. Every forbidden
 * import is reported under its rule, type-only ones included, and the allowed ones are not. One
 * run (~1 s of CPU).
 */

const TREE: Record<string, string> = {
  // allowed: lib/ uses Node only; the features lib/ and each other; http/contract/ the features'
  // data and any layer it; routes/ the features, http/ and core-deps.ts; the root everything
  'service/lib/clock.ts': "import { hrtime } from 'node:process';\nexport const now = (): bigint => hrtime.bigint();\n",
  'service/core-deps.ts': "import type { now } from './lib/clock';\nexport interface CoreDeps { clock: typeof now }\n",
  'service/content/store.ts': "import { now } from '../lib/clock';\nexport const store = { at: now };\n",
  'service/http/contract/search.ts':
    "import type { store } from '../../content/store';\nexport type SearchResponse = { items: Array<typeof store> };\n",
  'service/search/service.ts':
    "import { store } from '../content/store';\nimport type { SearchResponse } from '../http/contract/search';\nexport const search = (): SearchResponse => ({ items: [store] });\n",
  'service/http/errors.ts': 'export class HttpError extends Error {}\n',
  'service/routes/search.ts':
    "import type { CoreDeps } from '../core-deps';\nimport { search } from '../search/service';\nimport { HttpError } from '../http/errors';\nexport const route = (d: CoreDeps) => [d, search, HttpError];\n",
  'service/web/page.ts': "import { HttpError } from '../http/errors';\nexport const page = HttpError;\n",
  'service/features.ts':
    "import { route } from './routes/search';\nimport { search } from './search/service';\nexport const features = [route, search];\n",
  'service/app.ts':
    "import { features } from './features';\nimport { page } from './web/page';\nexport const app = [features, page];\n",
  // forbidden
  'service/lib/bad-up.ts': "import type { store } from '../content/store';\nexport type X = typeof store;\n",
  'service/content/bad-root.ts': "import { features } from '../features';\nexport const x = features;\n",
  'service/routes/bad-wiring.ts': "import type { app } from '../app';\nexport type X = typeof app;\n",
  'service/search/bad-routes.ts': "import { route } from '../routes/search';\nexport const x = route;\n",
  'service/metrics/bad-web.ts': "import type { page } from '../web/page';\nexport type X = typeof page;\n",
  'service/chat/bad-http.ts': "import { HttpError } from '../http/errors';\nexport const x = HttpError;\n",
};

test('every import against the layers of service/ fails lint under its rule, type-only ones included; the allowed ones pass', () => {
  const found = violationsIn(TREE);
  expect(found).toEqual([
    'service-features-import-no-http-plumbing: service/chat/bad-http.ts → service/http/errors.ts',
    'service-lib-imports-no-service: service/lib/bad-up.ts → service/content/store.ts',
    'service-only-the-root-imports-routes: service/metrics/bad-web.ts → service/web/page.ts',
    'service-only-the-root-imports-routes: service/search/bad-routes.ts → service/routes/search.ts',
    'service-rooms-import-no-composition-root: service/content/bad-root.ts → service/features.ts',
    'service-rooms-import-no-composition-root: service/routes/bad-wiring.ts → service/app.ts',
  ]);
});
