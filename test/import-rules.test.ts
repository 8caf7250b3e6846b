import { violationsIn } from './helpers/import-rules';

/**
 * The import rules of docs/architecture.md bite: `depcruise` with the repository's own
 * .dependency-cruiser.cjs (what `npm run lint` runs) over a small tree of the same rooms, written
 * to a temporary folder. Every forbidden import is reported under its rule, type-only ones
 * included, and the allowed ones are not. One run (~1 s of CPU).
 */

const TREE: Record<string, string> = {
  // allowed: contract/ uses Node only; configs/ the contract; service/ and charts/ both of those;
  // app/ the charts; tools/ the product; scripts/ and bench/ tools and the product; test/ anything
  'contract/names.ts': "import { sep } from 'node:path';\nexport const NAME = `svc${sep}`;\n",
  'configs/settings.ts': "import { NAME } from '../contract/names';\nexport const settings = { name: NAME };\n",
  'service/app.ts': "import { settings } from '../configs/settings';\nexport const app = settings;\n",
  'charts/stack.ts':
    "import { NAME } from '../contract/names';\nimport { settings } from '../configs/settings';\nexport const stack = [NAME, settings];\n",
  'app/main.ts': "import { stack } from '../charts/stack';\nexport const main = stack;\n",
  'tools/harness.ts': "import { app } from '../service/app';\nexport const harness = app;\n",
  'scripts/up.ts': "import { harness } from '../tools/harness';\nexport const up = harness;\n",
  'bench/run.ts':
    "import { harness } from '../tools/harness';\nimport { app } from '../service/app';\nexport const run = [harness, app];\n",
  'test/app.test.ts':
    "import { harness } from '../tools/harness';\nimport { up } from '../scripts/up';\nimport { run } from '../bench/run';\nexport const t = [harness, up, run];\n",
  // forbidden
  'service/bad-charts.ts': "import { stack } from '../charts/stack';\nexport const x = stack;\n",
  'charts/bad-service.ts': "import type { app } from '../service/app';\nexport type X = typeof app;\n",
  'service/bad-tools.ts': "import type { harness } from '../tools/harness';\nexport type X = typeof harness;\n",
  'app/bad-test.ts': "import { t } from '../test/app.test';\nexport const x = t;\n",
  'contract/bad.ts': "import { settings } from '../configs/settings';\nexport const x = settings;\n",
  'configs/bad.ts': "import { app } from '../service/app';\nexport const x = app;\n",
  'app/bad-service.ts': "import { app } from '../service/app';\nexport const x = app;\n",
  'tools/bad-test.ts': "import type { t } from '../test/app.test';\nexport type X = typeof t;\n",
  'scripts/bad-bench.ts': "import { run } from '../bench/run';\nexport const x = run;\n",
  'bench/bad-scripts.ts': "import { up } from '../scripts/up';\nexport const x = up;\n",
  'tools/a.ts': "import type { B } from './b';\nexport type A = { b?: B };\n",
  'tools/b.ts': "import type { A } from './a';\nexport type B = { a?: A };\n",
  // the cycle that was once a named exception (issue 27 untangled it): no longer allowed, and
  // since issue 38 both imports cross the rooms of service/search the wrong way too
  // (test/import-rules-search.test.ts)
  'service/search/index/compact-index.ts':
    "import type { Plan } from '../query/query-plan';\nexport type Index = { plan?: Plan };\n",
  'service/search/query/query-plan.ts':
    "import type { Index } from '../index/compact-index';\nexport type Plan = { index?: Index };\n",
};

test('every forbidden import fails lint under its rule, type-only ones and type-only cycles included; the allowed ones pass', () => {
  const found = violationsIn(TREE);
  expect(found).toEqual([
    'app-imports-only-the-stack: app/bad-service.ts → service/app.ts',
    'app-imports-only-the-stack: app/bad-test.ts → test/app.test.ts',
    'bench-imports-no-scripts-test: bench/bad-scripts.ts → scripts/up.ts',
    'charts-import-no-service: charts/bad-service.ts → service/app.ts',
    'configs-import-only-contract: configs/bad.ts → service/app.ts',
    'contract-imports-nothing-of-ours: contract/bad.ts → configs/settings.ts',
    expect.stringMatching(
      /^no-circular: service\/search\/(index\/compact-index|query\/query-plan)\.ts → service\/search\/(index\/compact-index|query\/query-plan)\.ts$/,
    ),
    expect.stringMatching(/^no-circular: tools\/[ab]\.ts → tools\/[ab]\.ts$/),
    'product-imports-no-tooling: app/bad-test.ts → test/app.test.ts',
    'product-imports-no-tooling: service/bad-tools.ts → tools/harness.ts',
    'scripts-import-no-bench-test: scripts/bad-bench.ts → bench/run.ts',
    'search-index-imports-no-scoring-query: service/search/index/compact-index.ts → service/search/query/query-plan.ts',
    'search-query-reads-index-through-cursor: service/search/query/query-plan.ts → service/search/index/compact-index.ts',
    'service-imports-no-charts: service/bad-charts.ts → charts/stack.ts',
    'tools-import-no-scripts-bench-test: tools/bad-test.ts → test/app.test.ts',
  ]);
});

test('npm run lint runs the rules', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pkg = require('../package.json') as { scripts: Record<string, string> };
  expect(pkg.scripts.lint).toMatch(/depcruise --config \.dependency-cruiser\.cjs \. && npm run format:check$/);
});
