const { testTiers } = require('./test/tiers');

/**
 * Jest runs TypeScript through SWC (fast on 2 cores); `npm run typecheck` is the type gate.
 *
 * Two projects, the test tiers of docs/architecture.md, split by the rule of test/tiers.js (a
 * suite that reaches `child_process` or the browser driver through its imports is `process`):
 * - `fast`: unit, generator and in-process app tests; no child process, no binary, no browser
 *   (`make test-fast`, `npx jest --selectProjects fast`);
 * - `process`: the suites that start redis-server, Sentinel, a Cluster, promtool, amtool,
 *   Prometheus, Alertmanager, the service process or a browser.
 * `make test` (and CI) runs both.
 */
const tiers = testTiers(__dirname);

const shared = {
  testEnvironment: 'node',
  rootDir: __dirname,
  roots: ['<rootDir>/test'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  // Proves every answer of the service's app in supertest tests against its OpenAPI document; and
  // FC_SEED replays property tests with a printed seed (test/helpers/property.ts).
  setupFilesAfterEnv: ['<rootDir>/test/helpers/contract-setup.ts', '<rootDir>/test/helpers/property-setup.ts'],
};

module.exports = {
  testTimeout: 30000,
  // A worker that ran many suites holds a heap of hundreds of MiB: on a busy 2-core machine its exit
  // alone (the kernel freeing that memory) took 0.6-1.5 s for a 1 GiB heap at load 8-9, past jest's
  // 500 ms, so jest killed it and printed "A worker process has failed to exit gracefully" though it
  // held no handle (its active resources after every suite: its three pipes). A worker that does
  // leak a handle still gets the message, 10 s later.
  workerGracefulExitTimeout: 10_000,
  // Longest suites first, by the durations of a full run when jest has none of its own (a fresh clone).
  testSequencer: '<rootDir>/test/sequencer.js',
  reporters: ['default', '<rootDir>/test/summary-reporter.js'],
  // Folders of the run where its processes share promtool and amtool results (tools/harness/prom-tools.ts)
  // and the OpenAPI document the answer checker reads (tools/validate/openapi-answers.ts).
  globalSetup: '<rootDir>/test/helpers/run-setup.js',
  globalTeardown: '<rootDir>/test/helpers/run-teardown.js',
  projects: [
    {
      ...shared,
      displayName: 'fast',
      testMatch: tiers.fast.map((f) => `<rootDir>/${f}`),
      // A process the imports hide fails the suite instead of slowing the tier down.
      setupFilesAfterEnv: [...shared.setupFilesAfterEnv, '<rootDir>/test/helpers/fast-tier-guard.ts'],
    },
    { ...shared, displayName: 'process', testMatch: tiers.process.map((f) => `<rootDir>/${f}`) },
  ],
};
