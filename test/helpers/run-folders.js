/**
 * The folders in which the processes of one jest run share what each would otherwise make again
 * (run-setup.js and run-teardown.js, jest's globalSetup and globalTeardown): each made before the
 * workers start, so they and the commands they start inherit the variable naming it, and removed
 * when the run ends: nothing carries over to the next run.
 */
// CommonJS: jest loads this file without a transpiler.
/* eslint-disable @typescript-eslint/no-require-imports */
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { dirname, join } = require('node:path');
/* eslint-enable @typescript-eslint/no-require-imports */

/** Per shared folder: the variable that names it (or `file` in it) and the folder's prefix. */
const FOLDERS = [
  // promtool and amtool results (`SHARED_RESULTS_ENV` of tools/harness/prom-tools.ts).
  { env: 'PROM_TOOLS_RESULTS_DIR', prefix: 'svc-ai-search-prom-tools-' },
  // The OpenAPI document the answer checker proves answers against (`SHARED_DOCUMENT_ENV` of
  // tools/validate/openapi-answers.ts): the first process that needs it generates and writes it.
  { env: 'OPENAPI_DOCUMENT_FILE', prefix: 'svc-ai-search-openapi-', file: 'openapi.json' },
  // The mark that this run built the package (`BUILT_MARK_ENV` of test/helpers/package-build.ts):
  // the run's second suite that packs build/ finds it and runs no second tsc.
  { env: 'PACKAGE_BUILT_MARK', prefix: 'svc-ai-search-package-build-', file: 'built' },
];

/** Makes the run's folders and names them in the environment. */
function setup() {
  for (const { env, prefix, file } of FOLDERS) {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    process.env[env] = file ? join(dir, file) : dir;
  }
}

/** Removes the run's folders. */
function teardown() {
  for (const { env, file } of FOLDERS) {
    const named = process.env[env];
    if (named) rmSync(file ? dirname(named) : named, { recursive: true, force: true });
    delete process.env[env];
  }
}

module.exports = { setup, teardown };
