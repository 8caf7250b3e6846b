/**
 * The rooms of docs/architecture.md and what each may import, checked by `npm run lint` (so by
 * `make lint` and `make test`): `depcruise .` with this file. test/import-rules.test.ts proves
 * every rule fails on a forbidden import.
 *
 * Paths are relative to the repository root (the folder `depcruise` runs in). Type-only imports
 * count (`tsPreCompilationDeps`): a type-only cycle is still two modules that cannot be read
 * apart.
 */

/** The product: what the package ships and the service runs. */
const PRODUCT = '^(contract|configs|service|charts|imports|app|bin)/|^index\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'product-imports-no-tooling',
      comment: 'Nothing in the product imports tools/, scripts/, bench/ or test/ (they are not shipped).',
      severity: 'error',
      from: { path: PRODUCT },
      to: { path: '^(tools|scripts|bench|test)/' },
    },
    {
      name: 'service-imports-no-charts',
      comment: 'The service and the stack meet only in configs/ and contract/.',
      severity: 'error',
      from: { path: '^service/' },
      to: { path: '^charts/' },
    },
    {
      name: 'charts-import-no-service',
      comment: 'The service and the stack meet only in configs/ and contract/.',
      severity: 'error',
      from: { path: '^charts/' },
      to: { path: '^service/' },
    },
    {
      name: 'contract-imports-nothing-of-ours',
      comment: 'contract/ is constants and types both sides import; it imports nothing of ours.',
      severity: 'error',
      from: { path: '^contract/' },
      to: { pathNot: '^(contract|node_modules)/', dependencyTypesNot: ['core'] },
    },
    {
      name: 'configs-import-only-contract',
      comment: 'The settings module may use the contract, nothing else of ours.',
      severity: 'error',
      from: { path: '^configs/' },
      to: { pathNot: '^(configs|contract|node_modules)/', dependencyTypesNot: ['core'] },
    },
    {
      name: 'app-imports-only-the-stack',
      comment: 'The cdk8s app entry uses the constructs, the settings and the contract.',
      severity: 'error',
      from: { path: '^app/' },
      to: { pathNot: '^(app|charts|configs|contract|imports|node_modules)/', dependencyTypesNot: ['core'] },
    },
    {
      name: 'tools-import-no-scripts-bench-test',
      comment: 'Tooling is used by scripts/, bench/ and test/, not the other way round.',
      severity: 'error',
      from: { path: '^tools/' },
      to: { path: '^(scripts|bench|test)/' },
    },
    {
      name: 'scripts-import-no-bench-test',
      comment: 'A command entry point uses the product and tools/; shared code belongs in tools/.',
      severity: 'error',
      from: { path: '^scripts/' },
      to: { path: '^(bench|test)/' },
    },
    {
      name: 'bench-imports-no-scripts-test',
      comment: 'Benchmarks use the product and tools/; shared code belongs in tools/.',
      severity: 'error',
      from: { path: '^bench/' },
      to: { path: '^(scripts|test)/' },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles, type-only ones included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    // issue 38: rooms of service/search
    // The search wing's rooms (docs/architecture.md): index/ (storage), vocabulary/, scoring/,
    // query/, analysis/, and the glue directly in service/search/ (the embedded index, its
    // lifecycle, the service), which may import every room. test/import-rules-search.test.ts
    // proves each rule bites.
    {
      name: 'search-index-imports-no-scoring-query',
      comment: 'Storage (service/search/index/) imports only itself and the vocabulary: never the scorers, the query plan, analysis or the glue (the scorers read it through index/cursor.ts).',
      severity: 'error',
      from: { path: '^service/search/index/' },
      to: { path: '^service/search/', pathNot: '^service/search/(index|vocabulary)/' },
    },
    {
      name: 'search-vocabulary-imports-no-other-room',
      comment: "The vocabulary's look-ups (service/search/vocabulary/) stand alone in the search wing.",
      severity: 'error',
      from: { path: '^service/search/vocabulary/' },
      to: { path: '^service/search/', pathNot: '^service/search/vocabulary/' },
    },
    {
      name: 'search-scoring-reads-index-through-cursor',
      comment: 'The scorers (service/search/scoring/) read the index only through its cursor interface (index/cursor.ts), and import no other room.',
      severity: 'error',
      from: { path: '^service/search/scoring/' },
      to: { path: '^service/search/', pathNot: '^service/search/(scoring/|index/cursor\\.ts$)' },
    },
    {
      name: 'search-query-reads-index-through-cursor',
      comment: 'The query plan (service/search/query/) uses the vocabulary and reads the index only through index/cursor.ts; it imports no scorer.',
      severity: 'error',
      from: { path: '^service/search/query/' },
      to: { path: '^service/search/', pathNot: '^service/search/(query/|vocabulary/|index/cursor\\.ts$)' },
    },
    {
      name: 'search-analysis-imports-no-other-room',
      comment: 'Text analysis and snippets (service/search/analysis/) import nothing else of the search wing.',
      severity: 'error',
      from: { path: '^service/search/analysis/' },
      to: { path: '^service/search/', pathNot: '^service/search/analysis/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|build|dist|coverage|\\.tmp|\\.cache|examples)/|^service/web/assets/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: `${__dirname}/tsconfig.json` },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.cjs', '.json', '.d.ts'] },
  },
};
