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
    // issue 38: layers of service
    // service/ is layered: the composition root (service/*.ts: main, app, deps, core-deps, features,
    // server, lifecycle, process-guard) wires everything → the HTTP endpoints (routes/, web/) → the
    // features and their parts (content, search, chat, eval, demo, ratelimit, metrics, kvstore; the
    // HTTP plumbing http/ serves the endpoints) → the leaves (lib/). Each layer imports only layers
    // below it; http/contract/ (the API's zod schemas and the types derived from them) may be read
    // by any layer. test/import-rules-service.test.ts proves each rule bites.
    {
      name: 'service-lib-imports-no-service',
      comment:
        'service/lib/ holds the leaves (clock, framed files, whole writes, the one yield to the loop): they import nothing else of service/.',
      severity: 'error',
      from: { path: '^service/lib/' },
      to: { path: '^service/', pathNot: '^service/lib/' },
    },
    {
      name: 'service-rooms-import-no-composition-root',
      comment:
        'Only the composition root (service/*.ts) wires: no room imports it, but for core-deps.ts, the types of the injected dependencies (declared apart from the wiring for this).',
      severity: 'error',
      from: { path: '^service/[^/]+/' },
      to: { path: '^service/[^/]+$', pathNot: '^service/core-deps\\.ts$' },
    },
    {
      name: 'service-only-the-root-imports-routes',
      comment: 'Routers (routes/, web/) are mounted by the composition root; no feature or leaf imports them.',
      severity: 'error',
      from: { path: '^service/[^/]+/', pathNot: '^service/(routes|web)/' },
      to: { path: '^service/(routes|web)/' },
    },
    {
      name: 'service-features-import-no-http-plumbing',
      comment:
        'The features and the leaves know nothing of HTTP requests and answers (http/: errors, bodies, streaming); they may read the contract (http/contract/), the shapes of the API.',
      severity: 'error',
      from: { path: '^service/(content|search|chat|embeddings|eval|demo|ratelimit|metrics|kvstore|lib)/' },
      to: { path: '^service/http/', pathNot: '^service/http/contract/' },
    },
    // issue 38: rooms of service/content
    {
      name: 'content-file-store-imports-no-redis-store',
      comment:
        'The two content stores stand apart: the file store (content/file-store/) imports nothing of the Redis store.',
      severity: 'error',
      from: { path: '^service/content/file-store/' },
      to: { path: '^service/content/redis-store/' },
    },
    {
      name: 'content-redis-store-imports-no-file-store',
      comment:
        'The two content stores stand apart: the Redis store (content/redis-store/) imports nothing of the file store.',
      severity: 'error',
      from: { path: '^service/content/redis-store/' },
      to: { path: '^service/content/file-store/' },
    },
    {
      name: 'content-stores-import-no-content-service',
      comment:
        'A store keeps items (the item model, the ContentStore interface); the content service, its listings and parsing sit above it.',
      severity: 'error',
      from: { path: '^service/content/(file|redis)-store/' },
      to: { path: '^service/content/(content-service\\.ts$|listing/|parse/)' },
    },
    {
      name: 'content-imports-no-store-room',
      comment: 'The rest of content/ works on the ContentStore interface; only the composition root picks a store.',
      severity: 'error',
      from: { path: '^service/content/', pathNot: '^service/content/(file|redis)-store/' },
      to: { path: '^service/content/(file|redis)-store/' },
    },
    {
      name: 'service-enters-store-rooms-by-index',
      comment:
        'The service outside content/ (the composition root) uses a store room through its index.ts, its public surface, never its parts.',
      severity: 'error',
      from: { path: '^service/', pathNot: '^service/content/' },
      to: { path: '^service/content/(file|redis)-store/', pathNot: '^service/content/(file|redis)-store/index\\.ts$' },
    },
    // issue 38: rooms of service/search
    // The search wing's rooms (docs/architecture.md): index/ (storage), vocabulary/, scoring/,
    // query/, analysis/, vectors/ (issue 41), and the glue directly in service/search/ (the embedded index, its
    // lifecycle, the service), which may import every room. test/import-rules-search.test.ts
    // proves each rule bites.
    {
      name: 'search-index-imports-no-scoring-query',
      comment:
        'Storage (service/search/index/) imports only itself and the vocabulary: never the scorers, the query plan, analysis or the glue (the scorers read it through index/cursor.ts).',
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
      comment:
        'The scorers (service/search/scoring/) read the index only through its cursor interface (index/cursor.ts), and import no other room.',
      severity: 'error',
      from: { path: '^service/search/scoring/' },
      to: { path: '^service/search/', pathNot: '^service/search/(scoring/|index/cursor\\.ts$)' },
    },
    {
      name: 'search-query-reads-index-through-cursor',
      comment:
        'The query plan (service/search/query/) uses the vocabulary and reads the index only through index/cursor.ts; it imports no scorer.',
      severity: 'error',
      from: { path: '^service/search/query/' },
      to: { path: '^service/search/', pathNot: '^service/search/(query/|vocabulary/|index/cursor\\.ts$)' },
    },
    {
      name: 'search-vectors-imports-no-other-room',
      comment:
        'The vector index (service/search/vectors/: exact scan, HNSW graph, its file) imports nothing else of the search wing; the glue combines it with the rest.',
      severity: 'error',
      from: { path: '^service/search/vectors/' },
      to: { path: '^service/search/', pathNot: '^service/search/vectors/' },
    },
    {
      name: 'search-analysis-imports-no-other-room',
      comment: 'Text analysis and snippets (service/search/analysis/) import nothing else of the search wing.',
      severity: 'error',
      from: { path: '^service/search/analysis/' },
      to: { path: '^service/search/', pathNot: '^service/search/analysis/' },
    },
    // issue 41: the embedder's room
    // service/embeddings/ is a client of an embeddings API, self-contained: it reads items and their
    // text (the top of content/: the item model, plain text, fingerprint, the sentence cutter) and
    // the leaves, and gets everything else injected (tokens, metrics, logger). The service enters it
    // through its index.ts. test/import-rules-embeddings.test.ts proves both rules bite.
    {
      name: 'embeddings-imports-only-items-and-leaves',
      comment:
        'The embedder (service/embeddings/) imports of the service only the items and their text (the files at the top of content/) and the leaves (lib/): no search, chat, metrics or store room; what it reports to is injected.',
      severity: 'error',
      from: { path: '^service/embeddings/' },
      to: { path: '^service/', pathNot: '^service/(embeddings|lib)/|^service/content/[^/]+$' },
    },
    {
      name: 'service-enters-embeddings-by-index',
      comment: 'The rest of the service uses the embedder through service/embeddings/index.ts, its public surface.',
      severity: 'error',
      from: { path: '^service/', pathNot: '^service/embeddings/' },
      to: { path: '^service/embeddings/', pathNot: '^service/embeddings/index\\.ts$' },
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
