/**
 * jest's globalSetup and globalTeardown (with prom-tools-results.js, jest.config.js): names a file
 * in a folder of the run where its processes share the OpenAPI document the answer checker proves
 * answers against (`SHARED_DOCUMENT_ENV` of tools/validate/openapi-answers.ts). The first process
 * that needs it generates and writes it; the folder is removed when the run ends, so every run
 * generates it from its own checkout.
 */
// CommonJS: jest loads this file without a transpiler.
/* eslint-disable @typescript-eslint/no-require-imports */
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { dirname, join } = require('node:path');
/* eslint-enable @typescript-eslint/no-require-imports */

/** The variable tools/validate/openapi-answers.ts reads (`SHARED_DOCUMENT_ENV`). */
const ENV = 'OPENAPI_DOCUMENT_FILE';

/** Makes the run's folder and names the document's file in it in the environment. */
function setup() {
  process.env[ENV] = join(mkdtempSync(join(tmpdir(), 'svc-ai-search-openapi-')), 'openapi.json');
}

/** Removes the run's folder. */
function teardown() {
  const file = process.env[ENV];
  if (file) rmSync(dirname(file), { recursive: true, force: true });
  delete process.env[ENV];
}

module.exports = { setup, teardown, ENV };
