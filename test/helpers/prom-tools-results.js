/**
 * jest's globalSetup and globalTeardown (jest.config.js): one folder per test run in which the
 * processes of the run share the results of their promtool and amtool runs (`promTools` of
 * tools/harness/prom-tools.ts, `PROM_TOOLS_RESULTS_DIR`). Made before the workers start, so
 * they and the commands they start inherit it, and removed when the run ends: nothing carries
 * over to the next run.
 */
// CommonJS: jest loads this file without a transpiler.
/* eslint-disable @typescript-eslint/no-require-imports */
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
/* eslint-enable @typescript-eslint/no-require-imports */

/** The variable tools/harness/prom-tools.ts reads (`SHARED_RESULTS_ENV`). */
const ENV = 'PROM_TOOLS_RESULTS_DIR';

/** Makes the run's folder and names it in the environment. */
function setup() {
  process.env[ENV] = mkdtempSync(join(tmpdir(), 'svc-ai-search-prom-tools-'));
}

/** Removes the run's folder. */
function teardown() {
  const dir = process.env[ENV];
  if (dir) rmSync(dir, { recursive: true, force: true });
  delete process.env[ENV];
}

module.exports = { setup, teardown, ENV };
